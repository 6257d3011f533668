package dev.warehouse.runtime.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * What build a process runs: its version and the commit it was built from, written into the jar at build
 * time ({@code build.properties}, filtered by Maven; the revision is {@code -Dbuild.revision}, "unknown"
 * unless the build says). Exported as {@code build_info{version, revision} 1}, the Prometheus convention,
 * so a dashboard can mark each deploy and split errors by version.
 */
public record BuildInfo(String version, String revision) {

  /** The gauge's name (Prometheus: {@code build_info}). */
  public static final String METRIC = "build.info";

  /** This process's build, from the resource the build filled in. */
  public static BuildInfo current() {
    Properties properties = new Properties();
    try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
      if (in == null) {
        return new BuildInfo("unknown", "unknown");
      }
      properties.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new BuildInfo(properties.getProperty("version", "unknown"), properties.getProperty("revision", "unknown"));
  }

  /** Registers {@code build_info{version, revision}} with the value 1. */
  public void register(MeterRegistry registry) {
    Gauge.builder(METRIC, () -> 1).description("The build this process runs: its version and revision")
        .tag("version", version).tag("revision", revision).register(registry);
  }
}
