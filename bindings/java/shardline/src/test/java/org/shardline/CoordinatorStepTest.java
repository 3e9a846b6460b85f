package org.shardline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The sans-IO step API: the test is the host, carrying out every output by hand. */
class CoordinatorStepTest {
  static final String N0 = "pekko://sys@10.0.0.10:2552";
  static final String N1 = "pekko://sys@10.0.0.11:2552";
  static final String N2 = "pekko://sys@10.0.0.12:2552";

  /** A host running one coordinator and some regions over an in-memory wire. */
  static final class Host implements AutoCloseable {
    final Coordinator coordinator;
    final Map<String, Region> regions = new LinkedHashMap<>();
    final InMemoryStore store = new InMemoryStore();
    final Deque<Envelope> wire = new ArrayDeque<>();
    final List<String> delivered = new ArrayList<>();
    final List<Notice> notices = new ArrayList<>();
    long now = 1_000;

    Host(Strategy strategy) {
      this(new Coordinator(strategy, N0));
    }

    Host(Coordinator coordinator) {
      this.coordinator = coordinator;
      for (String n : List.of(N0, N1, N2)) coordinator.member(now, Member.up(n));
    }

    /** Answers to lease and load requests queue more outputs, so drain until none are left. */
    void coordinatorOutputs() {
      for (List<CoordinatorOutput> batch = coordinator.drainOutputs(); !batch.isEmpty(); batch = coordinator.drainOutputs()) {
        carryOut(batch);
      }
    }

    void carryOut(List<CoordinatorOutput> batch) {
      for (CoordinatorOutput o : batch) {
        if (o instanceof CoordinatorOutput.Send) {
          wire.add(((CoordinatorOutput.Send) o).envelope());
        } else if (o instanceof CoordinatorOutput.Persist) {
          CoordinatorOutput.Persist p = (CoordinatorOutput.Persist) o;
          assertTrue(store.append(p.token(), p.record()).isWritten());
        } else if (o instanceof CoordinatorOutput.SaveSnapshot) {
          CoordinatorOutput.SaveSnapshot s = (CoordinatorOutput.SaveSnapshot) o;
          assertTrue(store.saveSnapshot(s.token(), s.snapshot()).isWritten());
        } else if (o instanceof CoordinatorOutput.AcquireLease) {
          coordinator.leaseGranted(now, 1, now + 60_000);
        } else if (o instanceof CoordinatorOutput.LoadState) {
          coordinator.stateLoaded(now, store.load(((CoordinatorOutput.LoadState) o).token()).orElseThrow());
        } else if (o instanceof CoordinatorOutput.Notify) {
          notices.add(((CoordinatorOutput.Notify) o).notice());
        }
      }
    }

    void regionOutputs(Region r) {
      for (RegionOutput o : r.drainOutputs()) {
        if (o instanceof RegionOutput.Send) {
          wire.add(((RegionOutput.Send) o).envelope());
        } else if (o instanceof RegionOutput.Deliver) {
          RegionOutput.Deliver d = (RegionOutput.Deliver) o;
          delivered.add(r.id() + ":" + d.entity() + "=" + new String(d.payload(), StandardCharsets.UTF_8));
        } else if (o instanceof RegionOutput.StopShard) {
          r.shardStopped(now, ((RegionOutput.StopShard) o).shard());
          regionOutputs(r);
        }
      }
    }

    /** Runs until nothing is left to do: outputs carried out, the wire empty. */
    void settle() {
      coordinatorOutputs();
      regions.values().forEach(this::regionOutputs);
      while (!wire.isEmpty()) {
        Envelope e = Envelope.fromJson(wire.poll().toJson()); // through the wire format
        if (e.to().isCoordinator()) {
          coordinator.receive(now, e);
          coordinatorOutputs();
        } else {
          Region r = regions.get(e.to().regionId());
          if (r != null) {
            r.receive(now, e);
            regionOutputs(r);
          }
        }
      }
    }

    /** A host whose coordinator, with decision events on, has allocated user-1's shard to region a. */
    static Host allocating() {
      Host h = new Host(new Coordinator("{\"decisionEvents\": true}", Strategy.leastShard(20, 0.1), N0));
      h.coordinator.start(h.now);
      h.settle();
      h.region("a", N1);
      h.settle();
      h.route("a", "user-1");
      return h;
    }

    void route(String region, String entity) {
      regions.get(region).route(now, entity, "hello".getBytes(StandardCharsets.UTF_8));
      settle();
    }

    Region region(String id, String node) {
      Region r = new Region(id, node, ShardExtractor.pekko(10));
      regions.put(id, r);
      r.start(now);
      return r;
    }

    @Override
    public void close() {
      coordinator.close();
      regions.values().forEach(Region::close);
      store.close();
    }
  }

  @Test
  void decisionEventsExplainEachAllocationAndMetricsCountIt() {
    try (Host h = new Host(new Coordinator("{\"decisionEvents\": true}", Strategy.leastShard(20, 0.1), N0))) {
      h.coordinator.start(h.now);
      h.settle();
      Region a = h.region("a", N1);
      h.settle();
      a.route(h.now, "user-1", "hello".getBytes(StandardCharsets.UTF_8));
      h.settle();
      List<Notice> allocated =
          h.notices.stream().filter(n -> n.type().equals(Wire.CoordinatorNotice.ALLOCATED)).toList();
      assertEquals(1, allocated.size(), h.notices.toString());
      assertTrue(allocated.get(0).json().contains("\"explanation\""), allocated.get(0).json());
      assertTrue(allocated.get(0).json().contains("\"op\":\"allocate\""), allocated.get(0).json());

      Map<String, Metric> coordinator = new LinkedHashMap<>();
      for (Metric m : h.coordinator.metrics()) {
        coordinator.put(m.name() + m.attributes().getOrDefault("shardline.region", ""), m);
      }
      assertEquals(1, coordinator.get("shardline.coordinator.allocations").value());
      assertEquals(Wire.MetricKind.COUNTER, coordinator.get("shardline.coordinator.allocations").kind());
      assertEquals(1, coordinator.get("shardline.coordinator.shardsa").value());
      assertEquals(1, coordinator.get("shardline.coordinator.active").value());
      Metric delivered =
          a.metrics().stream().filter(m -> m.name().equals("shardline.region.delivered")).findFirst().orElseThrow();
      assertEquals(1, delivered.value());
      assertEquals(Map.of("shardline.region", "a"), delivered.attributes());
    }
  }

  @Test
  void aMessageReachesItsEntityThroughTheCoordinator() {
    try (Host h = new Host(Strategy.leastShard(20, 0.1))) {
      assertEquals(AbstractCoordinator.Phase.IDLE, h.coordinator.phase());
      h.coordinator.start(h.now);
      List<CoordinatorOutput> first = h.coordinator.drainOutputs();
      assertEquals(List.of(new CoordinatorOutput.AcquireLease()), first);
      h.coordinator.leaseGranted(h.now, 1, h.now + 60_000);
      h.settle();
      assertTrue(h.coordinator.isActive());
      assertEquals(1L, h.coordinator.token().orElseThrow());
      assertTrue(h.notices.stream().anyMatch(n -> n.type().equals(Wire.CoordinatorNotice.ACTIVE)), h.notices.toString());

      Region a = h.region("a", N1);
      Region b = h.region("b", N2);
      h.settle();
      assertTrue(a.isRegistered() && b.isRegistered());
      assertEquals(List.of("a", "b"), h.coordinator.regions());

      b.route(h.now, "user-1", "hello".getBytes(StandardCharsets.UTF_8));
      h.settle();
      String shard = a.shardOf("user-1");
      assertEquals(Shardline.pekkoShardId("user-1", 10), shard);
      String home = h.coordinator.homeOf(shard).orElseThrow();
      assertEquals(List.of(home + ":user-1=hello"), h.delivered);
      assertEquals(Optional.of(home), b.homeOf(shard));
      assertTrue(h.store.contents().contains("shardHomeAllocated"), h.store.contents());
      assertTrue(h.coordinator.snapshot().contains(shard));
    }
  }

  @Test
  void aGracefulShutdownHandsShardsOverWithoutLosingMessages() {
    try (Host h = new Host(Strategy.leastShard(20, 0.1))) {
      h.coordinator.start(h.now);
      h.settle();
      Region a = h.region("a", N1);
      h.settle();
      for (int i = 0; i < 20; i++) a.route(h.now, "e" + i, ("m" + i).getBytes(StandardCharsets.UTF_8));
      h.settle();
      assertEquals(20, h.delivered.size());
      Region b = h.region("b", N2);
      h.settle();

      a.gracefulShutdown(h.now);
      h.settle();
      assertEquals(List.of(), h.coordinator.shardsOf("a"), "a handed everything over");
      for (int i = 0; i < 20; i++) b.route(h.now, "e" + i, ("n" + i).getBytes(StandardCharsets.UTF_8));
      h.settle();
      assertEquals(40, h.delivered.size());
      assertTrue(h.delivered.subList(20, 40).stream().allMatch(d -> d.startsWith("b:")), h.delivered.toString());
    }
  }

  @Test
  void aJavaCustomStrategyRunsInsideTheCoordinator() {
    List<String> asked = new ArrayList<>();
    CustomStrategy lastRegion =
        (state, requester, shard) -> {
          asked.add(shard);
          List<String> ids = state.regionIds();
          return ids.isEmpty() ? Allocation.pending() : Allocation.to(ids.get(ids.size() - 1));
        };
    try (Host h = new Host(Strategy.custom("last", lastRegion))) {
      h.coordinator.start(h.now);
      h.settle();
      Region a = h.region("a", N1);
      Region b = h.region("b", N2);
      h.settle();
      a.route(h.now, "user-1", "hi".getBytes(StandardCharsets.UTF_8));
      h.settle();
      String shard = a.shardOf("user-1");
      assertEquals(List.of(shard), asked);
      assertEquals(Optional.of("b"), h.coordinator.homeOf(shard));
      assertEquals(List.of("b:user-1=hi"), h.delivered);
    }
  }

  @Test
  void aCustomStrategyExceptionComesOutOfTheCoordinatorCallThatAskedIt() {
    UnsupportedOperationException nope = new UnsupportedOperationException("no placement today");
    try (Host h = new Host(Strategy.custom((state, requester, shard) -> { throw nope; }))) {
      h.coordinator.start(h.now);
      h.settle();
      Region a = h.region("a", N1);
      h.settle();
      a.route(h.now, "user-1", new byte[] {1});
      h.regionOutputs(a);
      Envelope getShardHome = h.wire.poll();
      assertTrue(getShardHome.message().contains("getShardHome"), getShardHome.message());
      assertSame(nope, assertThrows(UnsupportedOperationException.class, () -> h.coordinator.receive(h.now, getShardHome)));
      assertTrue(h.coordinator.isActive(), "the coordinator keeps going; the region will ask again");
      assertEquals(Optional.empty(), h.coordinator.homeOf(a.shardOf("user-1")));
    }
  }

  @Test
  void outputsAreTyped() {
    try (Region r = new Region("{\"bufferCapacity\": 1}", "r", N1, ShardExtractor.actorTs(4))) {
      r.start(0);
      List<RegionOutput> out = r.drainOutputs();
      RegionOutput.Send register = assertInstanceOf(RegionOutput.Send.class, out.get(0));
      assertTrue(register.envelope().to().isCoordinator());
      assertEquals(Endpoint.region("r"), register.envelope().from());
      assertTrue(register.envelope().message().contains("register"), register.envelope().message());

      r.route(0, "x", new byte[] {1, 2, 3});
      ShardlineException full = assertThrows(ShardlineException.class, () -> r.route(0, "y", new byte[] {4}));
      assertEquals(Status.INVALID_STATE, full.status());
      assertTrue(full.getMessage().contains("buffer is full"), full.getMessage());
      assertEquals(1, r.buffered());
    }
  }

  @Test
  void envelopesRoundTripThroughTheirWireForm() {
    Envelope e = new Envelope(Endpoint.region("r\"1"), Endpoint.coordinator(), "{\"command\":{\"type\":\"getShardHome\",\"shard\":\"7\"}}");
    Envelope back = Envelope.fromBytes(e.toBytes());
    assertEquals(e.from(), back.from());
    assertEquals(e.to(), back.to());
    assertEquals(Vectors.parse(e.message()), Vectors.parse(back.message()));
    assertEquals(Status.INVALID_ARGUMENT, assertThrows(ShardlineException.class, () -> Envelope.fromJson("{}")).status());
  }

  @Test
  void aStrategyHandedToACoordinatorIsRetired() {
    Strategy s = Strategy.leastShard(20, 0.1);
    try (Coordinator c = new Coordinator(s, N0)) {
      ShardlineException e = assertThrows(ShardlineException.class, s::name);
      assertEquals(Status.INVALID_STATE, e.status());
      assertTrue(e.getMessage().contains("handed to a Coordinator"), e.getMessage());
      assertEquals(AbstractCoordinator.Phase.IDLE, c.phase());
    }
    // a bad configuration leaves the strategy usable
    try (Strategy t = Strategy.leastShard(20, 0.1)) {
      assertThrows(ShardlineException.class, () -> new Coordinator("{\"handoffTimeoutMs\": 0}", t, N0));
      assertEquals("least-shard", t.name());
    }
  }

  @Test
  void bytesArriveIntact() {
    try (Host h = new Host(Strategy.leastShard(20, 0.1))) {
      h.coordinator.start(h.now);
      h.settle();
      Region a = h.region("a", N1);
      h.settle();
      byte[] all = new byte[256];
      for (int i = 0; i < 256; i++) all[i] = (byte) i;
      List<byte[]> got = new ArrayList<>();
      a.route(h.now, "bin", all);
      for (RegionOutput o : a.drainOutputs()) {
        if (o instanceof RegionOutput.Send) h.wire.add(((RegionOutput.Send) o).envelope());
      }
      while (!h.wire.isEmpty()) {
        Envelope e = h.wire.poll();
        if (e.to().isCoordinator()) {
          h.coordinator.receive(h.now, e);
          for (CoordinatorOutput o : h.coordinator.drainOutputs()) {
            if (o instanceof CoordinatorOutput.Send) h.wire.add(((CoordinatorOutput.Send) o).envelope());
          }
        } else {
          a.receive(h.now, e);
          for (RegionOutput o : a.drainOutputs()) {
            if (o instanceof RegionOutput.Deliver) got.add(((RegionOutput.Deliver) o).payload());
            if (o instanceof RegionOutput.Send) h.wire.add(((RegionOutput.Send) o).envelope());
          }
        }
      }
      assertEquals(1, got.size());
      assertArrayEquals(all, got.get(0));
    }
  }
}
