package dev.warehouse.runtime.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

/** Every process's registry says which build it runs, with the values the build wrote in. */
class BuildInfoTest {

  @Test
  void theRegistry_exportsBuildInfo_withTheBuildsVersionAndRevision() {
    BuildInfo build = BuildInfo.current();
    // Filled in by the build: the pom's version, and a revision (the build's -Dbuild.revision, or "unknown").
    assertThat(build.version()).matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    assertThat(build.revision()).isNotBlank().doesNotContain("${");

    PrometheusMeterRegistry registry = MetricsRegistries.withoutJvmMetrics("inventory-service");
    assertThat(registry.scrape()).contains("build_info{application=\"inventory-service\",revision=\"" + build.revision()
        + "\",version=\"" + build.version() + "\"} 1");
  }
}
