package dev.warehouse.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/** The provisioned Grafana dashboard, as the tests read it (JSON is YAML: SnakeYAML reads it). */
final class Dashboard {

  static final java.nio.file.Path FILE = StackProcess.ROOT.resolve("deploy/grafana/dashboards/warehouse.json");
  /** Grafana's {@code label_values(series, label)}, the one form of variable query the dashboard uses. */
  private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((.+),\\s*(\\w+)\\)");

  private Dashboard() {}

  /** Every panel query's PromQL, as written (with the dashboard's variables), rows' inner panels included. */
  static List<String> queries() {
    List<String> queries = new ArrayList<>();
    for (Map<String, Object> panel : list(read(), "panels")) {
      addTargets(panel, queries);
      for (Map<String, Object> inner : list(panel, "panels")) {
        addTargets(inner, queries);
      }
    }
    return queries;
  }

  /** The annotations' PromQL (the deploy marks), which Grafana runs as range queries over the time shown. */
  static List<String> annotationQueries() {
    return list(map(read(), "annotations"), "list").stream()
        .map(a -> (String) a.get("expr")).filter(e -> e != null && !e.isBlank()).toList();
  }

  /**
   * The query variables' queries as PromQL: {@code label_values(series, label)} becomes
   * {@code count by (label) (series)}, whose answer has a series per value Grafana would list.
   */
  static List<String> variableQueries() {
    List<String> queries = new ArrayList<>();
    for (Map<String, Object> variable : list(map(read(), "templating"), "list")) {
      if (!"query".equals(variable.get("type"))) {
        continue;
      }
      Object query = variable.get("query");
      String text = query instanceof Map<?, ?> q ? (String) q.get("query") : (String) query;
      Matcher m = LABEL_VALUES.matcher(text);
      if (!m.matches()) {
        throw new IllegalStateException("a variable query this test cannot run: " + text);
      }
      queries.add("count by (" + m.group(2) + ") (" + m.group(1) + ")");
    }
    return queries;
  }

  /** The names of the query variables (version, pod), which the queries use as regular expressions. */
  static List<String> queryVariables() {
    return list(map(read(), "templating"), "list").stream()
        .filter(v -> "query".equals(v.get("type"))).map(v -> (String) v.get("name")).toList();
  }

  /**
   * {@code expr} as Prometheus can run it: Grafana's rate interval as one minute (a scrape a second here), and
   * each query variable as {@code .*}, which is what its "All" selects.
   */
  static String runnable(String expr) {
    String runnable = expr.replace("$__rate_interval", "1m");
    for (String name : queryVariables()) {
      runnable = runnable.replaceAll("\\$\\{" + name + "}|\\$" + name + "\\b", ".*");
    }
    return runnable;
  }

  private static void addTargets(Map<String, Object> panel, List<String> queries) {
    for (Map<String, Object> target : list(panel, "targets")) {
      if (target.get("expr") != null) {
        queries.add((String) target.get("expr"));
      }
    }
  }

  /** The file, parsed once: each query list reads it, and runnable() once per query. */
  private static Map<String, Object> read() {
    return Parsed.DASHBOARD;
  }

  private static final class Parsed {
    static final Map<String, Object> DASHBOARD = parse();

    private static Map<String, Object> parse() {
      try {
        return new Yaml().load(Files.readString(FILE));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Map<String, Object> parent, String key) {
    return (Map<String, Object>) parent.getOrDefault(key, Map.of());
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> parent, String key) {
    return (List<Map<String, Object>>) parent.getOrDefault(key, List.of());
  }
}
