package dev.warehouse.bench.scenario.writeshards;

import dev.warehouse.bench.stats.Summary;

/** A7 at one shard count, per page. */
record FanOutCost(int shards, long pages, double queriesPerPage, double examinedPerReturned, double rcuPerPage,
    double itemsPerPage, Summary latency, boolean complete) {}
