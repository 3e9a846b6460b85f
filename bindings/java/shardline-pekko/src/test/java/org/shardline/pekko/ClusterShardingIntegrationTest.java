package org.shardline.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.PoisonPill;
import org.apache.pekko.actor.Props;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.ClusterSharding;
import org.apache.pekko.cluster.sharding.ClusterShardingSettings;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.pattern.Patterns;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Await;
import scala.concurrent.Future;

/**
 * A real Pekko cluster in one JVM (ActorSystems on 127.0.0.1, cluster provider, Artery TCP)
 * running ClusterSharding with the shardline adapter as its allocation strategy: every message
 * reaches its entity; a fourth node joins and the adapter's rebalancing moves shards onto it; a
 * node leaves and its shards find new homes, again without losing a message.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ClusterShardingIntegrationTest {
  private static final String TYPE = "counter";
  private static final int ENTITIES = 60;
  private static final int SHARDS = 24;

  private final List<ActorSystem> systems = new ArrayList<>();
  private final Map<ActorSystem, ActorRef> regions = new HashMap<>();

  /** Counts the decisions the coordinator asked for, to show they were the adapter's. */
  static final AtomicInteger ALLOCATIONS = new AtomicInteger();
  static final AtomicInteger SHARDS_MOVED = new AtomicInteger();

  static final class Counting extends ShardlineAllocationStrategy {
    Counting() {
      super("{\"kind\":\"least-shard\",\"absoluteLimit\":4,\"relativeLimit\":1.0}");
    }

    @Override
    public Future<ActorRef> allocateShard(
        ActorRef requester, String shardId, scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
      ALLOCATIONS.incrementAndGet();
      return super.allocateShard(requester, shardId, current);
    }

    @Override
    public Future<scala.collection.immutable.Set<String>> rebalance(
        scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current, scala.collection.immutable.Set<String> inProgress) {
      Future<scala.collection.immutable.Set<String>> f = super.rebalance(current, inProgress);
      if (f.isCompleted() && f.value().get().isSuccess()) SHARDS_MOVED.addAndGet(f.value().get().get().size());
      return f;
    }
  }

  /** Counts the pings it gets; answers "entity|node|count". */
  static final class Counter extends AbstractActor {
    private int count;

    @Override
    public Receive createReceive() {
      return receiveBuilder()
          .match(
              String.class,
              msg -> {
                count++;
                String entity = msg.substring(0, msg.indexOf('|'));
                getSender().tell(entity + "|" + Cluster.get(getContext().getSystem()).selfAddress() + "|" + count, getSelf());
              })
          .build();
    }
  }

  static final class Extractor extends ShardRegion.HashCodeMessageExtractor {
    Extractor() {
      super(SHARDS);
    }

    @Override
    public String entityId(Object message) {
      String m = (String) message;
      return m.substring(0, m.indexOf('|'));
    }
  }

  private ActorSystem node() {
    ActorSystem s =
        ActorSystem.create(
            "ClusterSystem",
            PekkoFixtures.config(
                0,
                // nodes leaving and systems stopping make Artery warn about closed connections
                "pekko.loglevel = ERROR",
                "pekko.stdout-loglevel = ERROR",
                "pekko.cluster.sharding.rebalance-interval = 500ms",
                "pekko.cluster.sharding.retry-interval = 200ms",
                "pekko.cluster.sharding.handoff-timeout = 20s",
                "pekko.cluster.sharding.distributed-data.durable.keys = []",
                "pekko.cluster.gossip-interval = 200ms",
                "pekko.cluster.leader-actions-interval = 200ms",
                "pekko.cluster.shutdown-after-unsuccessful-join-seed-nodes = off"));
    systems.add(s);
    return s;
  }

  private void startSharding(ActorSystem s) {
    startSharding(s, new Counting());
  }

  private void startSharding(ActorSystem s, ShardlineAllocationStrategy strategy) {
    ActorRef region =
        ClusterSharding.get(s)
            .start(TYPE, Props.create(Counter.class), ClusterShardingSettings.create(s), new Extractor(), strategy, PoisonPill.getInstance());
    regions.put(s, region);
  }

  private static Set<Address> upMembers(ActorSystem observer) {
    Set<Address> up = new HashSet<>();
    for (Member m : Cluster.get(observer).state().getMembers()) {
      if (m.status().equals(MemberStatus.up())) up.add(m.address());
    }
    return up;
  }

  /** Node -> number of shards it hosts, as the sharding stats say. */
  private Map<Address, Integer> shardsPerNode(ActorSystem via) throws Exception {
    Object reply =
        Patterns.ask(regions.get(via), new ShardRegion.GetClusterShardingStats(scala.concurrent.duration.Duration.create(5, TimeUnit.SECONDS)), Duration.ofSeconds(10))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    Map<Address, Integer> out = new HashMap<>();
    ((ShardRegion.ClusterShardingStats) reply).getRegions().forEach((a, stats) -> out.put(a, stats.getStats().size()));
    return out;
  }

  /** Pings every entity through {@code via}'s region; returns entity -> the node that answered. */
  private Map<String, String> pingAll(ActorSystem via) throws Exception {
    List<CompletableFuture<Object>> answers = new ArrayList<>();
    for (int i = 0; i < ENTITIES; i++) {
      answers.add(Patterns.ask(regions.get(via), "e" + i + "|ping", Duration.ofSeconds(30)).toCompletableFuture());
    }
    Map<String, String> byEntity = new HashMap<>();
    for (CompletableFuture<Object> f : answers) {
      String[] parts = ((String) f.get(40, TimeUnit.SECONDS)).split("\\|");
      byEntity.put(parts[0], parts[1]);
    }
    assertEquals(ENTITIES, byEntity.size(), "every entity answered");
    return byEntity;
  }

  /** Three nodes joining the first one. */
  private List<ActorSystem> threeJoining() {
    List<ActorSystem> nodes = List.of(node(), node(), node());
    Address seed = Cluster.get(nodes.get(0)).selfAddress();
    for (ActorSystem s : nodes) Cluster.get(s).join(seed);
    return nodes;
  }

  @Test
  void shardsMoveWhenNodesJoinAndLeaveAndEveryMessageArrives() throws Exception {
    List<ActorSystem> nodes = threeJoining();
    ActorSystem n1 = nodes.get(0);
    ActorSystem n2 = nodes.get(1);
    ActorSystem n3 = nodes.get(2);
    Address seed = Cluster.get(n1).selfAddress();
    for (ActorSystem s : List.of(n1, n2, n3)) startSharding(s);
    Eventually.await(60, () -> upMembers(n1).size() == 3, "three members Up");

    Map<String, String> first = pingAll(n2);
    assertTrue(ALLOCATIONS.get() > 0, "the coordinator allocated through the adapter");
    Eventually.await(30, () -> shardsPerNode(n1).values().stream().filter(c -> c > 0).count() == 3, "shards on all three nodes");
    assertEquals(3, new HashSet<>(first.values()).size(), "entities answered from all three nodes: " + first);

    // a fourth node joins: rebalancing moves shards to it
    ActorSystem n4 = node();
    Address a4 = Cluster.get(n4).selfAddress();
    Cluster.get(n4).join(seed);
    startSharding(n4);
    Eventually.await(60, () -> upMembers(n1).contains(a4), "the fourth member is Up");
    Eventually.await(60, () -> shardsPerNode(n1).getOrDefault(a4, 0) >= 3, "shards rebalanced onto the new node");
    assertTrue(SHARDS_MOVED.get() >= 3, "the adapter chose the shards to move");
    Map<String, String> second = pingAll(n3);
    assertTrue(second.containsValue(a4.toString()), "entities now answer from the new node: " + second);

    // the second node leaves: its shards are handed off and find new homes
    Address a2 = Cluster.get(n2).selfAddress();
    Cluster.get(n1).leave(a2);
    Await.ready(n2.whenTerminated(), scala.concurrent.duration.Duration.create(60, TimeUnit.SECONDS));
    Eventually.await(
        60,
        () -> StreamSupport.stream(Cluster.get(n1).state().getMembers().spliterator(), false).noneMatch(m -> m.address().equals(a2)),
        "the second member is removed");
    Map<String, String> third = pingAll(n1);
    assertFalse(third.containsValue(a2.toString()), "no entity lives on the node that left: " + third);
    Eventually.await(30, () -> !shardsPerNode(n1).containsKey(a2), "no region of the node that left");
  }

  @Test
  void aBadReportIsRefusedAndNotKept() {
    ShardlineAllocationStrategy strategy = ShardlineAllocationStrategy.leastLoad(4, 1.0, 0.05);
    org.shardline.ShardlineException e =
        org.junit.jupiter.api.Assertions.assertThrows(org.shardline.ShardlineException.class, () -> strategy.reportLoad("7", Double.NaN));
    assertEquals(org.shardline.Status.INVALID_ARGUMENT, e.status());
    assertTrue(e.getMessage().contains("load of shard \"7\""), e.getMessage());
    strategy.reportLoad("7", Map.of("cpu", 2.0));
    assertEquals("least-load", strategy.name());
  }

  @Test
  void leastLoadPlacesByReportedLoadsAndNodeCapacities() throws Exception {
    List<ActorSystem> nodes = threeJoining();
    ActorSystem n1 = nodes.get(0);
    ActorSystem n2 = nodes.get(1);
    ActorSystem n3 = nodes.get(2);
    Address seed = Cluster.get(n1).selfAddress();
    Address big = Cluster.get(n3).selfAddress();
    for (ActorSystem s : List.of(n1, n2, n3)) {
      // What a host would report to every node's instance: the third node is three times the
      // size of the others, and the first shards are twice as busy as the rest.
      ShardlineAllocationStrategy strategy = ShardlineAllocationStrategy.leastLoad(4, 1.0, 0.05);
      strategy.setNodeCapacity(big, 3.0);
      for (int shard = 0; shard < SHARDS; shard++) strategy.reportLoad(String.valueOf(shard), shard < 3 ? 2.0 : 1.0);
      startSharding(s, strategy);
    }
    Eventually.await(60, () -> upMembers(n1).size() == 3, "three members Up");
    Map<String, String> answered = pingAll(n2);
    assertEquals(3, new HashSet<>(answered.values()).size(), "entities answered from all three nodes: " + answered);
    Eventually.await(
        60,
        () -> {
          Map<Address, Integer> per = shardsPerNode(n1);
          int others = Math.max(per.getOrDefault(seed, 0), per.getOrDefault(Cluster.get(n2).selfAddress(), 0));
          return others > 0 && per.getOrDefault(big, 0) >= 2 * others;
        },
        "the node with three times the capacity holds at least twice the shards of any other");
  }

  @AfterEach
  void stopAll() throws Exception {
    for (ActorSystem s : systems) s.terminate();
    for (ActorSystem s : systems) {
      Await.ready(s.whenTerminated(), scala.concurrent.duration.Duration.create(30, TimeUnit.SECONDS));
    }
  }
}
