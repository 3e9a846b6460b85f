package org.shardline.pekko;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.sharding.ShardCoordinator;
import org.shardline.AllocationState;
import org.shardline.Strategy;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Future;
import scala.concurrent.Promise;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A drop-in Apache Pekko {@code ShardAllocationStrategy} whose decisions shardline makes,
 * identical to Pekko's own strategies (ties included): pass it to {@code
 * ClusterSharding.start(..., allocationStrategy, ...)}.
 *
 * <ul>
 *   <li>{@link #leastShard}: Pekko's {@code LeastShardAllocationStrategy(absoluteLimit,
 *       relativeLimit)};
 *   <li>{@link #legacy}: {@code ShardCoordinator.LeastShardAllocationStrategy(threshold,
 *       maxSimultaneous)}, Pekko's default;
 *   <li>{@link #fromConfig}: whichever of the two Pekko's own configuration selects;
 *   <li>{@link #consistentHashing}: Pekko 2.0 / Akka 2.8.3's {@code
 *       ConsistentHashingShardAllocationStrategy} (Pekko 1.x has none), ring bit for bit;
 *   <li>{@link #external}: {@code ExternalShardAllocationStrategy}, reading the locations that
 *       Pekko's {@code ExternalShardAllocation(system).clientFor(typeName)} writes;
 *   <li>{@link #leastLoad}: shardline's least-load over the loads and capacities the host
 *       reports, least-shard exactly when none are.
 * </ul>
 *
 * <p>Like the built-ins it implements {@code ActorSystemDependentAllocationStrategy}: the
 * coordinator calls {@link #start(ActorSystem)} before any decision, and the cluster view comes
 * from {@code Cluster(system).state} and {@code selfMember} ({@link #clusterState()} and {@link
 * #selfMember()} may be overridden, as Pekko's own specs do). Regions are fed to shardline in the
 * iteration order of the map Pekko passes, which is the order Pekko breaks ties by.
 *
 * <p>shardline's copy of the map and the view is kept between calls and updated with what
 * changed, found by object identity: the same map again costs nothing; a map whose shard lists
 * changed (every allocation and hand-off) costs a walk of the hash trie's changed paths and of
 * each changed list's unshared arrays; a region joining or leaving, a visit of every region; and
 * only a change of the map's order (a region joining in the middle of Pekko's hash order)
 * rebuilds the copy in O(shards). Decisions are made under this object's lock.
 *
 * <p>Differences from Pekko, both outside normal operation: members in {@code
 * PreparingForShutdown} / {@code ReadyForShutdown} rank like {@code Up}; and External answers
 * from the locations received so far instead of asking an actor (no ask timeout to hit). Use one
 * instance per entity type: the consistent-hash ring is cached in it.
 */
public class ShardlineAllocationStrategy
    implements ShardCoordinator.ActorSystemDependentAllocationStrategy {

  /** How long a pending allocation waits before it is tried again (Pekko: 50 ms). */
  private static final Duration RETRY = Duration.ofMillis(50);

  private final Strategy strategy;
  private final String externalTypeName;
  private final ExternalLocations locations;
  private volatile ActorSystem system;
  private volatile Cluster cluster;
  /** shardline's copy of the map and view Pekko passes, updated incrementally (under this). */
  private final StateMirror mirror = new StateMirror();

  protected ShardlineAllocationStrategy(String strategyJson) {
    this(Strategy.fromJson(strategyJson), null, null);
  }

  private ShardlineAllocationStrategy(Strategy strategy, String externalTypeName, ExternalLocations locations) {
    this.strategy = strategy;
    this.externalTypeName = externalTypeName;
    this.locations = locations;
  }

  /** Pekko's {@code LeastShardAllocationStrategy(absoluteLimit, relativeLimit)}. */
  public static ShardlineAllocationStrategy leastShard(int absoluteLimit, double relativeLimit) {
    return new ShardlineAllocationStrategy(Strategy.leastShard(absoluteLimit, relativeLimit), null, null);
  }

  /** Pekko's legacy (and default) {@code ShardCoordinator.LeastShardAllocationStrategy}. */
  public static ShardlineAllocationStrategy legacy(int rebalanceThreshold, int maxSimultaneousRebalance) {
    return new ShardlineAllocationStrategy(
        Strategy.leastShardLegacy(rebalanceThreshold, maxSimultaneousRebalance), null, null);
  }

  /** Shards follow Pekko's consistent-hash ring over node addresses; {@code <= 0}: no limit. */
  public static ShardlineAllocationStrategy consistentHashing(int rebalanceLimit) {
    return new ShardlineAllocationStrategy(Strategy.consistentHashing(rebalanceLimit), null, null);
  }

  /**
   * Pekko's {@code ExternalShardAllocationStrategy} for entity type {@code typeName}: shards go
   * where {@code ExternalShardAllocation(system).clientFor(typeName)} says, else to the
   * requesting region.
   */
  public static ShardlineAllocationStrategy external(String typeName) {
    ExternalLocations l = new ExternalLocations(Objects.requireNonNull(typeName, "typeName"));
    return new ShardlineAllocationStrategy(Strategy.external(l), typeName, l);
  }

  /**
   * The least-shard strategy Pekko's own configuration selects ({@code
   * pekko.cluster.sharding.least-shard-allocation-strategy}): the new one when {@code
   * rebalance-absolute-limit > 0}, else the legacy one with {@code rebalance-threshold} and
   * {@code max-simultaneous-rebalance}.
   */
  public static ShardlineAllocationStrategy fromConfig(Config config) {
    Config c = config.getConfig("pekko.cluster.sharding.least-shard-allocation-strategy");
    int absolute = c.getInt("rebalance-absolute-limit");
    if (absolute > 0) return leastShard(absolute, c.getDouble("rebalance-relative-limit"));
    return legacy(c.getInt("rebalance-threshold"), c.getInt("max-simultaneous-rebalance"));
  }

  /**
   * shardline's least-load (no Pekko equivalent): least-shard over the shard loads and node
   * capacities the host reports ({@link #reportLoad}, {@link #setNodeCapacity}); with none
   * reported it decides exactly as {@link #leastShard}. {@code band}: how far above the fluid
   * optimum a node may be before shards move off it (0.05 is the default).
   */
  public static ShardlineAllocationStrategy leastLoad(int absoluteLimit, double relativeLimit, double band) {
    return of(
        "{\"kind\":\"least-load\",\"absoluteLimit\":" + absoluteLimit + ",\"relativeLimit\":"
            + relativeLimit + ",\"band\":" + band + "}");
  }

  /**
   * Reports a shard's load for least-load (a host measurement: messages per second, CPU, ...);
   * later decisions use it. Give it to the instance on every node: only the coordinator's node
   * decides, and the coordinator may move. Throws {@code ShardlineException(INVALID_ARGUMENT)}
   * for a negative or non-finite load, which is then not kept.
   */
  public synchronized void reportLoad(String shardId, double load) {
    mirror.reportLoad(Objects.requireNonNull(shardId, "shardId"), load);
  }

  /** A shard's load per dimension (e.g. {@code Map.of("cpu", 2.0, "memory", 0.5)}). */
  public synchronized void reportLoad(String shardId, Map<String, Double> load) {
    mirror.reportLoad(Objects.requireNonNull(shardId, "shardId"), Map.copyOf(load));
  }

  /** The capacity of node {@code address}'s region for least-load (default 1). */
  public synchronized void setNodeCapacity(Address address, double capacity) {
    mirror.setCapacity(address.toString(), capacity);
  }

  /** Any shardline strategy, as JSON (schema of {@code tests/vectors/README.md}). */
  public static ShardlineAllocationStrategy of(String strategyJson) {
    return new ShardlineAllocationStrategy(strategyJson);
  }

  /** The shardline strategy's name, e.g. {@code least-shard}. */
  public String name() {
    return strategy.name();
  }

  @Override
  public void start(ActorSystem system) {
    this.system = system;
    this.cluster = Cluster.get(system);
    if (locations != null) locations.start(system);
  }

  /** The cluster view decisions read; overridable for tests, as in Pekko's specs. */
  protected CurrentClusterState clusterState() {
    return cluster().state();
  }

  protected Member selfMember() {
    return cluster().selfMember();
  }

  private Cluster cluster() {
    Cluster c = cluster;
    if (c == null) throw new IllegalStateException("start(system) was not called");
    return c;
  }

  /** The external locations received so far ({@link #external} only; empty otherwise). */
  public Map<String, String> externalLocations() {
    return locations == null ? Map.of() : locations.locations();
  }

  @Override
  public Future<ActorRef> allocateShard(
      ActorRef requester, String shardId, scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
    Promise<ActorRef> promise = scala.concurrent.Promise$.MODULE$.apply();
    tryAllocate(requester, shardId, current, promise);
    return promise.future();
  }

  private void tryAllocate(
      ActorRef requester,
      String shardId,
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current,
      Promise<ActorRef> promise) {
    ActorRef chosen;
    try {
      chosen = decideAllocation(requester, shardId, current);
    } catch (RuntimeException e) {
      // A failed future: the coordinator logs it and the region asks again.
      promise.tryFailure(e);
      return;
    }
    if (chosen != null) {
      promise.trySuccess(chosen);
      return;
    }
    // No region maps to a known member: the cluster view is behind. Pekko retries the same
    // call after 50 ms, with the same map and a fresh view; so does this.
    ActorSystem sys = system;
    if (sys == null) {
      promise.tryFailure(new IllegalStateException("start(system) was not called"));
      return;
    }
    sys.scheduler()
        .scheduleOnce(RETRY, () -> tryAllocate(requester, shardId, current, promise), sys.dispatcher());
  }

  /** The chosen region, or null for "not now". */
  private synchronized ActorRef decideAllocation(
      ActorRef requester, String shardId, scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
    AllocationState state = mirror.sync(current, clusterState(), selfMember());
    String requesterId = requester == null ? null : mirror.idOf(requester);
    Optional<String> chosen = strategy.allocate(state, requesterId, shardId).regionId();
    if (chosen.isEmpty()) return null;
    ActorRef ref = mirror.refOf(chosen.get());
    // External may pick the requester even when the map does not list it yet
    return ref == null && chosen.get().equals(requesterId) ? requester : ref;
  }

  @Override
  public Future<scala.collection.immutable.Set<String>> rebalance(
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current,
      scala.collection.immutable.Set<String> rebalanceInProgress) {
    try {
      List<String> picked = decideRebalance(current, CollectionConverters.asJava(rebalanceInProgress));
      // straight into Scala's builder: no Java set and no converting wrapper in between
      scala.collection.mutable.Builder<String, scala.collection.immutable.Set<String>> set =
          scala.collection.immutable.Set$.MODULE$.newBuilder();
      for (int i = 0, n = picked.size(); i < n; i++) set.addOne(picked.get(i));
      return Future.successful(set.result());
    } catch (RuntimeException e) {
      // The coordinator treats a failed rebalance as "nothing to move".
      return scala.concurrent.Future$.MODULE$.failed(e);
    }
  }

  private synchronized List<String> decideRebalance(
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current, java.util.Set<String> inProgress) {
    return strategy.rebalance(mirror.sync(current, clusterState(), selfMember()), inProgress);
  }

  @Override
  public String toString() {
    return "ShardlineAllocationStrategy(" + name() + (externalTypeName == null ? "" : " " + externalTypeName) + ")";
  }
}
