package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Worker-id reservation and Snowflake ids, under a manual clock that also drives the registry. */
class WorkerIdTest {
  static final long START = SnowflakeLayout.DEFAULT.epochMs() + 1_000_000;

  /** Wall and monotonic time move together; sleeping advances them and the registry's time. */
  static final class ManualIdClock implements IdClock {
    final InMemoryRegistry registry;
    long mono = 0;

    ManualIdClock(InMemoryRegistry registry) {
      this.registry = registry;
    }

    @Override
    public long wallMs() {
      return START + mono;
    }

    @Override
    public long monotonicMs() {
      return mono;
    }

    @Override
    public void sleepUntil(long until) {
      advance(until - mono);
    }

    void advance(long ms) {
      mono += Math.max(0, ms);
      registry.advanceTo(mono);
    }
  }

  static WorkerIdHolder holder(InMemoryRegistry r, IdClock clock, String owner, ReserveConfig config) {
    return WorkerIdHolder.acquire(r.session(10_000), config, TenureConfig.forTtl(10_000), SnowflakeLayout.DEFAULT, owner, 1, 42, clock);
  }

  @Test
  void holdersGetTheLowestFreeIdsAndUniqueIncreasingIds() {
    try (InMemoryRegistry r = new InMemoryRegistry()) {
      ManualIdClock clock = new ManualIdClock(r);
      try (WorkerIdHolder a = holder(r, clock, "a", ReserveConfig.defaults());
          WorkerIdHolder b = holder(r, clock, "b", ReserveConfig.defaults())) {
        assertEquals(0, a.workerId());
        assertEquals(1, b.workerId());
        assertEquals(Map.of(0, new InMemoryRegistry.Claim("a", 1, a.epoch()), 1, new InMemoryRegistry.Claim("b", 1, b.epoch())), r.liveClaims());
        Set<Long> seen = new HashSet<>();
        long last = -1;
        for (int i = 0; i < 10_000; i++) {
          long id = a.nextId();
          assertTrue(id > last, "ids increase");
          last = id;
          assertTrue(seen.add(id));
          assertTrue(seen.add(b.nextId()));
          if (i % 1000 == 0) clock.advance(1);
        }
        SnowflakeLayout.Parts p = SnowflakeLayout.DEFAULT.decompose(last);
        assertEquals(0, p.worker());
        assertTrue(p.unixMs() >= START && p.unixMs() <= a.budgetMs());
      }
      assertEquals(Map.of(), r.liveClaims(), "closing released both ids");
    }
  }

  @Test
  void exhaustionIsNoCandidates() {
    try (InMemoryRegistry r = new InMemoryRegistry()) {
      ManualIdClock clock = new ManualIdClock(r);
      ReserveConfig two = ReserveConfig.defaults().withWorkerBits(1);
      try (WorkerIdHolder a = holder(r, clock, "a", two); WorkerIdHolder b = holder(r, clock, "b", two)) {
        ShardlineException e = assertThrows(ShardlineException.class, () -> holder(r, clock, "c", two));
        assertEquals(Status.NO_CANDIDATES, e.status());
        assertEquals(Set.of(0, 1), Set.of(a.workerId(), b.workerId()));
        assertEquals(2, r.liveClaims().size());
      }
    }
  }

  @Test
  void aLostIdStopsIssuingAndItsNextHolderStampsAboveIt() {
    try (InMemoryRegistry r = new InMemoryRegistry()) {
      ManualIdClock clock = new ManualIdClock(r);
      WorkerIdHolder a = holder(r, clock, "a", ReserveConfig.defaults());
      long lastOfA = a.nextId();
      long budgetOfA = a.budgetMs();
      // a's process stalls: no upkeep for longer than the ttl; its session ends on the server
      clock.advance(20_000);
      ShardlineException lost = assertThrows(ShardlineException.class, a::nextId);
      assertEquals(Status.INVALID_STATE, lost.status());
      assertTrue(lost.getMessage().contains("lost"), lost.getMessage());
      try (WorkerIdHolder b = holder(r, clock, "b", ReserveConfig.defaults())) {
        assertEquals(0, b.workerId(), "the id is free again");
        assertTrue(b.epoch() > a.epoch());
        assertTrue(b.floorMs() >= budgetOfA, "b stamps only above everything a was allowed");
        assertTrue(b.nextId() > lastOfA);
      }
      a.close();
    }
  }

  @Test
  void anExceptionFromTheClockComesOutUnchanged() {
    IllegalStateException broken = new IllegalStateException("clock broken");
    IdClock failing =
        new IdClock() {
          @Override
          public long wallMs() {
            throw broken;
          }

          @Override
          public long monotonicMs() {
            return 0;
          }

          @Override
          public void sleepUntil(long monotonicMs) {}
        };
    try (InMemoryRegistry r = new InMemoryRegistry()) {
      assertSame(broken, assertThrows(IllegalStateException.class, () -> holder(r, failing, "a", ReserveConfig.defaults())));
    }
  }

  @Test
  void aStandaloneGeneratorWaitsOnSequenceOverflowAndRespectsItsFence() {
    SnowflakeLayout tiny = new SnowflakeLayout(41, 10, 2, SnowflakeLayout.DEFAULT.epochMs());
    try (Snowflake g = Snowflake.create(tiny, 5)) {
      for (int i = 0; i < 4; i++) {
        Snowflake.Next n = g.next(START);
        assertTrue(n.isId());
        assertEquals(new SnowflakeLayout.Parts(START, 5, i), tiny.decompose(n.id()));
      }
      Snowflake.Next full = g.next(START);
      assertFalse(full.isId());
      assertEquals(START + 1, full.value(), "four ids per millisecond: wait for the next one");
      assertTrue(g.next(START + 1).isId());
      assertEquals(5, g.worker());
    }
    try (Snowflake fenced = Snowflake.fenced(SnowflakeLayout.DEFAULT, 1, START)) {
      assertEquals(Status.INVALID_STATE, assertThrows(ShardlineException.class, () -> fenced.next(START + 10)).status(), "no budget yet");
      fenced.extendBudget(START + 100);
      assertTrue(fenced.next(START + 10).isId());
      assertEquals(Status.INVALID_STATE, assertThrows(ShardlineException.class, () -> fenced.next(START + 200)).status(), "past the budget");
      fenced.revoke();
      assertEquals(Status.INVALID_STATE, assertThrows(ShardlineException.class, () -> fenced.next(START + 11)).status());
    }
    assertEquals(Status.INVALID_ARGUMENT, assertThrows(ShardlineException.class, () -> new SnowflakeLayout(41, 20, 12, 0)).status());
    assertEquals(Status.INVALID_ARGUMENT, assertThrows(ShardlineException.class, () -> Snowflake.create(SnowflakeLayout.DEFAULT, 1 << 10)).status());
  }

  @Test
  void theSystemClockIssuesIds() throws InterruptedException {
    try (Snowflake g = Snowflake.create(SnowflakeLayout.DEFAULT, 3)) {
      long a = g.nextId();
      long b = g.nextId();
      assertTrue(b > a);
    }
  }
}
