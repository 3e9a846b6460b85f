package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Replays every vector of tests/vectors through {@link Shardline#decide}, as vectors.rs does. */
class ConformanceVectorsTest {

  private static Stream<DynamicTest> replay(String file) {
    return Vectors.file(file).stream()
        .map(
            v ->
                DynamicTest.dynamicTest(
                    v.path("id").asText(),
                    () -> {
                      JsonNode got = Vectors.parse(Shardline.decide(v.toString()));
                      Vectors.check(v, got).ifPresent(m -> { throw new AssertionError(m); });
                      JsonNode explained = Vectors.parse(Shardline.decide(v.toString(), true));
                      assertTrue(explained.has("explanation"), "explained result has an explanation");
                      Vectors.check(v, explained).ifPresent(m -> { throw new AssertionError("explaining changed the decision: " + m); });
                    }));
  }

  @TestFactory
  Stream<DynamicTest> pekkoVectors() {
    return replay("pekko-strategies.json");
  }

  @TestFactory
  Stream<DynamicTest> actorTsVectors() {
    return replay("actor-ts-strategies.json");
  }

  @TestFactory
  Stream<DynamicTest> leastLoadVectors() {
    return replay("least-load.json");
  }

  @TestFactory
  Stream<DynamicTest> differentialFindings() throws IOException {
    Path dir = Vectors.dir().resolve("../../scripts/differential/findings");
    List<JsonNode> cases = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path p : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".json")).sorted()::iterator) {
        JsonNode n = Vectors.read(p);
        if (n.isArray()) n.forEach(cases::add);
        else cases.add(n);
      }
    }
    assertFalse(cases.isEmpty(), "no findings replayed");
    return cases.stream()
        .map(
            v ->
                DynamicTest.dynamicTest(
                    v.path("id").asText(),
                    () -> Vectors.check(v, Vectors.parse(Shardline.decide(v.toString())))
                        .ifPresent(m -> { throw new AssertionError(m); })));
  }

  @Test
  void aWholeFileDecidesAsAnArrayInOrder() {
    List<JsonNode> all = Vectors.file("pekko-strategies.json");
    JsonNode got = Vectors.parse(Shardline.decide(Vectors.array(all).toString()));
    assertTrue(got.isArray());
    assertEquals(all.size(), got.size());
    for (int i = 0; i < all.size(); i++) {
      JsonNode v = all.get(i);
      JsonNode one = got.get(i);
      Vectors.check(v, one).ifPresent(m -> { throw new AssertionError(m); });
    }
  }

  @Test
  void malformedVectorsNameTheVectorAndField() {
    ObjectNode v = (ObjectNode) Vectors.file("pekko-strategies.json").get(0).deepCopy();
    ((ObjectNode) v.withArray("regions").get(1)).put("address", "not an address");
    ShardlineException e = assertThrows(ShardlineException.class, () -> Shardline.decide(v.toString()));
    assertEquals(Status.INVALID_ARGUMENT, e.status());
    assertTrue(e.getMessage().contains("least-01") && e.getMessage().contains("regions[1].address"), e.getMessage());

    ShardlineException notJson = assertThrows(ShardlineException.class, () -> Shardline.decide("{nope"));
    assertEquals(Status.INVALID_ARGUMENT, notJson.status());
    ShardlineException nul = assertThrows(ShardlineException.class, () -> Shardline.decide(null));
    assertEquals(Status.NULL_POINTER, nul.status());
  }

  // ---- hashing.json -------------------------------------------------------------------------

  private static JsonNode hashing(String section) {
    return Vectors.read(Vectors.dir().resolve("hashing.json")).get(section).get("values");
  }

  @Test
  void pekkoHashCodeExtractorCases() {
    JsonNode cases = hashing("pekkoHashCodeExtractor");
    assertTrue(cases.size() > 0);
    for (JsonNode c : cases) {
      String id = c.get("entityId").asText();
      int n = c.get("numShards").asInt();
      assertEquals(c.get("shard").asText(), Shardline.pekkoShardId(id, n), id + " / " + n);
      assertEquals(c.get("shard").asText(), ShardExtractor.pekko(n).shardOf(id));
      // the JVM's own String.hashCode gives the same answer
      assertEquals(c.get("shard").asText(), Integer.toString(Math.abs(id.hashCode() % n)));
    }
  }

  @Test
  void actorTsHashShardIdCases() {
    JsonNode cases = hashing("actorTsHashShardId");
    assertTrue(cases.size() > 0);
    for (JsonNode c : cases) {
      String id = c.get("entityId").asText();
      int n = c.get("numShards").asInt();
      assertEquals(c.get("shard").asInt(), Shardline.actorTsShardId(id, n), id + " / " + n);
      assertEquals(c.get("shard").asText(), ShardExtractor.actorTs(n).shardOf(id));
    }
  }

  @Test
  void murmurStringHashCases() {
    JsonNode values = hashing("pekkoMurmurStringHash");
    assertTrue(values.size() > 0);
    for (Iterator<Map.Entry<String, JsonNode>> it = values.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      assertEquals(e.getValue().asInt(), Shardline.murmurStringHash(e.getKey()), e.getKey());
    }
  }

  /** Ring lookups, through the consistent-hashing strategy: one region per ring node. */
  @Test
  void pekkoRingLookups() {
    JsonNode rings = hashing("pekkoRings");
    assertTrue(rings.size() > 0);
    for (JsonNode ring : rings) {
      List<String> nodes = new ArrayList<>();
      ring.get("nodes(sorted by Address ordering)").forEach(n -> nodes.add(n.asText()));
      try (AllocationState state = new AllocationState(nodes.get(0));
          Strategy s = Strategy.fromJson("{\"kind\":\"consistent-hashing\",\"virtualNodesFactor\":" + ring.get("virtualNodesFactor").asInt() + "}")) {
        for (String n : nodes) {
          state.upsertMember(Member.up(n));
          state.addRegion(n, n);
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = ring.get("nodeFor").fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          assertEquals(Allocation.to(e.getValue().asText()), s.allocate(state, null, e.getKey()), "nodeFor(" + e.getKey() + ")");
        }
      }
    }
  }
}
