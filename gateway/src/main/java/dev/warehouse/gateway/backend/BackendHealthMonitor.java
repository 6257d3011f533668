package dev.warehouse.gateway.backend;

import dev.warehouse.runtime.threads.DaemonThreads;
import io.grpc.ConnectivityState;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Mirrors each backend's availability into the gateway's health service: a service is SERVING while
 * at least one of its instances is connected and passes its own health check (the channel is READY).
 * Also tells each backend's {@link dev.warehouse.runtime.peer.PeerCalls} what it saw: the channel's reconnect
 * backoff is cut short, and a restarted backend is found, and its circuit tried, within a period.
 */
public final class BackendHealthMonitor implements AutoCloseable {

  public static final Duration PERIOD = Duration.ofMillis(500);

  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("backend-health"));

  public BackendHealthMonitor(List<Backend> backends, HealthStatusManager health) {
    timer.scheduleWithFixedDelay(() -> {
      for (Backend backend : backends) {
        ConnectivityState state = backend.state(true);
        health.setStatus(backend.serviceName(),
            state == ConnectivityState.READY ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
        backend.observe(state);
      }
    }, 0, PERIOD.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
