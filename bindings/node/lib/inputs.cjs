'use strict'
// The callback drivers' one-input methods: each is a step input by another name, handed to
// the native `handle(input)` (or, for an envelope, the flat path of envelope.cjs).

const native = require('../index.js')
const { shardId } = require('./ops.cjs')

/** The coordinator's one-input methods, for any object with `handle(input)`. */
const coordinatorInputs = {
  /** A cluster member joined or changed. */
  member (member) { this.handle({ type: 'member', member }) },
  memberRemoved (address) { this.handle({ type: 'memberRemoved', address }) },
  reachability (address, reachable) { this.handle({ type: 'reachability', address, reachable }) },
  /** A region or proxy stopped while its node stays in the cluster. */
  regionTerminated (region) { this.handle({ type: 'regionTerminated', region }) },
  preparingForShutdown () { this.handle({ type: 'preparingForShutdown' }) },
  /** Stops coordinating and releases the lease. */
  stop () { this.handle({ type: 'stop' }) },
  /** A planned shutdown of `region`: least-load moves its shards away within its budget. */
  drain (region) { this.handle({ type: 'drain', region }) },
  undrain (region) { this.handle({ type: 'undrain', region }) },
}
Object.assign(native.CoordinatorDriver.prototype, coordinatorInputs)

Object.assign(native.RegionDriver.prototype, {
  /** The host finished stopping a shard whose `stopShard` returned false. */
  shardStopped (shard) { this.handle({ type: 'shardStopped', shard: shardId(shard) }) },
  entityPassivated (shard, entity) { this.handle({ type: 'entityPassivated', shard: shardId(shard), entity }) },
  /** The coordinator moved (or may have): register again. */
  coordinatorChanged () { this.handle({ type: 'coordinatorChanged' }) },
  /** Another region died: forget the homes it had. */
  regionTerminated (region) { this.handle({ type: 'regionTerminated', region }) },
  /** Hands every shard off, then calls the host's `stopped`. */
  gracefulShutdown () { this.handle({ type: 'gracefulShutdown' }) },
  /** What the host measured: shard id to a number, or to a number per dimension. */
  reportLoads (loads) { this.handle({ type: 'reportLoads', loads }) },
  /** The region's capacity, tags or shard cap changed (the whole offer). */
  updateOffer (offer) { this.handle({ type: 'updateOffer', offer }) },
})

module.exports = { coordinatorInputs }
