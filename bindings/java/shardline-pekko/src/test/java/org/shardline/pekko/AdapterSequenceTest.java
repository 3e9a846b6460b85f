package org.shardline.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.VectorBuilder;
import scala.concurrent.Await;
import scala.concurrent.Future;
import scala.concurrent.duration.Duration;
import scala.jdk.javaapi.CollectionConverters;

/**
 * One adapter instance driven through a sequence of changing maps and cluster views, as Pekko's
 * coordinator drives it (persistent maps: unchanged regions keep their Vector objects; one view
 * object until it changes). After every step its decisions must equal those of a fresh Pekko
 * strategy on the same arguments: shardline's copy is updated incrementally, so a stale copy
 * shows up here as a different decision.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class AdapterSequenceTest {
  private static ActorSystem system;

  @BeforeAll
  static void start() {
    system = ActorSystem.create("sequence", PekkoFixtures.config(0));
  }

  @AfterAll
  static void stop() throws Exception {
    system.terminate();
    Await.ready(system.whenTerminated(), Duration.create(30, TimeUnit.SECONDS));
  }

  /** The adapter reading a view the test swaps, as Cluster(system).state changes. */
  static final class MovingView extends ShardlineAllocationStrategy {
    CurrentClusterState view;
    Member self;

    MovingView(String json) {
      super(json);
    }

    @Override
    protected CurrentClusterState clusterState() {
      return view;
    }

    @Override
    protected Member selfMember() {
      return self;
    }
  }

  /** The cluster and the allocation map, changed step by step as Pekko would change them. */
  static final class World {
    final Random rnd;
    final Map<Address, String> status = new LinkedHashMap<>(); // null: no member (stale view)
    final Map<Address, String> version = new LinkedHashMap<>();
    final List<Address> unreachable = new ArrayList<>();
    Address self;
    CurrentClusterState view;
    scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> map = scala.collection.immutable.Map$.MODULE$.empty();
    int nextNode;
    int nextRegion;
    int nextShard;

    World(Random rnd) {
      this.rnd = rnd;
    }

    Address newNode(String st) {
      Address a = new Address("pekko", "ClusterSystem", "10.0." + (nextNode / 200) + "." + (nextNode % 200), 2552);
      nextNode++;
      status.put(a, st);
      version.put(a, "1.0.0");
      return a;
    }

    void rebuildView() {
      List<Member> members = new ArrayList<>();
      Map<Address, Member> byAddress = new LinkedHashMap<>();
      for (Map.Entry<Address, String> e : status.entrySet()) {
        if (e.getValue() == null) continue;
        Member m = PekkoFixtures.member(e.getKey(), e.getValue(), version.get(e.getKey()), "default");
        members.add(m);
        byAddress.put(e.getKey(), m);
      }
      List<Member> u = new ArrayList<>();
      for (Address a : unreachable) if (byAddress.containsKey(a)) u.add(byAddress.get(a));
      view = PekkoFixtures.state(members, u);
    }

    Member selfMember() {
      for (Member m : CollectionConverters.asJava(view.members())) if (m.address().equals(self)) return m;
      throw new IllegalStateException("self is not a member");
    }

    ActorRef newRegion(Address node) {
      return PekkoFixtures.region(system, node, "region" + nextRegion++);
    }

    List<ActorRef> refs() {
      List<ActorRef> out = new ArrayList<>();
      CollectionConverters.asJava(map.keysIterator()).forEachRemaining(out::add);
      return out;
    }

    static IndexedSeq<String> vector(List<String> shards) {
      VectorBuilder<String> b = new VectorBuilder<>();
      for (String s : shards) b.addOne(s);
      return b.result();
    }

    List<String> shardsOf(ActorRef r) {
      return new ArrayList<>(CollectionConverters.asJava(map.apply(r)));
    }

    String newShard() {
      return "s" + nextShard++;
    }

    List<String> allShards() {
      List<String> all = new ArrayList<>();
      for (ActorRef r : refs()) all.addAll(shardsOf(r));
      return all;
    }
  }

  // Scala's updated[V1 >: V] and removed erase to raw maps in Java
  @SuppressWarnings("unchecked")
  static scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> removed(
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> m, ActorRef key) {
    return (scala.collection.immutable.Map<ActorRef, IndexedSeq<String>>) (Object) m.removed(key);
  }

  @SuppressWarnings("unchecked")
  static scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> updated(
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> m, ActorRef key, IndexedSeq<String> shards) {
    return (scala.collection.immutable.Map<ActorRef, IndexedSeq<String>>) (Object) m.updated(key, shards);
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

  private static AbstractLeastShardAllocationStrategy pekko(String kind, CurrentClusterState view, Member self) {
    AbstractLeastShardAllocationStrategy p =
        kind.equals("least-shard") ? new PekkoFixtures.PekkoLeastShard(3, 0.5, view, self) : new PekkoFixtures.PekkoLegacy(1, 2, view, self);
    p.start(system);
    return p;
  }

  private static String json(String kind) {
    return kind.equals("least-shard")
        ? "{\"kind\":\"least-shard\",\"absoluteLimit\":3,\"relativeLimit\":0.5}"
        : "{\"kind\":\"least-shard-legacy\",\"rebalanceThreshold\":1,\"maxSimultaneousRebalance\":2}";
  }

  /** Both decisions of the adapter equal Pekko's on the world as it is now. */
  private static Object[] compare(String kind, MovingView adapter, World w, String step, ActorRef requester, String shard, List<String> inProgress)
      throws Exception {
    adapter.view = w.view;
    adapter.self = w.selfMember();
    ShardAllocationStrategy p = pekko(kind, w.view, adapter.self);
    Object pa = answer(p.allocateShard(requester, shard, w.map));
    Object aa = answer(adapter.allocateShard(requester, shard, w.map));
    assertEquals(pa, aa, () -> "allocate after " + step + ": " + describe(w));
    Object pr = answer(p.rebalance(w.map, PekkoFixtures.set(inProgress)));
    Object ar = answer(adapter.rebalance(w.map, PekkoFixtures.set(inProgress)));
    assertEquals(pr, ar, () -> "rebalance after " + step + ": " + describe(w));
    return new Object[] {pa, pr};
  }

  private static String describe(World w) {
    StringBuilder s = new StringBuilder("members=").append(w.status).append(" unreachable=").append(w.unreachable).append(" map=");
    for (ActorRef r : w.refs()) s.append(r.path().address().host().get()).append('/').append(r.path().name()).append(w.shardsOf(r)).append(' ');
    return s.toString();
  }

  @Test
  void namedChangesReachTheAdapter() throws Exception {
    World w = new World(new Random(1));
    Address n0 = w.newNode("Up");
    Address n1 = w.newNode("Up");
    Address n2 = w.newNode("Up");
    w.self = n0;
    w.rebuildView();
    ActorRef a = w.newRegion(n0);
    ActorRef b = w.newRegion(n1);
    ActorRef c = w.newRegion(n2);
    w.map = updated(w.map, a, World.vector(List.of("1", "2", "3")));
    w.map = updated(w.map, b, World.vector(List.of("4", "5")));
    w.map = updated(w.map, c, World.vector(List.of("6")));
    MovingView adapter = new MovingView(json("least-shard"));
    adapter.start(system);
    Object[] d = compare("least-shard", adapter, w, "start", a, "x", List.of());
    assertEquals(c, d[0], "c has the fewest shards");

    // the same map object again: nothing to sync, same answer
    assertEquals(c, compare("least-shard", adapter, w, "same map", a, "x", List.of())[0]);

    // shard added to c (c's Vector replaced, a's and b's kept)
    w.map = updated(w.map, c, World.vector(List.of("6", "7", "8")));
    assertEquals(b, compare("least-shard", adapter, w, "shard added", a, "x", List.of())[0]);

    // a shard moved from a to b in one step
    w.map = updated(w.map, a, World.vector(List.of("1", "3")));
    w.map = updated(w.map, b, World.vector(List.of("4", "5", "2")));
    assertEquals(a, compare("least-shard", adapter, w, "shard moved", a, "x", List.of())[0]);

    // region added on a new node (empty): it gets the next shard, and rebalancing starts
    Address n3 = w.newNode("Up");
    w.rebuildView();
    ActorRef e = w.newRegion(n3);
    w.map = updated(w.map, e, World.vector(List.of()));
    d = compare("least-shard", adapter, w, "region added", a, "x", List.of());
    assertEquals(e, d[0]);
    assertTrue(!((java.util.Set<?>) d[1]).isEmpty(), "the empty region makes work");

    // member status changed: e's node is leaving, so e ranks last
    w.status.put(n3, "Leaving");
    w.rebuildView();
    assertEquals(a, compare("least-shard", adapter, w, "member leaving", a, "x", List.of())[0]);

    // region removed (its node went away)
    w.map = removed(w.map, e);
    w.status.remove(n3);
    w.rebuildView();
    assertEquals(a, compare("least-shard", adapter, w, "region removed", a, "x", List.of())[0]);

    // a node unreachable: no rebalancing while it is
    w.map = updated(w.map, a, World.vector(List.of()));
    w.unreachable.add(n1);
    w.rebuildView();
    d = compare("least-shard", adapter, w, "unreachable", a, "x", List.of());
    assertEquals(java.util.Set.of(), d[1]);
    w.unreachable.clear();
    w.rebuildView();
    d = compare("least-shard", adapter, w, "reachable again", a, "x", List.of());
    assertTrue(!((java.util.Set<?>) d[1]).isEmpty(), "rebalancing resumes");

    // the same regions in a different map order (small maps iterate in insertion order)
    scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> reordered = scala.collection.immutable.Map$.MODULE$.empty();
    for (ActorRef r : List.of(c, b, a)) reordered = updated(reordered, r, World.vector(List.of()));
    w.map = reordered;
    assertEquals(c, compare("least-shard", adapter, w, "reordered", a, "x", List.of())[0], "ties go to the first in map order");

    // a region's shards reordered in place: the new strategy moves the first ones of a list
    w.map = updated(w.map, c, World.vector(List.of("9", "10", "11", "12")));
    assertEquals(java.util.Set.of("9", "10"), compare("least-shard", adapter, w, "shards listed", a, "x", List.of())[1]);
    w.map = updated(w.map, c, World.vector(List.of("12", "11", "10", "9")));
    assertEquals(java.util.Set.of("12", "11"), compare("least-shard", adapter, w, "shards reordered", a, "x", List.of())[1]);
  }

  @Test
  void randomSequencesDecideAsPekko() throws Exception {
    long seed = Long.getLong("shardline.seed", System.nanoTime());
    System.out.println("AdapterSequenceTest seed " + seed + " (replay with -Dshardline.seed=" + seed + ")");
    Random rnd = new Random(seed);
    Map<String, Integer> changes = new TreeMap<>();
    int decisions = 0;
    for (int sequence = 0; sequence < 60; sequence++) {
      String kind = rnd.nextBoolean() ? "least-shard" : "legacy";
      World w = new World(rnd);
      int nodes = 1 + rnd.nextInt(8);
      List<Address> all = new ArrayList<>();
      for (int i = 0; i < nodes; i++) all.add(w.newNode("Up"));
      w.self = all.get(0);
      w.rebuildView();
      for (Address a : all) {
        List<String> shards = new ArrayList<>();
        for (int j = rnd.nextInt(8); j > 0; j--) shards.add(w.newShard());
        w.map = updated(w.map, w.newRegion(a), World.vector(shards));
      }
      MovingView adapter = new MovingView(json(kind));
      adapter.start(system);
      for (int step = 0; step < 40; step++) {
        String change = change(w, rnd);
        changes.merge(change, 1, Integer::sum);
        List<ActorRef> refs = w.refs();
        ActorRef requester = refs.isEmpty() ? w.newRegion(w.self) : refs.get(rnd.nextInt(refs.size()));
        List<String> inProgress = new ArrayList<>();
        List<String> shards = w.allShards();
        if (!shards.isEmpty() && rnd.nextDouble() < 0.2) inProgress.add(shards.get(rnd.nextInt(shards.size())));
        compare(kind, adapter, w, change + " (sequence " + sequence + ", step " + step + ", seed " + seed + ")", requester, w.newShard(), inProgress);
        decisions += 2;
      }
    }
    System.out.println("AdapterSequenceTest: " + decisions + " decisions agree; changes " + changes);
    for (String c : List.of("append", "remove shard", "move shard", "add region", "remove region", "status", "unreachable", "reorder map", "reorder shards", "same map", "new ref object", "member gone")) {
      assertTrue(changes.getOrDefault(c, 0) > 20, c + ": " + changes);
    }
  }

  /**
   * Bigger worlds (up to 30 regions of up to 2,000 shards, so Pekko's map is a hash trie and the
   * lists are vectors several levels deep) changed exactly as Pekko's coordinator changes them
   * ({@code :+} and {@code filterNot}, which share arrays with the list before), several regions
   * between two decisions, now and then a list rebuilt with no arrays shared.
   */
  @Test
  void pekkoDerivedListsDecideAsPekko() throws Exception {
    long seed = Long.getLong("shardline.seed", System.nanoTime());
    System.out.println("AdapterSequenceTest (derived lists) seed " + seed + " (replay with -Dshardline.seed=" + seed + ")");
    Random rnd = new Random(seed);
    int decisions = 0;
    for (int sequence = 0; sequence < 12; sequence++) {
      String kind = rnd.nextBoolean() ? "least-shard" : "legacy";
      World w = new World(rnd);
      int nodes = 5 + rnd.nextInt(26);
      List<ActorRef> refs = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        Address a = w.newNode("Up");
        if (i == 0) w.self = a;
        List<String> shards = new ArrayList<>();
        for (int j = rnd.nextInt(2000); j > 0; j--) shards.add(w.newShard());
        ActorRef r = w.newRegion(a);
        refs.add(r);
        w.map = updated(w.map, r, World.vector(shards));
      }
      w.rebuildView();
      MovingView adapter = new MovingView(json(kind));
      adapter.start(system);
      for (int step = 0; step < 30; step++) {
        StringBuilder what = new StringBuilder();
        for (int c = 1 + rnd.nextInt(4); c > 0; c--) {
          ActorRef r = refs.get(rnd.nextInt(refs.size()));
          @SuppressWarnings("unchecked")
          scala.collection.immutable.Vector<String> v = (scala.collection.immutable.Vector<String>) w.map.apply(r);
          int op = rnd.nextInt(8);
          if (op < 3) {
            v = Vectors.appended(v, w.newShard());
            what.append(" append");
          } else if (op < 6 && v.length() > 0) {
            String gone = v.apply(rnd.nextInt(v.length()));
            v = Vectors.filterNot(v, s -> s.equals(gone));
            what.append(" remove");
            if (op == 5) {
              // the hand-off's shard allocated again elsewhere in the same step
              ActorRef to = refs.get(rnd.nextInt(refs.size()));
              if (!to.equals(r)) {
                w.map = updated(w.map, to, Vectors.appended(w.map.apply(to), gone));
                what.append(" move");
              }
            }
          } else {
            v = (scala.collection.immutable.Vector<String>) World.vector(w.shardsOf(r));
            what.append(" rebuilt");
          }
          w.map = updated(w.map, r, v);
        }
        List<String> inProgress = new ArrayList<>();
        List<String> shards = w.allShards();
        if (!shards.isEmpty() && rnd.nextDouble() < 0.2) inProgress.add(shards.get(rnd.nextInt(shards.size())));
        ActorRef requester = refs.get(rnd.nextInt(refs.size()));
        compare(kind, adapter, w, what + " (sequence " + sequence + ", step " + step + ", seed " + seed + ")", requester, w.newShard(), inProgress);
        decisions += 2;
      }
    }
    System.out.println("AdapterSequenceTest (derived lists): " + decisions + " decisions agree");
  }

  /** Applies one random change as Pekko would make it; returns its name. */
  private static String change(World w, Random rnd) {
    List<ActorRef> refs = w.refs();
    List<Address> nodes = new ArrayList<>(w.status.keySet());
    int pick = rnd.nextInt(12);
    if (refs.isEmpty() && pick != 3) pick = 3;
    ActorRef r = refs.isEmpty() ? null : refs.get(rnd.nextInt(refs.size()));
    switch (pick) {
      case 0: {
        List<String> s = w.shardsOf(r);
        s.add(w.newShard());
        w.map = updated(w.map, r, World.vector(s));
        return "append";
      }
      case 1: {
        List<String> s = w.shardsOf(r);
        if (s.isEmpty()) return "same map";
        s.remove(rnd.nextInt(s.size()));
        w.map = updated(w.map, r, World.vector(s));
        return "remove shard";
      }
      case 2: {
        ActorRef to = refs.get(rnd.nextInt(refs.size()));
        List<String> s = w.shardsOf(r);
        if (s.isEmpty() || to.equals(r)) return "same map";
        String moved = s.remove(rnd.nextInt(s.size()));
        List<String> t = w.shardsOf(to);
        t.add(moved);
        w.map = updated(w.map, r, World.vector(s));
        w.map = updated(w.map, to, World.vector(t));
        return "move shard";
      }
      case 3: {
        Address node = rnd.nextDouble() < 0.7 || nodes.isEmpty() ? w.newNode(rnd.nextDouble() < 0.8 ? "Up" : "Joining") : nodes.get(rnd.nextInt(nodes.size()));
        w.rebuildView();
        List<String> s = new ArrayList<>();
        for (int j = rnd.nextInt(3); j > 0; j--) s.add(w.newShard());
        w.map = updated(w.map, w.newRegion(node), World.vector(s));
        return "add region";
      }
      case 4: {
        if (refs.size() < 2) return "same map";
        w.map = removed(w.map, r);
        return "remove region";
      }
      case 5: {
        Address a = nodes.get(rnd.nextInt(nodes.size()));
        if (a.equals(w.self) || w.status.get(a) == null) return "same map";
        String[] statuses = {"Up", "Leaving", "Exiting", "Down", "Joining", "WeaklyUp"};
        w.status.put(a, statuses[rnd.nextInt(statuses.length)]);
        if (rnd.nextDouble() < 0.3) w.version.put(a, rnd.nextBoolean() ? "1.0.0" : "2.0.0");
        w.rebuildView();
        return "status";
      }
      case 6: {
        Address a = nodes.get(rnd.nextInt(nodes.size()));
        if (!w.unreachable.remove(a)) w.unreachable.add(a);
        w.rebuildView();
        return "unreachable";
      }
      case 7: {
        List<ActorRef> order = new ArrayList<>(refs);
        Collections.shuffle(order, rnd);
        scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> m = scala.collection.immutable.Map$.MODULE$.empty();
        for (ActorRef x : order) m = updated(m, x, World.vector(w.shardsOf(x)));
        w.map = m;
        return "reorder map";
      }
      case 8: {
        List<String> s = w.shardsOf(r);
        Collections.shuffle(s, rnd);
        w.map = updated(w.map, r, World.vector(s));
        return "reorder shards";
      }
      case 9: {
        // a view change that changes nothing the strategies read
        if (rnd.nextBoolean()) w.rebuildView();
        return "same map";
      }
      case 10: {
        // the same region as a new ActorRef object (deserialized again)
        ActorRef again = PekkoFixtures.region(system, r.path().address(), r.path().name());
        IndexedSeq<String> s = w.map.apply(r);
        w.map = removed(w.map, r);
        w.map = updated(w.map, again, s);
        return "new ref object";
      }
      default: {
        Address a = nodes.get(rnd.nextInt(nodes.size()));
        if (a.equals(w.self)) return "same map";
        w.status.put(a, w.status.get(a) == null ? "Up" : null);
        w.rebuildView();
        return "member gone";
      }
    }
  }
}
