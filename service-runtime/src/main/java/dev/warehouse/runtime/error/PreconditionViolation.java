package dev.warehouse.runtime.error;

/**
 * One unmet precondition, as a {@code google.rpc.PreconditionFailure.Violation}: its type (an
 * UPPER_SNAKE_CASE reason such as {@code OUT_OF_STOCK}), the subject it is about (a resource name such
 * as {@code products/p/warehouses/w}), and what is wrong, for people.
 */
public record PreconditionViolation(String type, String subject, String description) {}
