package dev.warehouse.runtime.hotkeys;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The hot keys of one access pattern over a sliding window: a ring of {@link SpaceSaving} summaries,
 * one per time slot, each cleared when the ring comes round to it again. A read merges the slots still
 * in the window, adding each key's counts up. Memory is the ring's, whatever the number of keys.
 *
 * <p>One lock per access pattern: an update holds it for a hash lookup and a few heap swaps, a read for
 * a copy of the ring's counters. Nothing under it waits for anything else.
 */
final class SlidingTopK {

  /** One key's merged counts over the window. */
  record KeyCount(String key, long count, double capacityUnits) {}

  /** The window's counts: every request (exact), and the keys that hold a counter, hottest first. */
  record Snapshot(long total, List<KeyCount> keys) {

    static final Snapshot EMPTY = new Snapshot(0, List.of());

    /** The hottest key, or null when nothing was counted. */
    KeyCount hottest() {
      return keys.isEmpty() ? null : keys.get(0);
    }
  }

  private static final Comparator<KeyCount> HOTTEST_FIRST =
      Comparator.comparingLong(KeyCount::count).reversed().thenComparing(KeyCount::key);

  private final SpaceSaving[] slots;
  /** The slot number (time divided by the slot length) each summary of the ring counts. */
  private final long[] slotNumbers;

  SlidingTopK(int slotCount, int countersPerSlot) {
    slots = new SpaceSaving[slotCount];
    slotNumbers = new long[slotCount];
    for (int i = 0; i < slotCount; i++) {
      slots[i] = new SpaceSaving(countersPerSlot);
      slotNumbers[i] = Long.MIN_VALUE;
    }
  }

  /** Counts one request to {@code key} in time slot {@code slot}. */
  synchronized void add(long slot, String key, double capacityUnits) {
    int i = (int) Math.floorMod(slot, (long) slots.length);
    if (slotNumbers[i] != slot) {
      if (slotNumbers[i] > slot) {
        return; // an update that stalled for a whole window: its slot is gone, and so is it
      }
      slots[i].clear();
      slotNumbers[i] = slot;
    }
    slots[i].add(key, capacityUnits);
  }

  /** The merged counts of slots {@code newest - slotCount + 1} to {@code newest}. */
  Snapshot snapshot(long newest) {
    List<KeyCount> counters = new ArrayList<>();
    long total = 0;
    synchronized (this) { // only copies: the merge runs after the lock is released
      for (int i = 0; i < slots.length; i++) {
        if (slotNumbers[i] > newest - slots.length && slotNumbers[i] <= newest) {
          total += slots[i].total();
          slots[i].forEach((key, count, capacityUnits) -> counters.add(new KeyCount(key, count, capacityUnits)));
        }
      }
    }
    if (total == 0) {
      return Snapshot.EMPTY;
    }
    Map<String, KeyCount> merged = new HashMap<>();
    for (KeyCount counter : counters) {
      merged.merge(counter.key(), counter,
          (a, b) -> new KeyCount(a.key(), a.count() + b.count(), a.capacityUnits() + b.capacityUnits()));
    }
    List<KeyCount> keys = new ArrayList<>(merged.values());
    keys.sort(HOTTEST_FIRST);
    return new Snapshot(total, keys);
  }

  /** Keys holding a counter in any slot, for tests of the memory bound. */
  synchronized int trackedKeys() {
    int tracked = 0;
    for (SpaceSaving slot : slots) {
      tracked += slot.size();
    }
    return tracked;
  }
}
