package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Load reports, offers and drains through the step API. */
class LoadsTest {
  static String entityOf(String shard) {
    return IntStream.range(0, 10_000)
        .mapToObj(i -> "user-" + i)
        .filter(e -> Shardline.pekkoShardId(e, 10).equals(shard))
        .findFirst()
        .orElseThrow();
  }

  static void route(CoordinatorStepTest.Host h, Region r, String shard) {
    r.route(h.now, entityOf(shard), "x".getBytes(StandardCharsets.UTF_8));
    h.settle();
  }

  /** a hosts shards 0-3, b shards 4-7; with {@code reported}, a's weigh 5 and b's 1. */
  static CoordinatorStepTest.Host fourAndFour(boolean reported) {
    CoordinatorStepTest.Host h =
        new CoordinatorStepTest.Host(Strategy.fromJson("{\"kind\": \"least-load\", \"absoluteLimit\": 2}"));
    h.coordinator.start(h.now);
    h.settle();
    Region a = h.region("a", CoordinatorStepTest.N1);
    h.settle();
    for (String s : List.of("0", "1", "2", "3")) route(h, a, s);
    Region b = h.region("b", CoordinatorStepTest.N2);
    h.settle();
    for (String s : List.of("4", "5", "6", "7")) route(h, b, s);
    assertEquals(List.of("0", "1", "2", "3"), h.coordinator.shardsOf("a"));
    assertEquals(List.of("4", "5", "6", "7"), h.coordinator.shardsOf("b"));
    if (reported) {
      a.reportLoads(h.now, Map.of("0", 5.0, "1", 5.0, "2", 5, "3", 5));
      b.reportLoads(h.now, Map.of("4", 1.0, "5", 1.0, "6", 1.0, "7", 1.0));
      h.settle();
    }
    return h;
  }

  @Test
  void aLoadReportChangesWhereLeastLoadPutsAShard() {
    for (boolean reported : new boolean[] {false, true}) {
      try (CoordinatorStepTest.Host h = fourAndFour(reported)) {
        route(h, h.regions.get("a"), "8");
        // Counted by shards the two are even and map order picks a; a's load sends it to b.
        assertEquals(Optional.of(reported ? "b" : "a"), h.coordinator.homeOf("8"), "reported: " + reported);
        assertEquals(reported, h.coordinator.snapshot().contains("\"loads\""), h.coordinator.snapshot());
      }
    }
  }

  @Test
  void aDrainedRegionGivesItsShardsAwayAndBadLoadsAreNamed() {
    try (CoordinatorStepTest.Host h = fourAndFour(false)) {
      h.coordinator.drain(h.now, "a");
      for (int i = 0; i < 4; i++) {
        h.now += 10_000;
        h.coordinator.onTimeout(h.now);
        h.settle();
      }
      assertEquals(List.of(), h.coordinator.shardsOf("a"));
      assertTrue(h.coordinator.snapshot().contains("\"draining\":true"), h.coordinator.snapshot());
      h.coordinator.undrain(h.now, "a");
      Region a = h.regions.get("a");
      ShardlineException e = assertThrows(ShardlineException.class, () -> a.reportLoads(h.now, Map.of("1", -1)));
      assertEquals(Status.INVALID_ARGUMENT, e.status());
      assertTrue(e.getMessage().contains("loads.1: expected a finite number >= 0, got -1"), e.getMessage());
      e = assertThrows(ShardlineException.class, () -> a.reportLoads(h.now, Map.of("1", Double.NaN)));
      assertTrue(e.getMessage().contains("loads.1 must be a finite number"), e.getMessage());
      e = assertThrows(ShardlineException.class, () -> a.updateOffer(h.now, 0, List.of(), null));
      assertTrue(e.getMessage().contains("capacity: expected a finite number > 0"), e.getMessage());
    }
    try (CoordinatorStepTest.Host h = new CoordinatorStepTest.Host(Strategy.leastShard(20, 0.1))) {
      h.coordinator.start(h.now);
      h.settle();
      h.region("a", CoordinatorStepTest.N1);
      h.settle();
      ShardlineException e = assertThrows(ShardlineException.class, () -> h.coordinator.drain(h.now, "a"));
      assertEquals(Status.INVALID_STATE, e.status());
      assertTrue(e.getMessage().contains("strategy least-shard does not drain"), e.getMessage());
    }
  }
}
