package dev.warehouse.order.domain;

import dev.warehouse.runtime.error.AlreadyExistsException;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A request to place an order, validated: lines merged, total computed. Empty order id and date are
 * filled in by the service; {@code fingerprint} identifies the request as the caller sent it, to tell a
 * replay of a request id from its reuse for another order.
 */
public record PlaceOrderCommand(
    String customerId,
    Optional<String> orderId,
    Optional<LocalDate> orderDate,
    List<OrderLine> lines,
    Money total,
    String requestId) {

  public PlaceOrderCommand {
    lines = List.copyOf(lines);
  }

  /** The fields as sent (before defaults are filled in), so a retry tomorrow matches today's call. */
  public String fingerprint() {
    String lineText = lines.stream()
        .map(l -> l.productId() + "/" + l.warehouseId() + "/" + l.quantity() + "/" + l.unitPrice().amount().toPlainString())
        .collect(Collectors.joining(";"));
    return String.join("|", customerId, orderId.orElse(""), orderDate.map(LocalDate::toString).orElse(""),
        total.currencyCode(), Long.toString(total.units()), Integer.toString(total.nanos()), lineText);
  }

  /** ALREADY_EXISTS REQUEST_ID_REUSED: this request id of the customer placed another order (another fingerprint). */
  public AlreadyExistsException requestIdReused() {
    return new AlreadyExistsException("REQUEST_ID_REUSED",
        "request_id " + requestId + " of customer " + customerId + " already placed a different order",
        Map.of("request_id", requestId, "customer_id", customerId));
  }
}
