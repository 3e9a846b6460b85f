package org.shardline;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
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

  /** {@link #allocate}'s last answer to a region (pending until the first). */
  private Allocation lastAnswer = Allocation.pending();

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
    // Typed rather than an operation by name, and without lambdas: it is the call a host makes
    // per new shard; the shard id crosses packed when it is short ASCII (ShortAscii).
    int n = ShortAscii.length(shard);
    long lo = ShortAscii.word(shard, 0, n);
    long hi = ShortAscii.word(shard, 8, n);
    String r;
    long h = enter();
    try {
      long s = state.enter();
      try {
        r = nAllocate(h, s, lo, hi, n, shard, requester);
      } finally {
        state.exit();
      }
    } finally {
      exit();
    }
    if (r == null) return Allocation.pending();
    // The native side answers a region it answered before with the same String, so while the
    // answer repeats the last Allocation is reused (identity compare) instead of made per call.
    // Allocation is immutable: a thread racing on the field sees one answer or the other whole.
    Allocation last = lastAnswer;
    if (!last.isTo(r)) {
      last = Allocation.to(r);
      lastAnswer = last;
    }
    return last;
  }

  public Explained<Allocation> explainAllocate(AllocationState state, String requester, String shard) {
    Objects.requireNonNull(state, "state");
    Map<String, Object> r = decide(state, "explain_allocate", shard, requester);
    String region = (String) r.get("region");
    Allocation a = region == null ? Allocation.pending() : Allocation.to(region);
    return new Explained<>(a, Json.write(r.get("explanation")));
  }

  /** Shards to hand off, in decision order. */
  public List<String> rebalance(AllocationState state, Collection<String> inProgress) {
    Objects.requireNonNull(state, "state");
    String[] busy = inProgress.isEmpty() ? null : inProgress.toArray(new String[0]);
    return Collections.unmodifiableList(unpack(call(h -> state.call(s -> nRebalance(h, s, busy)))));
  }

  /** The shards {@code nRebalance} packs into one string: UTF-16 length, ':', id, and so on. */
  static List<String> unpack(String packed) {
    List<String> out = new ArrayList<>();
    // one pass over each length's digits (no indexOf and parseInt over them again): a tick
    // that moves shards reads a length per shard
    for (int i = 0, n = packed.length(); i < n; ) {
      int length = 0;
      for (char c; (c = packed.charAt(i++)) != ':'; ) length = 10 * length + (c - '0');
      out.add(packed.substring(i, i + length));
      i += length;
    }
    return out;
  }

  public Explained<List<String>> explainRebalance(AllocationState state, Collection<String> inProgress) {
    Objects.requireNonNull(state, "state");
    Map<String, Object> r = decide(state, "explain_rebalance", List.copyOf(inProgress));
    @SuppressWarnings("unchecked")
    List<String> shards = List.copyOf((List<String>) r.get("shards"));
    return new Explained<>(shards, Json.write(r.get("explanation")));
  }

  /** Decision {@code op} of the native ops::strategy on {@code state}, both held for the call. */
  @SuppressWarnings("unchecked")
  private <T> T decide(AllocationState state, String op, Object... args) {
    Object[] all = new Object[args.length + 1];
    System.arraycopy(args, 0, all, 1, args.length);
    return call(
        h ->
            state.call(
                s -> {
                  all[0] = s;
                  return (T) nOp(h, op, all);
                }));
  }

  private static native long nFromJson(String json);

  private static native long nCustom(CustomStrategy strategy, String name);

  private static native long nExternalSource(ShardLocations source);

  private static native void nFree(long h);

  /** {@code shardLength}: the length of the id packed in {@code lo}, {@code hi}, or -1. */
  private static native String nAllocate(
      long h, long state, long lo, long hi, int shardLength, String shard, String requester);

  private static native String nName(long h);

  private static native String nRebalance(long h, long state, String[] inProgress);

  /** The decisions of the native ops::strategy; the first argument is the state's handle. */
  private static native Object nOp(long h, String op, Object[] args);
}
