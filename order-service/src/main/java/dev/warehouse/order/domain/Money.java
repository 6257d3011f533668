package dev.warehouse.order.domain;

/** An amount of money, as {@code google.type.Money} has it: whole units and nano units of a currency. */
public record Money(String currencyCode, long units, int nanos) {}
