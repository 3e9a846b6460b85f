package org.shardline;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.LongConsumer;

/** Queries shared by {@link Region} and {@link RegionDriver}. */
public abstract class AbstractRegion extends NativeHandle {
  static {
    NativeLibrary.load();
  }

  private final boolean driver;
  final ShardExtractor extractor;

  AbstractRegion(long handle, LongConsumer free, String what, boolean driver, ShardExtractor extractor) {
    super(handle, free, what);
    this.driver = driver;
    this.extractor = Objects.requireNonNull(extractor, "extractor");
  }

  public final String id() {
    return op(this::nOp, "id");
  }

  /** The shard of an entity, by this region's extractor. */
  public final String shardOf(String entityId) {
    Objects.requireNonNull(entityId, "entityId");
    if (extractor instanceof BuiltinExtractor) {
      return op(this::nOp, "shard_of", entityId);
    }
    return checkedShard(entityId);
  }

  /** Runs a user extractor; null shard ids are refused before they reach the region. */
  final String checkedShard(String entityId) {
    String shard = extractor.shardOf(entityId);
    if (shard == null) {
      throw new ShardlineException(Status.CALLBACK_FAILED, "ShardExtractor returned null for entity " + entityId);
    }
    return shard;
  }

  /** Whether the coordinator has acknowledged this region's registration. */
  public final boolean isRegistered() {
    return op(this::nOp, "is_registered");
  }

  /** Shards hosted here (in any state), sorted. */
  public final List<String> localShards() {
    return List.copyOf(this.<List<String>>op(this::nOp, "local_shards"));
  }

  /** Shards hosted here and accepting messages, sorted. */
  public final List<String> runningShards() {
    return List.copyOf(this.<List<String>>op(this::nOp, "running_shards"));
  }

  /** Gauges and counters under OpenTelemetry-style names ({@code shardline.region.*}). */
  public final List<Metric> metrics() {
    return Metric.fromMaps(op(this::nOp, "metrics"));
  }

  /** The region a shard lives in, as far as this region knows. */
  public final Optional<String> homeOf(String shard) {
    return Optional.ofNullable(op(this::nOp, "home_of", shard));
  }

  /** Messages waiting for shard homes. */
  public final long buffered() {
    return this.<Long>op(this::nOp, "buffered");
  }

  public final long bufferedFor(String shard) {
    return this.<Long>op(this::nOp, "buffered_for", shard);
  }

  public final OptionalLong nextDeadline() {
    long t = callLong(h -> RegionQueries.nNextDeadline(h, driver));
    return t < 0 ? OptionalLong.empty() : OptionalLong.of(t);
  }

  private Object nOp(long h, String name, Object[] args) {
    return RegionQueries.nOp(h, driver, name, args);
  }
}
