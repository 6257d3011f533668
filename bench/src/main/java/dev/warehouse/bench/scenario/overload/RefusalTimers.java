package dev.warehouse.bench.scenario.overload;

import dev.warehouse.bench.stack.Scrape;
import dev.warehouse.bench.stack.Stack;
import java.util.TreeMap;

/** GetOrder's refusals as the gateway's and the order-service's own gRPC timers counted them, at one moment. */
record RefusalTimers(TreeMap<Double, Double> gateway, TreeMap<Double, Double> service) {
  private static final String TIMER = "grpc_server_processing_duration_seconds";
  private static final String[] REFUSED = {"method=\"GetOrder\"", "statusCode=\"RESOURCE_EXHAUSTED\""};

  static RefusalTimers scrape(Stack stack) {
    return new RefusalTimers(Scrape.buckets(Scrape.text(stack.gateway.metricsPort), TIMER, REFUSED),
        Scrape.buckets(Scrape.text(stack.orders.metricsPort), TIMER, REFUSED));
  }

  double gatewayMs(RefusalTimers before, double q) {
    return 1000 * Scrape.quantile(before.gateway, gateway, q);
  }

  double serviceMs(RefusalTimers before, double q) {
    return 1000 * Scrape.quantile(before.service, service, q);
  }
}
