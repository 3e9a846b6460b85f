package org.shardline;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A shard region (or proxy) as a sans-IO state machine: routes entity messages to the local
 * shard, to the shard's remote home, or into a bounded buffer while the home is unknown or a
 * hand-off is under way; takes part in the coordinator's fenced hand-off protocol. Carry out
 * {@link #drainOutputs()} in order; {@link RegionDriver} does it with callbacks.
 *
 * <p>Buffered messages are never dropped at hand-off; when the buffer is full, {@link #route}
 * throws {@link Status#INVALID_STATE} and the message stays the caller's.
 */
public final class Region extends AbstractRegion {
  /**
   * @param configJson null for defaults, else e.g. {@code {"bufferCapacity": 100000,
   *     "retryIntervalMs": 2000, "proxy": false, "rememberEntities": false}}
   * @param id names this incarnation (a restarted process should pick a new id)
   * @param node this region's cluster address, as the coordinator's membership knows it
   */
  public Region(String configJson, String id, String node, ShardExtractor extractor) {
    super(make(configJson, id, node, extractor), Region::nFree, "Region", false, extractor);
  }

  public Region(String id, String node, ShardExtractor extractor) {
    this(null, id, node, extractor);
  }

  private static long make(String configJson, String id, String node, ShardExtractor extractor) {
    Objects.requireNonNull(extractor, "extractor");
    String builtin =
        extractor instanceof BuiltinExtractor ? ((BuiltinExtractor) extractor).description() : null;
    return nNew(configJson, id, node, builtin);
  }

  /** Registers with the coordinator. */
  public void start(long nowMs) {
    run(h -> nStart(h, nowMs));
  }

  public void onTimeout(long nowMs) {
    run(h -> nOnTimeout(h, nowMs));
  }

  /** Routes a message from a local sender to {@code entityId}'s shard. */
  public void route(long nowMs, String entityId, byte[] payload) {
    String shard = extractor instanceof BuiltinExtractor ? null : checkedShard(entityId);
    run(h -> nRoute(h, nowMs, shard, entityId, payload));
  }

  /** Routes a message whose shard the caller already knows. */
  public void routeToShard(long nowMs, String shard, String entityId, byte[] payload) {
    Objects.requireNonNull(shard, "shard");
    run(h -> nRoute(h, nowMs, shard, entityId, payload));
  }

  public void receive(long nowMs, Envelope e) {
    input(nowMs, 0, null, null, e.flat());
  }

  /** The coordinator moved (or may have): register again. */
  public void coordinatorChanged(long nowMs) {
    input(nowMs, 1, null, null, null);
  }

  /** Another region died: forget the homes it had. */
  public void regionTerminated(long nowMs, String region) {
    input(nowMs, 2, region, null, null);
  }

  /** The host finished stopping a shard's entities after {@link RegionOutput.StopShard}. */
  public void shardStopped(long nowMs, String shard) {
    input(nowMs, 3, shard, null, null);
  }

  /** An entity was passivated on purpose (remember-entities forgets it). */
  public void entityPassivated(long nowMs, String shard, String entityId) {
    input(nowMs, 4, shard, entityId, null);
  }

  /** Hand every shard off, then stop ({@link RegionOutput.Stopped}). */
  public void gracefulShutdown(long nowMs) {
    input(nowMs, 5, null, null, null);
  }

  /**
   * What the host measured of its shards, for the coordinator to smooth: shard id to a load, a
   * {@link Number} or a {@code Map<String, Number>} per dimension (every load the same way),
   * each finite and >= 0.
   */
  public void reportLoads(long nowMs, Map<String, ?> loads) {
    input(nowMs, 6, null, null, loadsInput(loads));
  }

  /**
   * The region's offer changed, replacing the whole of it: {@code capacity} a {@link Number} or
   * a {@code Map<String, Number>} (null: 1), {@code tags}, {@code maxShards} (null: no cap).
   */
  public void updateOffer(long nowMs, Object capacity, List<String> tags, Long maxShards) {
    input(nowMs, 6, null, null, offerInput(capacity, tags, maxShards));
  }

  /** The reportLoads step document. */
  static byte[] loadsInput(Map<String, ?> loads) {
    Objects.requireNonNull(loads, "loads");
    for (Map.Entry<String, ?> e : loads.entrySet()) {
      // JSON has no NaN or infinity, so they are named here rather than by the parser.
      if (e.getValue() instanceof Number n) Json.number(n.doubleValue(), "loads." + e.getKey());
      if (e.getValue() instanceof Map<?, ?> m) {
        for (Map.Entry<?, ?> d : m.entrySet()) {
          if (d.getValue() instanceof Number n) Json.number(n.doubleValue(), "loads." + e.getKey() + "." + d.getKey());
        }
      }
    }
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("type", "reportLoads");
    doc.put("loads", loads);
    return Json.write(doc).getBytes(StandardCharsets.UTF_8);
  }

  /** The updateOffer step document; absent parts are left out. */
  static byte[] offerInput(Object capacity, List<String> tags, Long maxShards) {
    Map<String, Object> offer = new LinkedHashMap<>();
    if (capacity instanceof Number n) Json.number(n.doubleValue(), "capacity");
    if (capacity != null) offer.put("capacity", capacity);
    if (tags != null && !tags.isEmpty()) offer.put("tags", tags);
    if (maxShards != null) offer.put("maxShards", maxShards);
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("type", "updateOffer");
    doc.put("offer", offer);
    return Json.write(doc).getBytes(StandardCharsets.UTF_8);
  }

  /** Everything queued so far, in order, in one native call (see {@link Coordinator#drainOutputs}). */
  public List<RegionOutput> drainOutputs() {
    Rows.Scratch s = Rows.scratch();
    long h = enter();
    try {
      return Rows.regionOutputs(s.rows(nDrain(h, s.address, s.capacity)));
    } finally {
      exit();
    }
  }

  private void input(long nowMs, int kind, String a, String b, byte[] c) {
    long at = Rows.scratch().put(c);
    long h = enter();
    try {
      nInput(h, nowMs, kind, a, b, at == 0 ? c : null, at);
    } finally {
      exit();
    }
  }

  private static native long nNew(String configJson, String id, String node, String extractor);

  private static native void nFree(long h);

  private static native void nStart(long h, long nowMs);

  private static native void nOnTimeout(long h, long nowMs);

  private static native void nRoute(long h, long nowMs, String shard, String entity, byte[] payload);

  private static native void nInput(
      long h, long nowMs, int kind, String a, String b, byte[] c, long at);

  private static native byte[] nDrain(long h, long at, int capacity);
}
