package org.shardline;

import java.util.List;

/**
 * Where a {@link RegionDriver}'s shards and entities live. Called synchronously during driver
 * calls, on the calling thread.
 */
public interface EntityHost {
  /** Start hosting {@code shard}; {@code entities} are remembered ones to start right away. */
  void startShard(String shard, List<String> entities);

  /** More remembered entities for a running shard. */
  default void startEntities(String shard, List<String> entities) {
    startShard(shard, entities);
  }

  void deliver(String shard, String entity, byte[] payload);

  /**
   * Stop every entity of {@code shard}. Return true if they are already stopped; otherwise
   * call {@link RegionDriver#shardStopped} later, outside this callback.
   */
  boolean stopShard(String shard);

  /** A message another region forwarded here that could not be kept. */
  default void undeliverable(String shard, String entity, byte[] payload, String reason) {}

  /** Graceful shutdown finished. */
  default void stopped() {}
}
