'use strict'
// AllocationState's and Strategy's operations (shardline_bind::ops::{state,strategy}) by
// their JavaScript names.

const native = require('../index.js')
const { define } = require('./ops.cjs')

define(native.AllocationState, {
  getters: { selfAddress: 'self_address', shardCount: 'shard_count' },
  methods: {
    /** Adds or replaces a cluster member (matched by address). */
    upsertMember: 'upsert_member',
    /** Removes a member; true if it was known. */
    removeMember: 'remove_member',
    setReachable: 'set_reachable',
    /** The members, sorted by address. */
    members: 'members',
    /** Registers a region at the end of map order; it starts eligible, with no shards. */
    addRegion: 'add_region',
    /** Removes a region; returns its shards (now unallocated), oldest first. */
    removeRegion: 'remove_region',
    /** Whether a region may receive new shards; becoming eligible moves it to the end of candidate order. */
    setEligible: 'set_eligible',
    addShard: 'add_shard',
    /** Deallocates a shard; returns the region that held it. */
    removeShard: 'remove_shard',
    homeOf: 'home_of',
    region: 'region',
    /** Every region in map order (the order ties are broken by). */
    regions: 'regions',
    /** least-load: a shard's load (a number, or a number per dimension; default 1). */
    setShardLoad: 'set_shard_load',
    /** least-load: the tags a shard's region must have and the region it is pinned to. */
    setShardRule: 'set_shard_rule',
    /** least-load: a region's capacity (a number, or a number per dimension; default 1). */
    setRegionCapacity: 'set_region_capacity',
    setRegionTags (id, tags) { return this.op('set_region_tags', [id, [...tags]]) },
    /** least-load: at most `max` shards on the region (null: no cap). */
    setRegionMaxShards: 'set_region_max_shards',
    /** least-load: a draining region receives no shards and gives all of its shards away. */
    setRegionDraining: 'set_region_draining',
  },
})

// The two calls below are plain native functions rather than operations by name or class
// methods (src/strategy.rs says why): `regionCount` is the binding's cheapest call, `allocate`
// the one a host makes per new shard.
Object.defineProperty(native.AllocationState.prototype, 'regionCount', {
  get () { return native._regionCount(this) },
  configurable: true,
})

const listed = (inProgress) => (inProgress == null ? null : [...inProgress])

define(native.Strategy, {
  getters: { name: 'name', config: 'config' },
  methods: {
    /** Where `shard` goes: a region id, or null when the strategy decides later. */
    allocate (state, shard, requester) { return native._allocate(this, state, shard, requester) },
    rebalance (state, inProgress) { return this.op('rebalance', [state, listed(inProgress)]) },
    explainAllocate (state, shard, requester) {
      return this.op('explain_allocate', [state, shard, requester])
    },
    explainRebalance (state, inProgress) {
      return this.op('explain_rebalance', [state, listed(inProgress)])
    },
  },
})
