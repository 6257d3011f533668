package dev.warehouse.bench.scenario.writeshards;

/** One poll during the celebrity workload: what the detector named, and what moto had counted by then. */
record Observation(double seconds, String detectedKey, double detectedShare, double trueShareOfDetected,
    String trueHottestKey, double trueHottestShare) {

  double error() {
    return Math.abs(detectedShare - trueShareOfDetected);
  }

  /** The detector's hottest is the true hottest (or as hot, within half a point) and its share within {@code tolerance}. */
  boolean right(double tolerance) {
    return (detectedKey.equals(trueHottestKey) || trueHottestShare - trueShareOfDetected <= 0.005) && error() <= tolerance;
  }
}
