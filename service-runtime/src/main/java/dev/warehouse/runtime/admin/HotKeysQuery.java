package dev.warehouse.runtime.admin;

import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.runtime.error.InvalidArgumentException;
import dev.warehouse.runtime.error.Violations;
import dev.warehouse.runtime.hotkeys.HotKeys;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A valid ListHotKeys request: the services and the gateway check it alike.
 *
 * @param patternId only this access pattern; empty for all
 * @param limit     keys per pattern, 1 to {@link #MAX_LIMIT}
 */
public record HotKeysQuery(Optional<String> patternId, int limit) {

  public static final int DEFAULT_LIMIT = 10;
  public static final int MAX_LIMIT = HotKeys.TOP_K;
  /** An access-pattern id as the routes declare them: "A1", "W5", "A12". */
  private static final Pattern PATTERN_ID = Pattern.compile("[A-Z][0-9]{1,2}");

  /**
   * Reads a request: {@code limit} 0 means {@value #DEFAULT_LIMIT}, above {@value #MAX_LIMIT} is read as
   * {@value #MAX_LIMIT}.
   *
   * @throws InvalidArgumentException naming each bad field: a negative limit, a pattern id of another form
   */
  public static HotKeysQuery of(ListHotKeysRequest request) {
    Violations v = new Violations();
    String patternId = request.getPatternId();
    if (!patternId.isEmpty() && !PATTERN_ID.matcher(patternId).matches()) {
      v.add("pattern_id", "must be an access-pattern id: a capital letter and one or two digits, such as A2 or W3");
    }
    if (request.getLimit() < 0) {
      v.add("limit", "must not be negative");
    }
    v.throwIfAny();
    int limit = request.getLimit() == 0 ? DEFAULT_LIMIT : Math.min(request.getLimit(), MAX_LIMIT);
    return new HotKeysQuery(patternId.isEmpty() ? Optional.empty() : Optional.of(patternId), limit);
  }
}
