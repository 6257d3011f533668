package dev.warehouse.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The README is the front door and docs/ holds the rest: the README stays short, it links every docs
 * page, each page in a folder of docs/ (docs/operations/, docs/runbooks/) is linked from that folder's
 * index, and no relative link in any of them leads to a missing file or heading. GitHub renders a broken
 * link without complaint, so only a test notices one.
 */
@Tag("deployment")
class DocsLinksTest {

  /** Bytes, as {@code wc -c} counts them: the issue's measure. */
  static final long README_LIMIT = 10_000;

  private static final Path ROOT = Repo.ROOT;
  private static final Path README = ROOT.resolve("README.md");

  /** Inline links {@code [text](target)} or {@code [text](target "title")}; the text may hold code. */
  private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern CODE_SPAN = Pattern.compile("`[^`\\n]*`");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

  @Test
  void readme_isUnderTheLimit() throws IOException {
    assertThat(Files.size(README))
        .as("README.md must stay under %d bytes (wc -c); move detail into docs/ and link it", README_LIMIT)
        .isLessThan(README_LIMIT);
  }

  @Test
  void everyRelativeLink_leadsToAFileAndHeadingThatExist() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path page : pages()) {
      for (String target : relativeLinks(page)) {
        String problem = problem(page, target);
        if (problem != null) {
          broken.add(ROOT.relativize(page) + ": (" + target + ") " + problem);
        }
      }
    }
    assertThat(broken).as("broken links").isEmpty();
  }

  @Test
  void readme_linksEveryDocsPage() throws IOException {
    Set<Path> linked = new HashSet<>();
    for (String target : relativeLinks(README)) {
      linked.add(README.getParent().resolve(pathOf(target)).normalize());
    }
    assertThat(docs().stream().filter(page -> !linked.contains(page)).map(ROOT::relativize))
        .as("docs/ pages the README does not link")
        .isEmpty();
  }

  @Test
  void everyPageInAFolder_isLinkedFromTheFoldersIndex() throws IOException {
    List<String> unlinked = new ArrayList<>();
    for (Path page : pages()) {
      Path folder = page.getParent();
      if (folder.equals(ROOT.resolve("docs")) || page.equals(README)) {
        continue;
      }
      // docs/<folder>.md or docs/<folder>/README.md, whichever the folder has
      Path index = Files.exists(folder.resolve("README.md")) ? folder.resolve("README.md")
          : folder.resolveSibling(folder.getFileName() + ".md");
      if (page.equals(index)) {
        continue;
      }
      Set<Path> linked = new HashSet<>();
      if (Files.exists(index)) {
        for (String target : relativeLinks(index)) {
          linked.add(index.getParent().resolve(pathOf(target)).normalize());
        }
      }
      if (!linked.contains(page)) {
        unlinked.add(ROOT.relativize(page) + " (index: " + ROOT.relativize(index) + ")");
      }
    }
    assertThat(unlinked).as("pages their folder's index does not link").isEmpty();
  }

  @Test
  void slug_followsGitHub() {
    // Anchors GitHub gives these headings of docs/ (its rendered pages are the reference).
    assertThat(slug("The table on AWS: `deploy/aws/warehouse-table.yaml`")).isEqualTo("the-table-on-aws-deployawswarehouse-tableyaml");
    assertThat(slug("Why `AWS::DynamoDB::GlobalTable`, even in one Region")).isEqualTo("why-awsdynamodbglobaltable-even-in-one-region");
    assertThat(slug("2. Gateway against a peer proxy (nginx grpc_pass)")).isEqualTo("2-gateway-against-a-peer-proxy-nginx-grpc_pass");
    assertThat(anchors("# A\n## A\n```\n# not a heading\n```\n")).containsExactlyInAnyOrder("a", "a-1");
  }

  /** The anchors GitHub gives a page's headings, duplicates numbered as it numbers them. */
  static Set<String> anchors(String markdown) {
    Set<String> anchors = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (String line : prose(markdown).split("\n")) {
      Matcher heading = HEADING.matcher(line);
      if (heading.matches()) {
        String slug = slug(heading.group(1));
        int count = seen.merge(slug, 1, Integer::sum);
        anchors.add(count == 1 ? slug : slug + "-" + (count - 1));
      }
    }
    return anchors;
  }

  /** GitHub's rule: the heading's text, lower-case, punctuation but '-' and '_' dropped, spaces to '-'. */
  static String slug(String heading) {
    String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1"); // a link's text, not its target
    return text.toLowerCase(java.util.Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "")
        .replace(' ', '-');
  }

  private static String problem(Path page, String target) {
    String path = pathOf(target);
    Path file = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
    if (!Files.exists(file)) {
      return "no such file";
    }
    int hash = target.indexOf('#');
    if (hash < 0 || !file.toString().endsWith(".md")) {
      return null;
    }
    String anchor = target.substring(hash + 1);
    return anchors(read(file)).contains(anchor) ? null : "no heading with anchor #" + anchor + " in " + ROOT.relativize(file);
  }

  private static String pathOf(String target) {
    int hash = target.indexOf('#');
    return hash < 0 ? target : target.substring(0, hash);
  }

  /** Links that stay in the repository: not a URL, not a mail address. */
  static List<String> relativeLinks(Path page) {
    List<String> links = new ArrayList<>();
    Matcher link = LINK.matcher(CODE_SPAN.matcher(prose(read(page))).replaceAll(""));
    while (link.find()) {
      String target = link.group(1);
      if (!target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
        links.add(target);
      }
    }
    return links;
  }

  /** The page without its fenced code blocks, where brackets and '#' lines are code, not Markdown. */
  static String prose(String markdown) {
    StringBuilder prose = new StringBuilder();
    boolean fenced = false;
    for (String line : markdown.split("\n", -1)) {
      if (line.strip().startsWith("```")) {
        fenced = !fenced;
      } else if (!fenced) {
        prose.append(line).append('\n');
      }
    }
    return prose.toString();
  }

  /** The README and every Markdown page under docs/, folders included. */
  private static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(README);
    try (Stream<Path> files = Files.walk(ROOT.resolve("docs"))) {
      files.filter(file -> file.toString().endsWith(".md")).map(Path::normalize).sorted().forEach(pages::add);
    }
    return pages;
  }

  /** The pages directly in docs/, which the README links; a folder's pages are its index's to link. */
  private static List<Path> docs() throws IOException {
    try (Stream<Path> files = Files.list(ROOT.resolve("docs"))) {
      return files.filter(file -> file.toString().endsWith(".md")).map(Path::normalize).sorted().toList();
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
