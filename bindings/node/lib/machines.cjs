'use strict'
// The coordinator's and region's queries (shardline_bind::ops::machines), by their
// JavaScript names, for the step machines and the drivers alike, and the drivers' and the
// pipeline's own operations (shardline_bind::ops::drivers).

const native = require('../index.js')
const { define, shardId } = require('./ops.cjs')

const coordinator = {
  getters: { phase: 'phase', isActive: 'is_active', token: 'token', config: 'config' },
  methods: {
    homeOf (shard) { return this.op('home_of', [shardId(shard)]) },
    /** Registered regions in map order, with their nodes and shards (oldest first). */
    regions: 'allocations',
    metrics: 'metrics',
    handoffsInProgress: 'handoffs_in_progress',
    isAlive: 'is_alive',
    shardsOf: 'shards_of',
    unallocated: 'unallocated',
    snapshot: 'snapshot',
  },
}
define(native.Coordinator, coordinator)
define(native.CoordinatorDriver, coordinator)
define(native.CoordinatorPipeline, coordinator)

module.exports = { coordinator }

const region = {
  getters: { id: 'id', isRegistered: 'is_registered', buffered: 'buffered' },
  methods: {
    /** Shards hosted here (in any state), sorted. */
    localShards: 'local_shards',
    /** Shards hosted here and accepting messages, sorted. */
    runningShards: 'running_shards',
    homeOf (shard) { return this.op('home_of', [shardId(shard)]) },
    bufferedFor (shard) { return this.op('buffered_for', [shardId(shard)]) },
    /** The fencing token and version of the newest directive seen for `shard`, or null. */
    latestStamp (shard) { return this.op('latest_stamp', [shardId(shard)]) },
    metrics: 'metrics',
  },
}
define(native.Region, region)
define(native.RegionDriver, region)

const driver = {
  methods: {
    /** Starts the driver: contends for the lease, or registers with the coordinator. */
    start: 'start',
    nextDeadline: 'next_deadline',
    /** Notices since the last call (activation, hand-offs, refusals, ...). */
    takeNotices: 'take_notices',
  },
}
define(native.CoordinatorDriver, driver)
define(native.RegionDriver, driver)
/** The lease backend reports the current grant lost. */
define(native.CoordinatorDriver, { methods: { leaseLost: 'lease_lost' } })
define(native.CoordinatorPipeline, {
  /** Calls handed out and not answered yet. */
  getters: { inFlight: 'in_flight' },
  methods: { takeNotices: 'take_notices' },
})

// `close()` frees a machine (a driver's too: call `stop()` first for a clean hand-over) and
// forgets its callbacks; idempotent.
for (const cls of [native.Coordinator, native.CoordinatorDriver, native.CoordinatorPipeline, native.Region, native.RegionDriver]) {
  define(cls, { methods: { close: 'close' } })
}
