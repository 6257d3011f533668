package dev.warehouse.gateway.backend;

import io.grpc.ChannelCredentials;
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
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One set of I/O threads for the gateway's server and its backend channels. Sharing them, running
 * callbacks on them directly, and forwarding each call on the thread that read it ({@link Backend})
 * saves the thread hand-offs of a forwarded call (measured in docs/performance-log.md): nothing on the
 * forwarding path blocks.
 */
public final class EventLoops {

  private EventLoops() {}

  public static EventLoopGroup group(int threads) {
    return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("gateway-io", true),
        Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
  }

  public static Class<? extends ServerChannel> serverChannel() {
    return Epoll.isAvailable() ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  public static Class<? extends Channel> clientChannel() {
    return Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /**
   * A channel to {@code addresses} (host:port each) on {@code loops}, secured by {@code credentials} (the
   * gateway's {@code BACKEND_TLS_MODE}), whose callbacks run on the I/O thread that got the answer: no
   * hand-off. Health checks of the balanced channels travel on it too.
   */
  public static NettyChannelBuilder channelTo(List<String> addresses, EventLoopGroup loops,
      ChannelCredentials credentials) {
    StaticAddressResolverProvider.register();
    return NettyChannelBuilder.forTarget(StaticAddressResolverProvider.target(addresses), credentials)
        .eventLoopGroup(loops)
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
