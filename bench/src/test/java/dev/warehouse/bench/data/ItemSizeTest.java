package dev.warehouse.bench.data;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Sizes as "DynamoDB item sizes and formats" counts them, on items worked out by hand. */
class ItemSizeTest {

  @Test
  void countsNamesAndValues_byTheDocumentedRules() {
    assertThat(ItemSize.of(Map.of("PK", AttributeValue.fromS("B"), "SK", AttributeValue.fromS("1"),
        "data", AttributeValue.fromS("x".repeat(5_000))))).isEqualTo(5_010);
    // "é" is two bytes in UTF-8.
    assertThat(ItemSize.of(Map.of("s", AttributeValue.fromS("é")))).isEqualTo(1 + 2);
    // 1 byte per two significant digits, plus 1; leading and trailing zeros do not count.
    assertThat(ItemSize.of(Map.of("n", AttributeValue.fromN("12345")))).isEqualTo(1 + 3 + 1);
    assertThat(ItemSize.of(Map.of("n", AttributeValue.fromN("1000000")))).isEqualTo(1 + 1 + 1);
    assertThat(ItemSize.of(Map.of("n", AttributeValue.fromN("0.0012")))).isEqualTo(1 + 1 + 1);
    assertThat(ItemSize.of(Map.of("b", AttributeValue.fromBool(true), "z", AttributeValue.fromNul(true)))).isEqualTo(2 + 2);
    // A list or map: 3 bytes, and 1 per element besides the elements (and, in a map, their names).
    assertThat(ItemSize.of(Map.of("l", AttributeValue.fromL(List.of(AttributeValue.fromS("ab"), AttributeValue.fromN("7"))))))
        .isEqualTo(1 + 3 + (1 + 2) + (1 + 2));
    assertThat(ItemSize.of(Map.of("m", AttributeValue.fromM(Map.of("k", AttributeValue.fromS("v")))))).isEqualTo(1 + 3 + 1 + 1 + 1);
  }
}
