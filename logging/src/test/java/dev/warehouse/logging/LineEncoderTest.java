package dev.warehouse.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.internal.Streams;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LineEncoderTest {

  /** Values a caller or an exception can put into a line: each must come back exactly, on its one line. */
  private static final Map<String, String> NASTY = Map.ofEntries(
      Map.entry("quote", "say \"hi\""),
      Map.entry("backslash", "C:\\temp\\new"),
      Map.entry("newline", "one\ntwo\r\nthree"),
      Map.entry("forged_line", "x\n{\"ts\":\"2026-01-01T00:00:00.000Z\",\"level\":\"ERROR\",\"event\":\"forged\"}"),
      Map.entry("forged_field", "x\",\"level\":\"ERROR"),
      Map.entry("controls", "nul\u0000bell\u0007esc\u001bunit\u001fdel\u007fnel\u0085"),
      Map.entry("separators", "line\u2028paragraph\u2029"),
      Map.entry("tab", "a\tb"),
      Map.entry("unpaired", "high\ud800 low\udc00"),
      Map.entry("emoji", "box \ud83d\udce6"),
      Map.entry("slash", "warehouse.inventory.v1.InventoryService/AdjustStock spiffe://warehouse.local/gateway"),
      Map.entry("empty", ""));

  private final LoggerContext context = new LoggerContext();
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

  private Logger logger(LogFormat format) {
    context.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter()); // a context of its own needs one
    context.start();
    LineEncoder encoder = new LineEncoder(format);
    encoder.setContext(context);
    encoder.start();
    OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();
    appender.setContext(context);
    appender.setEncoder(encoder);
    appender.setOutputStream(bytes);
    appender.start();
    Logger logger = context.getLogger("dev.warehouse.test.Nasty");
    logger.addAppender(appender);
    return logger;
  }

  private List<String> lines() {
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertThat(out).endsWith("\n");
    return List.of(out.substring(0, out.length() - 1).split("\n", -1));
  }

  /** One JSON object, read strictly (no raw control characters in strings, nothing after it), or the test fails. */
  private static JsonObject parse(String line) throws IOException {
    JsonReader reader = new JsonReader(new StringReader(line));
    reader.setStrictness(Strictness.STRICT);
    JsonElement element = Streams.parse(reader);
    assertThat(reader.peek()).as("nothing after the object: %s", line).isEqualTo(JsonToken.END_DOCUMENT);
    assertThat(element.isJsonObject()).as(line).isTrue();
    return element.getAsJsonObject();
  }

  @Test
  void json_everyLineIsOneObject_withEveryValueBackAsItWas() throws Exception {
    Logger log = logger(LogFormat.JSON);
    NASTY.forEach((name, value) -> log.atWarn().setMessage(value).addKeyValue("event", "nasty_" + name)
        .addKeyValue("value", value).addKeyValue(value, "as a key").log());
    IllegalStateException failure = new IllegalStateException("bad \"state\"\nsecond line",
        new java.io.IOException("cause \\ with backslash"));
    log.atError().setMessage("failed").addKeyValue("event", "call_failed").addKeyValue("drain_ms", 1500)
        .addKeyValue("share", 0.63).addKeyValue("ok", true).addKeyValue("nan", Double.NaN).addKeyValue("none", (Object) null)
        .setCause(failure).log();

    List<String> lines = lines();
    assertThat(lines).hasSize(NASTY.size() + 1);
    for (String line : lines) {
      assertThat(line.chars()).as("no raw control character: %s", line).noneMatch(c -> c < 0x20);
      parse(line);
    }
    List<JsonObject> objects = new ArrayList<>();
    for (String line : lines) {
      objects.add(parse(line));
    }
    for (JsonObject object : objects.subList(0, NASTY.size())) {
      String name = object.get("event").getAsString().substring("nasty_".length());
      String value = NASTY.get(name);
      assertThat(new ArrayList<>(object.keySet()).subList(0, 6))
          .containsExactly("ts", "level", "logger", "thread", "event", "msg");
      assertThat(object.get("ts").getAsString()).matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z");
      assertThat(object.get("level").getAsString()).isEqualTo("WARN");
      assertThat(object.get("logger").getAsString()).isEqualTo("dev.warehouse.test.Nasty");
      assertThat(object.get("thread").getAsString()).isEqualTo(Thread.currentThread().getName());
      assertThat(object.get("msg").getAsString()).as(name).isEqualTo(value);
      assertThat(object.get("value").getAsString()).as(name).isEqualTo(value);
      if (!value.isEmpty()) {
        assertThat(object.get(value).getAsString()).as("a key is escaped as a value is").isEqualTo("as a key");
      }
    }
    assertThat(lines).filteredOn(line -> line.contains("\"event\":\"nasty_slash\"")).singleElement().asString()
        .doesNotContain("\\/").contains("InventoryService/AdjustStock");

    JsonObject failed = objects.get(NASTY.size());
    assertThat(failed.get("level").getAsString()).isEqualTo("ERROR");
    assertThat(failed.get("drain_ms")).isEqualTo(new JsonPrimitive(1500));
    assertThat(failed.get("share").getAsJsonPrimitive().isNumber()).isTrue();
    assertThat(failed.get("share").getAsDouble()).isEqualTo(0.63);
    assertThat(failed.get("ok").getAsBoolean()).isTrue();
    assertThat(failed.get("nan").getAsString()).as("JSON has no NaN").isEqualTo("NaN");
    assertThat(failed.get("none").isJsonNull()).isTrue();
    assertThat(failed.get("error").getAsString())
        .isEqualTo("java.lang.IllegalStateException: bad \"state\"\nsecond line");
    assertThat(failed.get("stack_trace").getAsString())
        .startsWith("java.lang.IllegalStateException: bad \"state\"\nsecond line")
        .contains("\tat dev.warehouse.logging.LineEncoderTest.", "Caused by: java.io.IOException: cause \\ with backslash");
  }

  @Test
  void json_aKeyGivenTwice_orNamedAsAFixedField_isWrittenOnce() throws Exception {
    Logger log = logger(LogFormat.JSON);
    log.atInfo().setMessage("draining").addKeyValue("event", "draining").addKeyValue("drain_ms", 1500)
        .addKeyValue("drain_ms", 9).addKeyValue("msg", "forged").addKeyValue("level", "ERROR").addKeyValue("event", "x")
        .log();
    String line = lines().get(0);
    JsonObject object = parse(line);
    assertThat(object.keySet()).containsExactly("ts", "level", "logger", "thread", "event", "msg", "drain_ms");
    assertThat(object.get("event").getAsString()).isEqualTo("draining");
    assertThat(object.get("msg").getAsString()).isEqualTo("draining");
    assertThat(object.get("level").getAsString()).isEqualTo("INFO");
    assertThat(object.get("drain_ms").getAsInt()).isEqualTo(1500);
  }

  @Test
  void text_everyEventStaysOneLine_withTheSameFields() throws Exception {
    Logger log = logger(LogFormat.TEXT);
    NASTY.forEach((name, value) -> log.atWarn().setMessage(value).addKeyValue("event", "nasty_" + name)
        .addKeyValue("value", value).log());
    log.atInfo().setMessage("draining").addKeyValue("event", "draining").addKeyValue("drain_ms", 1500)
        .addKeyValue("key", "PRODUCT#P100").addKeyValue("peers[svc]", "[::1]:50052").log();
    log.atError().setMessage("boom").setCause(new IllegalStateException("two\nlines")).log();

    List<String> lines = lines();
    assertThat(lines).hasSize(NASTY.size() + 2);
    for (String line : lines) {
      assertThat(line.chars()).as("no raw control character: %s", line).noneMatch(c -> c < 0x20);
      assertThat(line).matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z (WARN|INFO|ERROR) dev\\.warehouse\\.test\\.Nasty .*");
    }
    assertThat(lines.get(NASTY.size())).endsWith(" INFO dev.warehouse.test.Nasty event=draining drain_ms=1500 key=PRODUCT#P100 peers[svc]=[::1]:50052");
    // A quoted value is a JSON string: it reads back as it was.
    for (String line : lines.subList(0, NASTY.size())) {
      String name = line.replaceAll(".* event=nasty_(\\w+) .*", "$1");
      String quoted = line.substring(line.indexOf(" value=") + " value=".length());
      String value = quoted.startsWith("\"") ? parseString(quoted) : quoted;
      assertThat(value).as(name).isEqualTo(NASTY.get(name));
    }
    assertThat(lines.get(NASTY.size() + 1)).contains(" msg=boom error=\"java.lang.IllegalStateException: two\\nlines\"",
        " stack_trace=\"java.lang.IllegalStateException: two\\nlines\\n\\tat dev.warehouse.logging.LineEncoderTest.");
  }

  private static String parseString(String quoted) throws IOException {
    JsonReader reader = new JsonReader(new StringReader(quoted));
    reader.setStrictness(Strictness.STRICT);
    return reader.nextString();
  }

  @Test
  void timestamp_isUtc_toTheMillisecond() {
    assertThat(LineEncoder.timestamp(0)).isEqualTo("1970-01-01T00:00:00.000Z");
    assertThat(LineEncoder.timestamp(1_785_060_010_007L)).isEqualTo("2026-07-26T10:00:10.007Z");
  }

  @Test
  void julRecords_reachTheSameLines_throughTheBridge() throws Exception {
    Logging.start(); // this JVM's Logback, configured through ServiceLoader as a process's is
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      java.util.logging.Logger.getLogger("io.grpc.test.Bridged").warning("from \"JUL\"\nsecond line");
      java.util.logging.Logger.getLogger("io.grpc.test.Bridged").fine("below the level: never built");
    } finally {
      System.setErr(original);
    }
    List<String> lines = captured.toString(StandardCharsets.UTF_8).lines()
        .filter(line -> line.contains("io.grpc.test.Bridged")).toList();
    assertThat(lines).hasSize(1);
    JsonObject object = parse(lines.get(0));
    assertThat(object.get("level").getAsString()).isEqualTo("WARN");
    assertThat(object.get("logger").getAsString()).isEqualTo("io.grpc.test.Bridged");
    assertThat(object.get("msg").getAsString()).isEqualTo("from \"JUL\"\nsecond line");
    assertThat(object.has("event")).isFalse();
  }

  @Test
  void settings_readCaseInsensitively_andFallBackToTheDefault() {
    assertThat(LogSettings.lenient(Map.of())).isEqualTo(LogSettings.DEFAULT);
    assertThat(LogSettings.lenient(Map.of("LOG_FORMAT", " TEXT ", "LOG_LEVEL", "Debug")))
        .isEqualTo(new LogSettings(LogFormat.TEXT, ch.qos.logback.classic.Level.DEBUG));
    assertThat(LogSettings.lenient(Map.of("LOG_FORMAT", "xml", "LOG_LEVEL", "loud"))).isEqualTo(LogSettings.DEFAULT);
  }
}
