package dev.warehouse.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The provisioned Grafana dashboard, as the tests read it. */
final class Dashboard {

  static final java.nio.file.Path FILE = StackProcess.ROOT.resolve("deploy/grafana/dashboards/warehouse.json");
  private static final Pattern EXPR = Pattern.compile("\"expr\":\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

  private Dashboard() {}

  /** Every panel query's PromQL. */
  static List<String> queries() {
    try {
      Matcher m = EXPR.matcher(Files.readString(FILE));
      List<String> queries = new ArrayList<>();
      while (m.find()) {
        queries.add(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
      }
      return queries;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
