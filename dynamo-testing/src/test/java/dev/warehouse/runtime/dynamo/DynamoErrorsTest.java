package dev.warehouse.runtime.dynamo;

import static dev.warehouse.testing.Statuses.detail;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.ErrorInfo;
import dev.warehouse.runtime.dynamo.DynamoErrors.CallEndedException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * Every failure DynamoDB documents for the operations we use (GetItem, Query, PutItem,
 * TransactWriteItems; Scan and BatchGetItem in the audit) becomes a named status and reason, and
 * whether it is retried is decided in one place. A sweep over every exception class the SDK models
 * for DynamoDB checks that none, present or future, reaches a client as INTERNAL.
 */
class DynamoErrorsTest {

  /** failure, status, reason, retried. */
  static Stream<Arguments> documentedFailures() {
    return Stream.of(
        row(service("ConditionalCheckFailedException", 400), Status.Code.FAILED_PRECONDITION, "CONDITION_FAILED", false),
        row(cancelled("ConditionalCheckFailed", "None"), Status.Code.FAILED_PRECONDITION, "CONDITION_FAILED", false),
        row(cancelled("ConditionalCheckFailed", "TransactionConflict"), Status.Code.FAILED_PRECONDITION, "CONDITION_FAILED", false),
        row(cancelled("None", "TransactionConflict"), Status.Code.ABORTED, "TRANSACTION_CONFLICT", true),
        row(cancelled("ThrottlingError", "None"), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED", true),
        row(cancelled("ProvisionedThroughputExceeded"), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED", true),
        row(cancelled("ItemCollectionSizeLimitExceeded"), Status.Code.RESOURCE_EXHAUSTED, "ITEM_COLLECTION_FULL", false),
        row(cancelled("ValidationError", "None"), Status.Code.FAILED_PRECONDITION, "DATABASE_REJECTED_REQUEST", false),
        row(cancelled(), Status.Code.ABORTED, "TRANSACTION_CANCELLED", false),
        row(service("TransactionConflictException", 400), Status.Code.ABORTED, "TRANSACTION_CONFLICT", true),
        row(service("ReplicatedWriteConflictException", 400), Status.Code.ABORTED, "TRANSACTION_CONFLICT", true),
        row(service("TransactionInProgressException", 400), Status.Code.ABORTED, "TRANSACTION_IN_PROGRESS", true),
        row(service("IdempotentParameterMismatchException", 400), Status.Code.ABORTED, "IDEMPOTENCY_TOKEN_MISMATCH", false),
        row(service("ProvisionedThroughputExceededException", 400), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED", true),
        row(service("RequestLimitExceededException", 400), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED", true),
        row(service("ThrottlingException", 400), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED", true),
        row(service("LimitExceededException", 400), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED", false),
        row(service("ItemCollectionSizeLimitExceededException", 400), Status.Code.RESOURCE_EXHAUSTED, "ITEM_COLLECTION_FULL", false),
        row(service("ResourceNotFoundException", 400), Status.Code.FAILED_PRECONDITION, "DATABASE_TABLE_NOT_FOUND", false),
        row(service("InternalServerErrorException", 500), Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE", true),
        row(generic("ServiceUnavailable", 503), Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE", true),
        row(generic("ValidationException", 400), Status.Code.FAILED_PRECONDITION, "DATABASE_REJECTED_REQUEST", false),
        row(generic("SerializationException", 400), Status.Code.FAILED_PRECONDITION, "DATABASE_REJECTED_REQUEST", false),
        row(generic("AccessDeniedException", 400), Status.Code.UNAVAILABLE, "DATABASE_ACCESS_DENIED", false),
        row(generic("UnrecognizedClientException", 400), Status.Code.UNAVAILABLE, "DATABASE_ACCESS_DENIED", false),
        row(generic("ExpiredTokenException", 400), Status.Code.UNAVAILABLE, "DATABASE_ACCESS_DENIED", false),
        row(generic("MissingAuthenticationTokenException", 403), Status.Code.UNAVAILABLE, "DATABASE_ACCESS_DENIED", false),
        row(ApiCallTimeoutException.create(750), Status.Code.UNAVAILABLE, "DATABASE_TIMEOUT", true),
        row(ApiCallAttemptTimeoutException.create(750), Status.Code.UNAVAILABLE, "DATABASE_TIMEOUT", true),
        row(SdkClientException.create("connection reset"), Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE", true),
        row(new CallEndedException(true, null), Status.Code.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED", false),
        row(new CallEndedException(false, null), Status.Code.CANCELLED, "CANCELLED", false));
  }

  @ParameterizedTest(name = "{0} -> {1} {2}, retried: {3}")
  @MethodSource("documentedFailures")
  void eachDocumentedFailure_hasItsStatusAndReason(Throwable failure, Status.Code code, String reason, boolean retried) {
    StatusRuntimeException status = GrpcErrors.toStatusException(DynamoErrors.translate(failure));
    assertThat(status.getStatus().getCode()).isEqualTo(code);
    assertThat(detail(status, ErrorInfo.class).getReason()).isEqualTo(reason);
    assertThat(status.getStatus().getDescription()).as("client-safe text only").doesNotContain("fault", "Exception");
    assertThat(DynamoErrors.isTransient(failure)).as("retried").isEqualTo(retried);
  }

  static Stream<Class<? extends DynamoDbException>> everyModelledException() throws IOException, URISyntaxException {
    Path jar = Path.of(DynamoDbException.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    String pkg = DynamoDbException.class.getPackageName().replace('.', '/') + "/";
    List<Class<? extends DynamoDbException>> classes = new ArrayList<>();
    try (JarFile file = new JarFile(jar.toFile())) {
      for (JarEntry entry : file.stream().toList()) {
        String name = entry.getName();
        if (name.startsWith(pkg) && name.endsWith("Exception.class") && name.indexOf('/', pkg.length()) < 0) {
          try {
            Class<?> type = Class.forName(name.replace('/', '.').replace(".class", ""));
            if (DynamoDbException.class.isAssignableFrom(type) && !Modifier.isAbstract(type.getModifiers())) {
              classes.add(type.asSubclass(DynamoDbException.class));
            }
          } catch (ClassNotFoundException e) {
            throw new AssertionError(e);
          }
        }
      }
    }
    assertThat(classes).as("exception classes found in the SDK").hasSizeGreaterThan(20);
    return classes.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("everyModelledException")
  void noModelledException_reachesAClientAsInternal(Class<? extends DynamoDbException> type) throws Exception {
    String code = type.getSimpleName();
    for (int httpStatus : new int[] {400, 500}) {
      AwsServiceException.Builder builder = (AwsServiceException.Builder) type.getMethod("builder").invoke(null);
      Throwable failure = builder.message("from the database").statusCode(httpStatus)
          .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage("from the database").build()).build();
      Status status = GrpcErrors.toStatusException(DynamoErrors.translate(failure)).getStatus();
      assertThat(status.getCode()).as(code + " with HTTP " + httpStatus).isNotEqualTo(Status.Code.INTERNAL);
      assertThat(status.getDescription()).doesNotContain("from the database");
    }
  }

  private static Arguments row(Throwable failure, Status.Code code, String reason, boolean retried) {
    return Arguments.of(failure, code, reason, retried);
  }

  /** The SDK's modelled exception for {@code code} (its class has the code's name), as the SDK builds it. */
  private static Throwable service(String code, int httpStatus) {
    try {
      Class<?> type = Class.forName(DynamoDbException.class.getPackageName() + "." + code);
      AwsServiceException.Builder builder = (AwsServiceException.Builder) type.getMethod("builder").invoke(null);
      return builder.message("fault").statusCode(httpStatus)
          .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage("fault").build()).build();
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  /** An error code the SDK has no class for: a plain DynamoDbException. */
  private static Throwable generic(String code, int httpStatus) {
    return DynamoDbException.builder().message("fault").statusCode(httpStatus)
        .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage("fault").build()).build();
  }

  private static Throwable cancelled(String... codes) {
    TransactionCanceledException.Builder builder = TransactionCanceledException.builder().message("fault").statusCode(400)
        .awsErrorDetails(AwsErrorDetails.builder().errorCode("TransactionCanceledException").build());
    if (codes.length > 0) {
      builder.cancellationReasons(Arrays.stream(codes).map(c -> CancellationReason.builder().code(c).build()).toList());
    }
    return builder.build();
  }
}
