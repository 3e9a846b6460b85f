package org.shardline;

/** Entity id to shard id, for a {@link Region}. */
@FunctionalInterface
public interface ShardExtractor {
  String shardOf(String entityId);

  /** Pekko's {@code HashCodeMessageExtractor}: {@code abs(entityId.hashCode % n)}. */
  static ShardExtractor pekko(int numberOfShards) {
    return new BuiltinExtractor(0, numberOfShards);
  }

  /** actor-ts {@code hashShardId}: {@code abs(fnv1a32(entityId)) % n}. */
  static ShardExtractor actorTs(int numShards) {
    return new BuiltinExtractor(1, numShards);
  }
}
