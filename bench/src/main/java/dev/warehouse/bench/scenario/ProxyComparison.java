package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.load.OpenLoop;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.Nginx;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.bench.target.Target.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.DoubleSupplier;

/**
 * Scenario 2: the gateway against nginx's {@code grpc_pass}, forwarding the same calls to the same
 * stand-in backend (canned answers), side by side: added latency at a fixed rate, and throughput per
 * CPU-second of the proxy under a closed loop.
 */
public final class ProxyComparison {

  private static final List<String> ROUTES = List.of("direct", "gateway", "nginx");

  private ProxyComparison() {}

  public static void run(Path root, Settings settings, Report report) throws Exception {
    Path logs = root.resolve("target/bench-logs");
    int standInPort = Proc.freePort();
    Path benchJar = root.resolve("bench/target/bench.jar");
    try (Proc standIn = Proc.start("stand-in", List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "-jar", benchJar.toString(), "standin", Integer.toString(standInPort)), Map.of(), logs, standInPort, -1);
        Proc gateway = Stack.java(root, logs, "gateway", Map.of("AUTH_MODE", "none", // forwarding alone, as nginx
            "INVENTORY_ADDRESSES", "127.0.0.1:" + standInPort, "ORDER_ADDRESSES", "127.0.0.1:" + standInPort));
        Nginx nginx = Nginx.start(root.resolve("target/bench-nginx"), standInPort)) {
      standIn.awaitServing(60_000);
      gateway.awaitServing(60_000);
      DataSet data = new DataSet(100);
      Map<String, String> addresses = Map.of("direct", "127.0.0.1:" + standInPort,
          "gateway", "127.0.0.1:" + gateway.grpcPort, "nginx", "127.0.0.1:" + nginx.port);
      // CPU seconds of the process that answers each route: the stand-in itself for "direct", else the proxy.
      Map<String, DoubleSupplier> cpuSeconds = Map.of("direct", standIn::cpuSeconds, "gateway", gateway::cpuSeconds,
          "nginx", nginx::cpuSeconds);

      // Steady state is what is compared: the gateway's JIT compiles its forwarding path first (nginx has none).
      try (GrpcTarget target = new GrpcTarget("gateway", addresses.get("gateway"), addresses.get("gateway"), data)) {
        ClosedLoop.run("gateway warm-up", target.call(Op.GET_SERIAL_ITEM, i -> 0), settings.proxyConcurrency(),
            settings.warmup().multipliedBy(5), settings.warmup());
      }
      Map<String, List<Summary>> latency = new LinkedHashMap<>();
      Map<String, List<Summary>> throughput = new LinkedHashMap<>();
      Map<String, List<Double>> perCore = new LinkedHashMap<>();
      Map<String, List<Double>> cpuPerCall = new LinkedHashMap<>();
      for (int round = 0; round < settings.rounds(); round++) {
        for (String route : ROUTES) {
          try (GrpcTarget target = new GrpcTarget(route, addresses.get(route), addresses.get(route), data)) {
            LongAdder started = new LongAdder();
            double openBefore = cpuSeconds.get(route).getAsDouble();
            latency.computeIfAbsent(route, r -> new ArrayList<>()).add(OpenLoop.run(route,
                target.call(Op.GET_SERIAL_ITEM, i -> 0).countedBy(started), settings.proxyRate(), settings.warmup().multipliedBy(2),
                settings.measure(), null));
            cpuPerCall.computeIfAbsent(route, r -> new ArrayList<>())
                .add((cpuSeconds.get(route).getAsDouble() - openBefore) / started.sum() * 1e6);
            double closedBefore = cpuSeconds.get(route).getAsDouble();
            Summary closed = ClosedLoop.run(route, target.call(Op.GET_SERIAL_ITEM, i -> 0), settings.proxyConcurrency(),
                settings.warmup(), settings.measure());
            double cpu = cpuSeconds.get(route).getAsDouble() - closedBefore;
            throughput.computeIfAbsent(route, r -> new ArrayList<>()).add(closed);
            perCore.computeIfAbsent(route, r -> new ArrayList<>()).add(cpu > 0 ? closed.count() / cpu : Double.NaN);
          }
        }
      }

      List<List<String>> rows = new ArrayList<>();
      double direct50 = Medians.of(latency.get("direct"), Summary::p50);
      double direct99 = Medians.of(latency.get("direct"), Summary::p99);
      Map<String, Double> rpsPerCore = new LinkedHashMap<>();
      Map<String, Double> okPerSecond = new LinkedHashMap<>();
      Map<String, Double> microsPerCall = new LinkedHashMap<>();
      for (String route : ROUTES) {
        double p50 = Medians.of(latency.get(route), Summary::p50);
        double p99 = Medians.of(latency.get(route), Summary::p99);
        double rps = Medians.of(throughput.get(route), Summary::throughput);
        okPerSecond.put(route, rps);
        double core = Medians.of(perCore.get(route).stream().mapToDouble(Double::doubleValue));
        rpsPerCore.put(route, core);
        microsPerCall.put(route, Medians.of(cpuPerCall.get(route).stream().mapToDouble(Double::doubleValue)));
        rows.add(List.of(route, ms(p50) + " / " + ms(p99),
            route.equals("direct") ? "—" : ms(p50 - direct50) + " / " + ms(p99 - direct99),
            num(microsPerCall.get(route)), num(rps), num(core),
            Long.toString(throughput.get(route).stream().mapToLong(Summary::errorCount).sum()
                + latency.get(route).stream().mapToLong(Summary::errorCount).sum())));
      }
      boolean met = rpsPerCore.get("gateway") >= rpsPerCore.get("nginx");
      long refused = throughput.get("gateway").stream().mapToLong(Summary::errorCount).sum();
      report.heading("2. Gateway against a peer proxy (nginx grpc_pass)")
          .paragraph("GetSerialItem forwarded to a stand-in backend with canned answers (so the store is out of the "
              + "picture): directly, through the gateway, and through nginx " + nginx.version + " (`grpc_pass`, "
              + "`worker_processes auto`, upstream keepalive). Latency: open loop at " + (int) settings.proxyRate()
              + " requests/s; throughput: closed loop with " + settings.proxyConcurrency() + " concurrent callers; "
              + "throughput per core = requests served / CPU-seconds the proxy process used (for `direct`: the "
              + "stand-in's own); CPU per call at the fixed rate likewise, warm-up requests included. Medians of "
              + settings.rounds() + " rounds; latencies in ms, p50 / p99.")
          .table(List.of("Route", "Latency", "Added vs direct", "CPU per call at " + (int) settings.proxyRate()
              + " req/s (µs)", "Throughput (req/s)", "Req per CPU-second of the proxy", "Errors"), rows)
          .table(List.of("Target", "Measured", "Met"), List.of(
              List.of("gateway at least as fast as nginx (req per CPU-second)",
                  num(rpsPerCore.get("gateway")) + " vs " + num(rpsPerCore.get("nginx")), met ? "yes" : "no"),
              List.of("gateway's throughput ≥ nginx's (OK answers/s, closed loop; issue 23)",
                  num(okPerSecond.get("gateway")) + " vs " + num(okPerSecond.get("nginx")),
                  okPerSecond.get("gateway") >= okPerSecond.get("nginx") ? "yes" : "**no**")))
          .paragraph("Throughput counts OK answers only. " + (refused == 0 ? "The gateway refused none of the closed loop's calls."
              : "The gateway refused " + refused + " of the closed loop's calls (its adaptive limit for the backend, "
                  + "RESOURCE_EXHAUSTED, counted in the errors column): " + settings.proxyConcurrency() + " callers "
                  + "with no pause queue at a backend that shares the proxy's 2 cores, and the limit admits what the "
                  + "backend answers at low latency; nginx has no such limit and forwards them all."))
          .paragraph("What limits it: the machine has 2 cores shared by the load generator, the stand-in and the "
              + "proxy, so absolute throughput is the generator's and the stand-in's as much as the proxy's; the "
              + "per-CPU-second figure isolates the proxy's own cost. At the fixed rate each call finds the proxy "
              + "idle and wakes it; per call, the gateway (a grpc-java server and client) "
              + perCall(microsPerCall, rpsPerCore, "gateway") + ", the stand-in (a grpc-java server alone) "
              + perCall(microsPerCall, rpsPerCore, "direct") + ", nginx " + perCall(microsPerCall, rpsPerCore, "nginx")
              + ".")
          .data("proxy_comparison", Map.of("latency", latency, "throughput", throughput, "requests_per_cpu_second", perCore,
              "cpu_microseconds_per_call_at_fixed_rate", cpuPerCall));
    }
  }

  /** "X µs of CPU against Y under saturation": per call, at the fixed rate and in the closed loop. */
  private static String perCall(Map<String, Double> microsAtRate, Map<String, Double> perCpuSecond, String route) {
    return num(microsAtRate.get(route)) + " µs of CPU against " + num(1e6 / perCpuSecond.get(route))
        + " under saturation";
  }
}
