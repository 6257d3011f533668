package dev.warehouse.bench.stack;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Reads a few numbers from a process's Prometheus endpoint. */
public final class Scrape {

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private Scrape() {}

  public static String text(int metricsPort) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
          .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    } catch (Exception e) {
      return "";
    }
  }

  /** Sum of the samples of {@code metric} whose labels contain {@code labelFragment}. */
  public static double sum(String text, String metric, String labelFragment) {
    return text.lines().filter(l -> l.startsWith(metric + "{") && l.contains(labelFragment))
        .mapToDouble(Scrape::value).sum();
  }

  /** Sum of the samples of {@code metric} whose labels contain every one of {@code labelFragments}. */
  public static double sumWhere(String text, String metric, String... labelFragments) {
    return text.lines().filter(l -> l.startsWith(metric + "{"))
        .filter(l -> java.util.Arrays.stream(labelFragments).allMatch(l::contains))
        .mapToDouble(Scrape::value).sum();
  }

  /** Largest sample of {@code metric}. */
  public static double max(String text, String metric) {
    return text.lines().filter(l -> l.startsWith(metric + "{") || l.startsWith(metric + " "))
        .mapToDouble(Scrape::value).max().orElse(0);
  }

  /**
   * The cumulative buckets of histogram {@code metric} ({@code metric_bucket} samples whose labels contain
   * every one of {@code labelFragments}), summed over the series that match, by upper bound ({@code le};
   * +Inf as {@link Double#POSITIVE_INFINITY}).
   */
  public static java.util.TreeMap<Double, Double> buckets(String text, String metric, String... labelFragments) {
    java.util.TreeMap<Double, Double> buckets = new java.util.TreeMap<>();
    text.lines().filter(l -> l.startsWith(metric + "_bucket{"))
        .filter(l -> java.util.Arrays.stream(labelFragments).allMatch(l::contains))
        .forEach(l -> {
          int at = l.indexOf("le=\"") + 4;
          String le = l.substring(at, l.indexOf('"', at));
          buckets.merge(le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le), value(l), Double::sum);
        });
    return buckets;
  }

  /**
   * The {@code q} quantile (0 to 1) of what a histogram counted between two scrapes of its {@link #buckets},
   * interpolated linearly within the bucket it falls in, as Prometheus' {@code histogram_quantile} does (the
   * highest finite bound when it falls in +Inf); NaN when nothing was counted.
   */
  public static double quantile(java.util.TreeMap<Double, Double> before, java.util.TreeMap<Double, Double> after, double q) {
    double total = after.lastEntry() == null ? 0
        : after.lastEntry().getValue() - before.getOrDefault(after.lastKey(), 0.0);
    if (total <= 0) {
      return Double.NaN;
    }
    double rank = q * total;
    double lowerBound = 0;
    double lowerCount = 0;
    for (var bucket : after.entrySet()) {
      double count = bucket.getValue() - before.getOrDefault(bucket.getKey(), 0.0);
      if (count >= rank) {
        if (bucket.getKey().isInfinite()) {
          return lowerBound;
        }
        return count == lowerCount ? bucket.getKey()
            : lowerBound + (bucket.getKey() - lowerBound) * (rank - lowerCount) / (count - lowerCount);
      }
      lowerBound = bucket.getKey();
      lowerCount = count;
    }
    return lowerBound;
  }

  private static double value(String line) {
    return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
  }
}
