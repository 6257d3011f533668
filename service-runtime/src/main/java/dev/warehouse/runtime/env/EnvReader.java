package dev.warehouse.runtime.env;

import dev.warehouse.logging.LogSettings;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads typed settings from environment variables, with defaults, collecting every problem instead of
 * stopping at the first, so one start-up error names every bad variable.
 */
public final class EnvReader {

  private final Map<String, String> env;
  private final List<String> problems = new ArrayList<>();
  private final Set<String> names = new LinkedHashSet<>();

  public EnvReader(Map<String, String> env) {
    this.env = env;
  }

  /** @throws IllegalArgumentException naming every malformed variable read so far */
  public void throwIfProblems() {
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("invalid configuration: " + String.join("; ", problems));
    }
  }

  /** Records a problem that no single variable shows, such as one that must be below another. */
  public void problem(String description) {
    problems.add(description);
  }

  /** Whether {@code name} is set (not blank), without making it one of {@link #names}: for a setting that is gone. */
  public boolean isSet(String name) {
    String value = env.get(name);
    return value != null && !value.isBlank();
  }

  /** The names of every variable read so far, in order: what a deployment may set. */
  public List<String> names() {
    return List.copyOf(names);
  }

  /** Every set variable whose name starts with {@code prefix}: for a library that reads its own (OpenTelemetry's). */
  public Map<String, String> startingWith(String prefix) {
    Map<String, String> found = new java.util.TreeMap<>();
    env.forEach((name, value) -> {
      if (name.startsWith(prefix) && value != null && !value.isBlank()) {
        found.put(name, value.trim());
      }
    });
    return found;
  }

  public String string(String name, String fallback) {
    names.add(name);
    String value = env.get(name);
    return value == null || value.isBlank() ? fallback : value.trim();
  }

  public int port(String name, int fallback) {
    long value = number(name, fallback);
    if (value < 0 || value > 65_535) {
      problems.add(name + " must be a port number (0-65535), got " + value);
      return fallback;
    }
    return (int) value;
  }

  /** A port, or empty when the variable is unset or blank. */
  public Optional<Integer> optionalPort(String name) {
    if (string(name, "").isEmpty()) {
      return Optional.empty();
    }
    int port = port(name, -1);
    return port < 0 ? Optional.empty() : Optional.of(port);
  }

  public long positiveLong(String name, long fallback) {
    long value = number(name, fallback);
    if (value <= 0) {
      problems.add(name + " must be positive, got " + value);
      return fallback;
    }
    return value;
  }

  public long nonNegativeLong(String name, long fallback) {
    long value = number(name, fallback);
    if (value < 0) {
      problems.add(name + " must be zero or more, got " + value);
      return fallback;
    }
    return value;
  }

  public int positiveInt(String name, int fallback) {
    return asInt(name, positiveLong(name, fallback), fallback);
  }

  public int nonNegativeInt(String name, int fallback) {
    return asInt(name, nonNegativeLong(name, fallback), fallback);
  }

  private int asInt(String name, long value, int fallback) {
    if (value > Integer.MAX_VALUE) {
      problems.add(name + " must be at most " + Integer.MAX_VALUE + ", got " + value);
      return fallback;
    }
    return (int) value;
  }

  /** A share: a decimal number above 0 and at most 1, such as {@code 0.5}. */
  public double fraction(String name, double fallback) {
    String value = string(name, Double.toString(fallback));
    double share;
    try {
      share = Double.parseDouble(value);
    } catch (NumberFormatException e) {
      share = Double.NaN;
    }
    if (!(share > 0 && share <= 1)) { // NaN too
      problems.add(name + " must be a number above 0 and at most 1, got '" + value + "'");
      return fallback;
    }
    return share;
  }

  public boolean bool(String name, boolean fallback) {
    String value = string(name, Boolean.toString(fallback));
    if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
      problems.add(name + " must be true or false, got '" + value + "'");
      return fallback;
    }
    return Boolean.parseBoolean(value);
  }

  public Optional<URI> uri(String name) {
    String value = string(name, "");
    if (value.isEmpty()) {
      return Optional.empty();
    }
    try {
      URI uri = URI.create(value);
      if (uri.getScheme() == null || uri.getHost() == null) {
        throw new IllegalArgumentException("no scheme or host");
      }
      return Optional.of(uri);
    } catch (IllegalArgumentException e) {
      problems.add(name + " must be a URL such as http://127.0.0.1:5000, got '" + value + "'");
      return Optional.empty();
    }
  }

  /** One of {@code allowed} (lower case; read case-insensitively). */
  public String choice(String name, String fallback, List<String> allowed) {
    String value = string(name, fallback).toLowerCase(Locale.ROOT);
    if (!allowed.contains(value)) {
      problems.add(name + " must be one of " + String.join(", ", allowed) + ", got '" + value + "'");
      return fallback;
    }
    return value;
  }

  /** The path of a file that must exist and be readable at start-up; empty when the variable is unset. */
  public Optional<Path> readableFile(String name) {
    String value = string(name, "");
    if (value.isEmpty()) {
      return Optional.empty();
    }
    Path path = Path.of(value);
    if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
      problems.add(name + " must name a readable file, got '" + value + "'");
      return Optional.empty();
    }
    return Optional.of(path);
  }

  /**
   * Peer identities: a comma-separated list of absolute URIs, such as {@code spiffe://warehouse.local/gateway}. Unset,
   * none (what that means is the setting's to say). Set but naming none (such as {@code ","}) is a problem: an empty
   * list would admit any certificate the CA signed, which is never what someone who set it meant.
   */
  public List<String> identities(String name) {
    String value = string(name, "");
    if (env.containsKey(name) && value.replace(",", "").isBlank()) {
      problems.add(name + " is set but names no identity: an empty list would admit any certificate the CA signed; "
          + "name the identities (such as spiffe://warehouse.local/gateway), or unset it");
      return List.of();
    }
    List<String> uris = new ArrayList<>();
    for (String part : value.split(",")) {
      String uri = part.trim();
      if (uri.isEmpty()) {
        continue;
      }
      try {
        if (URI.create(uri).getScheme() == null) {
          throw new IllegalArgumentException("no scheme");
        }
        uris.add(uri);
      } catch (IllegalArgumentException e) {
        problems.add(name + " must be URIs such as spiffe://warehouse.local/gateway, separated by commas, got '"
            + value + "'");
        return List.of();
      }
    }
    return List.copyOf(uris);
  }

  /** An address to listen on: an IP address or host name; the fallback {@code 0.0.0.0} means every interface. */
  public String bindAddress(String name, String fallback) {
    String value = string(name, fallback);
    if (value.contains(":") && !value.startsWith("[") && value.chars().filter(c -> c == ':').count() == 1) {
      problems.add(name + " must be an address without a port (the port has its own variable), got '" + value + "'");
      return fallback;
    }
    return value.startsWith("[") && value.endsWith("]") ? value.substring(1, value.length() - 1) : value;
  }

  public Optional<byte[]> aesKey(String name) {
    String value = string(name, "");
    if (value.isEmpty()) {
      return Optional.empty();
    }
    try {
      byte[] key = Base64.getDecoder().decode(value);
      if (key.length == 16 || key.length == 32) {
        return Optional.of(key);
      }
    } catch (IllegalArgumentException ignored) {
      // reported below, without echoing the value: it is a secret
    }
    problems.add(name + " must be the base64 of a 16- or 32-byte key");
    return Optional.empty();
  }

  /** Comma-separated {@link #aesKey}s; empty when unset. */
  public List<byte[]> aesKeys(String name) {
    String value = string(name, "");
    List<byte[]> keys = new ArrayList<>();
    int index = 0;
    for (String part : value.split(",")) {
      index++;
      if (part.isBlank()) {
        continue;
      }
      try {
        byte[] key = Base64.getDecoder().decode(part.trim());
        if (key.length == 16 || key.length == 32) {
          keys.add(key);
          continue;
        }
      } catch (IllegalArgumentException ignored) {
        // reported below, without echoing the value: it is a secret
      }
      problems.add(name + " must be comma-separated base64 of 16- or 32-byte keys; entry " + index + " is not");
    }
    return List.copyOf(keys);
  }

  /**
   * {@value LogSettings#FORMAT} and {@value LogSettings#LEVEL}. Logback applied them already, at the first log
   * line ({@code LogConfigurator}, which reads them before any configuration is); read again here so that a bad
   * value stops the start, as any other, and both are among {@link #names}.
   */
  public LogSettings logSettings() {
    String format = choice(LogSettings.FORMAT, LogSettings.DEFAULT.format().settingValue(), LogSettings.FORMATS);
    String level = choice(LogSettings.LEVEL, LogSettings.DEFAULT.level().toString().toLowerCase(Locale.ROOT),
        LogSettings.LEVELS);
    return LogSettings.lenient(Map.of(LogSettings.FORMAT, format, LogSettings.LEVEL, level));
  }

  private long number(String name, long fallback) {
    String value = string(name, Long.toString(fallback));
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      problems.add(name + " must be a number, got '" + value + "'");
      return fallback;
    }
  }
}
