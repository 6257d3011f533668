package dev.warehouse.bench.data;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * An item's size as DynamoDB documents it ("DynamoDB item sizes and formats"): the UTF-8 bytes of each
 * attribute name plus its value's; a number 1 byte per two significant digits plus 1; a list or map 3
 * bytes plus 1 per element. What the capacity it consumes is computed from.
 */
public final class ItemSize {

  private ItemSize() {}

  public static int of(Map<String, AttributeValue> item) {
    return item.entrySet().stream().mapToInt(e -> utf8(e.getKey()) + value(e.getValue())).sum();
  }

  static int value(AttributeValue v) {
    if (v.s() != null) {
      return utf8(v.s());
    } else if (v.n() != null) {
      return number(v.n());
    } else if (v.b() != null) {
      return v.b().asByteArrayUnsafe().length;
    } else if (v.bool() != null || Boolean.TRUE.equals(v.nul())) {
      return 1;
    } else if (v.hasSs()) {
      return v.ss().stream().mapToInt(ItemSize::utf8).sum();
    } else if (v.hasNs()) {
      return v.ns().stream().mapToInt(ItemSize::number).sum();
    } else if (v.hasBs()) {
      return v.bs().stream().mapToInt(b -> b.asByteArrayUnsafe().length).sum();
    } else if (v.hasL()) {
      return 3 + v.l().stream().mapToInt(e -> 1 + value(e)).sum();
    } else if (v.hasM()) {
      return 3 + v.m().entrySet().stream().mapToInt(e -> 1 + utf8(e.getKey()) + value(e.getValue())).sum();
    }
    return 0;
  }

  static int number(String text) {
    String mantissa = text.replaceFirst("^[+-]", "").toLowerCase().split("e")[0].replace(".", "");
    String digits = mantissa.replaceAll("^0+", "").replaceAll("0+$", "");
    return (Math.max(digits.length(), 1) + 1) / 2 + 1;
  }

  private static int utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }
}
