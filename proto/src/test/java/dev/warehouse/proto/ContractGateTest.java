package dev.warehouse.proto;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.testing.Commands;
import dev.warehouse.testing.Commands.Run;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The contracts' compatibility gate: buf's lint (proto/buf.yaml's rule set) and its breaking-change check
 * against the last released contract (proto/baseline/warehouse.binpb), with buf as ./test.sh installs it
 * (tools/buf, pinned) or {@code BUF_BIN}. The last test shows that the gate closes: a field deleted from a
 * copy of the contracts fails the same check.
 */
@Tag("integration")
class ContractGateTest {

  private static final Path MODULE = Path.of("").toAbsolutePath();
  private static final Path SOURCES = MODULE.resolve("src/main/proto");
  private static final Path DEPS = MODULE.resolve("target/buf-deps");
  private static final Path BASELINE = MODULE.resolve("baseline/warehouse.binpb");
  private static final Pattern IMPORT = Pattern.compile("^import \"(google/(?!protobuf/)[^\"]+)\";", Pattern.MULTILINE);

  private static Path buf;

  @BeforeAll
  static void findBufAndImports() throws IOException {
    String configured = System.getenv("BUF_BIN");
    buf = configured != null && !configured.isBlank() ? Path.of(configured)
        : MODULE.resolveSibling("tools").resolve("buf/node_modules/.bin/buf");
    assertThat(Files.isExecutable(buf))
        .as("buf is not at %s: ./test.sh installs it (npm ci --prefix tools/buf), or set BUF_BIN", buf).isTrue();
    copyGoogleImports(SOURCES, DEPS);
  }

  @Test
  void theContractsPassLint() throws Exception {
    Run lint = buf(MODULE, "lint", "src/main/proto");
    assertThat(lint.exitValue()).as("buf lint:%n%s", lint.printed()).isZero();
  }

  @Test
  void theContractsBreakNothingOfTheLastRelease() throws Exception {
    Run breaking = buf(MODULE, "breaking", "src/main/proto", "--against", BASELINE.toString());
    assertThat(breaking.exitValue()).as("buf breaking against %s:%n%s", BASELINE, breaking.printed()).isZero();
  }

  @Test
  void aDeletedField_failsTheBreakingCheck() throws Exception {
    Path workspace = Files.createTempDirectory(MODULE.resolve("target"), "buf-breaking-");
    copyTree(SOURCES, workspace.resolve("protos"));
    copyGoogleImports(SOURCES, workspace.resolve("deps"));
    Files.writeString(workspace.resolve("buf.yaml"), "version: v2\nmodules:\n  - path: protos\n  - path: deps\n"
        + "breaking:\n  use: [FILE]\n");
    Path orders = workspace.resolve("protos/warehouse/order/v1/order_service.proto");
    String contract = Files.readString(orders);
    String edited = contract.replaceFirst("(?m)^  string request_id = (\\d+) \\[[^\\]]*\\];$", "  reserved $1;");
    assertThat(edited).as("the edit applies").isNotEqualTo(contract);
    Files.writeString(orders, edited);

    Run breaking = buf(workspace, "breaking", "protos", "--against", BASELINE.toString());
    assertThat(breaking.exitValue()).as(breaking.printed()).isNotZero();
    assertThat(breaking.printed()).contains("\"request_id\"", "PlaceOrderRequest", "was deleted");
  }

  private static Run buf(Path directory, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(buf.toString()));
    command.addAll(List.of(args));
    return Commands.run(directory, Duration.ofMinutes(2), command);
  }

  /** The google/api and google/type files the contracts import, from the classpath into {@code target}. */
  private static void copyGoogleImports(Path sources, Path target) throws IOException {
    Set<String> imports = new TreeSet<>();
    try (Stream<Path> files = Files.walk(sources)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".proto")).toList()) {
        Matcher m = IMPORT.matcher(Files.readString(file));
        while (m.find()) {
          imports.add(m.group(1));
        }
      }
    }
    for (String name : imports) {
      try (InputStream in = ContractGateTest.class.getClassLoader().getResourceAsStream(name)) {
        assertThat(in).as("%s on the classpath", name).isNotNull();
        Path file = target.resolve(name);
        Files.createDirectories(file.getParent());
        Files.write(file, in.readAllBytes());
      }
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path source : files.toList()) {
        Path target = to.resolve(from.relativize(source).toString());
        if (Files.isDirectory(source)) {
          Files.createDirectories(target);
        } else {
          Files.copy(source, target);
        }
      }
    }
  }
}
