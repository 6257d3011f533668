package dev.warehouse.simulation;

import dev.warehouse.inventory.domain.ReservationRepository;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/** The contract, on the simulation's in-memory repository (no faults), its answers delivered by the scheduler. */
class MemoryReservationsContractTest extends ReservationRepositoryContract {

  private final Sim sim = new Sim(1);
  private final MemoryReservations repository = new MemoryReservations(new MemoryDb(sim));

  @Override
  ReservationRepository repository() {
    return repository;
  }

  @Override
  String stocked(long quantity) {
    String product = "P-" + UUID.randomUUID().toString().substring(0, 8);
    repository.stock.put(MemoryReservations.key(product, "W1"), new MemoryReservations.Stock(quantity));
    return product;
  }

  @Override
  long[] stock(String product) {
    MemoryReservations.Stock s = repository.stock.get(MemoryReservations.key(product, "W1"));
    return new long[] {s.quantity, s.reserved};
  }

  @Override
  <T> T await(CompletableFuture<T> call) {
    while (!call.isDone() && sim.step(Long.MAX_VALUE)) {
      // each step delivers one request or answer
    }
    return call.join();
  }
}
