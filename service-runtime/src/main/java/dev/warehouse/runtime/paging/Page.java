package dev.warehouse.runtime.paging;

import java.util.List;

/** One page of results and the token of the next page, empty on the last page. */
public record Page<T>(List<T> items, String nextPageToken) {

  public Page {
    items = List.copyOf(items);
  }
}
