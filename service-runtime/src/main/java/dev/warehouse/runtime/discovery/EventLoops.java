package dev.warehouse.runtime.discovery;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolverRegistry;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSsl;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One set of I/O threads for a process's server and its channels to other services (the gateway's to
 * its backends, the order-service's to the inventory-service). Sharing them, running callbacks on them
 * directly, and forwarding each call on the thread that read it (the gateway's {@code Backend}) saves
 * the thread hand-offs of a call (measured in docs/performance-log.md): nothing on that path blocks.
 */
public final class EventLoops {

  private EventLoops() {}

  public static EventLoopGroup group(int threads) {
    return group(threads, "gateway-io");
  }

  /** {@code threads} daemon I/O threads named {@code name-…}: epoll where the platform has it, else NIO. */
  public static EventLoopGroup group(int threads, String name) {
    return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true),
        Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
  }

  /**
   * Loads Netty's native libraries now, as the first server or channel would: the epoll transport and, with
   * {@code tls}, BoringSSL (each copied out of the jar and linked; BoringSSL is then probed for what it
   * supports). Processes call it on a second thread as they start, beside work that needs neither.
   */
  public static void loadNatives(boolean tls) {
    Epoll.isAvailable();
    if (tls) {
      OpenSsl.isAvailable();
    }
  }

  public static Class<? extends ServerChannel> serverChannel() {
    return Epoll.isAvailable() ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  public static Class<? extends Channel> clientChannel() {
    return Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /**
   * A channel balancing over the current instances of one backend ({@link BackendInstances}), which it
   * follows as they change, on {@code loops}, secured by {@code credentials} (the gateway's
   * {@code BACKEND_TLS_MODE}, the order-service's {@code INVENTORY_TLS_MODE}), whose callbacks run on the I/O thread that got the answer: no hand-off.
   * Health checks of the balanced channels travel on it too.
   */
  public static NettyChannelBuilder channelTo(BackendInstances instances, EventLoopGroup loops,
      ChannelCredentials credentials) {
    InstancesNameResolverProvider resolver = new InstancesNameResolverProvider(instances);
    // A registry of the channel's own: the target's scheme means these instances, and no other channel's.
    NameResolverRegistry registry = new NameResolverRegistry();
    registry.register(resolver);
    ManagedChannelBuilder<?> builder = Grpc.newChannelBuilder(resolver.target(), credentials, registry);
    if (!(builder instanceof NettyChannelBuilder netty)) {
      throw new IllegalStateException("expected grpc-netty-shaded's channel builder, got "
          + builder.getClass().getName());
    }
    return onLoops(netty, loops);
  }

  /** A channel to one instance, on the loops and with the authority the balanced channels have. */
  public static NettyChannelBuilder channelTo(InetSocketAddress instance, EventLoopGroup loops,
      ChannelCredentials credentials) {
    return onLoops(NettyChannelBuilder.forAddress(instance, credentials)
        .overrideAuthority(InstancesNameResolverProvider.AUTHORITY), loops);
  }

  private static NettyChannelBuilder onLoops(NettyChannelBuilder builder, EventLoopGroup loops) {
    return builder.eventLoopGroup(loops)
        .channelType(clientChannel())
        .directExecutor();
  }

  /** Closes {@code channels}: calls in flight get up to 5 s each to finish, then the rest are cancelled. */
  public static void close(List<ManagedChannel> channels) {
    channels.forEach(ManagedChannel::shutdown);
    try {
      for (ManagedChannel channel : channels) {
        if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
          channel.shutdownNow();
        }
      }
    } catch (InterruptedException e) {
      channels.forEach(ManagedChannel::shutdownNow);
      Thread.currentThread().interrupt();
    }
  }
}
