package dev.warehouse.runtime.error;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What a failed future really failed with: the cause inside {@link CompletionException} / {@link ExecutionException} wrappers. */
public final class Failures {

  private Failures() {}

  public static Throwable cause(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
