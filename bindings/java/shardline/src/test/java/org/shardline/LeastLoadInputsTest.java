package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** least-load's inputs through AllocationState's setters decide as the vectors say. */
class LeastLoadInputsTest {
  static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  static void setAmount(JsonNode amount, java.util.function.DoubleConsumer one, java.util.function.Consumer<Map<String, Double>> dims) {
    if (amount.isNumber()) {
      one.accept(amount.asDouble());
    } else {
      Map<String, Double> m = new java.util.HashMap<>();
      amount.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asDouble()));
      dims.accept(m);
    }
  }

  /** The vector's state, built call by call rather than by `decide`. */
  static AllocationState stateOf(JsonNode v) {
    JsonNode regions = v.get("regions");
    AllocationState s = new AllocationState(regions.get(0).get("address").asText());
    regions.forEach(r -> s.upsertMember(Member.up(r.get("address").asText())));
    for (JsonNode r : regions) {
      String id = r.get("region").asText();
      s.addRegion(id, r.get("address").asText(), false, strings(r.path("shards")));
      if (r.has("capacity")) setAmount(r.get("capacity"), c -> s.setRegionCapacity(id, c), c -> s.setRegionCapacity(id, c));
      if (r.has("tags")) s.setRegionTags(id, strings(r.get("tags")));
      if (r.has("maxShards")) s.setRegionMaxShards(id, OptionalInt.of(r.get("maxShards").asInt()));
      if (r.path("draining").asBoolean(false)) s.setRegionDraining(id, true);
    }
    v.path("loads").fields().forEachRemaining(e -> setAmount(e.getValue(), l -> s.setShardLoad(e.getKey(), l), l -> s.setShardLoad(e.getKey(), l)));
    v.path("shardRules").fields().forEachRemaining(e -> {
      JsonNode pin = e.getValue().get("pin");
      s.setShardRule(e.getKey(), strings(e.getValue().path("tags")), pin == null ? null : pin.asText());
    });
    return s;
  }

  @TestFactory
  Stream<DynamicTest> settersDecideAsTheVectors() {
    List<DynamicTest> tests = new ArrayList<>();
    for (JsonNode v : Vectors.file("least-load.json")) {
      String op = v.get("op").asText();
      if (op.equals("plan")) continue;
      tests.add(DynamicTest.dynamicTest(v.get("id").asText(), () -> {
        try (AllocationState s = stateOf(v); Strategy strategy = Strategy.fromJson(v.get("strategy").toString())) {
          JsonNode expect = v.get("expect");
          if (op.equals("allocate")) {
            Allocation want = expect.path("pending").asBoolean(false) ? Allocation.pending() : Allocation.to(expect.get("region").asText());
            assertEquals(want, strategy.allocate(s, null, v.get("shardId").asText()));
          } else {
            assertEquals(strings(expect.get("shards")), strategy.rebalance(s, strings(v.get("rebalanceInProgress"))));
          }
        }
      }));
    }
    assertTrue(tests.size() >= 10, "only " + tests.size() + " vectors");
    return tests.stream();
  }

  @Test
  void badInputIsNamedAndChangesNothing() {
    JsonNode v = Vectors.file("least-load.json").stream().filter(x -> x.get("id").asText().equals("least-load-alloc-capacity")).findFirst().orElseThrow();
    try (AllocationState s = stateOf(v); Strategy strategy = Strategy.fromJson(v.get("strategy").toString())) {
      assertEquals(Allocation.to("regionB"), strategy.allocate(s, null, "x"));
      ShardlineException e = assertThrows(ShardlineException.class, () -> s.setShardLoad("a1", -1));
      assertEquals(Status.INVALID_ARGUMENT, e.status());
      assertTrue(e.getMessage().contains("load of shard \"a1\""), e.getMessage());
      assertTrue(assertThrows(ShardlineException.class, () -> s.setRegionDraining("nope", true)).getMessage().contains("nope"));
      assertEquals(Allocation.to("regionB"), strategy.allocate(s, null, "x"));
      s.setRegionCapacity("regionB", 1);
      assertEquals(Allocation.to("regionA"), strategy.allocate(s, null, "x"));
    }
  }
}
