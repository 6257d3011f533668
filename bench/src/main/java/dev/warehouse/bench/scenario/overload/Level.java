package dev.warehouse.bench.scenario.overload;

import static dev.warehouse.bench.scenario.overload.Overload.RSS_TARGET_MB;
import static dev.warehouse.bench.scenario.overload.OverloadSampler.OUT_OF_HEAP;

import java.util.List;
import java.util.Map;

/**
 * One level of load. Latencies in ms, from each request's intended start unless "since sent"; RSS in MB;
 * {@code recoverySeconds} null when A6 had not recovered within {@link Overload#RECOVERY_GIVE_UP}. The refusal
 * times are the processes' own ({@code grpc_server_processing_duration} of GetOrder's RESOURCE_EXHAUSTED
 * answers): the gateway's counts both its refusals and those it forwarded from the order-service.
 * {@code limitTimeline}: seconds since the level's start, then the gateway's limit and calls in flight, and
 * the order-service's.
 */
public record Level(int multiple, double askedPerSecond, double offeredPerSecond, long sent, double lateP50Ms,
    double lateP99Ms, double lateMaxMs, double goodputPerSecond, double goodputShare, double admittedP50Ms,
    double admittedP99Ms, double admittedP99OverUnloaded, long refused, double refusedP50Ms, double refusedP99Ms,
    double refusedSinceSentP50Ms, double refusedSinceSentP99Ms, Map<String, Long> statuses, long unanswered,
    long politeSent, long politeOk, Map<String, Long> politeStatuses, double politeP99Ms, Map<String, Long> peakRssMb,
    Double recoverySeconds, Limits gatewayLimit, Limits serviceLimit, long rejectedByGateway, long rejectedByService,
    double gatewayRefusalP50Ms, double gatewayRefusalP99Ms, double serviceRefusalP50Ms, double serviceRefusalP99Ms,
    List<List<Double>> limitTimeline, Usage.Measured cpu, Map<String, String> troubles) {

  double politeShare() {
    return politeSent == 0 ? 0 : politeOk / (double) politeSent;
  }

  long peakRss() {
    return peakRssMb.values().stream().mapToLong(Long::longValue).max().orElse(0);
  }

  /** Memory held: every RSS below the target, and no process out of heap (its RSS stays low while it dies). */
  boolean memoryMet() {
    return peakRss() < RSS_TARGET_MB && troubles.values().stream().noneMatch(OUT_OF_HEAP::equals);
  }
}
