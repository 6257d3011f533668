package dev.warehouse.deployment;

import dev.warehouse.gateway.GatewayConfig;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.order.OrderMain;
import dev.warehouse.runtime.config.StoreServiceConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md names exactly the variables each process reads, as the processes enumerate
 * them ({@code variables()}, the list compose and Kubernetes are checked against too): a setting added
 * in code without a line in the table, or a line left behind after one is removed, fails here.
 */
@Tag("deployment")
class DocsConfigurationTest {

  private static final Path FILE = Repo.ROOT.resolve("docs/configuration.md");
  private static final List<String> PROCESSES = List.of("gateway", "inventory-service", "order-service");

  /** A row of a table whose first column is "Variable": its names, then an optional "(who)". */
  private static final Pattern ROW = Pattern.compile("^\\| *((?:`[A-Z][A-Z0-9_]*`(?: *[,/] *)?)+) *(?:\\(([a-z -]+)\\))? *\\|");
  private static final Pattern NAME = Pattern.compile("`([A-Z][A-Z0-9_]*)`");

  @Test
  void table_namesExactlyTheVariablesEachProcessReads() throws Exception {
    Map<String, Set<String>> documented = documented(Files.readString(FILE));
    Map<String, Set<String>> read = new TreeMap<>(Map.of(
        "gateway", new TreeSet<>(GatewayConfig.variables()),
        "inventory-service", new TreeSet<>(InventoryMain.variables()),
        "order-service", new TreeSet<>(OrderMain.variables())));
    List<String> differences = new ArrayList<>();
    for (String process : PROCESSES) {
      read.get(process).stream().filter(name -> !documented.get(process).contains(name))
          .forEach(name -> differences.add(process + " reads " + name + ", the table does not give it"));
      documented.get(process).stream().filter(name -> !read.get(process).contains(name))
          .forEach(name -> differences.add("the table gives " + process + " " + name + ", it does not read it"));
    }
    assertThat(differences).as("docs/configuration.md against the processes").isEmpty();
  }

  private static Map<String, Set<String>> documented(String markdown) {
    Map<String, Set<String>> documented = new TreeMap<>();
    PROCESSES.forEach(process -> documented.put(process, new TreeSet<>()));
    boolean inTable = false;
    for (String line : markdown.split("\n")) {
      if (line.startsWith("| Variable |")) {
        inTable = true;
        continue;
      }
      if (!line.startsWith("|")) {
        inTable = false;
      }
      Matcher row = ROW.matcher(line);
      if (!inTable || !row.find()) {
        continue;
      }
      for (String process : readers(row.group(2), line)) {
        Matcher name = NAME.matcher(row.group(1));
        while (name.find()) {
          documented.get(process).add(name.group(1));
        }
      }
    }
    return documented;
  }

  /** The table's "(gateway)", "(services)", "(inventory-service)"; no mark means every process. */
  private static List<String> readers(String mark, String line) {
    if (mark == null) {
      return PROCESSES;
    }
    return switch (mark.trim()) {
      case "gateway" -> List.of("gateway");
      case "services" -> List.of("inventory-service", "order-service");
      case "inventory-service" -> List.of("inventory-service");
      case "order-service" -> List.of("order-service");
      default -> throw new AssertionError("docs/configuration.md: unknown process mark (" + mark + ") in " + line);
    };
  }
}
