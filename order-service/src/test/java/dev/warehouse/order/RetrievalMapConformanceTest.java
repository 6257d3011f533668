package dev.warehouse.order;

import static dev.warehouse.order.OrderFixture.id;
import static dev.warehouse.order.OrderFixture.order;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Message;
import dev.warehouse.order.store.OrderKeys;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.ListStalledOrdersRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.testing.IamPolicyEvaluator;
import dev.warehouse.runtime.testing.RouteConformance;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;

/**
 * Every RPC of the order-service issues exactly its declared operations on its declared key shapes,
 * never a Scan, and writes only under the order-service's own prefixes; the service's IAM policy
 * ({@code deploy/aws/iam/order-service.json}) allows every request each call sent, and the calls together
 * need every grant it makes.
 */
@Tag("integration")
class RetrievalMapConformanceTest {

  private static OrderFixture orders;
  private static IamPolicyEvaluator policy;
  private static final Set<String> covered = new HashSet<>();

  @BeforeAll
  static void start() throws Exception {
    // A status change waits up to its step budget for the step it owes, then answers and leaves the step to the
    // recovery (off here). On a loaded machine a release took longer than the default 1 s, and the route's last
    // write (the step marked done) was missing from what the test recorded: the budget here outlasts a slow moto.
    orders = new OrderFixture(OrderFixture.CALL_TIMEOUT,
        settings -> settings.withRecovery(settings.stepGrace(), Duration.ZERO).withStepBudget(Duration.ofSeconds(15)));
    policy = IamPolicyEvaluator.checkedIn(OrderMain.SERVICE_NAME, orders.table);
  }

  @AfterAll
  static void everyRpcWasCheckedAndOnlyOwnKeysWritten() throws Exception {
    try {
      assertThat(covered).containsExactlyInAnyOrderElementsOf(
          OrderKeys.ROUTES.routes().stream().map(Route::methodName).toList());
      assertThat(orders.recorder.requests()).noneMatch(r -> r instanceof ScanRequest);
      RouteConformance.assertWritesOnlyUnder(orders.recorder.requests(), Set.of("CUSTOMER#", "ORDER#"));
      policy.assertEveryGrantUsed();
    } finally {
      orders.close();
    }
  }

  private static <Q extends Message, R extends Message> R check(String method, Q request, Function<Q, R> call) {
    int from = orders.recorder.requests().size();
    R response = call.apply(request);
    List<SdkRequest> all = orders.recorder.requests();
    List<SdkRequest> sent = all.subList(from, all.size());
    RouteConformance.assertFollows(OrderKeys.ROUTES.route(method), sent, request, response);
    policy.assertAllows(sent);
    covered.add(method);
    return response;
  }

  @Test
  void everyRouteOfTheOrderCorridor() {
    String customer = id("C");
    Order placed = check("PlaceOrder", order(customer, id("O"), "2026-07-26").build(), orders.stub()::placeOrder);
    check("GetOrder", GetOrderRequest.newBuilder().setOrderId(placed.getOrderId()).setConsistentRead(true).build(), orders.stub()::getOrder);
    check("ListCustomerOrders", ListCustomerOrdersRequest.newBuilder().setCustomerId(customer).setConsistentRead(true).build(),
        orders.stub()::listCustomerOrders);
    check("ListCustomerOrders", ListCustomerOrdersRequest.newBuilder().setCustomerId(customer).setDatePrefix("2026-07").setConsistentRead(true).build(),
        orders.stub()::listCustomerOrders);
    check("ListCustomerOrders", ListCustomerOrdersRequest.newBuilder().setCustomerId(customer)
        .setStartDate("2026-07-01").setEndDate("2026-07-31").setConsistentRead(true).build(), orders.stub()::listCustomerOrders);
    // The route is a change that moves stock: written with its step, the step made (a release), marked done.
    check("UpdateOrderStatus", UpdateOrderStatusRequest.newBuilder().setOrderId(placed.getOrderId())
        .setStatus(OrderStatus.ORDER_STATUS_CANCELLED).build(), orders.stub()::updateOrderStatus);
    check("ListStalledOrders", ListStalledOrdersRequest.newBuilder().build(), orders.stub()::listStalledOrders);
  }
}
