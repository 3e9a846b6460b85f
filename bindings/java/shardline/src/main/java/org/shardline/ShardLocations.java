package org.shardline;

import java.util.Map;
import java.util.Optional;

/**
 * Where shards should live, for the External strategy (Pekko's {@code
 * ExternalShardAllocationStrategy}): node addresses such as {@code pekko://Sys@10.0.0.5:7355}.
 *
 * <p>Return {@code null} when the source cannot answer now (Pekko's ask timeout): allocation
 * then falls back to the requesting region and rebalancing skips the round.
 */
public interface ShardLocations {
  /** The desired node of {@code shard}; empty when none is stored; null when unavailable. */
  Optional<String> location(String shard);

  /** Every stored location; null when unavailable. */
  Map<String, String> locations();
}
