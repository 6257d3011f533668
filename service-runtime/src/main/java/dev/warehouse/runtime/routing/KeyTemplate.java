package dev.warehouse.runtime.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A key template of the retrieval map, such as {@code PRODUCT#{product_id}} or
 * {@code ORDER#{order_date}#{order_id}}: literal text and named request fields. Parsed once, rendered
 * per request by concatenation.
 */
public final class KeyTemplate {

  private static final Pattern VARIABLE = Pattern.compile("\\{([a-z_]+)}");

  private final String template;
  private final List<String> literals = new ArrayList<>();
  private final List<String> variables = new ArrayList<>();

  private KeyTemplate(String template) {
    this.template = template;
    Matcher m = VARIABLE.matcher(template);
    int at = 0;
    while (m.find()) {
      literals.add(template.substring(at, m.start()));
      variables.add(m.group(1));
      at = m.end();
    }
    literals.add(template.substring(at));
    if (template.indexOf('{', at) >= 0 || literals.stream().anyMatch(l -> l.contains("{") || l.contains("}"))) {
      throw new IllegalArgumentException("malformed key template: " + template);
    }
  }

  public static KeyTemplate parse(String template) {
    return new KeyTemplate(template);
  }

  /** The names of the request fields the template needs, in order. */
  public List<String> variables() {
    return List.copyOf(variables);
  }

  /** The literal text before the first variable, e.g. {@code PRODUCT#}; the whole key when constant. */
  public String prefix() {
    return literals.get(0);
  }

  /** Renders the key with the values of its variables, given in the order of {@link #variables()}. */
  public String render(String... values) {
    if (values.length != variables.size()) {
      throw new IllegalArgumentException(template + " needs " + variables + ", got " + values.length + " values");
    }
    StringBuilder key = new StringBuilder(template.length() + 32).append(literals.get(0));
    for (int i = 0; i < values.length; i++) {
      key.append(values[i]).append(literals.get(i + 1));
    }
    return key.toString();
  }

  /** Renders the key with values looked up by variable name. */
  public String render(Map<String, String> values) {
    String[] ordered = new String[variables.size()];
    for (int i = 0; i < ordered.length; i++) {
      ordered[i] = values.get(variables.get(i));
      if (ordered[i] == null) {
        throw new IllegalArgumentException(template + " needs a value for " + variables.get(i));
      }
    }
    return render(ordered);
  }

  /**
   * The keys this template can render given {@code known} values: known variables match their value,
   * the others any text without the key delimiter {@code #} (IDs never hold one). For checking
   * recorded requests against a declaration when some values (a shard, a quantity) are not fields of
   * the request.
   */
  public Pattern pattern(Map<String, String> known) {
    StringBuilder regex = new StringBuilder(Pattern.quote(literals.get(0)));
    for (int i = 0; i < variables.size(); i++) {
      String value = known.get(variables.get(i));
      regex.append(value != null ? Pattern.quote(value) : "[^#]+").append(Pattern.quote(literals.get(i + 1)));
    }
    return Pattern.compile(regex.toString());
  }

  /**
   * The values of the variables that render this template as {@code rendered}, by name; empty when it is
   * not one of its keys. A variable's value never holds {@code #}: IDs cannot.
   */
  public Optional<Map<String, String>> match(String rendered) {
    StringBuilder regex = new StringBuilder(Pattern.quote(literals.get(0)));
    for (int i = 0; i < variables.size(); i++) {
      regex.append("([^#]+)").append(Pattern.quote(literals.get(i + 1)));
    }
    java.util.regex.Matcher m = Pattern.compile(regex.toString()).matcher(rendered);
    if (!m.matches()) {
      return Optional.empty();
    }
    Map<String, String> values = new java.util.LinkedHashMap<>();
    for (int i = 0; i < variables.size(); i++) {
      values.put(variables.get(i), m.group(i + 1));
    }
    return Optional.of(values);
  }

  @Override
  public String toString() {
    return template;
  }
}
