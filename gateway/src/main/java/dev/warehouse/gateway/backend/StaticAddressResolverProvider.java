package dev.warehouse.gateway.backend;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.StatusOr;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Resolves {@code static:///host1:port1,host2:port2} to those addresses, one per instance, so one
 * channel balances over a fixed list of instances (the gateway's configuration).
 */
public final class StaticAddressResolverProvider extends NameResolverProvider {

  public static final String SCHEME = "static";
  private static boolean registered;

  /** Registers the scheme once per JVM. */
  public static synchronized void register() {
    if (!registered) {
      NameResolverRegistry.getDefaultRegistry().register(new StaticAddressResolverProvider());
      registered = true;
    }
  }

  /** The channel target for a list of host:port addresses. */
  public static String target(List<String> addresses) {
    return SCHEME + ":///" + String.join(",", addresses);
  }

  @Override
  public NameResolver newNameResolver(URI target, NameResolver.Args args) {
    if (!SCHEME.equals(target.getScheme())) {
      return null;
    }
    List<EquivalentAddressGroup> groups = new ArrayList<>();
    for (String address : target.getPath().substring(1).split(",")) {
      int colon = address.lastIndexOf(':');
      groups.add(new EquivalentAddressGroup(
          new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)))));
    }
    return new NameResolver() {
      @Override
      public String getServiceAuthority() {
        return "backend";
      }

      @Override
      public void start(Listener2 listener) {
        listener.onResult2(ResolutionResult.newBuilder()
            .setAddressesOrError(StatusOr.fromValue(groups))
            .build());
      }

      @Override
      public void shutdown() {}
    };
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
}
