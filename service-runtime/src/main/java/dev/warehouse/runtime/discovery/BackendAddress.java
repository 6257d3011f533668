package dev.warehouse.runtime.discovery;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * One entry of a backend's address list ({@code INVENTORY_ADDRESSES}, {@code ORDER_ADDRESSES}):
 * <ul>
 *   <li>{@code host:port}: one instance, the host's first address;
 *   <li>{@code dns:///name:port}: one instance per address the name has (a Kubernetes headless Service's
 *       name has one per ready pod), as grpc-java's own {@code dns} scheme reads it.
 * </ul>
 * Both are looked up again every resolve period ({@link BackendInstances}). The port is always written:
 * a DNS answer has addresses only.
 */
public record BackendAddress(String host, int port, boolean everyAddress) {

  public static final String DNS_PREFIX = "dns:///";

  /** A host name or IPv4 address, or an IPv6 address in brackets. */
  private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._-]+|\\[[0-9A-Za-z:.%]+]");

  /** @throws IllegalArgumentException saying what is wrong with {@code entry} */
  public static BackendAddress parse(String entry) {
    String value = entry.trim();
    if (value.isEmpty()) {
      throw new IllegalArgumentException("an empty address");
    }
    boolean dns = value.toLowerCase(Locale.ROOT).startsWith("dns:");
    String hostPort = value;
    if (dns) {
      if (!value.toLowerCase(Locale.ROOT).startsWith(DNS_PREFIX)) {
        // dns://8.8.8.8/name:port names a DNS server of its own, which the JVM's resolver cannot ask.
        throw new IllegalArgumentException("'" + value + "' must be dns:///name:port (three slashes: no DNS server of"
            + " its own)");
      }
      hostPort = value.substring(DNS_PREFIX.length());
    } else if (value.contains("/")) {
      throw new IllegalArgumentException("'" + value + "' must be host:port or dns:///name:port");
    }
    int colon = hostPort.lastIndexOf(':');
    if (colon < 0 || hostPort.endsWith("]")) {
      throw new IllegalArgumentException("'" + value + "' has no port (" + (dns ? "dns:///name:port" : "host:port")
          + ")");
    }
    String host = hostPort.substring(0, colon);
    if (!HOST.matcher(host).matches()) {
      throw new IllegalArgumentException("'" + value + "' has no valid host name or address"
          + (host.contains(":") && !host.startsWith("[") ? " (write an IPv6 address in brackets: [::1]:50052)" : ""));
    }
    int port;
    try {
      port = Integer.parseInt(hostPort.substring(colon + 1));
    } catch (NumberFormatException e) {
      port = -1;
    }
    if (port <= 0 || port > 65_535) {
      throw new IllegalArgumentException("'" + value + "' has no valid port (1-65535)");
    }
    return new BackendAddress(host, port, dns);
  }

  /** Parses every entry of a configured list, each as {@link #parse} does. */
  public static List<BackendAddress> parseAll(List<String> entries) {
    List<BackendAddress> addresses = new ArrayList<>();
    entries.forEach(entry -> addresses.add(parse(entry)));
    return List.copyOf(addresses);
  }

  /**
   * The comma-separated list of addresses in the variable {@code name} (or {@code fallback}), each checked
   * as {@link #parse} does; a malformed one is a start-up problem naming the variable and the entry.
   */
  public static List<String> read(dev.warehouse.runtime.env.EnvReader reader, String name, String fallback) {
    String value = reader.string(name, fallback);
    List<String> entries = new ArrayList<>();
    for (String part : value.split(",", -1)) {
      try {
        entries.add(parse(part).toString());
      } catch (IllegalArgumentException e) {
        reader.problem(name + " must be host:port or dns:///name:port, separated by commas: " + e.getMessage());
        return List.of();
      }
    }
    return List.copyOf(entries);
  }

  /** As it is written in the configuration. */
  @Override
  public String toString() {
    return (everyAddress ? DNS_PREFIX : "") + host + ":" + port;
  }
}
