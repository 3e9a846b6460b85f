package org.shardline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/** The shared conformance vectors and the comparison core/tests/vectors.rs makes. */
final class Vectors {
  static final ObjectMapper JSON = new ObjectMapper();

  private Vectors() {}

  static Path dir() {
    String d = System.getProperty("shardline.vectors.dir");
    if (d == null) throw new IllegalStateException("-Dshardline.vectors.dir is not set (run through Maven)");
    return Path.of(d);
  }

  static JsonNode read(Path file) {
    try {
      return JSON.readTree(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<JsonNode> file(String name) {
    List<JsonNode> out = new ArrayList<>();
    read(dir().resolve(name)).forEach(out::add);
    if (out.isEmpty()) throw new IllegalStateException(name + " has no vectors");
    return out;
  }

  static JsonNode parse(String json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A description of how {@code got} differs from the vector's expectation, if it does. */
  static Optional<String> check(JsonNode v, JsonNode got) {
    JsonNode expect = v.get("expect");
    String id = v.path("id").asText("?");
    for (String key : List.of("region", "error", "pending", "order", "shards", "shardsInOrder", "rounds")) {
      JsonNode e = expect.get(key);
      if (e != null && !e.equals(got.get(key))) {
        return Optional.of(id + ": " + key + ": expected " + e + ", got " + got.get(key));
      }
    }
    JsonNode then = v.get("then");
    if (then != null) {
      List<Long> counts = longs(got.path("then").path("counts"));
      List<Long> expected = longs(then.path("expectCounts"));
      if (then.path("countsSorted").asBoolean(false)) {
        Collections.sort(counts);
        Collections.sort(expected);
      }
      if (!counts.equals(expected)) {
        return Optional.of(id + ": counts after re-allocation: expected " + expected + ", got " + counts);
      }
      JsonNode regions = then.get("expectRegions");
      if (regions != null && !regions.equals(got.path("then").path("regions"))) {
        return Optional.of(id + ": regions after re-allocation: expected " + regions + ", got " + got.path("then").path("regions"));
      }
    }
    return Optional.empty();
  }

  private static List<Long> longs(JsonNode array) {
    List<Long> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asLong()));
    return out;
  }

  static ArrayNode array(List<JsonNode> items) {
    ArrayNode a = JSON.createArrayNode();
    items.forEach(a::add);
    return a;
  }
}
