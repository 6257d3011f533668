package dev.warehouse.inventory.domain;

import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.runtime.paging.Page;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * {@link ReservationRepository} in memory, for the domain's unit tests: answers at once, with the conditions
 * of the DynamoDB implementation (a hold only where there is none and every line is stocked, a confirm
 * only of a HELD reservation, an end only from the state read), moving each line's reserved units with the
 * reservation. The A9 listing resumes after the last key it handed out, as DynamoDB's exclusive start key
 * does, so holds released between two pages do not shift the next page. A test can run code ahead of every
 * call ({@link #before}: change what is stored, or throw), fail a call ({@link #failing}), or step into a
 * listing ({@link #listing}).
 */
public final class InMemoryReservations implements ReservationRepository {

  /** Runs ahead of a call ({@code operation}: find, hold, confirm, end, tombstone). */
  public interface Hook {
    void before(String operation, String orderId);
  }

  /** A failure to answer with instead of making the call, or empty to make it. */
  public interface Faults {
    Optional<RuntimeException> of(String operation, String orderId);
  }

  /** What a listing answers, given its page token and the stored answer. */
  public interface Listing {
    CompletableFuture<Page<Reservation>> answer(String pageToken, Supplier<CompletableFuture<Page<Reservation>>> stored);
  }

  private static final Comparator<Reservation> BY_EXPIRY =
      Comparator.comparing(Reservation::holdExpireTime).thenComparing(Reservation::orderId);

  private final Map<String, Reservation> reservations = new ConcurrentHashMap<>();
  /** Units reserved per product#warehouse; a key present means the product is stocked there. */
  private final Map<String, long[]> stock = new ConcurrentHashMap<>();
  /** Every call made, as "operation orderId", in order. */
  public final List<String> calls = new CopyOnWriteArrayList<>();
  /** The page token of every A9 listing asked for, in order, and its page size. */
  public final List<String> listedTokens = new CopyOnWriteArrayList<>();
  public final List<Integer> listedPageSizes = new CopyOnWriteArrayList<>();
  public volatile Hook before = (operation, orderId) -> {};
  public volatile Faults failing = (operation, orderId) -> Optional.empty();
  public volatile Listing listing = (token, stored) -> stored.get();

  private static String key(String productId, String warehouseId) {
    return productId + "#" + warehouseId;
  }

  /** Stocks {@code productId} at {@code warehouseId}, none of it reserved. */
  public void stock(String productId, String warehouseId) {
    stock.put(key(productId, warehouseId), new long[1]);
  }

  /** The units of {@code productId} at {@code warehouseId} that HELD or CONFIRMED reservations hold. */
  public long reserved(String productId, String warehouseId) {
    return stock.get(key(productId, warehouseId))[0];
  }

  /** Stores {@code reservation} as it is, its lines' units reserved if it holds them. */
  public synchronized void put(Reservation reservation) {
    reservations.put(reservation.orderId(), reservation);
    if (reservation.holds()) {
      reservation.lines().forEach(l -> stock.get(key(l.productId(), l.warehouseId()))[0] += l.quantity());
    }
  }

  public Reservation get(String orderId) {
    return reservations.get(orderId);
  }

  private <T> Optional<CompletableFuture<T>> enter(String operation, String orderId) {
    calls.add(operation + " " + orderId);
    before.before(operation, orderId);
    return failing.of(operation, orderId).map(e -> CompletableFuture.<T>failedFuture(e));
  }

  @Override
  public CompletableFuture<Optional<Reservation>> find(String orderId, boolean consistentRead) {
    return this.<Optional<Reservation>>enter("find", orderId)
        .orElseGet(() -> CompletableFuture.completedFuture(Optional.ofNullable(reservations.get(orderId))));
  }

  @Override
  public CompletableFuture<Reservation> hold(Reservation held) {
    return this.<Reservation>enter("hold", held.orderId()).orElseGet(() -> {
      synchronized (this) {
        Reservation existing = reservations.get(held.orderId());
        if (existing != null) {
          return CompletableFuture.failedFuture(new ReservationChangedException(held.orderId(), Optional.of(existing)));
        }
        for (ReservationLine line : held.lines()) {
          if (!stock.containsKey(key(line.productId(), line.warehouseId()))) {
            return CompletableFuture.failedFuture(InventoryService.inventoryNotFound(line.productId(), line.warehouseId()));
          }
        }
        put(held);
        return CompletableFuture.completedFuture(held);
      }
    });
  }

  @Override
  public CompletableFuture<Reservation> confirm(String orderId, Instant now) {
    return this.<Reservation>enter("confirm", orderId).orElseGet(() -> {
      synchronized (this) {
        Reservation current = reservations.get(orderId);
        if (current == null || current.state() != State.HELD) {
          return CompletableFuture.failedFuture(new ReservationChangedException(orderId, Optional.ofNullable(current)));
        }
        Reservation confirmed = new Reservation(orderId, State.CONFIRMED, current.lines(), current.holdExpireTime(),
            Optional.empty(), current.createTime(), now);
        reservations.put(orderId, confirmed);
        return CompletableFuture.completedFuture(confirmed);
      }
    });
  }

  @Override
  public CompletableFuture<Reservation> end(Reservation current, Reservation next) {
    return this.<Reservation>enter("end", current.orderId()).orElseGet(() -> {
      synchronized (this) {
        Reservation stored = reservations.get(current.orderId());
        if (stored == null || stored.state() != current.state()) {
          return CompletableFuture.failedFuture(new ReservationChangedException(current.orderId(), Optional.ofNullable(stored)));
        }
        current.lines().forEach(l -> stock.get(key(l.productId(), l.warehouseId()))[0] -= l.quantity());
        reservations.put(current.orderId(), next);
        return CompletableFuture.completedFuture(next);
      }
    });
  }

  @Override
  public CompletableFuture<Reservation> tombstone(Reservation tombstone) {
    return this.<Reservation>enter("tombstone", tombstone.orderId()).orElseGet(() -> {
      synchronized (this) {
        Reservation existing = reservations.get(tombstone.orderId());
        if (existing != null) {
          return CompletableFuture.failedFuture(new ReservationChangedException(tombstone.orderId(), Optional.of(existing)));
        }
        reservations.put(tombstone.orderId(), tombstone);
        return CompletableFuture.completedFuture(tombstone);
      }
    });
  }

  @Override
  public CompletableFuture<Page<Reservation>> listExpiredHolds(PageQuery page, Instant now) {
    listedTokens.add(page.pageToken());
    listedPageSizes.add(page.pageSize());
    return listing.answer(page.pageToken(), () -> CompletableFuture.completedFuture(expired(page, now)));
  }

  private synchronized Page<Reservation> expired(PageQuery page, Instant now) {
    String token = page.pageToken();
    List<Reservation> expired = reservations.values().stream()
        .filter(r -> r.state() == State.HELD && !r.holdExpireTime().isAfter(now))
        .filter(r -> token.isEmpty() || after(r, token))
        .sorted(BY_EXPIRY)
        .toList();
    List<Reservation> items = expired.subList(0, Math.min(page.pageSize(), expired.size()));
    return new Page<>(items, expired.size() > page.pageSize() ? key(items.get(items.size() - 1)) : "");
  }

  /** The last key of a page, as its token: expiry time and order id, the index's sort order. */
  private static String key(Reservation r) {
    return r.holdExpireTime() + "#" + r.orderId();
  }

  private static boolean after(Reservation r, String token) {
    int cut = token.indexOf('#');
    int byExpiry = r.holdExpireTime().compareTo(Instant.parse(token.substring(0, cut)));
    return byExpiry > 0 || byExpiry == 0 && r.orderId().compareTo(token.substring(cut + 1)) > 0;
  }
}
