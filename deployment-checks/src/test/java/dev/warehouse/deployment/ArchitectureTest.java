package dev.warehouse.deployment;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The layering docs/design.md states, checked on the compiled production classes: within a service, the endpoints
 * ({@code grpc}) and the adapters ({@code store}, {@code stock}, {@code recovery}, {@code expiry}, {@code audit})
 * depend on the {@code domain}, never the other way, and never on each other's internals; the service's root
 * package assembles the process and nothing depends on it; the runtimes never depend on a service; and no
 * packages form a cycle.
 */
@Tag("deployment")
class ArchitectureTest {

  private static JavaClasses production;

  @BeforeAll
  static void importProductionClasses() {
    production = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.warehouse");
  }

  /** Generated contracts ({@code dev.warehouse.<aggregate>.v1}) belong to proto, not to the service of that name. */
  private static final String CONTRACTS = "..v1..";

  /** A service's adapters (the audit, an operator's job, may read the store; nothing may depend on it). */
  private static final List<String> ADAPTERS = List.of("store", "stock", "recovery", "expiry", "audit");
  /** Everything of a service outside its domain: its endpoints and its adapters. */
  private static final List<String> OUTER =
      java.util.stream.Stream.concat(java.util.stream.Stream.of("grpc"), ADAPTERS.stream()).toList();

  /** {@code base.<name>..} for each of {@code names}, then {@code others} as they are. */
  private static String[] packages(String base, List<String> names, String... others) {
    return java.util.stream.Stream.concat(names.stream().map(name -> base + "." + name + ".."), Arrays.stream(others))
        .toArray(String[]::new);
  }

  @ParameterizedTest
  @ValueSource(strings = {"inventory", "order"})
  void theDomainDependsOnNoEndpointAdapterOrTransport(String service) {
    String base = "dev.warehouse." + service;
    noClasses().that().resideInAPackage(base + ".domain..")
        .should().dependOnClassesThat().resideInAnyPackage(packages(base, OUTER, "io.grpc..", "software.amazon..",
            "dev.warehouse.runtime.dynamo..", "dev.warehouse.runtime.service.."))
        .because("the domain holds the rules; endpoints and adapters depend on it, never the reverse")
        .check(production);
  }

  @ParameterizedTest
  @ValueSource(strings = {"inventory", "order"})
  void endpointsReachTheStoreOnlyThroughTheDomain(String service) {
    String base = "dev.warehouse." + service;
    noClasses().that().resideInAPackage(base + ".grpc..")
        .should().dependOnClassesThat().resideInAnyPackage(packages(base, ADAPTERS, "software.amazon..",
            "dev.warehouse.runtime.dynamo.."))
        .because("an endpoint validates, calls a use case and maps its answer")
        .check(production);
  }

  @ParameterizedTest
  @ValueSource(strings = {"inventory", "order"})
  void adaptersDoNotReachIntoEachOther(String service) {
    String base = "dev.warehouse." + service;
    for (String adapter : ADAPTERS.stream().filter(name -> !name.equals("audit")).toList()) {
      noClasses().that().resideInAPackage(base + "." + adapter + "..")
          .should().dependOnClassesThat().resideInAnyPackage(
              packages(base, OUTER.stream().filter(other -> !other.equals(adapter)).toList()))
          .because("adapters meet in the domain's interfaces, wired by the service's root package")
          .allowEmptyShould(true)
          .check(production);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"inventory", "order", "gateway"})
  void nothingDependsOnTheProcessAssembly(String service) {
    String root = "dev.warehouse." + service;
    noClasses().that().resideInAPackage(root + ".*..").and().resideOutsideOfPackage(CONTRACTS)
        .should().dependOnClassesThat().resideInAPackage(root)
        .because("the root package assembles the process from the packages below it")
        .allowEmptyShould(true)
        .check(production);
  }

  @Test
  void theRuntimesDependOnNoService() {
    ArchRule rule = noClasses().that().resideInAPackage("dev.warehouse.runtime..")
        .should().dependOnClassesThat(com.tngtech.archunit.core.domain.JavaClass.Predicates
            .resideInAnyPackage("dev.warehouse.inventory..", "dev.warehouse.order..", "dev.warehouse.gateway..",
                "dev.warehouse.devkit..", "dev.warehouse.bench..")
            .and(com.tngtech.archunit.base.DescribedPredicate.not(
                com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage(CONTRACTS))))
        .because("service-runtime and dynamo-runtime sit below every service and know only the contracts");
    rule.check(production);
  }

  @ParameterizedTest
  @ValueSource(strings = {"inventory", "order", "gateway"})
  void noPackagesOfAServiceFormACycle(String service) {
    slices().matching("dev.warehouse." + service + ".(*)..").should().beFreeOfCycles().check(production);
  }

  @Test
  void noPackagesOfTheRuntimesFormACycle() {
    slices().matching("dev.warehouse.runtime.(*)..").should().beFreeOfCycles()
        .because("each runtime package sits on the ones below it: env and threads at the bottom, process on top of "
            + "service-runtime, service on top of dynamo-runtime")
        .check(production);
  }

  @Test
  void onlyTheProcessAssemblyStartsAServer() {
    noClasses().that().resideOutsideOfPackage("dev.warehouse.runtime.process..")
        .should().callConstructor(dev.warehouse.runtime.process.GrpcServer.class,
            io.grpc.ServerBuilder.class, List.class, List.class, java.time.Duration.class, java.time.Duration.class)
        .because("every process is assembled in one place, ServerProcess; a plug-in adds what it serves")
        .check(production);
  }
}
