package dev.warehouse.bench.scenario;

import java.time.Duration;
import java.util.List;

/**
 * How long and how hard each scenario runs; {@link #quick()} is a smoke run of the whole tool.
 *
 * @param layerRate requests per second to each layer of scenario 1 on the emulator
 * @param layerMeasure how long each operation is measured there (one round)
 * @param standInRate requests per second to each layer of scenario 1 on the stand-in DynamoDB (four layers
 *     there, nginx the fourth: at 200 each the machine is as busy as it was at 250 with three)
 * @param standInRounds counted rounds there (after the warm-up, which is not counted)
 * @param standInMeasure how long each operation is measured in each of those rounds
 * @param celebrityLead how long scenario 6 adjusts stock without a celebrity first, at each shard count
 * @param celebrity how long scenario 6's celebrity workload then runs
 * @param lowStockWalks how many times scenario 6 walks every page of A7 at each shard count
 * @param securityRate requests per second to each of scenario 7's five gateways (nine JVMs share the
 *     machine there; one of them checks a signature per call)
 * @param capacityCalls how many times scenario 8 calls each RPC, one after another
 * @param overloadMeasure how long scenario 10 measures a route's capacity (closed loop) and its unloaded
 *     latency (open loop), each
 * @param overloadLevel how long scenario 10 offers each level of load
 * @param startupRuns how many times scenario 5 starts each process alone, and the whole stack, on each of its JVMs
 *     (its figures are medians of these)
 */
public record Settings(
    int rounds,
    Duration warmup,
    Duration measure,
    double layerRate,
    Duration layerMeasure,
    double standInRate,
    int standInRounds,
    Duration standInMeasure,
    double proxyRate,
    int proxyConcurrency,
    List<Integer> tableSizes,
    Duration sustained,
    int dataItems,
    Duration celebrityLead,
    Duration celebrity,
    int lowStockWalks,
    double securityRate,
    int capacityCalls,
    Duration overloadMeasure,
    Duration overloadLevel,
    int startupRuns) {

  public static Settings full() {
    return new Settings(3, Duration.ofSeconds(1), Duration.ofSeconds(2), 15, Duration.ofSeconds(6), 200, 5,
        Duration.ofMillis(2500), 1000, 32, List.of(1_000, 10_000, 100_000), Duration.ofMinutes(5), 400,
        Duration.ofSeconds(20), Duration.ofSeconds(30), 3, 80, 50, Duration.ofSeconds(10), Duration.ofSeconds(15), 5);
  }

  public static Settings quick() {
    return new Settings(1, Duration.ofMillis(300), Duration.ofSeconds(1), 10, Duration.ofSeconds(1), 200, 2,
        Duration.ofMillis(500), 200, 8, List.of(200, 2_000), Duration.ofSeconds(10), 400,
        Duration.ofSeconds(4), Duration.ofSeconds(6), 1, 60, 5, Duration.ofSeconds(2), Duration.ofSeconds(3), 1);
  }
}
