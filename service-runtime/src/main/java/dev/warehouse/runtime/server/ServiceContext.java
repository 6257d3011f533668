package dev.warehouse.runtime.server;

import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.paging.PageTokenCodec;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The heavy objects of a process, built once and handed to a service's wiring by constructor.
 *
 * @param store     the data-access layer over the single table (retries, tokens, error translation)
 * @param scheduler timers for retry backoff; never blocked on
 */
public record ServiceContext(
    ServiceConfig config,
    DynamoDbAsyncClient dynamo,
    DynamoStore store,
    MeterRegistry meterRegistry,
    PageTokenCodec pageTokens,
    Clock clock,
    ScheduledExecutorService scheduler) {}
