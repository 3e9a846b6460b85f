package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Operations by name: plain Java values cross both ways, and a bad call names what is wrong. */
class OpsTest {
  private static Coordinator coordinator() {
    return new Coordinator(Strategy.leastShard(20, 0.1), CoordinatorStepTest.N0);
  }

  private static Object op(Coordinator c, String name, Object... args) {
    return c.op((h, n, a) -> CoordinatorQueries.nOp(h, 0, n, a), name, args);
  }

  @Test
  void answersArePlainJavaValues() {
    try (Coordinator c = coordinator()) {
      assertEquals("idle", op(c, "phase"));
      assertNull(op(c, "token"));
      assertEquals(Boolean.FALSE, op(c, "is_active"));
      assertEquals(List.of(), op(c, "unallocated"));
      Object snapshot = op(c, "snapshot");
      assertTrue(snapshot instanceof Map, String.valueOf(snapshot));
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> metrics = (List<Map<String, Object>>) op(c, "metrics");
      assertTrue(metrics.get(0).get("value") instanceof Long);
      assertTrue(c.snapshot().startsWith("{\""), c.snapshot());
    }
    // The snapshot's text is written from such values in Java.
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    m.put("a", Arrays.asList(1L, "x\"y", true, null, 2.5));
    m.put("b", new byte[] {1, 2});
    assertEquals("{\"a\":[1,\"x\\\"y\",true,null,2.5],\"b\":\"AQI=\"}", Json.write(m));
  }

  @Test
  void argumentsOfEveryKindConvertOrAreNamed() {
    try (Coordinator c = coordinator()) {
      assertNull(op(c, "home_of", "7"));
      ShardlineException e = assertThrows(ShardlineException.class, () -> op(c, "home_of"));
      assertEquals(Status.NULL_POINTER, e.status());
      assertEquals("NULL_POINTER: Coordinator.home_of: shard is required", e.getMessage());
      e = assertThrows(ShardlineException.class, () -> op(c, "home_of", 7L));
      assertTrue(e.getMessage().startsWith("INVALID_ARGUMENT: Coordinator.home_of: shard "), e.getMessage());
      e = assertThrows(ShardlineException.class, () -> op(c, "home_of", new Object()));
      assertTrue(e.getMessage().startsWith("INVALID_ARGUMENT: Coordinator.home_of: argument 1: a java.lang.Object cannot be passed"), e.getMessage());
      e = assertThrows(ShardlineException.class, () -> op(c, "rebalance_now"));
      assertEquals("INVALID_ARGUMENT: Coordinator has no operation \"rebalance_now\"", e.getMessage());
      // Lists, maps, numbers, booleans and bytes all read (and are then refused by type).
      for (Object v : new Object[] {List.of("a", 1, 2.5, true), Map.of("k", new byte[] {1}), 3, (short) 4, 1.5f}) {
        e = assertThrows(ShardlineException.class, () -> op(c, "home_of", v));
        assertTrue(e.getMessage().startsWith("INVALID_ARGUMENT: Coordinator.home_of: shard "), Arrays.toString(new Object[] {v, e.getMessage()}));
      }
    }
  }
}
