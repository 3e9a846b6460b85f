package org.shardline;

import java.util.List;

/** What a {@link Region} asks its host to do, in order. */
public sealed interface RegionOutput {
  /** Deliver to {@code envelope.to()}. */
  record Send(Envelope envelope) implements RegionOutput {}

  /** Start hosting {@code shard}, with remembered {@code entities} to start right away. */
  record StartShard(String shard, List<String> entities) implements RegionOutput {}

  /** More remembered entities for a shard already running. */
  record StartEntities(String shard, List<String> entities) implements RegionOutput {}

  /** Hand {@code payload} to entity {@code entity} of local shard {@code shard}. */
  record Deliver(String shard, String entity, byte[] payload) implements RegionOutput {}

  /** Stop every entity of {@code shard}, then report {@link Region#shardStopped}. */
  record StopShard(String shard) implements RegionOutput {}

  /** A message another region forwarded here that could not be kept. */
  record Undeliverable(String shard, String entity, byte[] payload, String reason)
      implements RegionOutput {}

  /** Graceful shutdown finished: nothing hosted, nothing buffered. */
  record Stopped() implements RegionOutput {}

  record Notify(Notice notice) implements RegionOutput {}

  /** Tags match the native side (bind/src/rows.rs). */
  static RegionOutput of(Rows r) {
    switch (r.tag) {
      case 0:
        return new Send(new Envelope(r.c));
      case 1:
        return new StartShard(r.a, List.of(r.list));
      case 2:
        return new StartEntities(r.a, List.of(r.list));
      case 3:
        return new Deliver(r.a, r.b, r.payload);
      case 4:
        return new StopShard(r.a);
      case 5:
        return new Undeliverable(r.a, r.b, r.payload, r.cText());
      case 6:
        return new Stopped();
      case 7:
        return new Notify(r.notice());
      default:
        throw new ShardlineException(Status.INTERNAL, "unknown region output tag " + r.tag);
    }
  }
}
