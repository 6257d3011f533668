package dev.warehouse.runtime.audit;

import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.dynamo.DynamoClients;
import io.github.resilience4j.ratelimiter.RequestNotPermitted;
import java.io.PrintStream;
import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletionException;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The command line every consistency audit shares ({@code java -jar <service>.jar audit [--segments N]
 * [--pages-per-second N]}): its arguments, its output and its exit status. An audit is an admin tool,
 * off the request path; it reads the table through its own client, with a {@link PacedScan}.
 */
public final class AuditCommand {

  /** Exit status: the audit finished and found nothing wrong. */
  public static final int EXIT_CLEAN = 0;
  /** Exit status: the audit finished and found problems. */
  public static final int EXIT_PROBLEMS = 1;
  /** Exit status: the arguments were wrong; nothing was read. */
  public static final int EXIT_BAD_ARGUMENTS = 2;
  /** Exit status: the audit could not finish (DynamoDB failed, was unreachable or timed out): no verdict. */
  public static final int EXIT_UNFINISHED = 3;

  static final String USAGE = """
      usage: audit [--segments N] [--pages-per-second N]
      exit status: 0 clean, 1 problems found, 2 bad arguments, 3 could not finish (DynamoDB failed, \
      was unreachable or timed out)""";

  /** One audit of a table, reading it through the scan it is given; blocks until done. */
  @FunctionalInterface
  public interface Audit {
    /** @throws RuntimeException (a {@link CompletionException}, say) when DynamoDB failed under it */
    AuditReport audit(PacedScan scan);
  }

  /** A service's audit as its command line runs it, e.g. {@code OrderAudit::run}: arguments in, exit status out. */
  @FunctionalInterface
  public interface Line {
    int run(StoreServiceConfig config, String[] args, PrintStream out);
  }

  private AuditCommand() {}

  /**
   * Runs {@code audit} from the command line and returns its exit status: {@value #EXIT_CLEAN} clean,
   * {@value #EXIT_PROBLEMS} problems found (one line each on {@code out}), {@value #EXIT_BAD_ARGUMENTS} bad
   * arguments (the usage on {@code out}), {@value #EXIT_UNFINISHED} could not finish (then one line on
   * {@code out} says why, without a stack trace: an audit that stopped half-way has no verdict, so it must
   * not read as clean or as findings). A finished audit ends with a summary line.
   *
   * <p>When {@link StoreServiceConfig#auditPushgateway} is set, a run that read the table (exit 0, 1 or 3) then
   * pushes its outcome there ({@link AuditPushgateway}); a failed push is logged and leaves the exit status
   * as it was. Bad arguments push nothing: no run took place.
   *
   * @param name   names the audit's rate limiter, e.g. {@code order-audit}
   * @param metric names the audit in its pushed metrics (the {@code audit} label), e.g. {@code orders}
   */
  public static int run(StoreServiceConfig config, String[] args, PrintStream out, String name, String metric, Audit audit) {
    return run(config, args, out, name, metric, audit, Clock.systemUTC());
  }

  /** {@link #run(StoreServiceConfig, String[], PrintStream, String, String, Audit)} timed by {@code clock}. */
  public static int run(StoreServiceConfig config, String[] args, PrintStream out, String name, String metric, Audit audit,
      Clock clock) {
    PacedScan.Options options;
    try {
      options = PacedScan.Options.parse(args);
    } catch (IllegalArgumentException e) {
      out.println(USAGE);
      return EXIT_BAD_ARGUMENTS;
    }
    Instant started = clock.instant();
    int status;
    OptionalInt findings;
    java.util.Map<String, Integer> byKind = java.util.Map.of();
    AuditReport report = null;
    try (DynamoDbAsyncClient dynamo = DynamoClients.create(config, List.of())) {
      report = audit.audit(new PacedScan(dynamo, config.tableName(), name, options));
    } catch (RuntimeException e) {
      report = null; // a failure while closing the client, after the audit returned, still leaves no verdict
      out.println("audit table=" + config.tableName() + " could not finish: " + whyUnfinished(e, config));
    }
    if (report == null) {
      status = EXIT_UNFINISHED;
      findings = OptionalInt.empty();
    } else {
      report.findings().forEach(out::println);
      out.println(report.summary(config.tableName()));
      status = report.findings().isEmpty() ? EXIT_CLEAN : EXIT_PROBLEMS;
      findings = OptionalInt.of(report.findings().size());
      byKind = report.byKind();
    }
    // The verdict is out before the push, which may take up to its timeout.
    out.flush();
    AuditPushgateway.Outcome outcome = new AuditPushgateway.Outcome(metric, status, findings, byKind, started, clock.instant());
    config.auditPushgateway().ifPresent(pushgateway -> new AuditPushgateway(pushgateway).push(outcome));
    return status;
  }

  /** Why an audit stopped, in one line: what DynamoDB answered, or that it could not be reached in time. */
  static String whyUnfinished(Throwable failure, StoreServiceConfig config) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    String why;
    if (cause instanceof ApiCallTimeoutException || cause instanceof ApiCallAttemptTimeoutException) {
      why = "DynamoDB did not answer within DYNAMODB_CALL_TIMEOUT_MS=" + config.dynamoCallTimeout().toMillis();
    } else if (cause instanceof AwsServiceException service) {
      AwsErrorDetails details = service.awsErrorDetails();
      why = "DynamoDB answered HTTP " + service.statusCode()
          + (details == null ? " (" + service.getMessage() + ")"
              : " " + details.errorCode() + " (" + details.errorMessage() + ")")
          + (service.requestId() == null ? "" : " request_id=" + service.requestId());
    } else if (cause instanceof SdkClientException) {
      Throwable root = cause;
      while (root.getCause() != null) {
        root = root.getCause();
      }
      why = "could not reach DynamoDB at " + config.dynamoEndpoint().map(URI::toString).orElse("AWS " + config.region())
          + " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
    } else if (cause instanceof RequestNotPermitted) {
      why = "the page rate limiter gave no permit in time";
    } else {
      why = "unexpected " + cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }
    return why.replaceAll("\\s+", " ");
  }
}
