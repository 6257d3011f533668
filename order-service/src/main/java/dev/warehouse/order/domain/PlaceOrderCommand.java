package dev.warehouse.order.domain;

import java.time.LocalDate;
import java.util.Optional;

/**
 * A request to place an order, validated. Empty order id and date are filled in by the service;
 * {@code fingerprint} identifies the request as the caller sent it, to tell a replay of a request id
 * from its reuse for another order.
 */
public record PlaceOrderCommand(
    String customerId,
    Optional<String> orderId,
    Optional<LocalDate> orderDate,
    Money total,
    String requestId) {

  /** The fields as sent (before defaults are filled in), so a retry tomorrow matches today's call. */
  public String fingerprint() {
    return String.join("|", customerId, orderId.orElse(""), orderDate.map(LocalDate::toString).orElse(""),
        total.currencyCode(), Long.toString(total.units()), Integer.toString(total.nanos()));
  }
}
