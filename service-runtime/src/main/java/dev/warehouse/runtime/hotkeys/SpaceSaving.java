package dev.warehouse.runtime.hotkeys;

import java.util.HashMap;
import java.util.Map;

/**
 * The space-saving summary of a stream of keys (Metwally, Agrawal and El Abbadi, "Efficient
 * computation of frequent and top-k elements in data streams", 2005): at most {@code capacity}
 * counters, whatever the number of distinct keys. A key that has a counter adds one to it; a new key
 * takes over the smallest counter and starts from its count plus one. So a count is never below the
 * key's true count and at most the smallest count above it, which is at most {@code total / capacity};
 * every key more frequent than that holds a counter.
 *
 * <p>The counters are a min-heap indexed by key: an update costs one hash lookup and O(log capacity)
 * swaps. Not thread-safe: {@link SlidingTopK} guards it.
 */
final class SpaceSaving {

  private final int capacity;
  private final String[] keys;
  private final long[] counts;
  /** Consumed capacity units seen since the key took its counter (not inherited from the key it replaced). */
  private final double[] units;
  private final Map<String, Integer> slots;
  private int size;
  private long total;

  SpaceSaving(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive, got " + capacity);
    }
    this.capacity = capacity;
    this.keys = new String[capacity];
    this.counts = new long[capacity];
    this.units = new double[capacity];
    this.slots = new HashMap<>(capacity * 2);
  }

  /** Counts one request to {@code key} that consumed {@code capacityUnits}. */
  void add(String key, double capacityUnits) {
    total++;
    Integer slot = slots.get(key);
    if (slot != null) {
      counts[slot]++;
      units[slot] += capacityUnits;
      siftDown(slot);
      return;
    }
    if (size < capacity) {
      int at = size++;
      keys[at] = key;
      counts[at] = 1;
      units[at] = capacityUnits;
      slots.put(key, at);
      siftUp(at);
      return;
    }
    // The smallest counter (the heap's root) goes to the new key, which keeps its count as a bound.
    slots.remove(keys[0]);
    keys[0] = key;
    counts[0]++;
    units[0] = capacityUnits;
    slots.put(key, 0);
    siftDown(0);
  }

  /** Requests counted, exactly (not an estimate). */
  long total() {
    return total;
  }

  /** Keys holding a counter: never more than the capacity. */
  int size() {
    return size;
  }

  /** Hands every counter to {@code visitor}, in no particular order. */
  void forEach(CounterVisitor visitor) {
    for (int i = 0; i < size; i++) {
      visitor.visit(keys[i], counts[i], units[i]);
    }
  }

  void clear() {
    java.util.Arrays.fill(keys, 0, size, null);
    slots.clear();
    size = 0;
    total = 0;
  }

  @FunctionalInterface
  interface CounterVisitor {
    void visit(String key, long count, double capacityUnits);
  }

  private void siftUp(int i) {
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (counts[parent] <= counts[i]) {
        return;
      }
      swap(i, parent);
      i = parent;
    }
  }

  private void siftDown(int i) {
    while (true) {
      int left = 2 * i + 1;
      if (left >= size) {
        return;
      }
      int right = left + 1;
      int smallest = right < size && counts[right] < counts[left] ? right : left;
      if (counts[i] <= counts[smallest]) {
        return;
      }
      swap(i, smallest);
      i = smallest;
    }
  }

  private void swap(int a, int b) {
    String key = keys[a];
    keys[a] = keys[b];
    keys[b] = key;
    long count = counts[a];
    counts[a] = counts[b];
    counts[b] = count;
    double u = units[a];
    units[a] = units[b];
    units[b] = u;
    slots.put(keys[a], a);
    slots.put(keys[b], b);
  }
}
