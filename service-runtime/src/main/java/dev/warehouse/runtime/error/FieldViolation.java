package dev.warehouse.runtime.error;

/** One bad field of a request: its path (e.g. {@code item.serial_number}) and what is wrong with it. */
public record FieldViolation(String field, String description) {}
