package shardline.differential;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorRefProvider;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.RootActorPath;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.Member$;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.sharding.ShardCoordinator.ShardAllocationStrategy;
import org.apache.pekko.cluster.sharding.internal.AbstractLeastShardAllocationStrategy;
import org.apache.pekko.routing.ConsistentHash;
import org.apache.pekko.util.Version;

import scala.Option;
import scala.collection.Iterator;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Map$;
import scala.collection.immutable.Set;
import scala.collection.immutable.Set$;
import scala.collection.immutable.TreeSet;
import scala.collection.immutable.TreeSet$;
import scala.concurrent.Await;
import scala.concurrent.Future;
import scala.concurrent.duration.Duration;
import scala.jdk.javaapi.CollectionConverters;

import shardline.differential.CaseSpec.MemberSpec;
import shardline.differential.CaseSpec.RegionSpec;

/**
 * Turns a {@link CaseSpec} into Pekko objects (members, cluster state, ActorRefs, the Scala
 * allocation Map), asks Pekko, and builds the conformance vector with Pekko's answer.
 */
final class PekkoRunner implements AutoCloseable {

  /** A vector whose answer may still be on its way (Pekko's allocate retries every 50 ms). */
  static final class Pending {
    final Map<String, Object> vector;
    final Future<?> future;
    final IdentityHashMap<ActorRef, String> regionIds;

    Pending(Map<String, Object> vector, Future<?> future, IdentityHashMap<ActorRef, String> ids) {
      this.vector = vector;
      this.future = future;
      this.regionIds = ids;
    }
  }

  final ActorSystem system;
  private final ActorRefProvider provider;
  final String pekkoVersion;

  PekkoRunner() {
    Config config =
        ConfigFactory.parseString(
                String.join(
                    "\n",
                    "pekko.actor.provider = cluster",
                    "pekko.remote.artery.canonical.hostname = 127.0.0.1",
                    "pekko.remote.artery.canonical.port = 0",
                    "pekko.loglevel = WARNING",
                    "pekko.stdout-loglevel = WARNING",
                    "pekko.log-dead-letters = off",
                    "pekko.cluster.jmx.enabled = off",
                    "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off"))
            .withFallback(ConfigFactory.load());
    system = ActorSystem.create("differential", config);
    provider = ((ExtendedActorSystem) system).provider();
    pekkoVersion = ActorSystem.Version();
  }

  @Override
  public void close() throws Exception {
    system.terminate();
    Await.ready(system.whenTerminated(), Duration.create(10, "s"));
  }

  // ---------------------------------------------------------------- cluster

  private static Member member(CaseSpec c, MemberSpec m) {
    Address address = new Address("pekko", c.system, m.host, m.port);
    Set<String> roles = Set$.MODULE$.<String>empty().incl("dc-" + m.dataCenter);
    Member joining =
        Member$.MODULE$.apply(UniqueAddress.apply(address, 1L), roles, Version.apply(m.appVersion));
    // walk the legal transitions (Member.copy checks them)
    switch (m.status) {
      case "Joining":
        return joining;
      case "WeaklyUp":
        return joining.copy(MemberStatus.weaklyUp());
      case "Up":
        return joining.copy(MemberStatus.up());
      case "Leaving":
        return joining.copy(MemberStatus.up()).copy(MemberStatus.leaving());
      case "Exiting":
        return joining.copy(MemberStatus.up()).copy(MemberStatus.leaving()).copy(MemberStatus.exiting());
      case "Down":
        return joining.copy(MemberStatus.up()).copy(MemberStatus.down());
      default:
        throw new IllegalArgumentException("status " + m.status);
    }
  }

  // ---------------------------------------------------------------- regions

  private ActorRef regionRef(CaseSpec c, RegionSpec r) {
    ActorRef ref;
    if (r.local) {
      // a path in this ActorSystem's own (local-scope) address: Pekko maps it to selfMember
      ref = provider.resolveActorRef("pekko://" + system.name() + "/system/fake/" + r.id);
      if (!ref.path().address().hasLocalScope()) throw new IllegalStateException("not local: " + ref);
    } else {
      Address address = new Address("pekko", c.system, r.host, r.port);
      ref = provider.resolveActorRef(new RootActorPath(address, "/").child("system").child("fake").child(r.id));
      if (!ref.path().address().equals(address)) throw new IllegalStateException("unexpected: " + ref);
    }
    return ref;
  }

  // ---------------------------------------------------------------- one case

  /** Runs the case; returns either a finished vector or a {@link Pending}. */
  Object run(CaseSpec c, String id, String source) {
    // members, in the generator's order; Pekko keeps them in a SortedSet (Member.ordering)
    Map<MemberSpec, Member> members = new LinkedHashMap<>();
    TreeSet<Member> sorted = TreeSet$.MODULE$.<Member>empty(Member.ordering());
    for (MemberSpec m : c.members) {
      Member pm = member(c, m);
      members.put(m, pm);
      sorted = sorted.incl(pm);
    }
    Set<Member> unreachable = Set$.MODULE$.<Member>empty();
    for (MemberSpec m : c.unreachable) unreachable = unreachable.incl(members.get(m));
    CurrentClusterState state =
        new CurrentClusterState(
            sorted,
            unreachable,
            Set$.MODULE$.<Address>empty(),
            Option.<Address>empty(),
            Map$.MODULE$.<String, Option<Address>>empty(),
            Set$.MODULE$.<String>empty(),
            Set$.MODULE$.<UniqueAddress>empty());
    Member self = members.get(c.self);

    // the allocation map, built by inserting in generation order
    IdentityHashMap<ActorRef, String> ids = new IdentityHashMap<>();
    Map<String, RegionSpec> specById = new HashMap<>();
    Map<String, ActorRef> refById = new HashMap<>();
    scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> allocations = Map$.MODULE$.empty();
    for (RegionSpec r : c.regions) {
      ActorRef ref = regionRef(c, r);
      ids.put(ref, r.id);
      specById.put(r.id, r);
      refById.put(r.id, ref);
      IndexedSeq<String> shards = CollectionConverters.asScala(r.shards).toVector();
      allocations = allocations.updated(ref, shards);
    }
    if (allocations.size() != c.regions.size()) throw new IllegalStateException("duplicate ActorRef");

    // the vector: regions listed in the iteration order of the exact Map instance given to Pekko
    Map<String, Object> v = new LinkedHashMap<>();
    v.put("id", id);
    v.put("source", source);
    v.put("title", "random " + c.kind + " " + c.op);
    Map<String, Object> strategy = new LinkedHashMap<>();
    strategy.put("kind", c.kind);
    switch (c.kind) {
      case "least-shard":
        strategy.put("absoluteLimit", c.absoluteLimit);
        strategy.put("relativeLimit", c.relativeLimit);
        break;
      case "least-shard-legacy":
        strategy.put("rebalanceThreshold", c.rebalanceThreshold);
        strategy.put("maxSimultaneousRebalance", c.maxSimultaneousRebalance);
        break;
      default:
        strategy.put("rebalanceLimit", c.rebalanceLimit);
        strategy.put("virtualNodesFactor", 10);
    }
    v.put("strategy", strategy);
    v.put("op", c.op);
    Map<String, Object> cluster = new LinkedHashMap<>();
    cluster.put("self", c.address(c.self));
    List<Object> memberList = new ArrayList<>();
    for (MemberSpec m : c.members) {
      Map<String, Object> mm = new LinkedHashMap<>();
      mm.put("address", c.address(m));
      mm.put("status", m.status);
      mm.put("appVersion", m.appVersion);
      mm.put("dataCenter", m.dataCenter);
      memberList.add(mm);
    }
    cluster.put("members", memberList);
    List<Object> unreachableList = new ArrayList<>();
    for (MemberSpec m : c.unreachable) unreachableList.add(c.address(m));
    cluster.put("unreachable", unreachableList);
    v.put("cluster", cluster);
    List<Object> regionList = new ArrayList<>();
    Iterator<ActorRef> keys = allocations.keysIterator();
    while (keys.hasNext()) {
      ActorRef ref = keys.next();
      RegionSpec r = specById.get(ids.get(ref));
      Map<String, Object> rm = new LinkedHashMap<>();
      rm.put("region", r.id);
      rm.put("address", c.nodeAddress(r));
      // the shards as Pekko holds them (the map's own value)
      rm.put("shards", new ArrayList<>(CollectionConverters.asJava(allocations.apply(ref))));
      if (r.local) rm.put("local", true);
      regionList.add(rm);
    }
    v.put("regions", regionList);
    v.put("rebalanceInProgress", new ArrayList<>(c.rebalanceInProgress));
    if (c.op.equals("allocate")) {
      v.put("shardId", c.shardId);
      v.put("requester", c.requester);
    }

    // ask Pekko
    Future<?> answer;
    switch (c.kind) {
      case "least-shard":
      case "least-shard-legacy":
        {
          AbstractLeastShardAllocationStrategy s =
              c.kind.equals("least-shard")
                  ? new ClusterStrategies.LeastShard(c.absoluteLimit, c.relativeLimit, state, self)
                  : new ClusterStrategies.LegacyLeastShard(
                      c.rebalanceThreshold, c.maxSimultaneousRebalance, state, self);
          s.start(system);
          answer = ask(s, c, allocations, refById);
          break;
        }
      default:
        answer = consistentHashing(c, allocations, refById, state, self);
    }
    Pending p = new Pending(v, answer, ids);
    if (answer.isCompleted()) {
      complete(p, false);
      return v;
    }
    return p;
  }

  private static Future<?> ask(
      ShardAllocationStrategy s,
      CaseSpec c,
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> allocations,
      Map<String, ActorRef> refById) {
    if (c.op.equals("allocate")) {
      return s.allocateShard(refById.get(c.requester), c.shardId, allocations);
    }
    Set<String> inProgress = CollectionConverters.asScala(new LinkedHashSet<>(c.rebalanceInProgress)).toSet();
    return s.rebalance(allocations, inProgress);
  }

  /** Fills {@code expect}; {@code timedOut}: the future never completed (Pekko keeps retrying). */
  static void complete(Pending p, boolean timedOut) {
    Map<String, Object> expect = new LinkedHashMap<>();
    if (timedOut) {
      expect.put("pending", true);
    } else {
      Object value;
      try {
        value = Await.result(p.future, Duration.Zero());
      } catch (Exception e) {
        throw new IllegalStateException("Pekko failed on vector " + p.vector.get("id"), e);
      }
      if (value instanceof ActorRef) {
        String id = p.regionIds.get(value);
        if (id == null) throw new IllegalStateException("Pekko chose an unknown region " + value);
        expect.put("region", id);
      } else {
        @SuppressWarnings("unchecked")
        Set<String> shards = (Set<String>) value;
        List<String> list = new ArrayList<>(CollectionConverters.asJava(shards));
        list.sort(CODE_POINT_ORDER);
        expect.put("shards", list);
      }
    }
    p.vector.put("expect", expect);
  }

  /** Sorted shard lists in the vectors use code-point (= UTF-8 byte) order. */
  static final Comparator<String> CODE_POINT_ORDER =
      (a, b) -> {
        int i = 0, j = 0;
        while (i < a.length() && j < b.length()) {
          int x = a.codePointAt(i), y = b.codePointAt(j);
          if (x != y) return Integer.compare(x, y);
          i += Character.charCount(x);
          j += Character.charCount(y);
        }
        return Integer.compare(a.length() - i, b.length() - j);
      };

  // ---------------------------------------------------------------- consistent hashing

  /**
   * Pekko 1.x ships no ConsistentHashingShardAllocationStrategy (it arrived in Pekko 2.0.0-M4, a
   * port of Akka 2.8.3's). This reproduces that strategy's steps with Pekko 1.x's own pieces: the
   * real {@link ConsistentHash} ring over the region nodes sorted by {@code Address.addressOrdering},
   * Pekko's {@code regionEntriesFor} / {@code isAGoodTimeToRebalance} for the rebalance gate, and
   * the Scala Map's own iteration order.
   */
  private Future<?> consistentHashing(
      CaseSpec c,
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> allocations,
      Map<String, ActorRef> refById,
      CurrentClusterState state,
      Member self) {
    // nodeForRegion: local scope -> selfMember.address, else the path's address
    java.util.function.Function<ActorRef, Address> nodeFor =
        ref -> ref.path().address().hasLocalScope() ? self.address() : ref.path().address();
    List<ActorRef> mapOrder = new ArrayList<>();
    CollectionConverters.asJava(allocations.keysIterator()).forEachRemaining(mapOrder::add);
    List<Address> nodes = new ArrayList<>();
    for (ActorRef r : mapOrder) nodes.add(nodeFor.apply(r));
    nodes.sort(Address.addressOrdering()); // List.sort is stable, like Scala's Vector.sorted
    ConsistentHash<Address> ring = ConsistentHash.create(nodes, 10);

    if (c.op.equals("allocate")) {
      Address node = ring.nodeFor(c.shardId);
      Optional<ActorRef> region = mapOrder.stream().filter(r -> nodeFor.apply(r).equals(node)).findFirst();
      return Future.successful(region.orElseThrow());
    }

    ClusterStrategies.LeastShard gate = new ClusterStrategies.LeastShard(1, 1.0, state, self);
    gate.start(system);
    @SuppressWarnings("unchecked")
    scala.collection.Iterable<AbstractLeastShardAllocationStrategy.RegionEntry> entries =
        (scala.collection.Iterable<AbstractLeastShardAllocationStrategy.RegionEntry>)
            gate.regionEntriesFor(allocations)
                .toVector()
                .sorted(AbstractLeastShardAllocationStrategy.ShardSuitabilityOrdering$.MODULE$);
    if (!gate.isAGoodTimeToRebalance(entries)) {
      return Future.successful(Set$.MODULE$.<String>empty());
    }
    Map<Address, ActorRef> regionByNode = new HashMap<>(); // Scala toMap: the later region wins
    for (ActorRef r : mapOrder) regionByNode.put(nodeFor.apply(r), r);
    List<ActorRef> byNode = new ArrayList<>(mapOrder);
    byNode.sort((a, b) -> Address.addressOrdering().compare(nodeFor.apply(a), nodeFor.apply(b)));
    java.util.Set<String> inProgress = new java.util.HashSet<>(c.rebalanceInProgress);
    java.util.Set<String> result = new LinkedHashSet<>();
    for (ActorRef current : byNode) {
      for (String shard : CollectionConverters.asJava(allocations.apply(current))) {
        boolean lessThanLimit = c.rebalanceLimit <= 0 || result.size() < c.rebalanceLimit;
        if (lessThanLimit && !inProgress.contains(shard)) {
          ActorRef target = regionByNode.get(ring.nodeFor(shard));
          if (target == null) throw new IllegalStateException("no region for ring node");
          if (!target.equals(current)) result.add(shard);
        }
      }
    }
    return Future.successful(CollectionConverters.asScala(result).toSet());
  }
}
