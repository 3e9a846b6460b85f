package org.shardline;

/**
 * Stateless entry points: conformance decisions, trace replay, entity -> shard functions, the
 * version.
 */
public final class Shardline {
  static {
    NativeLibrary.load();
  }

  private Shardline() {}

  /** {@code shardline/<semver>} of the native library (always the jar's own version). */
  public static String version() {
    return NativeLibrary.nVersion();
  }

  /**
   * Decides one conformance vector (a JSON object) or each of a JSON array of them, exactly as
   * {@code shardline decide} does; schema in {@code tests/vectors/README.md}. Returns a result
   * object ({@code {"region"}}, {@code {"pending": true}}, {@code {"error": "no-candidates"}},
   * {@code {"shards", "shardsInOrder"}} or {@code {"order"}}), or an array of them.
   *
   * @throws ShardlineException {@link Status#INVALID_ARGUMENT} naming the vector and field
   */
  public static String decide(String json) {
    return op("decide_json", json, false);
  }

  /** As {@link #decide(String)}, each result with an {@code "explanation"}. */
  public static String decide(String json, boolean explain) {
    return op("decide_json", json, explain);
  }

  /**
   * Replays a state-machine trace (JSON lines, as {@code shardline sim --record} writes it;
   * format in {@code tests/traces/README.md}) on fresh coordinator and region machines and
   * checks that every output is the same, exactly as {@code shardline replay} does. Returns
   * {@code {"steps": N, "mismatches": M, "first": null | {...}}}, {@code first} naming the
   * first step that differs (step, line, machine, now, input, expected, actual). A mismatch is
   * a result, not an exception.
   *
   * @throws ShardlineException {@link Status#INVALID_ARGUMENT} for a trace that cannot be read
   *     (not JSON, another format version, an unknown machine, a malformed input), naming the
   *     line and field
   */
  public static String replay(String trace) {
    return op("replay_json", trace);
  }

  /** Pekko's {@code HashCodeMessageExtractor} shard id: {@code abs(entityId.hashCode % n)}. */
  public static String pekkoShardId(String entityId, int numberOfShards) {
    return op("pekko_shard_id", entityId, numberOfShards);
  }

  /** actor-ts {@code hashShardId(entityId, numShards)}. */
  public static int actorTsShardId(String entityId, int numShards) {
    return Shardline.<Long>op("actor_ts_shard_id", entityId, numShards).intValue();
  }

  /** Pekko's {@code MurmurHash.stringHash} (the consistent-hash ring's hash), bit for bit. */
  public static int murmurStringHash(String s) {
    return Shardline.<Long>op("murmur_string_hash", s).intValue();
  }

  /** A function of the native ops::functions by name; the caller gives the answer its type. */
  @SuppressWarnings("unchecked")
  private static <T> T op(String name, Object... args) {
    return (T) nOp(name, args);
  }

  private static native Object nOp(String op, Object[] args);

  /** An envelope written by Envelope.toJson in its native form (see Envelope.flat). */
  static native byte[] nParseEnvelope(String json);

  /** The native form of an envelope made from its message: region ids, null for the coordinator. */
  static native byte[] nFlatten(String from, String to, String message);

  static native String nMessageJson(byte[] flat);

  /** The address of a direct buffer (see Rows.Scratch). */
  static native long nAddress(java.nio.ByteBuffer buffer);

  /** Test hook: panics inside the native library. */
  static native void nPanicForTest();
}
