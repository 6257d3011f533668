package dev.warehouse.gateway;

import dev.warehouse.runtime.discovery.AddressLookup;
import dev.warehouse.gateway.tools.CertsCommand;
import dev.warehouse.gateway.tools.DemoData;
import dev.warehouse.gateway.tools.DevTokens;
import dev.warehouse.runtime.server.ServiceMain;
import java.util.Arrays;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Starts the gateway ({@code java -jar gateway.jar}), loads the demo data through a running gateway
 * ({@code java -jar gateway.jar load-demo-data [options] [host:port]}), makes the local CA and
 * certificates ({@code java -jar gateway.jar certs DIR [--renew]}), or writes development credentials
 * ({@code java -jar gateway.jar dev-tokens DIR POLICY_FILE}).
 */
public final class GatewayMain {

  static {
    ServiceMain.configureLogging();
    ServiceMain.configureNetty();
  }

  private static final Logger log = Logger.getLogger(GatewayMain.class.getName());

  private GatewayMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("load-demo-data")) {
      System.exit(DemoData.run(Arrays.copyOfRange(args, 1, args.length), System.out));
    }
    if (args.length > 0 && args[0].equals("certs")) {
      System.exit(CertsCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out));
    }
    if (args.length > 0 && args[0].equals("dev-tokens")) {
      System.exit(DevTokens.run(Arrays.copyOfRange(args, 1, args.length), System.out));
    }
    // Before anything looks a name up: the JVM reads its cache settings once.
    AddressLookup.disableJvmCache();
    GatewayConfig config = GatewayConfig.fromEnvironment(System.getenv());
    GatewayProcess gateway;
    try {
      gateway = GatewayProcess.start(config);
    } catch (Exception e) {
      log.log(Level.SEVERE, "event=start_failed service=gateway", e);
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(gateway::close, "graceful-shutdown"));
    gateway.awaitTermination();
  }
}
