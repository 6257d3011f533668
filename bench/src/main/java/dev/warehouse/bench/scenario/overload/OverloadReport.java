package dev.warehouse.bench.scenario.overload;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;
import static dev.warehouse.bench.scenario.overload.Overload.ADMITTED_P99_TARGET;
import static dev.warehouse.bench.scenario.overload.Overload.AGREEING_ROUNDS;
import static dev.warehouse.bench.scenario.overload.Overload.CAPACITY_CALLERS;
import static dev.warehouse.bench.scenario.overload.Overload.GOODPUT_TARGET;
import static dev.warehouse.bench.scenario.overload.Overload.POLITE_DEADLINE;
import static dev.warehouse.bench.scenario.overload.Overload.POLITE_EVERY;
import static dev.warehouse.bench.scenario.overload.Overload.POLITE_TARGET;
import static dev.warehouse.bench.scenario.overload.Overload.PROBES_IN_A_ROW;
import static dev.warehouse.bench.scenario.overload.Overload.PROBE_EVERY;
import static dev.warehouse.bench.scenario.overload.Overload.RECOVERY_GIVE_UP;
import static dev.warehouse.bench.scenario.overload.Overload.RECOVERY_TARGET_S;
import static dev.warehouse.bench.scenario.overload.Overload.REJECTION_TARGET_MS;
import static dev.warehouse.bench.scenario.overload.Overload.RSS_TARGET_MB;
import static dev.warehouse.bench.scenario.overload.Overload.UNLOADED_SHARE;
import static dev.warehouse.bench.scenario.overload.OverloadSampler.OUT_OF_HEAP;
import static dev.warehouse.bench.scenario.overload.OverloadSampler.SAMPLE_EVERY;

import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.scenario.Settings;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Scenario 10's section of the report, from what {@link Overload} measured: the Markdown (a paragraph and two
 * tables per store, then what limits each) and the {@code overload} entry of the JSON (the records as they are).
 */
final class OverloadReport {

  private OverloadReport() {}

  static void write(Report report, Settings settings, Map<String, Store> stores) {
    report.paragraph("One route flooded through the gateway: A6 (GetOrder) offered at 1, 2, 5 and 10 times what it "
        + "serves, each level for " + settings.overloadLevel().toSeconds() + " s, on moto and on the stand-in DynamoDB, "
        + "with the stack as elsewhere (each process -Xmx256m, the admission settings at their defaults: an adaptive "
        + "limit, Gradient2, between 4 and 500). The route's capacity is what a closed loop of " + CAPACITY_CALLERS
        + " callers gets answered OK per second over " + settings.overloadMeasure().toSeconds() + " s; its unloaded "
        + "latency an open loop at " + (int) (UNLOADED_SHARE * 100) + " % of that. Each level is an open loop that "
        + "sends whatever the answers, latency from each request's intended start (coordinated omission corrected), "
        + "the callers never retrying. Meanwhile a polite caller asks A5 (ListCustomerOrders, the same service) every "
        + POLITE_EVERY.toMillis() + " ms with a " + POLITE_DEADLINE.toSeconds() + " s deadline, on a connection of its "
        + "own; every process's RSS is read every " + SAMPLE_EVERY.toMillis() + " ms; and from the flood's last request, "
        + "A6 is probed every " + PROBE_EVERY.toMillis() + " ms until " + PROBES_IN_A_ROW + " probes in a row answer "
        + "OK within " + num(ADMITTED_P99_TARGET) + " times the unloaded p99 (the bound an admitted call is held to): "
        + "the recovery is the first of those answers. Levels run one after another on one stack, from idle (no slot "
        + "held) each time; the limits carry over, as they would in production. The cores are split with taskset "
        + "(each store's paragraph says how): offered past capacity on a machine it shares with what it measures, an "
        + "open loop takes their cores, and the first run, on shared cores, measured the generator's CPU at 5× on the "
        + "stand-in (the load generator used 1.4–1.6 of the 2 cores, the gateway and the order-service 0.4 between them).");
    for (Store store : stores.values()) {
      writeStore(report, store);
    }
    report.paragraph(whatLimitsIt(stores));
    report.data("overload", stores);
  }

  private static void writeStore(Report report, Store s) {
    report.paragraph("**" + s.store() + "** (" + s.cores() + "): A6 serves " + num(s.capacity()) + " OK calls/s through the gateway ("
        + CAPACITY_CALLERS + " callers, after " + s.warmUpRounds().size() + " warm-up rounds that ended when " + AGREEING_ROUNDS + " in a row agreed within "
        + "10 %: " + s.warmUpRounds().stream().map(Report::num).toList() + "; p50 " + ms(s.capacityRun().p50()) + " ms, " + s.capacityRun().errorCount()
        + " refused or failed " + s.capacityRun().errors() + ", the machine " + percent(s.capacityCpu().machineBusy())
        + " busy, " + ms(s.capacityCpu().othersCores()) + " cores of it with work the benchmark did not start); unloaded, at " + num(s.unloadedRate()) + " calls/s, p50 " + ms(s.unloaded().p50()) + " ms and p99 "
        + ms(s.unloaded().p99()) + " ms (" + s.unloaded().count() + " calls, " + s.unloaded().errorCount() + " errors).");
    List<String> headers = new ArrayList<>(List.of("Target (" + s.store() + ")"));
    s.levels().forEach(l -> headers.add(l.multiple() + "× (" + num(l.askedPerSecond()) + "/s)"));
    List<List<String>> rows = new ArrayList<>();
    rows.add(row("offered calls/s (sent ÷ duration; not a target)", s, l -> num(l.offeredPerSecond())));
    rows.add(row("goodput ≥ " + percent(GOODPUT_TARGET) + " of " + num(s.capacity()) + "/s", s,
        l -> num(l.goodputPerSecond()) + "/s, " + percent(l.goodputShare()) + verdict(l.goodputShare() >= GOODPUT_TARGET)));
    rows.add(row("admitted p99 ≤ " + num(ADMITTED_P99_TARGET) + "× unloaded (" + ms(ADMITTED_P99_TARGET * s.unloaded().p99()) + " ms)", s,
        l -> ms(l.admittedP99Ms()) + " ms, " + num(l.admittedP99OverUnloaded()) + "×"
            + verdict(l.admittedP99OverUnloaded() <= ADMITTED_P99_TARGET)));
    rows.add(row("refusals p50 / p99 ≤ " + num(REJECTION_TARGET_MS) + " ms", s,
        l -> l.refused() == 0 ? "none refused" : ms(l.refusedP50Ms()) + " / " + ms(l.refusedP99Ms()) + " ms"
            + verdict(l.refusedP99Ms() <= REJECTION_TARGET_MS)));
    rows.add(row("polite A5 success ≥ " + percent(POLITE_TARGET), s,
        l -> l.politeOk() + " of " + l.politeSent() + verdict(l.politeShare() >= POLITE_TARGET)));
    rows.add(row("peak RSS < " + RSS_TARGET_MB + " MB (" + String.join(", ", s.levels().get(0).peakRssMb().keySet()) + ")", s,
        l -> String.join(", ", l.peakRssMb().values().stream().map(String::valueOf).toList()) + " MB"
            + (l.troubles().containsValue(OUT_OF_HEAP) ? ", " + l.troubles().entrySet().stream()
                .filter(e -> e.getValue().equals(OUT_OF_HEAP)).map(Map.Entry::getKey).toList() + " out of heap" : "")
            + verdict(l.memoryMet())));
    rows.add(row("A6 normal again ≤ " + num(RECOVERY_TARGET_S) + " s after the flood", s,
        l -> l.recoverySeconds() == null ? "not within " + RECOVERY_GIVE_UP.toSeconds() + " s" + verdict(false)
            : num(l.recoverySeconds()) + " s" + verdict(l.recoverySeconds() <= RECOVERY_TARGET_S)));
    report.table(headers, rows);
    s.levels().stream().filter(l -> !l.troubles().isEmpty()).findFirst().ifPresent(l -> report.paragraph(
        "After " + l.multiple() + "×: " + l.troubles().entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).toList()
            + "; the levels above it were not run on this stack."));

    List<List<String>> detail = new ArrayList<>();
    for (Level l : s.levels()) {
      detail.add(List.of(l.multiple() + "×", l.sent() + " (late p99 " + ms(l.lateP99Ms()) + " ms)",
          statuses(l.statuses()) + (l.unanswered() > 0 ? ", " + l.unanswered() + " unanswered" : ""),
          ms(l.refusedSinceSentP50Ms()) + " / " + ms(l.refusedSinceSentP99Ms()),
          ms(l.gatewayRefusalP50Ms()) + " / " + ms(l.gatewayRefusalP99Ms()) + "; " + ms(l.serviceRefusalP50Ms()) + " / "
              + ms(l.serviceRefusalP99Ms()),
          statuses(l.politeStatuses()) + " (p99 " + ms(l.politeP99Ms()) + " ms)", l.gatewayLimit().toString(), l.serviceLimit().toString(),
          cores(l.cpu())));
    }
    report.table(List.of("Level", "Sent (generator late p99)", "A6 answers", "Refusals since sent p50 / p99 (ms)",
        "Refusals in the gateway; in the order-service p50 / p99 (ms)",
        "Polite A5", "Gateway's limit for A6", "order-service's limit for A6", "CPU (cores) and machine busy"), detail);
  }

  /**
   * What limits each store's figures, from what was measured: the queue the limits let build in a store that
   * serves one call at a time, the CPU the flood and the machine's other work took, and where a refusal's
   * time went.
   */
  static String whatLimitsIt(Map<String, Store> stores) {
    StringBuilder text = new StringBuilder("What limits it: ");
    Store moto = stores.get("moto");
    if (moto != null && !moto.levels().isEmpty()) {
      Level top = moto.levels().get(moto.levels().size() - 1);
      double perCallMs = 1000 / moto.capacity();
      double queued = Math.max(top.gatewayLimit().maxInflight(), top.serviceLimit().maxInflight());
      text.append("on moto, the store. It serves one request at a time, about ").append(ms(perCallMs))
          .append(" ms each at the measured capacity, so an admitted call waits behind every call the limits let in "
              + "before it: during the ").append(top.multiple()).append("× flood the gateway's limit for A6 "
              + "ranged ").append(num(top.gatewayLimit().min())).append("–").append(num(top.gatewayLimit().max()))
          .append(" and the order-service's ").append(num(top.serviceLimit().min())).append("–")
          .append(num(top.serviceLimit().max())).append(", up to ").append(num(queued)).append(" calls in flight, and ")
          .append(num(queued)).append(" × ").append(ms(perCallMs)).append(" ms = ").append(ms(queued * perCallMs))
          .append(" ms, against an admitted p99 of ").append(ms(top.admittedP99Ms()))
          .append(" ms. One or two calls in flight keep moto busy; what the limits admit beyond that is queue. ")
          .append("And moto itself slows as the flood grows: at ").append(top.multiple()).append("× it answered A6 ")
          .append(num(top.goodputPerSecond())).append(" times a second (")
          .append(ms(1000 / Math.max(top.goodputPerSecond(), 1e-9))).append(" ms each, against ").append(ms(perCallMs))
          .append(" at capacity), with ").append(cores(top.cpu(), "moto"))
          .append(" cores, while the load generator on its core used ").append(cores(top.cpu(), "bench"))
          .append(": sending the flood and reading its refusals takes the CPU moto needs. On 2 cores the generator has "
              + "nowhere else to run; a third core (or a second machine) for it is what would measure admission alone. "
              + "The polite caller's calls wait in the same queue (p99 ")
          .append(ms(moto.levels().stream().mapToDouble(Level::politeP99Ms).max().orElse(0)))
          .append(" ms at worst), and one sent while two of its own were still waiting finds its route's share of a full "
              + "limit taken. ");
    }
    Store standIn = stores.get("stand-in");
    if (standIn != null && !standIn.levels().isEmpty()) {
      Level top = standIn.levels().get(standIn.levels().size() - 1);
      double gatewayMicros = top.cpu().coresByProcess().getOrDefault("gateway", 0.0) * 1e6 / top.offeredPerSecond();
      double benchMicros = top.cpu().coresByProcess().getOrDefault("bench", 0.0) * 1e6 / top.offeredPerSecond();
      text.append("On the stand-in, the CPU: the store answers in microseconds, so A6's capacity is what the "
              + "system's cores do for the whole path, and a refusal is cheap but not free. At ").append(top.multiple()).append("× the gateway "
              + "spent ").append(num(gatewayMicros)).append(" µs of CPU per offered call and the load generator (with the "
              + "stand-in) ").append(num(benchMicros)).append(" µs, and the machine was ").append(percent(top.cpu().machineBusy()))
          .append(" busy. ");
    }
    text.append("A refusal's own time in the gateway (its gRPC timer, from the request's headers to the answer) has a "
        + "p50 near a millisecond; its p99, and the callers' p99, are the time its threads waited for a core of a "
        + "machine the flood keeps busy, with other work on it (\"others\" above, in cores). ");
    return text.toString();
  }

  /** A process's cores in a measured stretch, "?" where it was not measured. */
  private static String cores(Usage.Measured cpu, String process) {
    Double cores = cpu.coresByProcess().get(process);
    return cores == null ? "?" : ms(cores);
  }

  private static List<String> row(String target, Store s, Function<Level, String> cell) {
    List<String> row = new ArrayList<>(List.of(target));
    s.levels().forEach(l -> row.add(cell.apply(l)));
    return row;
  }

  static String verdict(boolean met) {
    return met ? " (met)" : " (**not met**)";
  }

  private static String statuses(Map<String, Long> statuses) {
    List<String> parts = new ArrayList<>();
    statuses.forEach((status, n) -> parts.add(status + " " + n));
    return String.join(", ", parts);
  }

  private static String cores(Usage.Measured cpu) {
    List<String> parts = new ArrayList<>();
    cpu.coresByProcess().forEach((name, cores) -> parts.add(name + " " + ms(cores)));
    return String.join(", ", parts) + "; machine " + percent(cpu.machineBusy()) + ", others " + ms(cpu.othersCores());
  }

  private static String percent(double share) {
    return String.format(Locale.ROOT, "%.0f %%", share * 100);
  }
}
