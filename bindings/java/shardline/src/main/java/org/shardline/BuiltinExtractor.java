package org.shardline;

/** An extractor the native region computes itself (no call back into Java per message). */
final class BuiltinExtractor implements ShardExtractor {
  final int kind;
  final int shards;

  BuiltinExtractor(int kind, int shards) {
    if (shards < 1) {
      throw new ShardlineException(
          Status.INVALID_ARGUMENT,
          (kind == 0 ? "numberOfShards" : "numShards") + " must be >= 1, got " + shards);
    }
    this.kind = kind;
    this.shards = shards;
  }

  @Override
  public String shardOf(String entityId) {
    return kind == 0
        ? Shardline.pekkoShardId(entityId, shards)
        : Integer.toString(Shardline.actorTsShardId(entityId, shards));
  }
}
