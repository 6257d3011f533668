package dev.warehouse.runtime.error;

import java.util.Map;

/** Capacity is exhausted (the database is throttling us); the caller may retry after backing off. Maps to RESOURCE_EXHAUSTED. */
public final class ResourceExhaustedException extends ServiceException {

  public ResourceExhaustedException(String reason, String message, Throwable cause) {
    super(reason, message, Map.of(), cause);
  }
}
