package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Replays every recorded state-machine trace of tests/traces through {@link Shardline#replay}. */
class TraceReplayTest {

  private static List<Path> traces() {
    Path dir = Vectors.dir().resolve("../traces");
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> out = new ArrayList<>();
      files.filter(f -> f.toString().endsWith(".jsonl")).sorted().forEach(out::add);
      assertTrue(out.size() >= 4, "only " + out.size() + " traces in " + dir);
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @TestFactory
  Stream<DynamicTest> everyTraceReplaysIdentically() {
    return traces().stream()
        .map(
            p ->
                DynamicTest.dynamicTest(
                    p.getFileName().toString(),
                    () -> {
                      JsonNode r = Vectors.parse(Shardline.replay(read(p)));
                      assertEquals(0, r.path("mismatches").asLong(), r.path("first").toString());
                      assertTrue(r.path("first").isNull());
                      assertTrue(r.path("steps").asLong() > 100);
                    }));
  }

  @Test
  void aChangedOutputIsTheFirstMismatch() throws IOException {
    String[] lines = read(traces().get(0)).split("\n");
    int step = 0;
    int line = 0;
    for (int i = 0; i < lines.length; i++) {
      JsonNode record = Vectors.JSON.readTree(lines[i]);
      if (!record.has("input")) continue;
      step++;
      ArrayNode outputs = (ArrayNode) record.get("outputs");
      if (outputs.size() > 0) {
        outputs.set(0, Vectors.JSON.createObjectNode().put("type", "stopped"));
        lines[i] = record.toString();
        line = i + 1;
        break;
      }
    }
    JsonNode r = Vectors.parse(Shardline.replay(String.join("\n", lines)));
    assertEquals(1, r.path("mismatches").asLong());
    JsonNode first = r.path("first");
    assertEquals(step, first.path("step").asInt());
    assertEquals(line, first.path("line").asInt());
    ObjectNode stopped = Vectors.JSON.createObjectNode().put("type", "stopped");
    assertEquals(stopped, first.path("expected").path("outputs").get(0));
    assertNotEquals(stopped, first.path("actual").path("outputs").get(0));
  }

  @Test
  void aBrokenTraceNamesTheLineAndField() {
    String header = read(traces().get(0)).split("\n")[0];
    ShardlineException e = assertThrows(ShardlineException.class, () -> Shardline.replay("not json"));
    assertEquals(Status.INVALID_ARGUMENT, e.status());
    assertTrue(e.getMessage().contains("line 1: not valid JSON"), e.getMessage());
    e = assertThrows(ShardlineException.class, () -> Shardline.replay(header + "\n{\"end\":\"c9\"}"));
    assertEquals(Status.INVALID_ARGUMENT, e.status());
    assertTrue(e.getMessage().contains("line 2: field end: unknown machine \"c9\""), e.getMessage());
    e = assertThrows(ShardlineException.class, () -> Shardline.replay(header.replace("\"version\":1", "\"version\":2")));
    assertTrue(e.getMessage().contains("line 1: field version"), e.getMessage());
    assertThrows(ShardlineException.class, () -> Shardline.replay(null));
  }
}
