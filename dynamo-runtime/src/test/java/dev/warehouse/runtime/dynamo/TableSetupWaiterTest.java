package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/** How the table set-up reads a failure that ended the SDK's wait for ACTIVE. */
class TableSetupWaiterTest {

  @Test
  void aWaitEndedByDynamoDbsRefusal_isNotAskedAgain_butItsOwnTimeOutIs() {
    DynamoDbException denied = (DynamoDbException) DynamoDbException.builder().statusCode(400)
        .awsErrorDetails(AwsErrorDetails.builder().errorCode("AccessDeniedException").build()).build();
    SdkClientException unmatched = SdkClientException.create("A waiter acceptor was matched on error", denied);
    SdkClientException expired = SdkClientException.create("The waiter has exceeded the max wait time");

    assertThat(TableSetup.unwrapWaiter(new CompletionException(unmatched))).isSameAs(denied);
    assertThat(DynamoErrors.isTransient(TableSetup.unwrapWaiter(new CompletionException(unmatched)))).isFalse();
    assertThat(DynamoErrors.isTransient(TableSetup.unwrapWaiter(new CompletionException(expired)))).isTrue();
  }
}
