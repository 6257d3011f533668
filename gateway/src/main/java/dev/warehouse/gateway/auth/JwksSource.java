package dev.warehouse.gateway.auth;

import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.SecurityContext;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.threads.DaemonThreads;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The public keys tokens are checked against: a JWKS read from a file or a URL at start, and read again
 * every refresh period on a timer thread, so a key published before it signs anything is accepted
 * within one period (rotation without restart). Calls only ever read the keys in memory: verifying a
 * token never waits on a file or the network (the gateway's handlers run on its I/O threads). A read
 * that fails, or finds no public key, keeps the keys already held. Only public keys are kept, whatever
 * the file holds.
 */
public final class JwksSource implements JWKSource<SecurityContext>, AutoCloseable {

  /** Bounds on reading a JWKS URL: a JWKS is a few kilobytes, and the timer thread must not hang. */
  static final int CONNECT_TIMEOUT_MS = 2_000;
  static final int READ_TIMEOUT_MS = 2_000;
  static final int SIZE_LIMIT_BYTES = 256 * 1024;

  private static final Logger log = LoggerFactory.getLogger(JwksSource.class);

  /** Where the set comes from. */
  interface Origin {
    JWKSet read() throws IOException, ParseException;

    String describe();
  }

  private final Origin origin;
  private final AtomicReference<JWKSet> keys = new AtomicReference<>();
  private final ScheduledExecutorService timer;

  private JwksSource(Origin origin, Duration refresh) throws IOException {
    this.origin = origin;
    String problem = refresh();
    if (problem != null) {
      throw new IOException("cannot read the JWKS " + origin.describe() + ": " + problem);
    }
    this.timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("jwks-refresh"));
    timer.scheduleWithFixedDelay(this::refreshAndLog, refresh.toMillis(), refresh.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Reads the file now (failing if it holds no public key) and again every {@code refresh}. */
  public static JwksSource ofFile(Path file, Duration refresh) throws IOException {
    return new JwksSource(new Origin() {
      @Override
      public JWKSet read() throws IOException, ParseException {
        return JWKSet.load(file.toFile());
      }

      @Override
      public String describe() {
        return "file:" + file;
      }
    }, refresh);
  }

  /** Fetches the URL now (failing if it holds no public key) and again every {@code refresh}. */
  public static JwksSource ofUrl(URI url, Duration refresh) throws IOException {
    return new JwksSource(new Origin() {
      @Override
      public JWKSet read() throws IOException, ParseException {
        return JWKSet.load(url.toURL(), CONNECT_TIMEOUT_MS, READ_TIMEOUT_MS, SIZE_LIMIT_BYTES);
      }

      @Override
      public String describe() {
        return url.getScheme() + "://" + url.getHost() + (url.getPort() < 0 ? "" : ":" + url.getPort()) + url.getPath();
      }
    }, refresh);
  }

  @Override
  public List<JWK> get(JWKSelector selector, SecurityContext context) {
    return selector.select(keys.get());
  }

  /** The key ids held now, for logs and tests. */
  /** The key set in use: the same object until a refresh reads different keys. */
  public JWKSet current() {
    return keys.get();
  }

  public List<String> keyIds() {
    return keys.get().getKeys().stream().map(key -> Objects.toString(key.getKeyID(), "-")).toList();
  }

  private void refreshAndLog() {
    String problem = refresh();
    if (problem != null) {
      Events.warn(log, "jwks_refresh_failed").addKeyValue("source", origin.describe()).addKeyValue("error", problem)
          .addKeyValue("kept_key_ids", String.join(",", keyIds())).log();
    }
  }

  /**
   * Reads the set once; returns what went wrong, or null. Never throws: a throwing periodic task is never run again.
   * Package-private so that a unit test can read it again without waiting for the timer.
   */
  String refresh() {
    JWKSet read;
    try {
      read = origin.read().toPublicJWKSet();
    } catch (IOException | ParseException | RuntimeException e) {
      return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
    }
    if (read.getKeys().isEmpty()) {
      return "no public key in it";
    }
    JWKSet previous = keys.get();
    // Replaced only when the keys changed: the set in use is what verified tokens are remembered against.
    if (previous == null || !previous.getKeys().equals(read.getKeys())) {
      keys.set(read);
      Events.info(log, "jwks_loaded").addKeyValue("source", origin.describe())
          .addKeyValue("key_ids", String.join(",", keyIds())).log();
    }
    return null;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
