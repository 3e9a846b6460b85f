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

  /** As the native side reads it: {@code {"kind": "pekko", "numberOfShards": n}} or actor-ts's. */
  String description() {
    return kind == 0
        ? "{\"kind\": \"pekko\", \"numberOfShards\": " + shards + "}"
        : "{\"kind\": \"actor-ts\", \"numShards\": " + shards + "}";
  }

  @Override
  public String shardOf(String entityId) {
    return kind == 0
        ? Shardline.pekkoShardId(entityId, shards)
        : Integer.toString(Shardline.actorTsShardId(entityId, shards));
  }
}
