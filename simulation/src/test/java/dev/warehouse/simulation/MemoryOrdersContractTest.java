package dev.warehouse.simulation;

import dev.warehouse.order.domain.OrderRepository;
import java.util.concurrent.CompletableFuture;

/** The contract, on the simulation's in-memory repository, its answers delivered by the scheduler. */
class MemoryOrdersContractTest extends OrderRepositoryContract {

  private final Sim sim = new Sim(1);
  private final MemoryDb db = new MemoryDb(sim);
  private final MemoryOrders repository = new MemoryOrders(db);

  @Override
  OrderRepository repository() {
    return repository;
  }

  @Override
  <T> T await(CompletableFuture<T> call) {
    while (!call.isDone() && sim.step(Long.MAX_VALUE)) {
      // each step delivers one request or answer
    }
    return call.join();
  }

  @Override
  void everyTransactionConflicts(boolean on) {
    db.faults(0, on ? 1.0 : 0);
  }
}
