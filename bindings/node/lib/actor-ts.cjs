'use strict'
// Strategy objects with actor-ts's AllocationStrategy shape, so shardline's decisions can be
// passed to actor-ts as `allocationStrategy`. Each call rebuilds the allocation map from the
// arguments (actor-ts hands over the whole picture every time) and asks the native strategy.
//
// They decide as actor-ts's own strategies do, with one difference: the least-shard rebalance
// threshold is strict (`max - min > threshold`), because actor-ts's `>=` with the default
// threshold 1 hands the same shards off and back forever (the bug Akka fixed in akka#26012).
// Node addresses sort as actor-ts's `NodeAddress.compareTo` sorts them, `localeCompare` (ICU
// root collation, computed in the Rust core): `s@10.0.0.1:2552` < `s@10.0.0.10:2552`, `a` <
// `B`, and addresses localeCompare calls equal keep candidate order, as actor-ts's stable sort
// does. test/actor-ts-order.test.mjs checks that order against this Node's localeCompare.

const { AllocationState, Strategy } = require('../index.js')

const CANONICAL_INT = /^(0|[1-9][0-9]*)$/

// actor-ts shard ids are numbers; the core's are their decimal strings.
function toKey(shardId) {
  return typeof shardId === 'number' ? String(shardId) : shardId
}

function fromKey(key) {
  return CANONICAL_INT.test(key) && Number.isSafeInteger(Number(key)) ? Number(key) : key
}

/**
 * The allocation map as actor-ts describes it: `currentShards` maps node address strings to
 * Sets of shard ids (every node, candidate or not), `candidates` are the nodes that may take
 * shards, in registration order. A shard listed under two nodes (possible in actor-ts after
 * a hand-off timeout) is counted on the first only.
 */
function toState(candidates, currentShards) {
  const seen = new Set()
  const regions = []
  if (currentShards) {
    for (const [address, shards] of currentShards) {
      const keys = []
      for (const s of shards ?? []) {
        const k = toKey(s)
        if (!seen.has(k)) {
          seen.add(k)
          keys.push(k)
        }
      }
      regions.push({ id: String(address), shards: keys })
    }
  }
  return AllocationState.build({ regions, candidates: Array.from(candidates ?? [], String) })
}

class ShardlineAllocationStrategy {
  /** Wraps any shardline strategy (a Strategy, its configuration, or a custom object). */
  constructor(strategy) {
    this.strategy = strategy instanceof Strategy ? strategy : new Strategy(strategy)
  }

  /**
   * Returns the element of `candidates` (the same object) that should host `shardId`.
   * Throws (code NO_CANDIDATES) when `candidates` is empty; returns undefined when the
   * strategy decides later.
   */
  allocate(shardId, candidates, currentShards) {
    const list = Array.from(candidates ?? [])
    const region = this.strategy.allocate(toState(list, currentShards), toKey(shardId))
    if (region === null) return undefined
    return list.find((c) => String(c) === region)
  }

  /** The shards to hand off, as a Set in decision order (numbers for numeric ids). */
  rebalance(currentShards, candidates, rebalanceInProgress) {
    const inProgress = Array.from(rebalanceInProgress ?? [], toKey)
    const picked = this.strategy.rebalance(toState(candidates, currentShards), inProgress)
    return new Set(picked.map(fromKey))
  }
}

/** actor-ts `HashAllocationStrategy`: `sorted(candidates)[shardId % n]`, sorted by `localeCompare`. */
class HashAllocationStrategy extends ShardlineAllocationStrategy {
  constructor() {
    super({ kind: 'actor-ts-hash' })
  }
}

/**
 * actor-ts `LeastShardAllocationStrategy(rebalanceThreshold = 1, maxSimultaneousRebalance = 3)`,
 * with a strict threshold (actor-ts's `>=` hands the same shards back and forth forever).
 */
class LeastShardAllocationStrategy extends ShardlineAllocationStrategy {
  constructor(rebalanceThreshold = 1, maxSimultaneousRebalance = 3) {
    super({ kind: 'actor-ts-least-shard', rebalanceThreshold, maxSimultaneousRebalance })
  }
}

/** Pekko/Akka 2.6 `LeastShardAllocationStrategy(absoluteLimit, relativeLimit)`. */
class PekkoLeastShardAllocationStrategy extends ShardlineAllocationStrategy {
  constructor(absoluteLimit = 20, relativeLimit = 0.1) {
    super({ kind: 'least-shard', absoluteLimit, relativeLimit })
  }
}

/** Pekko's default `ShardCoordinator.LeastShardAllocationStrategy(rebalanceThreshold, maxSimultaneousRebalance)`. */
class PekkoLegacyLeastShardAllocationStrategy extends ShardlineAllocationStrategy {
  constructor(rebalanceThreshold = 1, maxSimultaneousRebalance = 3) {
    super({ kind: 'least-shard-legacy', rebalanceThreshold, maxSimultaneousRebalance })
  }
}

/** Pekko `ConsistentHashingShardAllocationStrategy(rebalanceLimit)`. */
class ConsistentHashingShardAllocationStrategy extends ShardlineAllocationStrategy {
  constructor(rebalanceLimit = 10, virtualNodesFactor = 10) {
    super({ kind: 'consistent-hashing', rebalanceLimit, virtualNodesFactor })
  }
}

module.exports = {
  ShardlineAllocationStrategy,
  HashAllocationStrategy,
  LeastShardAllocationStrategy,
  PekkoLeastShardAllocationStrategy,
  PekkoLegacyLeastShardAllocationStrategy,
  ConsistentHashingShardAllocationStrategy,
}
