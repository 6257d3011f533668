package dev.warehouse.contracttools;

import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import dev.warehouse.routing.v1.Route;
import dev.warehouse.routing.v1.RouteProto;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The latency SLO's bound per RPC, as Prometheus recording rules generated from the routes'
 * {@code latency_bound_seconds}: one constant series per RPC,
 * {@value #RECORD}{@code {service, method, le}}, whose value is the bound and whose {@code le} is the
 * histogram bucket that counts the calls within it. The slow-call ratios of
 * {@code deploy/prometheus/alerts.yml} keep only the bucket series that match one of these on
 * {@code (service, method, le)}, so each RPC is judged by its own bound with one expression for all.
 * {@code LatencyBoundRulesTest} fails when the rules between the markers in alerts.yml drift from these.
 */
public final class LatencyBoundRules {

  /** The recorded series (a recording rule's name: level {@code service_method}, then the metric it describes). */
  public static final String RECORD = "service_method:grpc_server_latency_bound_seconds";
  /** The line before the generated rules in alerts.yml. */
  public static final String BEGIN = "      # latency-bounds:begin (generated from the routes' latency_bound_seconds; see LatencyBoundRulesTest)\n";
  /** The line after them. */
  public static final String END = "      # latency-bounds:end\n";

  private LatencyBoundRules() {}

  /**
   * Each RPC's bound in seconds, by {@code service/method}, in the order declared.
   *
   * @throws IllegalStateException naming every routed RPC that declares no positive bound
   */
  public static Map<String, Double> bounds(List<ServiceDescriptor> services) {
    Map<String, Double> bounds = new LinkedHashMap<>();
    List<String> missing = new ArrayList<>();
    for (ServiceDescriptor service : services) {
      for (MethodDescriptor method : service.getMethods()) {
        if (!method.getOptions().hasExtension(RouteProto.route)) {
          continue; // RouteTable refuses such a service; an RPC without a route has no SLO here either
        }
        Route route = method.getOptions().getExtension(RouteProto.route);
        String name = service.getFullName() + "/" + method.getName();
        if (!(route.getLatencyBoundSeconds() > 0)) {
          missing.add(name);
        } else {
          bounds.put(name, route.getLatencyBoundSeconds());
        }
      }
    }
    if (!missing.isEmpty()) {
      throw new IllegalStateException("every route must declare latency_bound_seconds > 0: " + String.join(", ", missing));
    }
    return bounds;
  }

  /**
   * The {@code le} label of the bucket at {@code seconds}, as Prometheus's Java client writes it: the
   * shortest decimal that reads back as the same double.
   */
  public static String le(double seconds) {
    return Double.toString(seconds);
  }

  /** The recording rules, as the items of a group's {@code rules:} list in alerts.yml (six spaces in). */
  public static String yaml(List<ServiceDescriptor> services) {
    StringBuilder yaml = new StringBuilder();
    bounds(services).forEach((name, seconds) -> {
      String service = name.substring(0, name.indexOf('/'));
      String method = name.substring(name.indexOf('/') + 1);
      yaml.append("      - record: ").append(RECORD).append('\n')
          .append("        expr: vector(").append(le(seconds)).append(")\n")
          .append("        labels:\n")
          .append("          service: ").append(service).append('\n')
          .append("          method: ").append(method).append('\n')
          .append("          le: \"").append(le(seconds)).append("\"\n");
    });
    return yaml.toString();
  }
}
