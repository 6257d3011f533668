package dev.warehouse.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * One runbook page per alert, and no page without one. Every rule of deploy/prometheus/alerts.yml names a
 * page of docs/runbooks/ in its runbook_url annotation, as a URL: the Prometheus external label
 * runbook_base, set once in each Prometheus configuration, then the page's name (docs/observability.md says
 * why), named after the alert (the burn-rate alerts of one SLO, …Fast,
 * …Medium and …Slow, share their family's page); every CloudWatch alarm of
 * deploy/aws/warehouse-table.yaml names one in its description; every page but the index is named by some
 * alert, holds the sections an on-call reader looks for, and is linked from the index and from
 * docs/alerts.md's list. The Grafana dashboard links the index, and its alerting panels their runbooks,
 * each link the dashboard's docs_base variable followed by the same repository path.
 */
@Tag("deployment")
class RunbooksTest {

  static final Path DIR = Repo.ROOT.resolve("docs/runbooks");
  static final String PREFIX = "docs/runbooks/";
  static final String ANNOTATION = "runbook_url";
  private static final Path INDEX = DIR.resolve("README.md");
  private static final Path RULES = Repo.ROOT.resolve("deploy/prometheus/alerts.yml");
  private static final Path TABLE_TEMPLATE = Repo.ROOT.resolve("deploy/aws/warehouse-table.yaml");
  private static final Path ALERT_LIST = Repo.ROOT.resolve("docs/alerts.md");
  /** An alarm's link: the template's RunbookBase parameter, then one page's name. */
  private static final Pattern ALARM_RUNBOOK = Pattern.compile("Runbook: \\$\\{RunbookBase}/(\\S+)");
  private static final Pattern ALARM_BASE = Pattern.compile("\n  RunbookBase:\n    Type: String\n    Default: (\\S+)\n");
  private static final Pattern FAMILY_SUFFIX = Pattern.compile("(Fast|Medium|Slow)$");
  /** What the dashboard's runbook links start with: its variable for where the repository is browsed. */
  static final String DASHBOARD_BASE = "${docs_base}/";
  /** What each alert's runbook_url starts with: the base its Prometheus sets, rendered when the alert fires. */
  static final String RULE_BASE = "{{ $externalLabels.runbook_base }}/";
  /** The external label that holds the base. */
  static final String BASE_LABEL = "runbook_base";
  /** The Prometheus configurations that load the rules: compose's and Kubernetes'. */
  private static final List<Path> PROMETHEUS_CONFIGS = List.of(
      Repo.ROOT.resolve("deploy/prometheus/prometheus.yml"), Repo.ROOT.resolve("deploy/prometheus/kubernetes.yml"));

  /** Each Prometheus alert's runbook annotation, by alert name. */
  private static final Map<String, String> alertRunbooks = new LinkedHashMap<>();
  /** What each CloudWatch alarm's description names. */
  private static final List<String> alarmRunbooks = new ArrayList<>();

  @BeforeAll
  @SuppressWarnings("unchecked")
  static void read() throws IOException {
    Map<String, Object> rules = new Yaml().load(Files.readString(RULES));
    for (Object group : (List<Object>) rules.get("groups")) {
      for (Map<String, Object> rule : (List<Map<String, Object>>) ((Map<String, Object>) group).get("rules")) {
        if (rule.containsKey("alert")) {
          Map<String, String> annotations = (Map<String, String>) rule.getOrDefault("annotations", Map.of());
          alertRunbooks.put((String) rule.get("alert"), annotations.get(ANNOTATION));
        }
      }
    }
    Matcher m = ALARM_RUNBOOK.matcher(Files.readString(TABLE_TEMPLATE));
    while (m.find()) {
      alarmRunbooks.add(PREFIX + m.group(1));
    }
  }

  @Test
  void everyAlert_namesItsOwnRunbook_whichExists() {
    assertThat(alertRunbooks).hasSizeGreaterThanOrEqualTo(10);
    alertRunbooks.forEach((alert, url) -> {
      assertThat(url).as("%s's %s annotation", alert, ANNOTATION).isNotNull().startsWith(RULE_BASE).endsWith(".md");
      String runbook = path(url);
      assertThat(runbook).as("%s's %s annotation: the base, then one page's name", alert, ANNOTATION).matches("[^/{}]+\\.md")
          .isNotEqualTo("README.md");
      assertThat(DIR.resolve(runbook)).as("%s's runbook", alert).isRegularFile();
      assertThat(stem(runbook)).as("%s's runbook is named after it, or after its family", alert)
          .isIn(alert, FAMILY_SUFFIX.matcher(alert).replaceFirst(""));
    });
  }

  @Test
  void everyCloudWatchAlarm_namesARunbookThatExists() {
    assertThat(alarmRunbooks).as("the alarms' runbooks in deploy/aws/warehouse-table.yaml").hasSizeGreaterThanOrEqualTo(4);
    for (String runbook : alarmRunbooks) {
      assertThat(runbook).startsWith(PREFIX).endsWith(".md");
      assertThat(Repo.ROOT.resolve(runbook)).as("a CloudWatch alarm's runbook").isRegularFile();
    }
  }

  @Test
  void everyRunbook_belongsToAnAlert() throws IOException {
    Set<String> named = namedRunbooks();
    assertThat(runbooks().stream().map(page -> PREFIX + page.getFileName()).toList())
        .as("pages of docs/runbooks/ that no alert or alarm names (the index aside)")
        .isSubsetOf(named);
  }

  @Test
  void everyRunbook_saysWhatItMeans_howToConfirm_andWhatToDo() throws IOException {
    for (Path page : runbooks()) {
      Set<String> headings = DocsLinksTest.anchors(Files.readString(page));
      String name = page.getFileName().toString().replaceFirst("\\.md$", "");
      assertThat(headings).as("the headings of %s", page.getFileName())
          .contains(DocsLinksTest.slug(name), "what-it-means", "how-to-confirm");
      assertThat(headings).as("the headings of %s", page.getFileName()).containsAnyOf("what-to-do", "repair");
    }
  }

  @Test
  void theIndex_andTheAlertsPage_linkEveryRunbook() throws IOException {
    String index = Files.readString(INDEX);
    String list = Files.readString(ALERT_LIST);
    for (Path page : runbooks()) {
      String file = page.getFileName().toString();
      assertThat(index).as("docs/runbooks/README.md").contains("](" + file + ")");
      assertThat(list).as("docs/alerts.md's list of alerts").contains("](runbooks/" + file + ")");
    }
    for (String alert : alertRunbooks.keySet()) {
      String family = FAMILY_SUFFIX.matcher(alert).replaceFirst("");
      assertThat(list).as("docs/alerts.md's list of alerts").containsAnyOf("`" + alert + "`", "`" + family);
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void theDashboardsRunbookLinks_leadToRunbooks() throws IOException {
    // JSON is YAML: SnakeYAML reads the dashboard as it reads the rules.
    Map<String, Object> dashboard = new Yaml().load(Files.readString(Repo.DASHBOARD));
    List<Map<String, Object>> variables = (List<Map<String, Object>>) ((Map<String, Object>) dashboard.get("templating")).get("list");
    assertThat(variables).as("the dashboard's variables").anyMatch(v -> "docs_base".equals(v.get("name")));

    List<String> dashboardLinks = urls((List<Map<String, Object>>) dashboard.get("links"));
    assertThat(dashboardLinks).as("the dashboard's links").contains(DASHBOARD_BASE + PREFIX + "README.md");
    List<String> panelLinks = new ArrayList<>();
    for (Map<String, Object> panel : (List<Map<String, Object>>) dashboard.get("panels")) {
      panelLinks.addAll(urls((List<Map<String, Object>>) panel.get("links")));
      for (Map<String, Object> inner : (List<Map<String, Object>>) panel.getOrDefault("panels", List.of())) {
        panelLinks.addAll(urls((List<Map<String, Object>>) inner.get("links")));
      }
    }
    assertThat(panelLinks).as("the alerting panels' runbook links").hasSizeGreaterThanOrEqualTo(10);

    Set<String> named = namedRunbooks();
    List<String> all = new ArrayList<>(dashboardLinks);
    all.addAll(panelLinks);
    for (String url : all) {
      assertThat(url).as("a runbook link of the dashboard").startsWith(DASHBOARD_BASE + PREFIX);
      String path = url.substring(DASHBOARD_BASE.length());
      assertThat(Repo.ROOT.resolve(path)).as(url).isRegularFile();
      if (!path.endsWith("/README.md")) {
        assertThat(named).as("the runbooks alerts name").contains(path);
      }
    }
  }

  /**
   * The base is set once per Prometheus, as the same URL in compose's and Kubernetes' configuration, and the
   * dashboard's default docs_base is the same place: a URL, not a path, so a notification's link can be clicked.
   */
  @Test
  @SuppressWarnings("unchecked")
  void theRunbookBase_isOneUrl_setInEachPrometheusConfiguration_andTheDashboard() throws IOException {
    Set<String> bases = new TreeSet<>();
    for (Path config : PROMETHEUS_CONFIGS) {
      Map<String, Object> global = (Map<String, Object>) ((Map<String, Object>) new Yaml().load(Files.readString(config)))
          .get("global");
      Map<String, String> external = (Map<String, String>) global.get("external_labels");
      assertThat(external).as("%s's external_labels", Repo.ROOT.relativize(config)).containsKey(BASE_LABEL);
      bases.add(external.get(BASE_LABEL));
    }
    Matcher alarmBase = ALARM_BASE.matcher(Files.readString(TABLE_TEMPLATE));
    assertThat(alarmBase.find()).as("the CloudFormation template's RunbookBase parameter").isTrue();
    bases.add(alarmBase.group(1));
    assertThat(bases).as("the runbook base of every Prometheus configuration and of the alarms").hasSize(1);
    String base = bases.iterator().next();
    assertThat(base).as("the runbook base").matches("https://[^\\s{}]+/" + PREFIX.replaceFirst("/$", "")).doesNotEndWith("/");

    Map<String, Object> dashboard = new Yaml().load(Files.readString(Repo.DASHBOARD));
    Map<String, Object> docsBase = ((List<Map<String, Object>>) ((Map<String, Object>) dashboard.get("templating")).get("list"))
        .stream().filter(v -> "docs_base".equals(v.get("name"))).findFirst().orElseThrow();
    assertThat(docsBase.get("query") + "/" + PREFIX.replaceFirst("/$", ""))
        .as("the dashboard's default docs_base, followed by %s", PREFIX).isEqualTo(base);
    assertThat(((Map<String, Object>) docsBase.get("current")).get("value")).isEqualTo(docsBase.get("query"));
  }

  /** The runbooks the alerts and alarms name, as paths from the repository root. */
  private static Set<String> namedRunbooks() {
    Set<String> named = new TreeSet<>();
    alertRunbooks.values().forEach(url -> named.add(PREFIX + path(url)));
    named.addAll(alarmRunbooks);
    return named;
  }

  /** The page an alert's runbook_url names, after its base. */
  private static String path(String url) {
    return url.substring(RULE_BASE.length());
  }

  private static List<String> urls(List<Map<String, Object>> links) {
    return links == null ? List.of() : links.stream().map(link -> (String) link.get("url")).toList();
  }

  /** The runbook pages: every Markdown file of docs/runbooks/ but its index. */
  static List<Path> runbooks() throws IOException {
    try (Stream<Path> files = Files.list(DIR)) {
      return files.filter(f -> f.toString().endsWith(".md") && !f.equals(INDEX)).sorted().toList();
    }
  }

  private static String stem(String runbook) {
    return Path.of(runbook).getFileName().toString().replaceFirst("\\.md$", "");
  }
}
