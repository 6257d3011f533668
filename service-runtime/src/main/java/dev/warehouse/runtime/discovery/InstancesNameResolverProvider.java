package dev.warehouse.runtime.discovery;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Status;
import io.grpc.StatusOr;
import io.grpc.SynchronizationContext;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collection;
import java.util.List;

/**
 * The name resolver of one backend's channels: it hands grpc-java the instances {@link BackendInstances}
 * finds, and each change of them, so round robin connects to an instance added and drops one removed; a
 * channel's {@code refresh} (a lost connection) asks it for a look-up. Registered in a registry of the
 * channel's own ({@link EventLoops}), not the JVM-wide one, so each channel is tied to its own instances.
 */
final class InstancesNameResolverProvider extends NameResolverProvider {

  static final String SCHEME = "instances";
  /** What the channels send as {@code :authority}; servers are checked by certificate identity, not host name. */
  static final String AUTHORITY = "backend";

  private final BackendInstances instances;

  InstancesNameResolverProvider(BackendInstances instances) {
    this.instances = instances;
  }

  /** The channel target this provider resolves. */
  String target() {
    return SCHEME + ":///" + instances.service();
  }

  @Override
  public NameResolver newNameResolver(URI target, NameResolver.Args args) {
    return SCHEME.equals(target.getScheme()) ? new Resolver(instances, args.getSynchronizationContext()) : null;
  }

  @Override
  public String getDefaultScheme() {
    return SCHEME;
  }

  @Override
  protected boolean isAvailable() {
    return true;
  }

  @Override
  protected int priority() {
    return 5;
  }

  @Override
  public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
    return List.of(InetSocketAddress.class);
  }

  private static final class Resolver extends NameResolver {
    private final BackendInstances instances;
    private final SynchronizationContext syncContext;
    private Listener2 listener; // in the sync context
    private Runnable unsubscribe;
    private boolean shutdown; // in the sync context

    Resolver(BackendInstances instances, SynchronizationContext syncContext) {
      this.instances = instances;
      this.syncContext = syncContext;
    }

    @Override
    public String getServiceAuthority() {
      return AUTHORITY;
    }

    @Override
    public void start(Listener2 listener) {
      this.listener = listener;
      // Changes arrive on the look-up thread; grpc-java takes results in the channel's sync context only.
      unsubscribe = instances.subscribe(found -> syncContext.execute(() -> deliver(found)));
    }

    private void deliver(List<InetSocketAddress> found) {
      if (shutdown) {
        return;
      }
      if (found.isEmpty()) {
        // The channel keeps its connections, and asks again (refresh) with a backoff.
        listener.onResult2(ResolutionResult.newBuilder()
            .setAddressesOrError(StatusOr.fromStatus(Status.UNAVAILABLE.withDescription(
                "no instance of " + instances.service() + " found at " + instances.configured())))
            .build());
        return;
      }
      listener.onResult2(ResolutionResult.newBuilder()
          .setAddressesOrError(StatusOr.fromValue(found.stream().map(EquivalentAddressGroup::new).toList()))
          .build());
    }

    @Override
    public void refresh() {
      instances.refresh();
    }

    @Override
    public void shutdown() {
      shutdown = true;
      if (unsubscribe != null) {
        unsubscribe.run();
      }
    }
  }
}
