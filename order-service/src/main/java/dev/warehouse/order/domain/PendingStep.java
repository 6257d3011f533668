package dev.warehouse.order.domain;

import java.time.Instant;

/** A stock step an order owes, and from when the recovery takes it over ({@code due}). */
public record PendingStep(StockStep step, Instant due) {}
