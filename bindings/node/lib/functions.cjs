'use strict'
// The library's functions (shardline_bind::ops::functions) by their JavaScript names.

const { _op } = require('../index.js')
const op = (name, args) => _op(null, name, args)

module.exports = {
  /** Pekko `HashCodeMessageExtractor`: `abs(entityId.hashCode % numberOfShards)`, as a string. */
  pekkoShardId: (entityId, numberOfShards) => op('pekko_shard_id', [entityId, numberOfShards]),
  /** actor-ts `hashShardId`: `Math.abs(fnv1a32(entityId)) % numShards`. */
  actorTsShardId: (entityId, numShards) => op('actor_ts_shard_id', [entityId, numShards]),
  /** Pekko `MurmurHash.stringHash` (the consistent-hashing ring's hash), a signed 32-bit int. */
  pekkoStringHash: (text) => op('murmur_string_hash', [text]),
  /** Decides one conformance vector (or an array of them) exactly like `shardline decide`. */
  decide: (vector, options) => op('decide', [vector, options?.explain]),
  /** `decide` on JSON text, returning JSON text (byte for byte what the CLI prints). */
  decideJson: (json, explain) => op('decide_json', [json, explain]),
  /**
   * Replays a state-machine trace (JSON lines, tests/traces/README.md) on fresh machines and
   * checks every output: `{steps, mismatches, first}`.
   */
  replay: (text) => op('replay', [text]),
  /** Splits an id into its Unix millisecond, worker and sequence. */
  decomposeSnowflake: (id, layout) => op('decompose_snowflake', [id, layout]),
}
