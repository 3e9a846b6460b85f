package org.shardline;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.LongConsumer;

/** Queries shared by {@link Coordinator}, {@link CoordinatorDriver} and {@link AsyncCoordinatorDriver}. */
public abstract class AbstractCoordinator extends NativeHandle {
  static {
    NativeLibrary.load();
  }

  /** Where the coordinator is in its life. */
  public enum Phase {
    /** Created; start not called yet. */
    IDLE(Wire.CoordinatorPhase.IDLE),
    /** Waiting for the lease (requested, or retrying after a refusal). */
    ACQUIRING_LEASE(Wire.CoordinatorPhase.ACQUIRING_LEASE),
    /** Holding the lease, waiting for the stored state. */
    LOADING(Wire.CoordinatorPhase.LOADING),
    ACTIVE(Wire.CoordinatorPhase.ACTIVE),
    STOPPED(Wire.CoordinatorPhase.STOPPED);

    /** The name every binding and the JSON forms use for this phase. */
    public final String wireName;

    Phase(String wireName) {
      this.wireName = wireName;
    }

    /** The phase named {@code name}; throws for a name this version does not know. */
    public static Phase of(String name) {
      for (Phase p : values()) {
        if (p.wireName.equals(name)) return p;
      }
      throw new IllegalStateException("unknown coordinator phase " + name);
    }
  }

  /** What holds the coordinator: 0 a {@link Coordinator}, 1 a {@link CoordinatorDriver}, 2 an
   * {@link AsyncCoordinatorDriver} (the native side's order). */
  private final int kind;

  AbstractCoordinator(long handle, LongConsumer free, String what, int kind) {
    super(handle, free, what);
    this.kind = kind;
  }

  public final Phase phase() {
    return Phase.of(op(this::nOp, "phase"));
  }

  public final boolean isActive() {
    return phase() == Phase.ACTIVE;
  }

  /** The fencing token of the current lease grant. */
  public final OptionalLong token() {
    Long t = op(this::nOp, "token");
    return t == null ? OptionalLong.empty() : OptionalLong.of(t);
  }

  /** When the next timer is due (monotonic ms). */
  public final OptionalLong nextDeadline() {
    long t = callLong(h -> CoordinatorQueries.nNextDeadline(h, kind));
    return t < 0 ? OptionalLong.empty() : OptionalLong.of(t);
  }

  /** The region a shard is allocated to, as of the last stored event. */
  public final Optional<String> homeOf(String shard) {
    return Optional.ofNullable(op(this::nOp, "home_of", shard));
  }

  /** Registered regions in map order. */
  public final List<String> regions() {
    List<Map<String, Object>> all = op(this::nOp, "allocations");
    return all.stream().map(a -> (String) a.get("region")).toList();
  }

  /** A region's shards, oldest first. */
  public final List<String> shardsOf(String region) {
    return strings("shards_of", region);
  }

  /** Shards being handed off, sorted. */
  public final List<String> handoffsInProgress() {
    return strings("handoffs_in_progress");
  }

  public final List<String> unallocatedShards() {
    return strings("unallocated");
  }

  /** Gauges and counters under OpenTelemetry-style names ({@code shardline.coordinator.*}). */
  public final List<Metric> metrics() {
    return Metric.fromMaps(op(this::nOp, "metrics"));
  }

  /** The persistent state as a snapshot (JSON). */
  public final String snapshot() {
    return Json.write(op(this::nOp, "snapshot"));
  }

  public final boolean isAlive(String region) {
    return op(this::nOp, "is_alive", region);
  }

  private List<String> strings(String name, Object... args) {
    return List.copyOf(this.<List<String>>op(this::nOp, name, args));
  }

  private Object nOp(long h, String name, Object[] args) {
    return CoordinatorQueries.nOp(h, kind, name, args);
  }
}
