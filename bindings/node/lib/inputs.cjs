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
})

module.exports = { coordinatorInputs }
