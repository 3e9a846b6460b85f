package org.shardline.bench;

import com.typesafe.config.ConfigFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.RootActorPath;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.Member$;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.sharding.ShardCoordinator;
import org.apache.pekko.cluster.sharding.ShardCoordinator.ShardAllocationStrategy;
import org.apache.pekko.cluster.sharding.internal.LeastShardAllocationStrategy;
import org.apache.pekko.util.Version;
import org.shardline.Allocation;
import org.shardline.AllocationState;
import org.shardline.Strategy;
import org.shardline.pekko.ShardlineAllocationStrategy;
import scala.Option;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Map$;
import scala.collection.immutable.Set$;
import scala.collection.immutable.TreeSet;
import scala.collection.immutable.TreeSet$;
import scala.collection.immutable.VectorBuilder;
import scala.concurrent.Future;
import scala.jdk.javaapi.CollectionConverters;

/**
 * One benchmark input and every implementation that decides on it, built once per JMH trial
 * (and by {@code WorkloadTest}).
 *
 * <p>The input: {@code regions} regions, one per node {@code pekko://sys@10.x.y.z:2552}, all
 * members Up with one app version, shard {@code k} ("0".."S-1") on region {@code k mod R}; for
 * rebalance one more node with an empty region (it just joined), so there is work to do where
 * the shards outnumber the regions. The coordinator runs on node 0; region 0 asks for the new
 * shard {@code "new"}.
 *
 * <p>The implementations, all deciding on that same input:
 *
 * <ul>
 *   <li>{@code pekko}: Pekko 1.7.0's own strategy on the Scala map (the completed Future's
 *       value);
 *   <li>{@code adapter}: {@link ShardlineAllocationStrategy}, the drop-in, on the very same
 *       Scala map object on every call (as Pekko's retries and idle rebalance ticks pass it);
 *   <li>{@code adapterChanged}: the drop-in on maps that alternate between the input and the
 *       input with one more shard on one region, so every call carries a change to apply (as
 *       after each allocation in a running coordinator);
 *   <li>{@code jni}: {@link Strategy#allocate} / {@link Strategy#rebalance} on an {@link
 *       AllocationState} that holds the same regions in the Scala map's iteration order (the
 *       order Pekko breaks ties by);
 *   <li>{@code inprocess}: the same decision looped inside Rust ({@link InProcess}).
 * </ul>
 */
public final class Workload implements AutoCloseable {
  public static final String NEW_SHARD = "new";
  public static final String EXTRA_SHARD = "extra";

  private static ActorSystem system;

  final String strategyName;
  final boolean allocate;
  final int regions;
  final int shards;
  final CurrentClusterState view;
  final Member self;
  final scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current;
  /** {@link #current} with {@link #EXTRA_SHARD} added to the last region in map order. */
  final scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> changed;
  final scala.collection.immutable.Set<String> noneInProgress = Set$.MODULE$.empty();
  final List<ActorRef> mapOrder = new ArrayList<>();
  final ActorRef requester;
  final ShardAllocationStrategy pekko;
  final ShardlineAllocationStrategy adapter;
  final Strategy strategy;
  final AllocationState state;
  final Map<String, ActorRef> refById = new HashMap<>();
  private boolean flip;

  /** The ActorSystem that resolves region refs (remote refs need a cluster provider). */
  static synchronized ActorSystem system() {
    if (system == null) {
      system =
          ActorSystem.create(
              "bench",
              ConfigFactory.parseString(
                      String.join(
                          "\n",
                          "pekko.actor.provider = cluster",
                          "pekko.remote.artery.canonical.hostname = 127.0.0.1",
                          "pekko.remote.artery.canonical.port = 0",
                          "pekko.loglevel = WARNING",
                          "pekko.stdout-loglevel = WARNING",
                          "pekko.cluster.jmx.enabled = off",
                          "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off"))
                  .withFallback(ConfigFactory.load()));
    }
    return system;
  }

  public static synchronized void shutdownSystem() throws Exception {
    if (system != null) {
      system.terminate();
      scala.concurrent.Await.ready(system.whenTerminated(), scala.concurrent.duration.Duration.create(30, "s"));
      system = null;
    }
  }

  /** The node of region {@code i}: pekko://sys@10.x.y.z:2552. */
  static Address node(int i) {
    return new Address("pekko", "sys", "10." + ((i >> 16) & 255) + "." + ((i >> 8) & 255) + "." + (i & 255), 2552);
  }

  static Member upMember(Address a) {
    scala.collection.immutable.Set<String> roles = Set$.MODULE$.<String>empty().incl("dc-default");
    return Member$.MODULE$.apply(UniqueAddress.apply(a, 1L), roles, Version.apply("1.0.0")).copy(MemberStatus.up());
  }

  /**
   * @param strategyName {@code least-shard} (Pekko's {@code LeastShardAllocationStrategy(20,
   *     0.1)}) or {@code least-shard-legacy} (Pekko's default {@code
   *     ShardCoordinator.LeastShardAllocationStrategy(1, 3)})
   * @param op {@code allocate} or {@code rebalance}
   */
  public static Workload create(String strategyName, String op, int regions, int shards) {
    return new Workload(strategyName, op, regions, shards);
  }

  private Workload(String strategyName, String op, int regions, int shards) {
    if (!op.equals("allocate") && !op.equals("rebalance")) throw new IllegalArgumentException("op: allocate or rebalance, got " + op);
    if (regions < 1 || shards < 0) throw new IllegalArgumentException("regions >= 1 and shards >= 0, got " + regions + ", " + shards);
    this.strategyName = strategyName;
    this.allocate = op.equals("allocate");
    this.regions = regions;
    this.shards = shards;
    int nodes = allocate ? regions : regions + 1;

    ExtendedActorSystem ext = (ExtendedActorSystem) system();
    TreeSet<Member> members = TreeSet$.MODULE$.<Member>empty(Member.ordering());
    List<ActorRef> refs = new ArrayList<>(nodes);
    List<VectorBuilder<String>> lists = new ArrayList<>(nodes);
    Member first = null;
    for (int i = 0; i < nodes; i++) {
      Member m = upMember(node(i));
      if (i == 0) first = m;
      members = members.incl(m);
      refs.add(ext.provider().resolveActorRef(new RootActorPath(node(i), "/").child("system").child("sharding").child("bench")));
      lists.add(new VectorBuilder<>());
    }
    for (int k = 0; k < shards; k++) lists.get(k % regions).addOne(Integer.toString(k));
    scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> m = Map$.MODULE$.empty();
    Map<ActorRef, Integer> index = new HashMap<>();
    for (int i = 0; i < nodes; i++) {
      m = updated(m, refs.get(i), lists.get(i).result());
      index.put(refs.get(i), i);
    }
    this.current = m;
    this.view =
        new CurrentClusterState(
            members,
            Set$.MODULE$.empty(),
            Set$.MODULE$.empty(),
            Option.empty(),
            Map$.MODULE$.empty(),
            Set$.MODULE$.empty(),
            Set$.MODULE$.empty());
    this.self = first;
    this.requester = refs.get(0);
    CollectionConverters.asJava(current.keysIterator()).forEachRemaining(mapOrder::add);
    ActorRef last = mapOrder.get(mapOrder.size() - 1);
    VectorBuilder<String> grown = new VectorBuilder<>();
    grown.addAll(current.apply(last)).addOne(EXTRA_SHARD);
    this.changed = updated(current, last, grown.result());

    switch (strategyName) {
      case "least-shard":
        pekko = new PekkoLeastShard(20, 0.1, view, self);
        break;
      case "least-shard-legacy":
        pekko = new PekkoLegacy(1, 3, view, self);
        break;
      default:
        throw new IllegalArgumentException("strategy: least-shard or least-shard-legacy, got " + strategyName);
    }
    ((ShardCoordinator.ActorSystemDependentAllocationStrategy) pekko).start(system());
    String json =
        strategyName.equals("least-shard")
            ? "{\"kind\":\"least-shard\",\"absoluteLimit\":20,\"relativeLimit\":0.1}"
            : "{\"kind\":\"least-shard-legacy\",\"rebalanceThreshold\":1,\"maxSimultaneousRebalance\":3}";
    adapter = new FixedViewAdapter(json, view, self);
    adapter.start(system());

    // The JNI state, kept as a host keeps it: built once, regions in the map's order.
    strategy = Strategy.fromJson(json);
    state = new AllocationState(self.address().toString());
    for (int i = 0; i < nodes; i++) {
      state.upsertMember(
          new org.shardline.Member(node(i).toString(), org.shardline.MemberStatus.UP, "1.0.0", "default", Integer.MAX_VALUE));
    }
    for (ActorRef ref : mapOrder) {
      String id = "r" + index.get(ref);
      refById.put(id, ref);
      state.addRegion(id, ref.path().address().toString(), false, CollectionConverters.asJava(current.apply(ref)));
    }
  }

  /** Scala's updated[V1 >: V] erases to a raw map in Java. */
  @SuppressWarnings("unchecked")
  static scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> updated(
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> m, ActorRef key, IndexedSeq<String> shards) {
    return (scala.collection.immutable.Map<ActorRef, IndexedSeq<String>>) (Object) m.updated(key, shards);
  }

  String requesterId() {
    return "r0";
  }

  // ---- the timed calls (raw results; see decision() for comparable ones) ---------------------

  public Object pekko() {
    return value(allocate ? pekko.allocateShard(requester, NEW_SHARD, current) : pekko.rebalance(current, noneInProgress));
  }

  public Object adapter() {
    return value(allocate ? adapter.allocateShard(requester, NEW_SHARD, current) : adapter.rebalance(current, noneInProgress));
  }

  public Object adapterChanged() {
    flip = !flip;
    scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> m = flip ? changed : current;
    return value(allocate ? adapter.allocateShard(requester, NEW_SHARD, m) : adapter.rebalance(m, noneInProgress));
  }

  public Object jni() {
    return allocate ? strategy.allocate(state, requesterId(), NEW_SHARD) : strategy.rebalance(state, List.of());
  }

  public Object inprocess(int iterations) {
    return allocate
        ? InProcess.allocate(strategy, state, requesterId(), NEW_SHARD, iterations)
        : InProcess.rebalance(strategy, state, List.of(), iterations);
  }

  /** Pekko's map with the extra shard, decided by Pekko (for checking adapterChanged). */
  Object pekkoOnChanged() {
    return value(allocate ? pekko.allocateShard(requester, NEW_SHARD, changed) : pekko.rebalance(changed, noneInProgress));
  }

  private static Object value(Future<?> f) {
    Option<? extends scala.util.Try<?>> v = f.value();
    if (v.isEmpty()) throw new IllegalStateException("the decision did not complete at once");
    return v.get().get();
  }

  // ---- checking ------------------------------------------------------------------------

  /** A comparable decision: the chosen region's ref, or the set of shards to move. */
  Object decision(Object raw) {
    if (raw instanceof ActorRef) return raw;
    if (raw instanceof scala.collection.immutable.Set) {
      @SuppressWarnings("unchecked")
      scala.collection.immutable.Set<String> s = (scala.collection.immutable.Set<String>) raw;
      return new HashSet<>(CollectionConverters.asJava(s));
    }
    if (raw instanceof Allocation) return ((Allocation) raw).regionId().map(refById::get).orElse(null);
    if (raw instanceof List) return new HashSet<>((List<?>) raw);
    if (raw instanceof InProcess.Timed) {
      Object d = ((InProcess.Timed<?>) raw).decision();
      if (d instanceof Optional) return ((Optional<?>) d).map(refById::get).orElse(null);
      return decision(d);
    }
    throw new IllegalArgumentException("not a decision: " + raw);
  }

  /**
   * Runs every implementation once and fails unless each decides exactly as Pekko does (the
   * same region for an allocation, the same set for a rebalance). Returns Pekko's decision.
   */
  public Object verify() {
    Object expected = decision(pekko());
    if (expected == null) throw new IllegalStateException("Pekko made no decision");
    check("adapter", expected, decision(adapter()));
    check("jni", expected, decision(jni()));
    check("inprocess", expected, decision(inprocess(3)));
    Object expectedChanged = decision(pekkoOnChanged());
    // adapterChanged alternates: changed map first, then the input
    check("adapterChanged (changed map)", expectedChanged, decision(adapterChanged()));
    check("adapterChanged (input)", expected, decision(adapterChanged()));
    return expected;
  }

  private void check(String impl, Object expected, Object got) {
    if (!expected.equals(got)) {
      throw new IllegalStateException(
          impl + " decided " + got + " where Pekko decided " + expected + " (" + this + ")");
    }
  }

  @Override
  public String toString() {
    return (allocate ? "allocate " : "rebalance ") + strategyName + " R" + regions + " S" + shards;
  }

  @Override
  public void close() {
    state.close();
    strategy.close();
  }

  /** Pekko's new least-shard strategy with a fixed cluster view, as Pekko's own specs build it. */
  static final class PekkoLeastShard extends LeastShardAllocationStrategy {
    private final CurrentClusterState view;
    private final Member self;

    PekkoLeastShard(int absoluteLimit, double relativeLimit, CurrentClusterState view, Member self) {
      super(absoluteLimit, relativeLimit);
      this.view = view;
      this.self = self;
    }

    @Override
    public CurrentClusterState clusterState() {
      return view;
    }

    @Override
    public Member selfMember() {
      return self;
    }
  }

  /** Pekko's legacy (default) least-shard strategy with a fixed cluster view. */
  static final class PekkoLegacy extends ShardCoordinator.LeastShardAllocationStrategy {
    private static final long serialVersionUID = 1L;
    private final transient CurrentClusterState view;
    private final transient Member self;

    PekkoLegacy(int threshold, int maxSimultaneous, CurrentClusterState view, Member self) {
      super(threshold, maxSimultaneous);
      this.view = view;
      this.self = self;
    }

    @Override
    public CurrentClusterState clusterState() {
      return view;
    }

    @Override
    public Member selfMember() {
      return self;
    }
  }

  /** The drop-in with the same fixed cluster view. */
  static final class FixedViewAdapter extends ShardlineAllocationStrategy {
    private final CurrentClusterState view;
    private final Member self;

    FixedViewAdapter(String json, CurrentClusterState view, Member self) {
      super(json);
      this.view = view;
      this.self = self;
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
}
