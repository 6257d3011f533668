package dev.warehouse.simulation;

import dev.warehouse.inventory.domain.InventoryService;
import dev.warehouse.inventory.domain.OutOfStockException;
import dev.warehouse.inventory.domain.PageQuery;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.inventory.domain.ReservationChangedException;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.domain.ReservationRepository;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.paging.Page;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@link ReservationRepository} in memory, with the conditions of its DynamoDB implementation: a hold
 * only where the order has no reservation and every line has the units available, a confirm only of a
 * HELD reservation, an end only from the state read, a tombstone only where there is none. Each write
 * moves the reservation and its lines' stock at once.
 */
final class MemoryReservations implements ReservationRepository {

  /** One product's stock at one warehouse. */
  static final class Stock {
    long quantity;
    long reserved;

    Stock(long quantity) {
      this.quantity = quantity;
    }
  }

  private final MemoryDb db;
  final Map<String, Reservation> reservations = new LinkedHashMap<>();
  final Map<String, Stock> stock = new LinkedHashMap<>();

  MemoryReservations(MemoryDb db) {
    this.db = db;
  }

  static String key(String productId, String warehouseId) {
    return productId + "#" + warehouseId;
  }

  private static AbortedException conflict() {
    // What the data layer answers once its attempts of a conflicted request are spent (the DynamoDB
    // implementation sends some writes again itself; the use case decides again on every one).
    return new AbortedException("TRANSACTION_CONFLICT", "a conflicting transaction was in progress; retry");
  }

  @Override
  public CompletableFuture<Optional<Reservation>> find(String orderId, boolean consistentRead) {
    return db.read("get reservation " + orderId, () -> Optional.ofNullable(reservations.get(orderId)));
  }

  @Override
  public CompletableFuture<Reservation> hold(Reservation held) {
    return db.write("hold " + held.orderId(), MemoryReservations::conflict, () -> {
      Reservation existing = reservations.get(held.orderId());
      if (existing != null) {
        throw new ReservationChangedException(held.orderId(), Optional.of(existing));
      }
      List<OutOfStockException.Shortage> shortLines = new ArrayList<>();
      for (ReservationLine line : held.lines()) {
        Stock s = stock.get(key(line.productId(), line.warehouseId()));
        if (s == null) {
          throw InventoryService.inventoryNotFound(line.productId(), line.warehouseId());
        }
        long available = s.quantity - s.reserved;
        if (available < line.quantity()) {
          shortLines.add(new OutOfStockException.Shortage(line.productId(), line.warehouseId(), line.quantity(), available));
        }
      }
      if (!shortLines.isEmpty()) {
        throw new OutOfStockException(held.orderId(), held.lines().size(), shortLines);
      }
      held.lines().forEach(l -> stock.get(key(l.productId(), l.warehouseId())).reserved += l.quantity());
      reservations.put(held.orderId(), held);
      return held;
    });
  }

  @Override
  public CompletableFuture<Reservation> confirm(String orderId, Instant now) {
    return db.write("confirm " + orderId, MemoryReservations::conflict, () -> {
      Reservation current = reservations.get(orderId);
      if (current == null || current.state() != State.HELD) {
        throw new ReservationChangedException(orderId, Optional.ofNullable(current));
      }
      Reservation confirmed = new Reservation(orderId, State.CONFIRMED, current.lines(), current.holdExpireTime(),
          Optional.empty(), current.createTime(), now);
      reservations.put(orderId, confirmed);
      return confirmed;
    });
  }

  @Override
  public CompletableFuture<Reservation> end(Reservation current, Reservation next) {
    return db.write(next.state() + " " + current.orderId() + next.releaseCause().map(c -> " (" + c + ")").orElse(""),
        MemoryReservations::conflict, () -> {
          Reservation stored = reservations.get(current.orderId());
          if (stored == null || stored.state() != current.state()) {
            throw new ReservationChangedException(current.orderId(), Optional.ofNullable(stored));
          }
          boolean shipped = next.state() == State.COMMITTED;
          for (ReservationLine line : current.lines()) {
            Stock s = stock.get(key(line.productId(), line.warehouseId()));
            s.reserved -= line.quantity();
            if (shipped) {
              s.quantity -= line.quantity();
            }
          }
          reservations.put(current.orderId(), next);
          return next;
        });
  }

  @Override
  public CompletableFuture<Reservation> tombstone(Reservation tombstone) {
    return db.write("tombstone " + tombstone.orderId(), MemoryReservations::conflict, () -> {
      Reservation existing = reservations.get(tombstone.orderId());
      if (existing != null) {
        throw new ReservationChangedException(tombstone.orderId(), Optional.of(existing));
      }
      reservations.put(tombstone.orderId(), tombstone);
      return tombstone;
    });
  }

  @Override
  public CompletableFuture<Page<Reservation>> listExpiredHolds(PageQuery page, Instant now) {
    return db.read("list expired holds", () -> {
      List<Reservation> expired = reservations.values().stream()
          .filter(r -> r.state() == State.HELD && !r.holdExpireTime().isAfter(now))
          .sorted(Comparator.comparing(Reservation::holdExpireTime).thenComparing(Reservation::orderId))
          .toList();
      int from = page.pageToken().isEmpty() ? 0 : Integer.parseInt(page.pageToken());
      int to = Math.min(expired.size(), from + page.pageSize());
      return new Page<>(expired.subList(from, to), to < expired.size() ? Integer.toString(to) : "");
    });
  }
}
