package dev.warehouse.runtime.tls;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The identities (certificate URI SANs, SPIFFE-style: {@code spiffe://warehouse.local/gateway}) a
 * process accepts as peers. Empty means any certificate the trusted CA signed: the CA alone decides.
 */
public record TrustedPeers(Set<String> identities) {

  public static final TrustedPeers ANY_FROM_CA = new TrustedPeers(Set.of());

  public TrustedPeers {
    identities = Set.copyOf(identities);
  }

  public static TrustedPeers of(List<String> identities) {
    return new TrustedPeers(new LinkedHashSet<>(identities));
  }

  public boolean anyFromCa() {
    return identities.isEmpty();
  }

  public boolean allows(String identity) {
    return identities.isEmpty() || identities.contains(identity);
  }

  /** For the start-up log. */
  public String describe() {
    return identities.isEmpty() ? "any-from-ca" : String.join(",", identities.stream().sorted().toList());
  }
}
