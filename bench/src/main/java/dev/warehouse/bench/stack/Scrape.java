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

  private static double value(String line) {
    return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
  }
}
