package dev.warehouse.bench.scenario.writeshards;

import dev.warehouse.bench.stats.Summary;
import java.util.List;
import java.util.Map;

/** What one celebrity run measured. */
record CelebrityRun(int shards, Summary calls, Map<String, Long> markerWritesByShard, String hottestKey,
    double hottestShare, double hottestMarkerShare, List<Observation> observations) {}
