package dev.warehouse.order.grpc;

import dev.warehouse.order.domain.DateFilter;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.OrderPageQuery;
import dev.warehouse.order.domain.OrderService;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.domain.PlaceOrderCommand;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.ListCustomerOrdersResponse;
import dev.warehouse.order.v1.ListStalledOrdersRequest;
import dev.warehouse.order.v1.ListStalledOrdersResponse;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.error.Violations;
import dev.warehouse.runtime.grpc.UnaryCalls;
import dev.warehouse.runtime.log.CallFields;
import dev.warehouse.runtime.paging.PageSize;
import dev.warehouse.runtime.scope.CallerScope;
import io.grpc.stub.StreamObserver;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;

/**
 * The gRPC face of the orders: validates each request (every bad field named in one
 * INVALID_ARGUMENT, before anything is read or written), delegates to {@link OrderService}, maps back.
 */
public final class OrderGrpcEndpoint extends OrderServiceGrpc.OrderServiceImplBase {

  private final OrderService service;

  public OrderGrpcEndpoint(OrderService service) {
    this.service = service;
  }

  @Override
  public void placeOrder(PlaceOrderRequest request, StreamObserver<Order> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String customerId = v.id("customer_id", request.getCustomerId());
      Optional<String> orderId = request.getOrderId().isEmpty()
          ? Optional.empty() : Optional.of(v.id("order_id", request.getOrderId()));
      Optional<LocalDate> orderDate = OrderRequests.optionalDate(v, "order_date", request.getOrderDate());
      List<OrderLine> lines = OrderRequests.lines(v, request.getLinesList());
      Money total = OrderRequests.total(v, lines, request.hasTotal(), request.getTotal());
      String requestId = v.id("request_id", request.getRequestId());
      v.throwIfAny();
      CallFields.requestId(requestId);
      return service.placeOrder(new PlaceOrderCommand(customerId, orderId, orderDate, lines, total, requestId));
    }, OrderProtos::toProto);
  }

  @Override
  public void getOrder(GetOrderRequest request, StreamObserver<Order> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String orderId = v.id("order_id", request.getOrderId());
      v.throwIfAny();
      return service.getOrder(orderId, request.getConsistentRead(), CallerScope.current());
    }, OrderProtos::toProto);
  }

  @Override
  public void listCustomerOrders(ListCustomerOrdersRequest request, StreamObserver<ListCustomerOrdersResponse> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String customerId = v.id("customer_id", request.getCustomerId());
      DateFilter filter = OrderRequests.dateFilter(v, request.getDatePrefix(), request.getStartDate(), request.getEndDate());
      int pageSize = PageSize.resolve(request.getPageSize(), v);
      v.throwIfAny();
      return service.listCustomerOrders(customerId,
          new OrderPageQuery(filter, pageSize, request.getPageToken(), request.getConsistentRead()));
    }, OrderProtos::toProto);
  }

  @Override
  public void updateOrderStatus(UpdateOrderStatusRequest request, StreamObserver<Order> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String orderId = v.id("order_id", request.getOrderId());
      OrderStatus next = OrderProtos.fromProto(request.getStatus());
      if (next == null) {
        v.add("status", request.getStatusValue() == 0 ? "is required" : "is not a known order status");
      }
      if (request.getExpectedVersion() < 0) {
        v.add("expected_version", "must not be negative");
      }
      v.throwIfAny();
      Optional<Long> expected = request.getExpectedVersion() == 0 ? Optional.empty() : Optional.of(request.getExpectedVersion());
      return service.updateOrderStatus(orderId, next, expected, CallerScope.current());
    }, OrderProtos::toProto);
  }

  @Override
  public void listStalledOrders(ListStalledOrdersRequest request, StreamObserver<ListStalledOrdersResponse> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      int pageSize = PageSize.resolve(request.getPageSize(), v);
      v.throwIfAny();
      return service.listStalledOrders(pageSize, request.getPageToken());
    }, OrderProtos::toStalled);
  }
}
