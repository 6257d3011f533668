package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.load.KeyChooser;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.MachineCpu;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Processes;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.standin.StandInDynamo;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.bench.target.GrpcTargets;
import dev.warehouse.bench.target.Target;
import dev.warehouse.bench.target.Target.Op;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 7: what transport security and caller authentication cost per call through the gateway,
 * side by side with plaintext in one schedule. Five gateways, each its own JVM, differ in one setting
 * at a time: plaintext everywhere; mutual TLS to the services; then also TLS on the client's hop
 * with a bearer JWT, its verification remembered or checked on every call; or mutual TLS on the
 * client's hop, the client certificate being the credential. Two pairs of services serve them (plaintext, and mTLS admitting
 * only the gateway's identity), all on the stand-in DynamoDB, so that what differs is the security
 * work, in microseconds. Certificates and tokens come from the dev kit's {@code certs} and
 * {@code dev-tokens} commands, as {@code run.sh} makes them.
 */
public final class SecurityCost {

  private static final String TITLE = "7. What security costs per call";
  /** One read by key, one query, one write (the write also leaves an audit line): a storefront's calls. */
  private static final List<Op> OPS = List.of(Op.GET_PRODUCT_INVENTORY, Op.LIST_CUSTOMER_ORDERS, Op.PLACE_ORDER);
  private static final String GATEWAY_ID = "spiffe://warehouse.local/gateway";
  /** The development policy's role that places orders and reads stock and orders, and nothing else. */
  private static final String ROLE = "storefront";
  private static final int SOAK_ROUNDS = 6;
  /** The machine is quiet under this share busy, waited for at most this long (after JIT-heavy soaking). */
  static final double QUIET_SHARE = 0.15;
  static final Duration QUIET_LIMIT = Duration.ofSeconds(90);

  static final String PLAINTEXT = "plaintext";
  static final String MTLS_INSIDE = "mTLS to the services";
  static final String JWT = "+ TLS and a JWT from the client";
  static final String JWT_UNCACHED = "+ TLS and a JWT, no token cache";
  static final String CLIENT_CERT = "+ mTLS, client certificate";

  private SecurityCost() {}

  public static void run(Path root, Settings settings, Report report) throws Exception {
    Path work = root.resolve("target/bench-security");
    Path certs = work.resolve("certs");
    Path tokens = work.resolve("tokens");
    Path policy = root.resolve("deploy/auth/policy.dev.yaml");
    devKit(root, work, "certs", certs.toString());
    devKit(root, work, "dev-tokens", tokens.toString(), policy.toString());
    String token = Files.readString(tokens.resolve(ROLE + ".jwt")).strip();
    ChannelCredentials serverOnly = TlsChannelCredentials.newBuilder().trustManager(certs.resolve("ca.pem").toFile()).build();
    ChannelCredentials withClientCert = TlsChannelCredentials.newBuilder()
        .trustManager(certs.resolve("ca.pem").toFile())
        .keyManager(certs.resolve("client.pem").toFile(), certs.resolve("client-key.pem").toFile()).build();

    String table = "bench-" + UUID.randomUUID();
    try (StandInDynamo standIn = StandInDynamo.start(table); Processes processes = new Processes(root);
        GrpcTargets targets = new GrpcTargets()) {
      Map<String, String> plainService = Stack.serviceEnv(standIn.endpoint(), table);
      Proc inventory = processes.start("inventory-service", "inventory-service-plaintext", plainService);
      // Each order-service holds its orders' stock at the inventory of its own kind: plaintext, or over mTLS.
      Proc orders = processes.start("order-service", "order-service-plaintext",
          with(plainService, "INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort));
      Proc mtlsInventory = processes.start("inventory-service", "inventory-service-mtls",
          mtlsService(plainService, certs, "inventory-service"));
      Map<String, String> mtlsOrderEnv = new LinkedHashMap<>(mtlsService(plainService, certs, "order-service"));
      mtlsOrderEnv.putAll(Map.of("INVENTORY_ADDRESSES", "127.0.0.1:" + mtlsInventory.grpcPort, "INVENTORY_TLS_MODE", "mtls",
          "INVENTORY_TRUSTED_PEERS", "spiffe://warehouse.local/inventory-service"));
      Proc mtlsOrders = processes.start("order-service", "order-service-mtls", mtlsOrderEnv);
      for (Proc p : List.of(inventory, orders)) {
        p.awaitServing(120_000);
      }
      for (Proc p : List.of(mtlsInventory, mtlsOrders)) {
        p.awaitServing(120_000, withClientCert);
      }

      Map<String, String> plainBackends = backends(inventory, orders);
      Map<String, String> mtlsBackends = backends(mtlsInventory, mtlsOrders);
      mtlsBackends.putAll(Map.of("BACKEND_TLS_MODE", "mtls",
          "INVENTORY_TRUSTED_PEERS", "spiffe://warehouse.local/inventory-service",
          "ORDER_TRUSTED_PEERS", "spiffe://warehouse.local/order-service",
          "TLS_CA_FILE", certs.resolve("ca.pem").toString(), "TLS_CERT_FILE", certs.resolve("gateway.pem").toString(),
          "TLS_KEY_FILE", certs.resolve("gateway-key.pem").toString()));
      Map<String, String> authenticating = new LinkedHashMap<>(mtlsBackends);
      authenticating.putAll(Map.of("AUTH_MODE", "jwt", "AUTH_POLICY_FILE", policy.toString(),
          "AUTH_JWKS_FILE", tokens.resolve("jwks.json").toString(), "AUTH_JWT_ISSUER", "warehouse-dev",
          "AUTH_JWT_AUDIENCE", "warehouse-gateway"));

      Map<String, Proc> gateways = new LinkedHashMap<>();
      gateways.put(PLAINTEXT, processes.start("gateway", "gateway-plaintext",
          with(plainBackends, "AUTH_MODE", "none")));
      gateways.put(MTLS_INSIDE, processes.start("gateway", "gateway-mtls-inside",
          with(mtlsBackends, "AUTH_MODE", "none")));
      gateways.put(JWT, processes.start("gateway", "gateway-tls-jwt", with(authenticating, "GRPC_TLS_MODE", "tls")));
      gateways.put(JWT_UNCACHED, processes.start("gateway", "gateway-tls-jwt-uncached",
          with(with(authenticating, "GRPC_TLS_MODE", "tls"), "AUTH_TOKEN_CACHE_SIZE", "0")));
      gateways.put(CLIENT_CERT, processes.start("gateway", "gateway-mtls-cert",
          with(authenticating, "GRPC_TLS_MODE", "mtls")));
      gateways.get(PLAINTEXT).awaitServing(120_000);
      gateways.get(MTLS_INSIDE).awaitServing(120_000);
      gateways.get(JWT).awaitServing(120_000, withClientCert);
      gateways.get(JWT_UNCACHED).awaitServing(120_000, withClientCert);
      gateways.get(CLIENT_CERT).awaitServing(120_000, withClientCert);

      DataSet data = new DataSet(settings.dataItems());
      Map<String, ChannelCredentials> credentials = Map.of(PLAINTEXT, InsecureChannelCredentials.create(),
          MTLS_INSIDE, InsecureChannelCredentials.create(), JWT, serverOnly, JWT_UNCACHED, serverOnly,
          CLIENT_CERT, withClientCert);
      for (String layer : gateways.keySet()) {
        targets.add(new GrpcTarget(layer, "127.0.0.1:" + gateways.get(layer).grpcPort,
            "127.0.0.1:" + gateways.get(layer).grpcPort, data, credentials.get(layer),
            Set.of(JWT, JWT_UNCACHED).contains(layer) ? List.of(bearer(token)) : List.of()));
      }
      requireRefusalWithoutToken(gateways.get(JWT), serverOnly, data);
      requireRefusalWithoutToken(gateways.get(JWT_UNCACHED), serverOnly, data);
      measure(targets.byLayer(), gateways, List.of(inventory, orders), List.of(mtlsInventory, mtlsOrders), settings,
          report);
    }
  }

  private static void measure(Map<String, Target> targets, Map<String, Proc> gateways, List<Proc> plainServices,
      List<Proc> mtlsServices, Settings settings, Report report) throws Exception {
    Duration warmup = settings.standInMeasure().dividedBy(6);
    // Nine JVMs compiling on 2 cores: a first measurement here counted their JIT compilers' work as the
    // calls' (several ms of CPU per call, the machine saturated). So: load at the measured rate, wait
    // until the compilers have drained and the machine is quiet, then the usual warm-up.
    long soakStarted = System.nanoTime();
    // The plaintext services serve one layer of five and the mTLS ones four: left to the shared schedule,
    // they were still compiling in the counted rounds (their layer the slowest). A closed loop on their
    // layer alone gives them as many calls first.
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, 1);
    for (Op op : OPS) {
      ClosedLoop.run("warm-up", targets.get(PLAINTEXT).call(op, i -> keys.next()), SideBySide.CLOSED_LOOP_CALLERS,
          Duration.ZERO, settings.standInMeasure().multipliedBy(8));
    }
    SideBySide.measure(targets, OPS, settings.securityRate(), SOAK_ROUNDS, Duration.ZERO, settings.standInMeasure());
    Duration soaked = Duration.ofNanos(System.nanoTime() - soakStarted);
    long quietStarted = System.nanoTime();
    double quiet = MachineCpu.awaitQuiet(QUIET_SHARE, QUIET_LIMIT);
    Duration waited = Duration.ofNanos(System.nanoTime() - quietStarted);
    List<Double> warmUpRounds = SideBySide.warmUp(targets, OPS, settings.securityRate(), settings.standInMeasure());
    MachineCpu machineBefore = MachineCpu.read();
    Map<String, Double> cpuBefore = cpuSeconds(gateways, plainServices, mtlsServices);
    SideBySide.Rounds runs = SideBySide.measure(targets, OPS, settings.securityRate(), settings.standInRounds(), warmup,
        settings.standInMeasure());
    double busy = MachineCpu.read().busySince(machineBefore);
    Map<String, Double> cpu = cpuSeconds(gateways, plainServices, mtlsServices);
    cpu.replaceAll((process, seconds) -> seconds - cpuBefore.get(process));

    List<String> layers = List.copyOf(targets.keySet());
    Map<String, Double> gatewayMicros = new LinkedHashMap<>();
    layers.forEach(layer -> gatewayMicros.put(layer, cpu.get(layer) / runs.requests(layer) * 1e6));
    double plainServiceMicros = cpu.get("plaintext services") / runs.requests(PLAINTEXT) * 1e6;
    double mtlsServiceMicros = cpu.get("mTLS services") / runs.requests(MTLS_INSIDE, JWT, JWT_UNCACHED, CLIENT_CERT) * 1e6;

    List<String> headers = new ArrayList<>(List.of("Operation"));
    headers.addAll(layers);
    List<List<String>> rows = new ArrayList<>();
    List<Map<String, Object>> json = new ArrayList<>();
    Map<String, Double> worstAddedP50 = new LinkedHashMap<>();
    for (Op op : OPS) {
      Map<String, Double> p50 = new LinkedHashMap<>();
      runs.summaries.get(op).forEach((layer, rounds) -> p50.put(layer, Medians.of(rounds, Summary::p50)));
      Map<String, Double> p99 = SideBySide.percentile(runs.byOp.get(op), 99);
      rows.add(row(op.toString(), layers, p50, p99));
      for (String layer : layers.subList(1, layers.size())) {
        worstAddedP50.merge(layer, p50.get(layer) - p50.get(PLAINTEXT), Math::max);
      }
      json.add(Map.of("op", op.toString(), "p50_median_of_rounds_ms", p50, "p99_pooled_ms", p99));
    }
    Map<String, Double> allP50 = SideBySide.percentile(runs.all, 50);
    Map<String, Double> allP99 = SideBySide.percentile(runs.all, 99);
    rows.add(row("**All operations**", layers, allP50, allP99));
    json.add(Map.of("op", "all operations", "p50_pooled_ms", allP50, "p99_pooled_ms", allP99));

    List<List<String>> costs = new ArrayList<>();
    Map<String, Object> costJson = new LinkedHashMap<>();
    for (String layer : layers) {
      boolean base = layer.equals(PLAINTEXT);
      double services = base ? plainServiceMicros : mtlsServiceMicros;
      boolean sameServices = !base && !layer.equals(MTLS_INSIDE);
      costs.add(List.of(layer,
          base ? "—" : ms(worstAddedP50.get(layer)) + " / " + ms(allP99.get(layer) - allP99.get(PLAINTEXT)),
          sameServices ? ms(allP50.get(layer) - allP50.get(MTLS_INSIDE)) + " / "
              + ms(allP99.get(layer) - allP99.get(MTLS_INSIDE)) : "—",
          num(gatewayMicros.get(layer)),
          base ? "—" : num(gatewayMicros.get(layer) - gatewayMicros.get(PLAINTEXT)),
          num(services),
          Long.toString(runs.errors(layer))));
      costJson.put(layer, Map.of("gateway_cpu_us_per_call", gatewayMicros.get(layer),
          "services_cpu_us_per_call", services, "errors", runs.errors(layer)));
    }
    long perLayer = runs.all.get(PLAINTEXT).getTotalCount();
    report.heading(TITLE)
        .paragraph("The same calls through five gateways, each its own JVM, that differ in one setting at a time: "
            + "**" + PLAINTEXT + "** on both hops and no authentication (as every other section runs); **" + MTLS_INSIDE
            + "**, the gateway presenting its certificate and the services admitting only its identity; **" + JWT
            + "**, the client's hop over TLS and each call carrying the development policy's `" + ROLE + "` token "
            + "(ES256), authorized per call and verified once (the gateway remembers a verified token until it "
            + "expires or the keys change); **" + JWT_UNCACHED + "**, the same with `AUTH_TOKEN_CACHE_SIZE=0`, so "
            + "every call's signature is checked, as for callers that each send a token only once; **" + CLIENT_CERT + "**, the client's hop over mutual TLS "
            + "and its certificate's identity the credential. Two pairs of services answer them (plaintext, and "
            + "mTLS), on the stand-in DynamoDB of section 1, so the difference is the security work. The five "
            + "take turns in one open-loop schedule, " + (int) settings.securityRate() + " requests/s each (PlaceOrder, six "
            + "DynamoDB calls, at a sixth of that), same keys, "
            + settings.standInMeasure().toMillis() + " ms per operation and round after " + warmup.toMillis()
            + " ms of warm-up, " + settings.standInRounds() + " rounds (p50: median of the rounds'; p99: over the "
            + "rounds' calls together, " + perLayer + " per layer over all operations), after an uncounted warm-up "
            + "as in section 1 (" + warmUpRounds.size() + " rounds, sums " + warmUpRounds.stream().map(Report::ms).toList()
            + " ms), before which the plaintext layer ran alone in a closed loop of "
            + SideBySide.CLOSED_LOOP_CALLERS + " callers (its services serve one layer, the mTLS ones four), then every "
            + "layer ran " + SOAK_ROUNDS + " uncounted rounds at the measured rate (together "
            + soaked.toSeconds() + " s) and the tool waited until the machine was under " + Math.round(QUIET_SHARE * 100)
            + " % busy for a second (" + waited.toSeconds() + " s; " + Math.round(quiet * 100) + " % at the end): "
            + "nine JVMs compile for minutes on 2 cores, and a first measurement without this counted their JIT "
            + "compilers' work as the calls'. Connections are long-lived, as a client's channel is: the TLS handshakes happen once, before "
            + "the measurement; what is measured is the per-call cost. Before measuring, the tool checks that the "
            + "JWT gateways refuse a call without a token. Latency in ms, p50 / p99:")
        .table(headers, rows)
        .table(List.of("Layer", "Adds over plaintext, p50 worst op / p99 all calls (ms)",
            "Adds over mTLS to the services, p50 / p99 all calls (ms)", "Gateway CPU per call (µs)",
            "Gateway CPU added (µs)", "Services' CPU per call (µs)", "Errors"), costs)
        .paragraph("\"Adds\" is over the plaintext gateway, in the same schedule, and, for the layers that add "
            + "something on the client's hop, over the gateway that only adds mTLS to the services: those share "
            + "the same services, so their difference is the client hop's security alone. The plaintext layer has "
            + "services of its own that serve one layer in five (the mTLS pair serves four), so their JVMs compile "
            + "later and more of their work falls in the counted rounds: the first column's comparison includes "
            + "that, the second does not. CPU per call is each process's user "
            + "and system time during the counted rounds (from /proc) over the calls it was sent, warm-up requests "
            + "included; the mTLS services serve four of the layers, so their figure is an average over those. "
            + "The machine was busy " + Math.round(busy * 100) + " % of the time (2 cores for the load generator and "
            + "nine JVMs), so a p99 carries scheduling noise. Where the time goes: TLS adds AES-GCM record "
            + "encryption and decryption for every frame on each secured hop, on both of its ends; a JWT adds a "
            + "look-up of the remembered token and the policy's check, and, without the cache, parsing the token, "
            + "an ECDSA P-256 signature check and the claims checks; the client-certificate layer reads the "
            + "identity the handshake verified, with no per-call cryptography beyond the record layer.")
        .data("security_cost_standin", json)
        .data("security_cost_cpu", costJson)
        .data("security_cost_machine_busy_share", busy);
  }

  private static List<String> row(String name, List<String> layers, Map<String, Double> p50, Map<String, Double> p99) {
    List<String> row = new ArrayList<>(List.of(name));
    layers.forEach(layer -> row.add(ms(p50.get(layer)) + " / " + ms(p99.get(layer))));
    return row;
  }

  /** CPU seconds so far: each gateway by its layer, and each pair of services together. */
  private static Map<String, Double> cpuSeconds(Map<String, Proc> gateways, List<Proc> plainServices,
      List<Proc> mtlsServices) {
    Map<String, Double> seconds = new LinkedHashMap<>();
    gateways.forEach((layer, gateway) -> seconds.put(layer, gateway.cpuSeconds()));
    seconds.put("plaintext services", plainServices.stream().mapToDouble(Proc::cpuSeconds).sum());
    seconds.put("mTLS services", mtlsServices.stream().mapToDouble(Proc::cpuSeconds).sum());
    return seconds;
  }

  /**
   * A call without a token to the authenticating gateway must be UNAUTHENTICATED: otherwise the layer
   * would measure nothing but TLS.
   */
  private static void requireRefusalWithoutToken(Proc gateway, ChannelCredentials credentials, DataSet data)
      throws Exception {
    try (GrpcTarget anonymous = new GrpcTarget("anonymous", "127.0.0.1:" + gateway.grpcPort,
        "127.0.0.1:" + gateway.grpcPort, data, credentials, List.of())) {
      anonymous.call(Op.GET_PRODUCT_INVENTORY, i -> 0).start(0).get(10, TimeUnit.SECONDS);
      throw new IllegalStateException("the JWT gateway answered a call without a token");
    } catch (ExecutionException e) {
      Status status = Status.fromThrowable(e.getCause());
      if (status.getCode() != Status.Code.UNAUTHENTICATED) {
        throw new IllegalStateException("a call without a token ended " + status + ", not UNAUTHENTICATED", e);
      }
    }
  }

  private static ClientInterceptor bearer(String token) {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(headers);
  }

  private static Map<String, String> mtlsService(Map<String, String> plain, Path certs, String workload) {
    Map<String, String> env = new LinkedHashMap<>(plain);
    env.putAll(Map.of("GRPC_TLS_MODE", "mtls", "TLS_TRUSTED_PEERS", GATEWAY_ID,
        "TLS_CA_FILE", certs.resolve("ca.pem").toString(), "TLS_CERT_FILE", certs.resolve(workload + ".pem").toString(),
        "TLS_KEY_FILE", certs.resolve(workload + "-key.pem").toString()));
    return env;
  }

  private static Map<String, String> backends(Proc inventory, Proc orders) {
    return new LinkedHashMap<>(Map.of("INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort,
        "ORDER_ADDRESSES", "127.0.0.1:" + orders.grpcPort));
  }

  private static Map<String, String> with(Map<String, String> env, String name, String value) {
    Map<String, String> all = new LinkedHashMap<>(env);
    all.put(name, value);
    return all;
  }

  /** Runs one of the dev kit's commands ({@code certs}, {@code dev-tokens}) as {@code run.sh} does. */
  static void devKit(Path root, Path work, String... args) throws IOException, InterruptedException {
    Files.createDirectories(work);
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", root.resolve("dev-kit/target/dev-kit.jar").toString()));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(work.resolve(args[0] + ".log").toFile()).start();
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      process.destroyForcibly();
      throw new IllegalStateException("dev-kit.jar " + String.join(" ", args) + " failed; see "
          + work.resolve(args[0] + ".log"));
    }
  }
}
