package dev.warehouse.deployment;

import java.nio.file.Path;

/** The checked-out repository these checks read (the build sets {@code project.root}; from the module, its parent). */
final class Repo {

  static final Path ROOT = Path.of(System.getProperty("project.root", "..")).toAbsolutePath().normalize();
  static final Path DASHBOARD = ROOT.resolve("deploy/grafana/dashboards/warehouse.json");

  private Repo() {}
}
