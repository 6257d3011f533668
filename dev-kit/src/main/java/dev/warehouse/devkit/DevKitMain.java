package dev.warehouse.devkit;

import dev.warehouse.logging.Logging;
import java.io.PrintStream;
import java.util.Arrays;

/**
 * {@code java -jar dev-kit.jar COMMAND ...}: the development stack's one-shot commands, apart from the
 * production jars so that no production image carries a CA, a token minter or demo data.
 * <ul>
 *   <li>{@code certs DIR [--renew] [--per-workload OUT]}: a local CA and a certificate per process ({@link CertsCommand});
 *   <li>{@code dev-tokens DIR POLICY_FILE [--hours N]}: a signing key's public JWKS and a token per role ({@link DevTokens});
 *   <li>{@code load-demo-data [options] [host:port]}: the demo data, through a running gateway ({@link DemoData}).
 * </ul>
 */
public final class DevKitMain {

  private DevKitMain() {}

  public static void main(String[] args) throws Exception {
    // What grpc-java logs (the demo loader's channel) comes out as the services' lines do, on standard error;
    // standard output stays the command's own.
    Logging.start();
    System.exit(run(args, System.out));
  }

  /** Returns the command's exit status: 0 done, 1 failed, 2 bad arguments. */
  static int run(String[] args, PrintStream out) throws InterruptedException {
    String[] rest = args.length == 0 ? args : Arrays.copyOfRange(args, 1, args.length);
    String command = args.length == 0 ? "" : args[0];
    return switch (command) {
      case "certs" -> CertsCommand.run(rest, out);
      case "dev-tokens" -> DevTokens.run(rest, out);
      case "load-demo-data" -> DemoData.run(rest, out);
      default -> {
        out.println("usage: java -jar dev-kit.jar certs|dev-tokens|load-demo-data ...");
        yield 2;
      }
    };
  }
}
