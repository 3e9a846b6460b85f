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
    return call(h -> RegionQueries.nString(h, driver, 0, null));
  }

  /** The shard of an entity, by this region's extractor. */
  public final String shardOf(String entityId) {
    Objects.requireNonNull(entityId, "entityId");
    if (extractor instanceof BuiltinExtractor) {
      return call(h -> RegionQueries.nString(h, driver, 2, entityId));
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
    return callLong(h -> RegionQueries.nLong(h, driver, 0, null)) != 0;
  }

  /** Shards hosted here (in any state), sorted. */
  public final List<String> localShards() {
    return List.of(call(h -> RegionQueries.nList(h, driver, 0)));
  }

  /** Shards hosted here and accepting messages, sorted. */
  public final List<String> runningShards() {
    return List.of(call(h -> RegionQueries.nList(h, driver, 1)));
  }

  /** Gauges and counters under OpenTelemetry-style names ({@code shardline.region.*}). */
  public final List<Metric> metrics() {
    return Metric.fromRows(call(h -> RegionQueries.nList(h, driver, 2)));
  }

  /** The region a shard lives in, as far as this region knows. */
  public final Optional<String> homeOf(String shard) {
    return Optional.ofNullable(call(h -> RegionQueries.nString(h, driver, 1, shard)));
  }

  /** Messages waiting for shard homes. */
  public final long buffered() {
    return callLong(h -> RegionQueries.nLong(h, driver, 1, null));
  }

  public final long bufferedFor(String shard) {
    return callLong(h -> RegionQueries.nLong(h, driver, 2, shard));
  }

  public final OptionalLong nextDeadline() {
    long t = callLong(h -> RegionQueries.nLong(h, driver, 3, null));
    return t < 0 ? OptionalLong.empty() : OptionalLong.of(t);
  }
}
