package dev.warehouse.bench.scenario.overload;

import dev.warehouse.bench.stats.Summary;
import java.util.List;

/**
 * A store's run: its route's capacity, unloaded latency, and each level. Public, as {@link Level} and
 * {@link Limits} are: the report writes them into the JSON by reflection, from another package.
 */
public record Store(String store, String cores, List<Double> warmUpRounds, double capacity, Summary capacityRun, Usage.Measured capacityCpu, double unloadedRate,
    Summary unloaded, List<Level> levels) {}
