package org.shardline;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * An allocation strategy: where a new shard goes, and which shards to move.
 *
 * <p>The built-ins decide exactly as their originals, ties included: {@link #leastShard} (Pekko's
 * {@code LeastShardAllocationStrategy(absoluteLimit, relativeLimit)}), {@link #leastShardLegacy}
 * (Pekko's default, {@code ShardCoordinator.LeastShardAllocationStrategy}), {@link
 * #consistentHashing} (Pekko/Akka's hash ring, bit for bit), {@link #external} (Pekko's {@code
 * ExternalShardAllocationStrategy}), and the actor-ts pair. {@link #custom} runs a Java
 * {@link CustomStrategy}.
 *
 * <p>A strategy keeps caches (the hash ring), so use one per entity type. Handing it to a
 * {@link Coordinator} moves it there; this object is then retired.
 */
public final class Strategy extends NativeHandle {
  static {
    NativeLibrary.load();
  }

  private Strategy(long handle) {
    super(handle, Strategy::nFree, "Strategy");
  }

  /**
   * A built-in strategy from its JSON configuration, e.g. {@code {"kind": "least-shard",
   * "absoluteLimit": 20, "relativeLimit": 0.1}}; the schema is the {@code strategy} object of
   * {@code tests/vectors/README.md}.
   */
  public static Strategy fromJson(String json) {
    return new Strategy(nFromJson(json));
  }

  public static Strategy leastShard(int absoluteLimit, double relativeLimit) {
    return fromJson(
        "{\"kind\":\"least-shard\",\"absoluteLimit\":" + absoluteLimit + ",\"relativeLimit\":"
            + Json.number(relativeLimit, "relativeLimit") + "}");
  }

  public static Strategy leastShardLegacy(int rebalanceThreshold, int maxSimultaneousRebalance) {
    return fromJson(
        "{\"kind\":\"least-shard-legacy\",\"rebalanceThreshold\":" + rebalanceThreshold
            + ",\"maxSimultaneousRebalance\":" + maxSimultaneousRebalance + "}");
  }

  /** {@code rebalanceLimit <= 0}: unlimited. Ten virtual nodes per node, as in Pekko. */
  public static Strategy consistentHashing(int rebalanceLimit) {
    return fromJson("{\"kind\":\"consistent-hashing\",\"rebalanceLimit\":" + rebalanceLimit + "}");
  }

  /** External with fixed locations {shard: node address}. */
  public static Strategy external(Map<String, String> locations) {
    return fromJson(
        "{\"kind\":\"external\",\"locations\":" + Json.object(new TreeMap<>(locations)) + "}");
  }

  /** External asking {@code source} on every decision. */
  public static Strategy external(ShardLocations source) {
    return new Strategy(nExternalSource(Objects.requireNonNull(source, "source")));
  }

  public static Strategy actorTsHash() {
    return fromJson("{\"kind\":\"actor-ts-hash\"}");
  }

  public static Strategy actorTsLeastShard(long rebalanceThreshold, long maxSimultaneousRebalance) {
    return fromJson(
        "{\"kind\":\"actor-ts-least-shard\",\"rebalanceThreshold\":" + rebalanceThreshold
            + ",\"maxSimultaneousRebalance\":" + maxSimultaneousRebalance + "}");
  }

  public static Strategy custom(CustomStrategy strategy) {
    return custom("custom", strategy);
  }

  /** {@code name} appears in explanations and error messages. */
  public static Strategy custom(String name, CustomStrategy strategy) {
    return new Strategy(nCustom(Objects.requireNonNull(strategy, "strategy"), name));
  }

  public String name() {
    return call(Strategy::nName);
  }

  /**
   * Chooses a home for {@code shard}.
   *
   * @param requester the asking region, or null for allocations a coordinator starts itself
   * @throws ShardlineException {@link Status#NO_CANDIDATES} when an actor-ts strategy has no
   *     region to choose from
   */
  public Allocation allocate(AllocationState state, String requester, String shard) {
    Objects.requireNonNull(state, "state");
    String r = call(h -> state.call(s -> nAllocate(h, s, requester, shard)));
    return r == null ? Allocation.pending() : Allocation.to(r);
  }

  public Explained<Allocation> explainAllocate(AllocationState state, String requester, String shard) {
    Objects.requireNonNull(state, "state");
    String[] r = call(h -> state.call(s -> nExplainAllocate(h, s, requester, shard)));
    return new Explained<>(r[0] == null ? Allocation.pending() : Allocation.to(r[0]), r[1]);
  }

  /** Shards to hand off, in decision order. */
  public List<String> rebalance(AllocationState state, Collection<String> inProgress) {
    Objects.requireNonNull(state, "state");
    String[] ip = inProgress.toArray(new String[0]);
    return List.of(call(h -> state.call(s -> nRebalance(h, s, ip))));
  }

  public Explained<List<String>> explainRebalance(AllocationState state, Collection<String> inProgress) {
    Objects.requireNonNull(state, "state");
    String[] ip = inProgress.toArray(new String[0]);
    Object[] r = call(h -> state.call(s -> nExplainRebalance(h, s, ip)));
    return new Explained<>(List.of((String[]) r[0]), (String) r[1]);
  }

  private static native long nFromJson(String json);

  private static native long nCustom(CustomStrategy strategy, String name);

  private static native long nExternalSource(ShardLocations source);

  private static native void nFree(long h);

  private static native String nName(long h);

  // The plain calls return the decision alone; the explain variants add the explanation.
  private static native String nAllocate(long h, long state, String requester, String shard);

  private static native String[] nExplainAllocate(long h, long state, String requester, String shard);

  private static native String[] nRebalance(long h, long state, String[] inProgress);

  private static native Object[] nExplainRebalance(long h, long state, String[] inProgress);
}
