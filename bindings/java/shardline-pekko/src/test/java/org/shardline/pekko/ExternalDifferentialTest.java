package org.shardline.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.external.ExternalShardAllocation;
import org.apache.pekko.cluster.sharding.external.ExternalShardAllocationStrategy;
import org.apache.pekko.util.Timeout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Await;
import scala.concurrent.Future;
import scala.concurrent.duration.Duration;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The adapter's external mode against Pekko 1.7.0's own {@code ExternalShardAllocationStrategy},
 * both reading the same locations, written once through Pekko's {@code ExternalShardAllocation}
 * client (distributed data). Regions here sit on distinct nodes: with two regions on one node
 * Pekko's rebalance only looks at the later one (see the README's "Known differences").
 */
@org.junit.jupiter.api.Timeout(value = 3, unit = TimeUnit.MINUTES)
class ExternalDifferentialTest {
  private static final int CASES = 600;
  private static final String TYPE = "external-differential";
  private static ActorSystem system;

  @BeforeAll
  static void start() throws Exception {
    system =
        ActorSystem.create(
            "ClusterSystem",
            PekkoFixtures.config(0, "pekko.cluster.distributed-data.notify-subscribers-interval = 20ms"));
    Cluster cluster = Cluster.get(system);
    cluster.join(cluster.selfAddress());
    Eventually.await(30, () -> cluster.selfMember().status().equals(MemberStatus.up()), "the node is Up");
  }

  @AfterAll
  static void stop() throws Exception {
    system.terminate();
    Await.ready(system.whenTerminated(), Duration.create(30, TimeUnit.SECONDS));
  }

  private static Object answer(Future<?> f) throws Exception {
    Object v = Await.result(f, Duration.create(10, TimeUnit.SECONDS));
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
    System.out.println("ExternalDifferentialTest seed " + seed + " (replay with -Dshardline.seed=" + seed + ")");
    Random rnd = new Random(seed);
    Address self = Cluster.get(system).selfAddress();
    List<Address> nodes = new ArrayList<>();
    for (int i = 1; i <= 8; i++) nodes.add(new Address("pekko", "ClusterSystem", "127.0.0." + (100 + i), 2552));
    Address nowhere = new Address("pekko", "ClusterSystem", "10.9.9.9", 1);
    List<String> shards = new ArrayList<>();
    for (int i = 0; i < 60; i++) shards.add("s" + i);

    // the desired locations: region nodes, this node (local regions), and a node with no region
    Map<String, Address> locations = new LinkedHashMap<>();
    for (String s : shards) {
      double x = rnd.nextDouble();
      if (x < 0.5) locations.put(s, nodes.get(rnd.nextInt(nodes.size())));
      else if (x < 0.6) locations.put(s, self);
      else if (x < 0.65) locations.put(s, nowhere);
    }
    ExternalShardAllocation.get((org.apache.pekko.actor.ClassicActorSystemProvider) system).getClient(TYPE).setShardLocations(locations).toCompletableFuture().get(20, TimeUnit.SECONDS);

    ExternalShardAllocationStrategy pekko = new ExternalShardAllocationStrategy(system, TYPE, Timeout.create(java.time.Duration.ofSeconds(5)));
    pekko.start();
    ShardlineAllocationStrategy adapter = ShardlineAllocationStrategy.external(TYPE);
    adapter.start(system);

    // both read the locations through DData subscriptions: wait until both have all of them
    Map<String, String> expectedStrings = new HashMap<>();
    locations.forEach((k, v) -> expectedStrings.put(k, v.toString()));
    Eventually.await(30, () -> adapter.externalLocations().equals(expectedStrings), "the adapter received the locations");
    Map<ActorRef, List<String>> probe = new LinkedHashMap<>();
    Map<Address, ActorRef> probeRegion = new HashMap<>();
    for (Address a : nodes) {
      ActorRef r = PekkoFixtures.region(system, a, "probe");
      probe.put(r, List.of());
      probeRegion.put(a, r);
    }
    scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> probeMap = PekkoFixtures.allocations(probe);
    ActorRef outsider = PekkoFixtures.region(system, nowhere, "outsider");
    Eventually.await(
        30,
        () -> {
          for (Map.Entry<String, Address> e : locations.entrySet()) {
            ActorRef want = probeRegion.get(e.getValue());
            if (want != null && !want.equals(answer(pekko.allocateShard(outsider, e.getKey(), probeMap)))) return false;
          }
          return true;
        },
        "Pekko's strategy received the locations");

    int moved = 0, placed = 0;
    for (int i = 0; i < CASES; i++) {
      List<Address> present = new ArrayList<>(nodes);
      java.util.Collections.shuffle(present, rnd);
      present = present.subList(0, 1 + rnd.nextInt(nodes.size()));
      boolean withLocal = rnd.nextDouble() < 0.3;
      Map<ActorRef, List<String>> regions = new LinkedHashMap<>();
      List<ActorRef> refs = new ArrayList<>();
      int localAt = withLocal ? rnd.nextInt(present.size() + 1) : -1;
      for (int j = 0; j <= present.size(); j++) {
        if (j == localAt) {
          ActorRef r = PekkoFixtures.region(system, null, "local" + i);
          regions.put(r, new ArrayList<>());
          refs.add(r);
        }
        if (j < present.size()) {
          ActorRef r = PekkoFixtures.region(system, present.get(j), "region" + i + "-" + j);
          regions.put(r, new ArrayList<>());
          refs.add(r);
        }
      }
      for (String s : shards) {
        if (rnd.nextDouble() < 0.6) regions.get(refs.get(rnd.nextInt(refs.size()))).add(s);
      }
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> map = PekkoFixtures.allocations(regions);
      ActorRef requester = rnd.nextDouble() < 0.8 ? refs.get(rnd.nextInt(refs.size())) : outsider;
      String shard = shards.get(rnd.nextInt(shards.size()));
      Object p = answer(pekko.allocateShard(requester, shard, map));
      Object a = answer(adapter.allocateShard(requester, shard, map));
      int index = i;
      assertEquals(p, a, () -> "allocate " + shard + " case " + index + " seed " + seed);
      if (!p.equals(requester)) placed++;
      Object pr = answer(pekko.rebalance(map, PekkoFixtures.set(List.of())));
      Object ar = answer(adapter.rebalance(map, PekkoFixtures.set(List.of())));
      assertEquals(pr, ar, () -> "rebalance case " + index + " seed " + seed + ": " + regions);
      if (!((java.util.Set<?>) pr).isEmpty()) moved++;
    }
    System.out.println("ExternalDifferentialTest: " + CASES + " cases agree; " + placed + " placed by location, " + moved + " rebalances moving shards");
    assertTrue(placed > CASES / 10 && moved > CASES / 10, placed + " / " + moved);
  }
}
