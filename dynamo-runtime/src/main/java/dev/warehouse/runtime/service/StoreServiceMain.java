package dev.warehouse.runtime.service;

import dev.warehouse.runtime.audit.AuditCommand;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.process.ProcessMain;
import io.grpc.BindableService;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/** The body of a table service's {@code main}: its audit when asked for, else {@link ProcessMain#serve}. */
public final class StoreServiceMain {

  private StoreServiceMain() {}

  /**
   * A service's {@code main}: with the arguments {@code audit [options]}, runs its consistency audit and
   * exits with the audit's status; otherwise serves.
   */
  public static void run(String[] args, StoreServiceConfig config,
      Function<StoreContext, List<BindableService>> services, AuditCommand.Line audit) {
    if (args.length > 0 && args[0].equals("audit")) {
      System.exit(audit.run(config, Arrays.copyOfRange(args, 1, args.length), System.out));
    }
    ProcessMain.serve(config.serviceName(), () -> DynamoPlugin.start(config, services, List.of()));
  }
}
