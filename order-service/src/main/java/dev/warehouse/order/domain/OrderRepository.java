package dev.warehouse.order.domain;

import dev.warehouse.runtime.paging.Page;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Storage of the order aggregate: each order twice, in its customer's corridor
 * ({@code CUSTOMER#c / ORDER#date#id}) and for direct lookup ({@code ORDER#id / METADATA}), always
 * written together in one transaction. The direct copy alone holds the lines and the stock step the
 * order owes, whose sparse GSI1 entry lists it for the recovery (A10).
 */
public interface OrderRepository {

  /**
   * W4, first transaction: puts both copies of a PENDING order (owing {@link StockStep#PLACE}), each
   * conditioned on {@code attribute_not_exists(PK)}, and the request record
   * {@code CUSTOMER#c / REQUEST#id}, also conditioned on {@code attribute_not_exists(PK)}. When the
   * request record exists with the same fingerprint, completes with the order that request wrote, as it
   * is now (an idempotent replay: PENDING, PLACED, REJECTED ...).
   *
   * @throws dev.warehouse.runtime.error.AlreadyExistsException ORDER_ALREADY_EXISTS (naming the copy that
   *     exists) or REQUEST_ID_REUSED
   */
  CompletableFuture<Order> create(Order order, PlaceOrderCommand command, Instant now);

  /** A6: GetItem {@code ORDER#id / METADATA}. */
  CompletableFuture<Optional<Order>> find(String orderId, boolean consistentRead);

  /**
   * A5: Query {@code CUSTOMER#c}, newest first, with {@code begins_with(SK, "ORDER#" + prefix)} or
   * {@code SK BETWEEN} the range's bounds.
   *
   * @throws dev.warehouse.runtime.error.InvalidArgumentException for a page token not issued for this query
   */
  CompletableFuture<Page<Order>> listByCustomer(String customerId, OrderPageQuery query);

  /**
   * W4, second transaction: a PENDING order PLACED or REJECTED, both copies, the direct copy's step
   * removed; conditioned on both copies' version being {@code current}'s.
   *
   * @throws StaleOrderException when either copy's version moved on (another call, or the recovery, was first)
   */
  CompletableFuture<Order> finishPlacing(Order current, Order finished);

  /**
   * W5: both copies moved from {@code current} to {@code updated} (status, version, update time), the
   * direct copy's step set to what {@code updated} owes; conditioned on both copies' version being
   * {@code current}'s.
   *
   * @throws StaleOrderException when either copy's version moved on
   */
  CompletableFuture<Order> changeStatus(Order current, Order updated);

  /**
   * W5's UpdateItem: the direct copy no longer owes {@code order}'s step, conditioned on it still owing
   * that step at that version. Completes with false when it did not (the step was already done).
   */
  CompletableFuture<Boolean> stepDone(Order order);

  /**
   * A10: one page of orders whose step is due at or before {@code now}, most overdue first: a Query of
   * GSI1 {@code ORDER_TASKS#ss} with {@code GSI1SK BETWEEN 'DUE#' AND 'DUE#<now>'} on every shard at once.
   * Eventually consistent: an order may be listed after its step was done.
   */
  CompletableFuture<Page<Order>> listStalled(Instant now, int pageSize, String pageToken);
}
