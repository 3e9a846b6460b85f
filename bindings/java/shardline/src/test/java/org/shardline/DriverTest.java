package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The callback drivers with Java host objects, in one JVM, under a manual clock. */
class DriverTest {
  static String node(int i) {
    return "pekko://sys@h" + i + ":2552";
  }

  /** Records what its shards receive. */
  static class Entities implements EntityHost {
    final List<String> log = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void startShard(String shard, List<String> entities) {
      log.add("start " + shard);
    }

    @Override
    public void deliver(String shard, String entity, byte[] payload) {
      log.add(entity + "=" + new String(payload, StandardCharsets.UTF_8));
    }

    @Override
    public boolean stopShard(String shard) {
      log.add("stop " + shard);
      return true;
    }
  }

  /** The Java-side implementations of Lease and Store, delegating to the embedded ones. */
  static Lease javaLease(InMemoryLease inner) {
    return new Lease() {
      @Override
      public Optional<LeaseGrant> acquire(long nowMs) {
        return inner.acquire(nowMs);
      }

      @Override
      public OptionalLong renew(long token, long nowMs) {
        return inner.renew(token, nowMs);
      }

      @Override
      public void release(long token) {
        inner.release(token);
      }
    };
  }

  static Store javaStore(InMemoryStore inner) {
    return new Store() {
      @Override
      public WriteOutcome append(long token, String record) {
        return inner.append(token, record);
      }

      @Override
      public WriteOutcome saveSnapshot(long token, String snapshot) {
        return inner.saveSnapshot(token, snapshot);
      }

      @Override
      public Optional<String> load(long token) {
        return inner.load(token);
      }
    };
  }

  static final class Cluster implements AutoCloseable {
    final ManualClock clock = new ManualClock(1_000);
    final Deque<Envelope> wire = new ArrayDeque<>();
    final List<CoordinatorDriver> coordinators = new ArrayList<>();
    final Map<String, RegionDriver> regions = new LinkedHashMap<>();

    CoordinatorDriver coordinator(Lease lease, Store store) {
      Coordinator c = new Coordinator(Strategy.leastShard(20, 0.1), node(0));
      CoordinatorDriver d = new CoordinatorDriver(c, wire::add, clock, lease, store);
      for (int i = 0; i < 4; i++) d.member(Member.up(node(i)));
      coordinators.add(d);
      return d;
    }

    RegionDriver region(String id, int n, EntityHost host) {
      Region r = new Region(id, node(n), e -> e.substring(0, 1));
      RegionDriver d = new RegionDriver(r, wire::add, clock, host);
      regions.put(id, d);
      return d;
    }

    /** Delivers everything on the wire; coordinator mail goes to every coordinator. */
    void deliver() {
      for (Envelope e = wire.poll(); e != null; e = wire.poll()) {
        if (e.to().isCoordinator()) {
          for (CoordinatorDriver c : coordinators) c.receive(e);
        } else {
          RegionDriver r = regions.get(e.to().regionId());
          if (r != null) r.receive(e);
        }
      }
    }

    @Override
    public void close() {
      for (CoordinatorDriver c : coordinators) c.close();
      for (RegionDriver r : regions.values()) r.close();
    }
  }

  @Test
  void driversCarryAMessageToItsEntityAndFailOver() throws Exception {
    try (Cluster cl = new Cluster();
        InMemoryLease lease = new InMemoryLease("c1", 30_000);
        InMemoryLease contender = lease.contender("c2");
        InMemoryStore store = new InMemoryStore()) {
      // c1 uses the embedded backends natively, c2 goes through Java implementations
      CoordinatorDriver c1 = cl.coordinator(lease, store);
      CoordinatorDriver c2 = cl.coordinator(javaLease(contender), javaStore(store));
      c1.start();
      c2.start();
      assertTrue(c1.isActive());
      assertFalse(c2.isActive());
      Entities a = new Entities();
      Entities b = new Entities();
      cl.region("a", 1, a).start();
      cl.region("b", 2, b).start();
      cl.deliver();
      cl.regions.get("b").route("x1", "hello".getBytes(StandardCharsets.UTF_8));
      cl.deliver();
      assertEquals(List.of("start x", "x1=hello"), a.log);
      assertEquals(Optional.of("a"), c1.homeOf("x"));

      // c1's node hangs: it stops renewing, its local deadline passes, c2 takes over
      cl.clock.advance(30_000);
      c2.poll();
      cl.clock.advance(5_000);
      c1.poll();
      assertFalse(c1.isActive(), "stopped acting at its own deadline");
      assertTrue(c1.takeNotices().stream().anyMatch(n -> n.type().equals("steppedDown")));
      cl.clock.set(c2.nextDeadline().orElseThrow());
      c2.poll();
      assertTrue(c2.isActive());
      assertEquals(Optional.of("a"), c2.homeOf("x"), "the new coordinator restored the state");
      for (RegionDriver r : cl.regions.values()) r.coordinatorChanged();
      cl.deliver();
      cl.regions.get("b").route("x2", "again".getBytes(StandardCharsets.UTF_8));
      cl.deliver();
      assertEquals("x2=again", a.log.get(a.log.size() - 1));
    }
  }

  @Test
  void aTransportExceptionComesOutUnchangedAfterTheRestWasDone() throws Exception {
    IllegalStateException down = new IllegalStateException("network down");
    Entities host = new Entities();
    ManualClock clock = new ManualClock(0);
    Region r = new Region("{\"bufferCapacity\": 1}", "a", node(1), ShardExtractor.pekko(10));
    try (RegionDriver d = new RegionDriver(r, e -> { throw down; }, clock, host)) {
      assertSame(down, assertThrows(IllegalStateException.class, d::start));
      assertSame(down, assertThrows(IllegalStateException.class, () -> d.route("e1", new byte[] {1})));
      assertEquals(1, d.buffered(), "the message itself was kept");
      ShardlineException full = assertThrows(ShardlineException.class, () -> d.route("e2", new byte[] {2}));
      assertEquals(Status.INVALID_STATE, full.status());
    }
    assertTrue(r.isClosed(), "the region was handed to the driver");
  }

  @Test
  void aThrowingClockIsReportedAndTimeStandsStill() throws Exception {
    UnsupportedOperationException noTime = new UnsupportedOperationException("no time");
    Region r = new Region("a", node(1), ShardExtractor.pekko(10));
    try (RegionDriver d = new RegionDriver(r, e -> {}, () -> { throw noTime; }, new Entities())) {
      assertSame(noTime, assertThrows(UnsupportedOperationException.class, d::start));
    }
  }

  @Test
  void anAnswerThatDoesNotFitIsCallbackFailedNamingTheRoleAndMethod() throws Exception {
    Region r = new Region("a", node(1), ShardExtractor.pekko(10));
    try (RegionDriver d = new RegionDriver(r, e -> {}, () -> -1, new Entities())) {
      ShardlineException e = assertThrows(ShardlineException.class, d::start);
      assertEquals(Status.CALLBACK_FAILED, e.status());
      assertTrue(e.getMessage().contains("the clock's nowMs returned -1"), e.getMessage());
    }
    Store garbled =
        new Store() {
          @Override
          public WriteOutcome append(long token, String record) {
            return WriteOutcome.written();
          }

          @Override
          public WriteOutcome saveSnapshot(long token, String snapshot) {
            return WriteOutcome.written();
          }

          @Override
          public Optional<String> load(long token) {
            return Optional.of("{not json");
          }
        };
    try (Cluster cl = new Cluster(); InMemoryLease lease = new InMemoryLease("c1", 30_000)) {
      CoordinatorDriver c = cl.coordinator(lease, garbled);
      ShardlineException e = assertThrows(ShardlineException.class, c::start);
      assertEquals(Status.CALLBACK_FAILED, e.status());
      assertTrue(e.getMessage().contains("the store's load returned invalid JSON"), e.getMessage());
      assertFalse(c.isActive());
    }
  }

  @Test
  void callingBackIntoTheRunningDriverIsRefused() throws Exception {
    try (Cluster cl = new Cluster(); InMemoryLease lease = new InMemoryLease("c1", 30_000); InMemoryStore store = new InMemoryStore()) {
      CoordinatorDriver c = cl.coordinator(lease, store);
      c.start();
      List<Status> refused = new ArrayList<>();
      Entities a =
          new Entities() {
            @Override
            public boolean stopShard(String shard) {
              try {
                cl.regions.get("a").shardStopped(shard);
              } catch (ShardlineException e) {
                refused.add(e.status());
              }
              return true;
            }
          };
      cl.region("a", 1, a).start();
      cl.deliver();
      cl.regions.get("a").route("x1", new byte[] {1});
      cl.deliver();
      cl.regions.get("a").gracefulShutdown();
      cl.deliver();
      assertEquals(List.of(Status.REENTRANT_CALL), refused);
      assertTrue(cl.regions.get("a").localShards().isEmpty(), "stopShard returning true was enough");
    }
  }

  @Test
  void manyCallbacksInOneCall() throws Exception {
    // 5 000 buffered messages leave in one call (the ShardHome arrives): one deliver callback each
    try (Cluster cl = new Cluster(); InMemoryLease lease = new InMemoryLease("c1", 30_000); InMemoryStore store = new InMemoryStore()) {
      CoordinatorDriver c = cl.coordinator(lease, store);
      c.start();
      Entities a = new Entities();
      RegionDriver r = cl.region("a", 1, a);
      r.start();
      cl.deliver();
      for (int i = 0; i < 5_000; i++) r.route("y" + i, new byte[] {(byte) i});
      assertEquals(5_000, r.buffered());
      cl.deliver();
      assertEquals(5_001, a.log.size());
      assertEquals(0, r.buffered());
    }
  }

  @Test
  void theEmbeddedBackendsFenceAndShare() {
    try (InMemoryLease a = new InMemoryLease("a", 10_000); InMemoryLease b = a.contender("b")) {
      LeaseGrant g1 = a.acquire(0).orElseThrow();
      assertEquals(Optional.empty(), b.acquire(1));
      assertEquals(Optional.of(new InMemoryLease.Holder("a", g1.token())), a.holder(1));
      assertEquals(100 + 10_000 - 10 - 1_000, a.acquire(100).orElseThrow().validUntilMs() , "ttl minus drift and margin");
      a.expireNow();
      LeaseGrant g3 = b.acquire(200).orElseThrow();
      assertTrue(g3.token() > g1.token());
      assertEquals(OptionalLong.empty(), a.renew(g1.token(), 300));
    }
    try (InMemoryStore s = new InMemoryStore()) {
      String record = "{\"seq\":1,\"event\":{\"type\":\"shardRegionRegistered\",\"region\":\"r\",\"node\":\"pekko://s@h:1\"}}";
      assertTrue(s.append(5, record).isWritten());
      assertTrue(s.load(7).isPresent());
      assertEquals(WriteOutcome.fenced(7), s.append(5, record.replace("\"seq\":1", "\"seq\":2")));
      assertEquals(Optional.empty(), s.load(6));
      assertEquals(7, s.highestToken());
      try (InMemoryStore copy = InMemoryStore.fromState(s.contents())) {
        assertTrue(copy.contents().contains("shardRegionRegistered"));
      }
    }
  }
}
