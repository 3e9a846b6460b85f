'use strict'
// The coordinator's and region's queries (shardline_bind::ops::machines), by their
// JavaScript names, for the step machines and the drivers alike, and the calls that move
// each on besides its inputs (shardline_bind::ops::steps).

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

// The calls that move a machine on besides its inputs, and what a driver or the pipeline
// reports beyond its machine's queries (shardline_bind::ops::steps).
const steps = {
  methods: {
    start: 'start',
    /** Runs every timer due at `nowMs`. */
    onTimeout: 'on_timeout',
    /** When to call `onTimeout` next, or null. */
    nextDeadline: 'next_deadline',
  },
}
define(native.Coordinator, steps)
define(native.Region, steps)
define(native.CoordinatorPipeline, {
  /** Calls handed out and not answered yet. */
  getters: { inFlight: 'in_flight' },
  methods: {
    ...steps.methods,
    /** The next host call, `[ticket, role, method, args]`, or null while there is none. */
    nextCall: 'next_call',
    /** What call `ticket` resolved to. */
    answer: 'answer',
    /** Call `ticket` rejected; the caller keeps the reason. */
    fail: 'fail',
    takeNotices: 'take_notices',
  },
})
const driver = {
  methods: {
    /** Starts the driver: contends for the lease, or registers with the coordinator. */
    start: 'start',
    /** Runs every timer that is due; returns when to call again (or null). */
    poll: 'poll',
    nextDeadline: 'next_deadline',
    /** Notices since the last call (activation, hand-offs, refusals, ...). */
    takeNotices: 'take_notices',
  },
}
define(native.CoordinatorDriver, driver)
define(native.RegionDriver, driver)
/** The lease backend reports the current grant lost. */
define(native.CoordinatorDriver, { methods: { leaseLost: 'lease_lost' } })

// `close()` frees a machine (a driver's too: call `stop()` first for a clean hand-over) and
// forgets its callbacks; idempotent.
for (const cls of [native.Coordinator, native.CoordinatorDriver, native.CoordinatorPipeline, native.Region, native.RegionDriver]) {
  define(cls, { methods: { close: 'close' } })
}
