package dev.warehouse.runtime.discovery;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.Security;
import java.util.List;

/**
 * Looks a host name up: the system's resolver in production, an answer a test changes at will in tests
 * (each instance then on a loopback address of its own).
 */
@FunctionalInterface
public interface AddressLookup {

  /** The JVM's resolver ({@code /etc/hosts}, then DNS), every address of the name. */
  AddressLookup SYSTEM = host -> List.of(InetAddress.getAllByName(host));

  /** @throws UnknownHostException when the name has no address (a headless Service with no ready pod) */
  List<InetAddress> lookup(String host) throws UnknownHostException;

  /**
   * Turns the JVM's own DNS cache off, the failures' cache included ({@code networkaddress.cache.ttl},
   * {@code networkaddress.cache.negative.ttl}): it would otherwise answer from memory for up to 30 s
   * (10 s for a name that failed), and hide instances added or removed for that long. The resolve period
   * is the process's cache (the gateway's backends, the order-service's inventory). The JVM reads these once, at its first look-up: call this first thing in
   * {@code main}.
   */
  static void disableJvmCache() {
    Security.setProperty("networkaddress.cache.ttl", "0");
    Security.setProperty("networkaddress.cache.negative.ttl", "0");
  }
}
