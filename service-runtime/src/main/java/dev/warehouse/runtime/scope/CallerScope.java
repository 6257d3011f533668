package dev.warehouse.runtime.scope;

import dev.warehouse.runtime.error.PermissionDeniedException;
import io.grpc.Context;
import io.grpc.Metadata;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A caller limited to its own records: the request field that names the owner ({@code customer_id}) and the
 * caller's value of it (from its token). The gateway checks it itself where the route's partition key carries the
 * field; where the key does not (an order read by its id), it forwards the scope in {@link #HEADER} and the owning
 * service checks the item it reads ({@link CallerScopeCheck} admits the header from the gateway only).
 *
 * <p>A record refused by its scope is PERMISSION_DENIED whether or not it exists (AIP-211), so that a scoped
 * caller cannot learn which ids exist: {@link #refusal}.
 */
public record CallerScope(String field, String value) {

  /** {@code customer_id=C4821}, the value URL-encoded: what the gateway sends, and nothing a caller can. */
  public static final Metadata.Key<String> HEADER = Metadata.Key.of("x-warehouse-scope", Metadata.ASCII_STRING_MARSHALLER);
  public static final Context.Key<CallerScope> CONTEXT_KEY = Context.key("warehouse.caller-scope");
  /** The ErrorInfo reason of a refusal by scope. */
  public static final String REFUSED = "OUT_OF_SCOPE";

  private static final Pattern FIELD = Pattern.compile("[a-z][a-z0-9_]{0,63}");

  public CallerScope {
    if (!FIELD.matcher(field).matches()) {
      throw new IllegalArgumentException("a scope's field is a request field name, got '" + field + "'");
    }
    if (value.isEmpty()) {
      throw new IllegalArgumentException("a scope's value is never empty");
    }
  }

  /** The scope of the call being served, when the gateway forwarded one. */
  public static Optional<CallerScope> current() {
    return Optional.ofNullable(CONTEXT_KEY.get());
  }

  public String header() {
    return field + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  /** @throws IllegalArgumentException when {@code header} is not {@code field=value} */
  public static CallerScope parse(String header) {
    int equals = header.indexOf('=');
    if (equals <= 0) {
      throw new IllegalArgumentException("a scope header is field=value");
    }
    return new CallerScope(header.substring(0, equals), URLDecoder.decode(header.substring(equals + 1), StandardCharsets.UTF_8));
  }

  /** Whether a record whose {@link #field} holds {@code owner} is within this scope. */
  public boolean admits(String owner) {
    return value.equals(owner);
  }

  /** The refusal of a record out of scope, or of one that does not exist: the same either way (AIP-211). */
  public PermissionDeniedException refusal(String what) {
    return new PermissionDeniedException(REFUSED, "the caller may read or change only its own " + what
        + " (its " + field + "), and this is not one of them, or does not exist", Map.of("scope", field));
  }
}
