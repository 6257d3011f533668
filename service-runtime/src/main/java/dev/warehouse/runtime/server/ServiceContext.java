package dev.warehouse.runtime.server;

import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.paging.PageTokenCodec;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/** The heavy objects of a process, built once and handed to a service's wiring by constructor. */
public record ServiceContext(
    ServiceConfig config,
    DynamoDbAsyncClient dynamo,
    MeterRegistry meterRegistry,
    PageTokenCodec pageTokens,
    Clock clock) {}
