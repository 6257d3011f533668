package dev.warehouse.order.domain;

import dev.warehouse.runtime.paging.Page;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Storage of the order aggregate: each order twice, in its customer's corridor
 * ({@code CUSTOMER#c / ORDER#date#id}) and for direct lookup ({@code ORDER#id / METADATA}), always
 * written together in one transaction.
 */
public interface OrderRepository {

  /**
   * W4: one TransactWriteItems that puts both copies, each conditioned on
   * {@code attribute_not_exists(PK)}, and the request record {@code CUSTOMER#c / REQUEST#id}, also
   * conditioned on {@code attribute_not_exists(PK)}. When the request record exists with the same
   * fingerprint, answers with the order it placed (an idempotent replay).
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
   * W5: one TransactWriteItems that updates the status, version and update time of both copies, each
   * conditioned on {@code version = current.version()}.
   *
   * @throws StaleOrderException when either copy's version moved on
   */
  CompletableFuture<Order> updateStatus(Order current, OrderStatus next, Instant now);
}
