package dev.warehouse.bench.standin;

import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** DynamoDB's JSON wire form of an item ({@code {"name":{"S":"value"}}}), for the stand-in's canned answers. */
final class DynamoJson {

  private DynamoJson() {}

  static String item(Map<String, AttributeValue> item) {
    return item.entrySet().stream()
        .map(e -> string(e.getKey()) + ":" + value(e.getValue()))
        .collect(Collectors.joining(",", "{", "}"));
  }

  static String value(AttributeValue v) {
    return switch (v.type()) {
      case S -> "{\"S\":" + string(v.s()) + "}";
      case N -> "{\"N\":" + string(v.n()) + "}";
      case B -> "{\"B\":" + base64(v.b()) + "}";
      case BOOL -> "{\"BOOL\":" + v.bool() + "}";
      case NUL -> "{\"NULL\":true}";
      case SS -> "{\"SS\":" + strings(v.ss()) + "}";
      case NS -> "{\"NS\":" + strings(v.ns()) + "}";
      case BS -> "{\"BS\":" + v.bs().stream().map(DynamoJson::base64).collect(Collectors.joining(",", "[", "]")) + "}";
      case L -> "{\"L\":" + v.l().stream().map(DynamoJson::value).collect(Collectors.joining(",", "[", "]")) + "}";
      case M -> "{\"M\":" + item(v.m()) + "}";
      case UNKNOWN_TO_SDK_VERSION -> throw new IllegalArgumentException("unknown attribute type: " + v);
    };
  }

  private static String strings(List<String> values) {
    return values.stream().map(DynamoJson::string).collect(Collectors.joining(",", "[", "]"));
  }

  private static String base64(SdkBytes bytes) {
    return "\"" + Base64.getEncoder().encodeToString(bytes.asByteArray()) + "\"";
  }

  /** A JSON string literal. */
  static String string(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
