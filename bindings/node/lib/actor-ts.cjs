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
function toState(candidates, currentShards, extra = NO_EXTRA) {
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
      const id = String(address)
      regions.push({ ...extra.nodes.get(id), id, shards: keys })
    }
  }
  return AllocationState.build({
    regions,
    candidates: Array.from(candidates ?? [], String),
    loads: Object.fromEntries(extra.loads),
    shardRules: Object.fromEntries(extra.rules),
  })
}

const NO_EXTRA = { nodes: new Map(), loads: new Map(), rules: new Map() }

class ShardlineAllocationStrategy {
  /** Wraps any shardline strategy (a Strategy, its configuration, or a custom object). */
  constructor(strategy) {
    this.strategy = strategy instanceof Strategy ? strategy : new Strategy(strategy)
    this.extra = NO_EXTRA
  }

  /**
   * Returns the element of `candidates` (the same object) that should host `shardId`.
   * Throws (code NO_CANDIDATES) when `candidates` is empty; returns undefined when the
   * strategy decides later.
   */
  allocate(shardId, candidates, currentShards) {
    const list = Array.from(candidates ?? [])
    const region = this.strategy.allocate(toState(list, currentShards, this.extra), toKey(shardId))
    if (region === null) return undefined
    return list.find((c) => String(c) === region)
  }

  /** The shards to hand off, as a Set in decision order (numbers for numeric ids). */
  rebalance(currentShards, candidates, rebalanceInProgress) {
    const inProgress = Array.from(rebalanceInProgress ?? [], toKey)
    const picked = this.strategy.rebalance(toState(candidates, currentShards, this.extra), inProgress)
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

/**
 * shardline's least-load in actor-ts's shape: least-shard generalised to the per-shard loads
 * and per-node capacities, tags and limits the host reports (actor-ts hands a strategy only
 * the allocation map, so they are set here). Utilisation is load / capacity, the maximum over
 * dimensions. With nothing reported it decides exactly as Pekko's
 * `LeastShardAllocationStrategy(absoluteLimit, relativeLimit)`.
 */
class LeastLoadAllocationStrategy extends ShardlineAllocationStrategy {
  constructor({ absoluteLimit = 20, relativeLimit = 0.1, band = 0.05, maxLoadMoved } = {}) {
    const budget = maxLoadMoved === undefined ? {} : { maxLoadMoved }
    super({ kind: 'least-load', absoluteLimit, relativeLimit, band, ...budget })
    this.extra = { nodes: new Map(), loads: new Map(), rules: new Map() }
  }

  /** A shard's load: a number or a number per dimension; null goes back to the default 1. */
  setLoad(shardId, load) {
    setOrDelete(this.extra.loads, toKey(shardId), load)
  }

  /** A node's `{capacity, tags, maxShards, draining}`; null goes back to the defaults. */
  setNode(address, profile) {
    setOrDelete(this.extra.nodes, String(address), profile && { ...profile })
  }

  /** Where a shard may live: `{tags, pin}` (pin: a node address); null removes the rule. */
  setRule(shardId, rule) {
    setOrDelete(this.extra.rules, toKey(shardId), rule && { ...rule })
  }
}

function setOrDelete(map, key, value) {
  if (value == null) map.delete(key)
  else map.set(key, value)
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
  LeastLoadAllocationStrategy,
  PekkoLeastShardAllocationStrategy,
  PekkoLegacyLeastShardAllocationStrategy,
  ConsistentHashingShardAllocationStrategy,
}
