package org.shardline.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.sharding.ShardCoordinator.ShardAllocationStrategy;
import org.apache.pekko.cluster.sharding.internal.AbstractLeastShardAllocationStrategy;
import org.apache.pekko.routing.ConsistentHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Await;
import scala.concurrent.Future;
import scala.concurrent.duration.Duration;
import scala.jdk.javaapi.CollectionConverters;

/**
 * For many random allocation states, Apache Pekko 1.7.0's own strategies and the shardline
 * adapter must decide the same: the same region for an allocation, the same set for a rebalance,
 * and both "not now" (Pekko retries in 50 ms) when no region maps to a known member. Pekko 1.x
 * has no consistent-hashing strategy, so that one is compared with Pekko's own {@code
 * ConsistentHash} ring following the steps of Pekko 2.0's strategy. The seed is printed; {@code
 * -Dshardline.seed=N} replays it.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PekkoDifferentialTest {
  private static final int CASES = 3000;
  private static ActorSystem system;

  @BeforeAll
  static void start() {
    system = ActorSystem.create("differential", PekkoFixtures.config(0));
  }

  @AfterAll
  static void stop() throws Exception {
    system.terminate();
    Await.ready(system.whenTerminated(), Duration.create(30, TimeUnit.SECONDS));
  }

  /** One case turned into Pekko objects. */
  private static final class Built {
    CurrentClusterState state;
    Member self;
    scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> map;
    List<ActorRef> mapOrder = new ArrayList<>();
    ActorRef requester;
  }

  private static Built build(RandomCase c) {
    Built b = new Built();
    Map<RandomCase.MemberSpec, Member> members = new LinkedHashMap<>();
    for (RandomCase.MemberSpec m : c.members) {
      members.put(m, PekkoFixtures.member(new Address("pekko", "ClusterSystem", m.host, m.port), m.status, m.appVersion, m.dataCenter));
    }
    List<Member> unreachable = new ArrayList<>();
    for (RandomCase.MemberSpec m : c.unreachable) unreachable.add(members.get(m));
    b.state = PekkoFixtures.state(new ArrayList<>(members.values()), unreachable);
    b.self = members.get(c.self);
    Map<ActorRef, List<String>> insertion = new LinkedHashMap<>();
    List<ActorRef> refs = new ArrayList<>();
    for (RandomCase.RegionSpec r : c.regions) {
      Address a = r.host == null ? null : new Address("pekko", "ClusterSystem", r.host, r.port);
      ActorRef ref = PekkoFixtures.region(system, a, r.name);
      refs.add(ref);
      insertion.put(ref, r.shards);
    }
    b.map = PekkoFixtures.allocations(insertion);
    CollectionConverters.asJava(b.map.keysIterator()).forEachRemaining(b.mapOrder::add);
    b.requester = refs.get(c.requester);
    return b;
  }

  private static String json(RandomCase c) {
    switch (c.kind) {
      case "least-shard":
        return "{\"kind\":\"least-shard\",\"absoluteLimit\":" + c.absoluteLimit + ",\"relativeLimit\":" + c.relativeLimit + "}";
      case "legacy":
        return "{\"kind\":\"least-shard-legacy\",\"rebalanceThreshold\":" + c.threshold + ",\"maxSimultaneousRebalance\":" + c.maxSimultaneous + "}";
      default:
        return "{\"kind\":\"consistent-hashing\",\"rebalanceLimit\":" + c.rebalanceLimit + "}";
    }
  }

  private static Object answer(Future<?> f) throws Exception {
    if (!f.isCompleted()) return "not now";
    Object v = Await.result(f, Duration.Zero());
    if (v instanceof scala.collection.immutable.Set) {
      @SuppressWarnings("unchecked")
      scala.collection.immutable.Set<String> s = (scala.collection.immutable.Set<String>) v;
      return new HashSet<>(CollectionConverters.asJava(s));
    }
    return v;
  }

  @Test
  void adapterAndPekkoDecideAlike() throws Exception {
    long seed = Long.getLong("shardline.seed", System.nanoTime());
    System.out.println("PekkoDifferentialTest seed " + seed + " (replay with -Dshardline.seed=" + seed + ")");
    Random rnd = new Random(seed);
    Map<String, Integer> decided = new TreeMap<>();
    for (int i = 0; i < CASES; i++) {
      RandomCase c = RandomCase.next(rnd);
      Built b = build(c);
      ShardlineAllocationStrategy adapter = new PekkoFixtures.FixedView(json(c), b.state, b.self);
      adapter.start(system);
      Object expected;
      if (c.kind.equals("consistent-hashing")) {
        expected = consistentHashing(c, b);
      } else {
        AbstractLeastShardAllocationStrategy pekko =
            c.kind.equals("least-shard")
                ? new PekkoFixtures.PekkoLeastShard(c.absoluteLimit, c.relativeLimit, b.state, b.self)
                : new PekkoFixtures.PekkoLegacy(c.threshold, c.maxSimultaneous, b.state, b.self);
        pekko.start(system);
        expected = answer(ask(pekko, c, b));
      }
      Object got = answer(ask(adapter, c, b));
      int index = i;
      assertEquals(expected, got, () -> "case " + index + " (seed " + seed + "): " + describe(c, b));
      String outcome = expected.equals("not now") ? "not now" : expected instanceof ActorRef ? "region" : ((java.util.Set<?>) expected).isEmpty() ? "nothing to move" : "shards to move";
      decided.merge(c.kind + " " + c.op + ": " + outcome, 1, Integer::sum);
    }
    System.out.println("PekkoDifferentialTest: " + CASES + " cases agree " + decided);
    // the generator must reach the interesting outcomes, not only empty answers
    for (String kind : List.of("least-shard", "legacy", "consistent-hashing")) {
      assertTrue(decided.getOrDefault(kind + " rebalance: shards to move", 0) > 20, decided.toString());
      assertTrue(decided.getOrDefault(kind + " allocate: region", 0) > 20, decided.toString());
    }
    assertTrue(decided.keySet().stream().anyMatch(k -> k.endsWith("not now")), decided.toString());
  }

  private static Future<?> ask(ShardAllocationStrategy s, RandomCase c, Built b) {
    if (c.op.equals("allocate")) return s.allocateShard(b.requester, c.shardId, b.map);
    return s.rebalance(b.map, PekkoFixtures.set(c.inProgress));
  }

  /**
   * Pekko 2.0's ConsistentHashingShardAllocationStrategy, step by step, with Pekko 1.7.0's own
   * ConsistentHash ring, regionEntriesFor and isAGoodTimeToRebalance.
   */
  private static Object consistentHashing(RandomCase c, Built b) {
    java.util.function.Function<ActorRef, Address> nodeOf =
        ref -> ref.path().address().hasLocalScope() ? b.self.address() : ref.path().address();
    List<Address> nodes = new ArrayList<>();
    for (ActorRef r : b.mapOrder) nodes.add(nodeOf.apply(r));
    nodes.sort(Address.addressOrdering());
    ConsistentHash<Address> ring = ConsistentHash.create(nodes, 10);
    if (c.op.equals("allocate")) {
      Address node = ring.nodeFor(c.shardId);
      return b.mapOrder.stream().filter(r -> nodeOf.apply(r).equals(node)).findFirst().orElseThrow();
    }
    PekkoFixtures.PekkoLeastShard gate = new PekkoFixtures.PekkoLeastShard(1, 1.0, b.state, b.self);
    gate.start(system);
    @SuppressWarnings("unchecked")
    scala.collection.Iterable<AbstractLeastShardAllocationStrategy.RegionEntry> entries =
        (scala.collection.Iterable<AbstractLeastShardAllocationStrategy.RegionEntry>)
            gate.regionEntriesFor(b.map).toVector().sorted(AbstractLeastShardAllocationStrategy.ShardSuitabilityOrdering$.MODULE$);
    if (!gate.isAGoodTimeToRebalance(entries)) return new HashSet<String>();
    Map<Address, ActorRef> regionByNode = new HashMap<>();
    for (ActorRef r : b.mapOrder) regionByNode.put(nodeOf.apply(r), r); // the later region wins
    List<ActorRef> byNode = new ArrayList<>(b.mapOrder);
    byNode.sort((x, y) -> Address.addressOrdering().compare(nodeOf.apply(x), nodeOf.apply(y)));
    java.util.Set<String> inProgress = new HashSet<>(c.inProgress);
    java.util.Set<String> result = new LinkedHashSet<>();
    for (ActorRef current : byNode) {
      for (String shard : CollectionConverters.asJava(b.map.apply(current))) {
        boolean underLimit = c.rebalanceLimit <= 0 || result.size() < c.rebalanceLimit;
        if (underLimit && !inProgress.contains(shard)) {
          ActorRef target = regionByNode.get(ring.nodeFor(shard));
          if (!target.equals(current)) result.add(shard);
        }
      }
    }
    return new HashSet<>(result);
  }

  private static String describe(RandomCase c, Built b) {
    StringBuilder s = new StringBuilder(json(c)).append(' ').append(c.op);
    s.append(" self=").append(b.self.address()).append(" members=");
    for (RandomCase.MemberSpec m : c.members) s.append(m.host).append(':').append(m.port).append('/').append(m.status).append('/').append(m.appVersion).append('/').append(m.dataCenter).append(' ');
    s.append("unreachable=").append(c.unreachable.size()).append(" regions(map order)=");
    for (ActorRef r : b.mapOrder) s.append(r.path()).append(CollectionConverters.asJava(b.map.apply(r))).append(' ');
    s.append("inProgress=").append(c.inProgress).append(" shard=").append(c.shardId);
    return s.toString();
  }

  @Test
  void fromConfigPicksThePekkoDefault() {
    ShardlineAllocationStrategy byDefault = ShardlineAllocationStrategy.fromConfig(system.settings().config());
    assertEquals("least-shard-legacy", byDefault.name(), "absolute-limit 0 selects the legacy strategy");
    ShardlineAllocationStrategy configured =
        ShardlineAllocationStrategy.fromConfig(
            com.typesafe.config.ConfigFactory.parseString(
                    "pekko.cluster.sharding.least-shard-allocation-strategy.rebalance-absolute-limit = 5")
                .withFallback(system.settings().config()));
    assertEquals("least-shard", configured.name());
    assertFalse(configured.toString().isEmpty());
  }
}
