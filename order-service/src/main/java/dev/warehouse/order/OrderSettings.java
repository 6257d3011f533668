package dev.warehouse.order;

import dev.warehouse.order.domain.SagaTimings;
import dev.warehouse.runtime.env.EnvReader;
import dev.warehouse.runtime.discovery.BackendAddress;
import dev.warehouse.runtime.log.Fields;
import dev.warehouse.runtime.tls.ChannelTlsConfig;
import dev.warehouse.runtime.tls.TlsConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The order-service's own settings, besides every service's ({@code StoreServiceConfig}): how it reaches the
 * inventory-service, and how its stock steps are finished.
 *
 * @param inventoryAddresses {@code INVENTORY_ADDRESSES}: the inventory-service's instances, {@code host:port} or
 *                           {@code dns:///name:port}, comma-separated, looked up again every resolve period
 * @param inventoryTls       {@code INVENTORY_TLS_MODE}, {@code INVENTORY_TRUSTED_PEERS}: how the channel is secured
 *                           and whose certificates it accepts (with {@code mtls}, it presents the process's own)
 * @param resolvePeriod      {@code INVENTORY_RESOLVE_SECONDS}: how often the addresses are looked up again
 * @param callTimeout        {@code INVENTORY_CALL_TIMEOUT_MS}: the deadline of a call made without one (the recovery's)
 * @param minCallBudget      {@code INVENTORY_MIN_BUDGET_MS}: the least time a caller's deadline must leave to call at all
 * @param circuitOpenFor     {@code INVENTORY_CIRCUIT_OPEN_SECONDS}: how long an open circuit fails calls fast
 * @param stepGrace          {@code ORDER_STEP_GRACE_SECONDS}: how long after a stock step is owed the recovery takes
 *                           it over (a PENDING order's placing deadline)
 * @param recoveryPeriod     {@code ORDER_RECOVERY_SECONDS}: how often the recovery looks for overdue steps (at least 1 s
 *                           from the environment; 0, off, only for tests that drive the recovery themselves)
 * @param hold               {@code ORDER_HOLD_SECONDS}: how long the inventory holds a PENDING order's stock (asked for
 *                           in each ReserveStock); longer than the grace, at most 15 minutes
 * @param stepBudget         {@code ORDER_STEP_BUDGET_MS}: how long a status change waits for the step it owes
 */
public record OrderSettings(
    List<String> inventoryAddresses,
    ChannelTlsConfig inventoryTls,
    Duration resolvePeriod,
    Duration callTimeout,
    Duration minCallBudget,
    Duration circuitOpenFor,
    Duration stepGrace,
    Duration recoveryPeriod,
    Duration hold,
    Duration stepBudget) {

  public static final String DEFAULT_INVENTORY_ADDRESSES = "127.0.0.1:50052";
  public static final Duration DEFAULT_RESOLVE_PERIOD = Duration.ofSeconds(10);
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(5);
  public static final Duration DEFAULT_MIN_CALL_BUDGET = Duration.ofMillis(20);
  public static final Duration DEFAULT_CIRCUIT_OPEN = Duration.ofSeconds(5);
  /**
   * 30 s: far longer than a PlaceOrder takes (a few transactions and calls), far shorter than the
   * inventory's hold (60 s), so the recovery confirms a held order before its hold expires.
   */
  public static final Duration DEFAULT_STEP_GRACE = Duration.ofSeconds(30);
  /** 10 s: an abandoned order is final within grace + period (40 s). */
  public static final Duration DEFAULT_RECOVERY_PERIOD = Duration.ofSeconds(10);
  /** 60 s: twice the grace, so an order the recovery takes over is still held. */
  public static final Duration DEFAULT_HOLD = Duration.ofSeconds(60);
  /** 1 s: a status change answers within it plus its own writes, whatever the inventory does. */
  public static final Duration DEFAULT_STEP_BUDGET = Duration.ofSeconds(1);

  /** Plaintext to one inventory address, with the defaults: what tests and tools building it directly mean. */
  public static OrderSettings plaintext(String inventoryAddress) {
    return new OrderSettings(List.of(inventoryAddress), ChannelTlsConfig.PLAINTEXT, DEFAULT_RESOLVE_PERIOD,
        DEFAULT_CALL_TIMEOUT, DEFAULT_MIN_CALL_BUDGET, DEFAULT_CIRCUIT_OPEN, DEFAULT_STEP_GRACE, DEFAULT_RECOVERY_PERIOD,
        DEFAULT_HOLD, DEFAULT_STEP_BUDGET);
  }

  /** The same settings with another step grace and recovery period (tests shorten both); a hold no longer than the grace becomes twice it. */
  public OrderSettings withRecovery(Duration grace, Duration period) {
    return new OrderSettings(inventoryAddresses, inventoryTls, resolvePeriod, callTimeout, minCallBudget, circuitOpenFor,
        grace, period, hold.compareTo(grace) > 0 ? hold : grace.multipliedBy(2), stepBudget);
  }

  /** The same settings with another step budget (a test that records each route's requests waits for the step). */
  public OrderSettings withStepBudget(Duration budget) {
    return new OrderSettings(inventoryAddresses, inventoryTls, resolvePeriod, callTimeout, minCallBudget, circuitOpenFor,
        stepGrace, recoveryPeriod, hold, budget);
  }

  /** The same settings with another channel security. */
  public OrderSettings withInventoryTls(ChannelTlsConfig tls) {
    return new OrderSettings(inventoryAddresses, tls, resolvePeriod, callTimeout, minCallBudget, circuitOpenFor,
        stepGrace, recoveryPeriod, hold, stepBudget);
  }

  /**
   * Reads them, with {@code tls} (the process's TLS files, which {@code mtls} needs).
   *
   * @throws IllegalArgumentException naming every malformed variable
   */
  public static OrderSettings fromEnvironment(Map<String, String> env, TlsConfig tls) {
    EnvReader reader = new EnvReader(env);
    OrderSettings settings = read(reader, tls);
    reader.throwIfProblems();
    return settings;
  }

  /** The variables read here. */
  public static List<String> variables() {
    EnvReader reader = new EnvReader(Map.of());
    read(reader, TlsConfig.PLAINTEXT);
    return reader.names();
  }

  private static OrderSettings read(EnvReader reader, TlsConfig tls) {
    OrderSettings settings = new OrderSettings(
        BackendAddress.read(reader, "INVENTORY_ADDRESSES", DEFAULT_INVENTORY_ADDRESSES),
        ChannelTlsConfig.read(reader, "INVENTORY_", tls),
        Duration.ofSeconds(reader.positiveLong("INVENTORY_RESOLVE_SECONDS", DEFAULT_RESOLVE_PERIOD.getSeconds())),
        Duration.ofMillis(reader.positiveLong("INVENTORY_CALL_TIMEOUT_MS", DEFAULT_CALL_TIMEOUT.toMillis())),
        Duration.ofMillis(reader.positiveLong("INVENTORY_MIN_BUDGET_MS", DEFAULT_MIN_CALL_BUDGET.toMillis())),
        Duration.ofSeconds(reader.positiveLong("INVENTORY_CIRCUIT_OPEN_SECONDS", DEFAULT_CIRCUIT_OPEN.getSeconds())),
        Duration.ofSeconds(reader.positiveLong("ORDER_STEP_GRACE_SECONDS", DEFAULT_STEP_GRACE.getSeconds())),
        // Off, no overdue step would ever be finished: a crashed placing would hold its stock for good.
        Duration.ofSeconds(reader.positiveLong("ORDER_RECOVERY_SECONDS", DEFAULT_RECOVERY_PERIOD.getSeconds())),
        Duration.ofSeconds(reader.positiveLong("ORDER_HOLD_SECONDS", DEFAULT_HOLD.getSeconds())),
        Duration.ofMillis(reader.positiveLong("ORDER_STEP_BUDGET_MS", DEFAULT_STEP_BUDGET.toMillis())));
    if (settings.minCallBudget.compareTo(settings.callTimeout) >= 0) {
      reader.problem("INVENTORY_MIN_BUDGET_MS must be less than INVENTORY_CALL_TIMEOUT_MS");
    }
    try {
      settings.timings(); // the saga's own rules: the hold longer than the grace, within the contract's limit
    } catch (IllegalArgumentException broken) {
      reader.problem("ORDER_HOLD_SECONDS, ORDER_STEP_GRACE_SECONDS: " + broken.getMessage());
    }
    return settings;
  }

  /** The saga's timings, as the order use cases take them. */
  public SagaTimings timings() {
    return new SagaTimings(stepGrace, hold, stepBudget);
  }

  /** The fields of a start-up line. */
  public Fields fields() {
    return new Fields().add("inventory_addresses", String.join(",", inventoryAddresses))
        .addAll(inventoryTls.fields("inventory_"))
        .add("inventory_resolve_s", resolvePeriod.getSeconds()).add("inventory_call_timeout_ms", callTimeout.toMillis())
        .add("inventory_min_budget_ms", minCallBudget.toMillis()).add("inventory_circuit_open_s", circuitOpenFor.getSeconds())
        .add("order_step_grace_s", stepGrace.getSeconds()).add("order_recovery_s", recoveryPeriod.getSeconds())
        .add("order_hold_s", hold.getSeconds()).add("order_step_budget_ms", stepBudget.toMillis());
  }

  /** {@link #fields} as {@code key=value key=value}. */
  public String describe() {
    return fields().toString();
  }
}
