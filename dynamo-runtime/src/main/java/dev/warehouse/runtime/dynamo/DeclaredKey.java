package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.routing.KeyTemplate;
import dev.warehouse.runtime.routing.Route;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * One item key a route declares (its main key or one it also writes), rendered from typed values: the
 * aggregates' key functions call it, so a key's text is written once, in the route option of
 * {@code proto/}. Picked by the request fields it needs, checked when the key class loads: a key that
 * no route declares, or two that need the same fields, stop the service at start-up.
 */
public final class DeclaredKey {

  private final KeyTemplate partitionKey;
  private final KeyTemplate sortKey;
  private final String[] fields;
  // Where each template variable's value is among the fields the caller passes, computed once.
  private final int[] partitionArgs;
  private final int[] sortArgs;

  private DeclaredKey(KeyTemplate partitionKey, KeyTemplate sortKey, String[] fields) {
    this.partitionKey = partitionKey;
    this.sortKey = sortKey;
    this.fields = fields;
    this.partitionArgs = positions(partitionKey.variables(), fields);
    this.sortArgs = positions(sortKey.variables(), fields);
  }

  /**
   * The key of {@code route} (its main key or one of {@link Route#alsoWrites}) whose templates need
   * exactly {@code fields}; {@link #render} takes their values in that order.
   *
   * @throws IllegalStateException when no declared key, or more than one, needs exactly those fields
   */
  public static DeclaredKey of(Route route, String... fields) {
    Set<String> wanted = new LinkedHashSet<>(List.of(fields));
    List<Route.ItemKey> matching = Stream.concat(Stream.of(route.mainKey()), route.alsoWrites().stream())
        .filter(k -> variables(k).equals(wanted)).toList();
    if (matching.size() != 1 || wanted.size() != fields.length) {
      throw new IllegalStateException(route.patternId() + " " + route.methodName() + " declares "
          + matching.size() + " keys of the fields " + List.of(fields) + " (one needed)");
    }
    return new DeclaredKey(matching.get(0).partitionKey(), matching.get(0).sortKey(), fields);
  }

  /** Its partition-key template (to read a key's values back: {@link KeyTemplate#match}). */
  public KeyTemplate partitionKey() {
    return partitionKey;
  }

  /** The key with {@code values} for the fields named at {@link #of}, in their order. */
  public TableKey render(String... values) {
    if (values.length != fields.length) {
      throw new IllegalArgumentException(partitionKey + " / " + sortKey + " needs " + List.of(fields));
    }
    return new TableKey(partitionKey.render(pick(partitionArgs, values)), sortKey.render(pick(sortArgs, values)));
  }

  private static Set<String> variables(Route.ItemKey key) {
    Set<String> names = new LinkedHashSet<>(key.partitionKey().variables());
    names.addAll(key.sortKey().variables());
    return names;
  }

  private static int[] positions(List<String> variables, String[] fields) {
    List<String> names = List.of(fields);
    return variables.stream().mapToInt(names::indexOf).toArray();
  }

  private static String[] pick(int[] positions, String[] values) {
    String[] picked = new String[positions.length];
    for (int i = 0; i < positions.length; i++) {
      picked[i] = values[positions[i]];
    }
    return picked;
  }

  @Override
  public String toString() {
    return partitionKey + " / " + sortKey + " of " + List.of(fields);
  }
}
