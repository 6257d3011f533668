package dev.warehouse.runtime.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class BackendAddressTest {

  @Test
  void hostPort_isOneInstance_andDnsTarget_isEveryAddressOfTheName() {
    assertThat(BackendAddress.parse(" inventory-service:50052 "))
        .isEqualTo(new BackendAddress("inventory-service", 50052, false));
    assertThat(BackendAddress.parse("10.0.0.7:50052")).isEqualTo(new BackendAddress("10.0.0.7", 50052, false));
    assertThat(BackendAddress.parse("[::1]:50052")).isEqualTo(new BackendAddress("[::1]", 50052, false));
    assertThat(BackendAddress.parse("dns:///order-service-headless:50053"))
        .isEqualTo(new BackendAddress("order-service-headless", 50053, true));
    assertThat(BackendAddress.parse("DNS:///order-service-headless.warehouse.svc.cluster.local:50053"))
        .isEqualTo(new BackendAddress("order-service-headless.warehouse.svc.cluster.local", 50053, true));
  }

  @Test
  void toString_isTheConfiguredForm() {
    assertThat(BackendAddress.parseAll(List.of("dns:///a:1", "b:2")).stream().map(BackendAddress::toString))
        .containsExactly("dns:///a:1", "b:2");
  }

  @Test
  void malformedEntries_sayWhatIsWrong() {
    assertRejected("", "an empty address");
    assertRejected("dns:///order-service-headless", "has no port (dns:///name:port)");
    assertRejected("inventory-service", "has no port (host:port)");
    assertRejected("[::1]", "has no port");
    assertRejected("dns://8.8.8.8/order-service-headless:50053", "must be dns:///name:port (three slashes");
    assertRejected("dns:order-service-headless:50053", "must be dns:///name:port");
    assertRejected("http://order-service:50053", "must be host:port or dns:///name:port");
    assertRejected("order-service:0", "has no valid port (1-65535)");
    assertRejected("order-service:70000", "has no valid port");
    assertRejected("order-service:http", "has no valid port");
    assertRejected("dns:///:50053", "has no valid host name or address");
    assertRejected("order service:50053", "has no valid host name or address");
    assertRejected("::1:50052", "write an IPv6 address in brackets");
  }

  private static void assertRejected(String entry, String message) {
    assertThatThrownBy(() -> BackendAddress.parse(entry)).as(entry)
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
  }
}
