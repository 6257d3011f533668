package dev.warehouse.gateway.tls;

import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.devkit.LocalCa;
import dev.warehouse.runtime.process.GrpcServer;
import dev.warehouse.testing.Eventually;
import dev.warehouse.runtime.tls.ChannelTlsConfig;
import dev.warehouse.runtime.tls.PeerIdentity;
import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.tls.TlsMode;
import dev.warehouse.runtime.tls.TransportSecurity;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime's TLS on real Netty servers over loopback, with certificates from the project's own local
 * CA: a service in {@code mtls} mode admits only the trusted identities, refuses certificates from
 * another CA and expired ones in the handshake, keeps health open, and serves a certificate rotated on
 * disk to new connections without a restart; a client channel accepts only the server identities it
 * trusts.
 */
@Tag("integration")
class MutualTlsTest {

  private static final String GATEWAY = LocalCa.spiffeId("gateway");
  private static final String INVENTORY = LocalCa.spiffeId("inventory-service");

  @TempDir
  Path dir;

  private TestCertificates certs;
  private TestCertificates rogue;
  private final List<String> callers = new CopyOnWriteArrayList<>();
  private final List<GrpcServer> servers = new ArrayList<>();
  private final List<AutoCloseable> closeables = new ArrayList<>();

  /** A service whose one method records the caller's identity, as the runtime's context carries it. */
  private final AdminServiceGrpc.AdminServiceImplBase service = new AdminServiceGrpc.AdminServiceImplBase() {
    @Override
    public void listHotKeys(ListHotKeysRequest request, StreamObserver<ListHotKeysResponse> observer) {
      callers.add(PeerIdentity.current().map(PeerIdentity::uri).orElse("none"));
      observer.onNext(ListHotKeysResponse.getDefaultInstance());
      observer.onCompleted();
    }
  };

  @BeforeEach
  void issue() throws Exception {
    certs = new TestCertificates(dir, "trusted");
    rogue = new TestCertificates(dir, "rogue");
    certs.issue("inventory", "inventory-service");
    certs.issue("gateway", "gateway");
    certs.issue("stranger", "client");
    rogue.issue("rogue-gateway", "gateway");
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable closeable : closeables) {
      closeable.close();
    }
    servers.forEach(GrpcServer::stop);
  }

  @Test
  void mtls_admitsTheTrustedIdentity_andPutsItIntoTheCallsContext() throws Exception {
    int port = serve(certs.config(TlsMode.MTLS, "inventory", certs.caFile(), List.of(GATEWAY)));
    Channel gateway = connect(port, certs.config(TlsMode.PLAINTEXT, "gateway", certs.caFile(), List.of()),
        TestCertificates.channel(TlsMode.MTLS, INVENTORY));

    assertThat(call(gateway)).isNotNull();
    assertThat(callers).containsExactly(GATEWAY);
    assertThat(health(gateway)).isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void mtls_refusesAnIdentityItDoesNotTrust_withPermissionDenied_butHealthStaysOpen() throws Exception {
    int port = serve(certs.config(TlsMode.MTLS, "inventory", certs.caFile(), List.of(GATEWAY)));
    Channel stranger = connect(port, certs.config(TlsMode.PLAINTEXT, "stranger", certs.caFile(), List.of()),
        TestCertificates.channel(TlsMode.MTLS, INVENTORY));

    assertStatus(() -> call(stranger), Status.Code.PERMISSION_DENIED, "PEER_NOT_TRUSTED");
    assertThat(failure(() -> call(stranger)).getStatus().getDescription())
        .isEqualTo("the identity " + LocalCa.spiffeId("client") + " may not call warehouse.admin.v1.AdminService");
    assertThat(health(stranger)).isEqualTo(ServingStatus.SERVING);
    assertThat(callers).isEmpty();
  }

  @Test
  void mtls_refusesTheHandshake_forACertificateFromAnUnknownCa() throws Exception {
    int port = serve(certs.config(TlsMode.MTLS, "inventory", certs.caFile(), List.of(GATEWAY)));
    // The rogue certificate names the trusted identity, and its holder trusts the right CA: only its issuer is wrong.
    Channel impostor = connect(port, rogue.config(TlsMode.PLAINTEXT, "rogue-gateway", certs.caFile(), List.of()),
        TestCertificates.channel(TlsMode.MTLS, INVENTORY));

    assertThat(failure(() -> call(impostor)).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(failure(() -> health(impostor)).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(callers).isEmpty();
  }

  @Test
  void mtls_refusesTheHandshake_forAnExpiredCertificate() throws Exception {
    Instant now = Instant.now();
    certs.issue("expired-gateway", "gateway", now.minus(Duration.ofDays(2)), now.minus(Duration.ofDays(1)));
    int port = serve(certs.config(TlsMode.MTLS, "inventory", certs.caFile(), List.of(GATEWAY)));
    Channel expired = connect(port, certs.config(TlsMode.PLAINTEXT, "expired-gateway", certs.caFile(), List.of()),
        TestCertificates.channel(TlsMode.MTLS, INVENTORY));

    assertThat(failure(() -> call(expired)).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(callers).isEmpty();
  }

  @Test
  void mtls_refusesCallersWithoutACertificate_andPlaintextCallers() throws Exception {
    int port = serve(certs.config(TlsMode.MTLS, "inventory", certs.caFile(), List.of(GATEWAY)));
    Channel anonymous = connect(port, certs.config(TlsMode.PLAINTEXT, "gateway", certs.caFile(), List.of()),
        TestCertificates.channel(TlsMode.TLS, INVENTORY));
    ManagedChannel plaintext = NettyChannelBuilder.forAddress("127.0.0.1", port, InsecureChannelCredentials.create())
        .build();
    closeables.add(plaintext::shutdownNow);

    assertThat(failure(() -> call(anonymous)).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(failure(() -> call(plaintext)).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(callers).isEmpty();
  }

  @Test
  void client_refusesAServerWhoseIdentityItDoesNotTrust() throws Exception {
    certs.issue("order", "order-service");
    int port = serve(certs.config(TlsMode.MTLS, "order", certs.caFile(), List.of(GATEWAY)));
    Channel expectsInventory = connect(port, certs.config(TlsMode.PLAINTEXT, "gateway", certs.caFile(), List.of()),
        TestCertificates.channel(TlsMode.MTLS, INVENTORY));
    Channel expectsOrders = connect(port, certs.config(TlsMode.PLAINTEXT, "gateway", certs.caFile(), List.of()),
        TestCertificates.channel(TlsMode.MTLS, LocalCa.spiffeId("order-service")));

    assertThat(failure(() -> call(expectsInventory)).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(call(expectsOrders)).isNotNull();
    assertThat(callers).containsExactly(GATEWAY);
  }

  @Test
  void client_refusesAServerCertificateFromAnUnknownCa_orExpired() throws Exception {
    Instant now = Instant.now();
    rogue.issue("rogue-inventory", "inventory-service");
    certs.issue("expired-inventory", "inventory-service", now.minus(Duration.ofDays(2)), now.minus(Duration.ofDays(1)));
    int roguePort = serve(rogue.config(TlsMode.MTLS, "rogue-inventory", certs.caFile(), List.of(GATEWAY)));
    int expiredPort = serve(certs.config(TlsMode.MTLS, "expired-inventory", certs.caFile(), List.of(GATEWAY)));
    TlsConfig gateway = certs.config(TlsMode.PLAINTEXT, "gateway", certs.caFile(), List.of());

    assertThat(failure(() -> call(connect(roguePort, gateway, TestCertificates.channel(TlsMode.MTLS, INVENTORY))))
        .getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(failure(() -> call(connect(expiredPort, gateway, TestCertificates.channel(TlsMode.MTLS, INVENTORY))))
        .getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(callers).isEmpty();
  }

  @Test
  void aCertificateRotatedOnDisk_isServedToNewConnections_withoutRestart() throws Exception {
    LocalCa.Issued original = certs.issue("inventory", "inventory-service");
    int port = serve(certs.config(TlsMode.MTLS, "inventory", certs.caFile(), List.of(GATEWAY)));
    TlsConfig gateway = certs.config(TlsMode.PLAINTEXT, "gateway", certs.caFile(), List.of());
    Channel before = connect(port, gateway, TestCertificates.channel(TlsMode.MTLS, INVENTORY));
    assertThat(serverCertificate(before).getSerialNumber()).isEqualTo(original.certificate().getSerialNumber());

    Instant now = Instant.now();
    LocalCa.Issued rotated = certs.issue("inventory", "inventory-service", now.minus(Duration.ofMinutes(1)),
        now.plus(Duration.ofDays(2)));
    X509Certificate seen = Eventually.await(
        () -> serverCertificate(connect(port, gateway, TestCertificates.channel(TlsMode.MTLS, INVENTORY))),
        certificate -> certificate.getSerialNumber().equals(rotated.certificate().getSerialNumber()));

    assertThat(seen.getNotAfter()).isEqualTo(rotated.certificate().getNotAfter());
    assertThat(seen.getSerialNumber()).isNotEqualTo(original.certificate().getSerialNumber());
    assertThat(call(before)).as("a connection opened before the rotation keeps working").isNotNull();
  }

  @Test
  void tls_withACa_verifiesAClientCertificateWhenOffered_withoutRequiringOne() throws Exception {
    int port = serve(certs.config(TlsMode.TLS, "inventory", certs.caFile(), List.of()));
    Channel withCertificate = connect(port, certs.config(TlsMode.PLAINTEXT, "gateway", certs.caFile(), List.of()),
        TestCertificates.channel(TlsMode.MTLS, INVENTORY));
    Channel without = connect(port, certs.config(TlsMode.PLAINTEXT, "gateway", certs.caFile(), List.of()),
        TestCertificates.channel(TlsMode.TLS, INVENTORY));

    call(withCertificate);
    call(without);
    assertThat(callers).containsExactly(GATEWAY, "none");
  }

  private int serve(TlsConfig config) throws Exception {
    TransportSecurity transport = TransportSecurity.load(config).watchFiles();
    closeables.add(transport);
    GrpcServer server = new GrpcServer(transport.serverBuilder(new InetSocketAddress("127.0.0.1", 0)),
        List.of(service), List.of(), Duration.ZERO, Duration.ofSeconds(1)).start();
    servers.add(server);
    return server.port();
  }

  private Channel connect(int port, TlsConfig files, ChannelTlsConfig channel) {
    TransportSecurity transport;
    try {
      transport = TransportSecurity.load(files);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    closeables.add(transport);
    ManagedChannel managed = NettyChannelBuilder.forAddress("127.0.0.1", port, transport.channelCredentials(channel))
        .build();
    closeables.add(() -> managed.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    return managed;
  }

  private static ListHotKeysResponse call(Channel channel) {
    return AdminServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .listHotKeys(ListHotKeysRequest.getDefaultInstance());
  }

  private static ServingStatus health(Channel channel) {
    return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus();
  }

  /** The certificate the server presented on {@code channel}'s connection, read from a health call's TLS session. */
  private static X509Certificate serverCertificate(Channel channel) {
    AtomicReference<X509Certificate> seen = new AtomicReference<>();
    ClientInterceptor capture = new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            ClientCall<Q, R> call = this;
            super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
              @Override
              public void onHeaders(Metadata responseHeaders) {
                Optional<X509Certificate> certificate = PeerIdentity.peerCertificate(call.getAttributes());
                certificate.ifPresent(seen::set);
                super.onHeaders(responseHeaders);
              }
            }, headers);
          }
        };
      }
    };
    health(io.grpc.ClientInterceptors.intercept(channel, capture));
    assertThat(seen.get()).as("the server's certificate").isNotNull();
    return seen.get();
  }
}
