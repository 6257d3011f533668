package dev.warehouse.order.grpc;

import com.google.protobuf.Timestamp;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.v1.ListCustomerOrdersResponse;
import dev.warehouse.order.v1.ListStalledOrdersResponse;
import dev.warehouse.runtime.paging.Page;
import java.time.Instant;

/** Domain records to contract messages and back. */
final class OrderProtos {

  private OrderProtos() {}

  static dev.warehouse.order.v1.Order toProto(Order order) {
    dev.warehouse.order.v1.Order.Builder proto = dev.warehouse.order.v1.Order.newBuilder()
        .setOrderId(order.orderId())
        .setCustomerId(order.customerId())
        .setOrderDate(order.orderDate().toString())
        .setStatus(toProto(order.status()))
        .setTotal(toProto(order.total()))
        .setVersion(order.version())
        .setCreateTime(timestamp(order.createTime()))
        .setUpdateTime(timestamp(order.updateTime()))
        .setLineCount(order.lineCount());
    for (OrderLine line : order.lines()) {
      proto.addLinesBuilder().setProductId(line.productId()).setWarehouseId(line.warehouseId())
          .setQuantity(line.quantity()).setUnitPrice(toProto(line.unitPrice()));
    }
    order.rejection().ifPresent(r -> proto.setRejectionReason(r.reason()));
    return proto.build();
  }

  static ListCustomerOrdersResponse toProto(Page<Order> page) {
    ListCustomerOrdersResponse.Builder response = ListCustomerOrdersResponse.newBuilder()
        .setNextPageToken(page.nextPageToken());
    page.items().forEach(o -> response.addOrders(toProto(o)));
    return response.build();
  }

  static ListStalledOrdersResponse toStalled(Page<Order> page) {
    ListStalledOrdersResponse.Builder response = ListStalledOrdersResponse.newBuilder()
        .setNextPageToken(page.nextPageToken());
    page.items().forEach(o -> response.addOrders(toProto(o)));
    return response.build();
  }

  static dev.warehouse.order.v1.OrderStatus toProto(OrderStatus status) {
    return dev.warehouse.order.v1.OrderStatus.valueOf("ORDER_STATUS_" + status.name());
  }

  /** The domain status of a known, set proto status; null for UNSPECIFIED or an unknown number. */
  static OrderStatus fromProto(dev.warehouse.order.v1.OrderStatus status) {
    return switch (status) {
      case ORDER_STATUS_PLACED -> OrderStatus.PLACED;
      case ORDER_STATUS_PAID -> OrderStatus.PAID;
      case ORDER_STATUS_SHIPPED -> OrderStatus.SHIPPED;
      case ORDER_STATUS_DELIVERED -> OrderStatus.DELIVERED;
      case ORDER_STATUS_CANCELLED -> OrderStatus.CANCELLED;
      case ORDER_STATUS_PENDING -> OrderStatus.PENDING;
      case ORDER_STATUS_REJECTED -> OrderStatus.REJECTED;
      case ORDER_STATUS_UNSPECIFIED, UNRECOGNIZED -> null;
    };
  }

  static com.google.type.Money toProto(Money money) {
    return com.google.type.Money.newBuilder()
        .setCurrencyCode(money.currencyCode()).setUnits(money.units()).setNanos(money.nanos()).build();
  }

  private static Timestamp timestamp(Instant instant) {
    return Timestamp.newBuilder().setSeconds(instant.getEpochSecond()).setNanos(instant.getNano()).build();
  }
}
