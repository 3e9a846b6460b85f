'use strict'
// The coordinator's and region's queries (shardline_bind::ops::machines), by their
// JavaScript names, for the step machines and the drivers alike.

const native = require('../index.js')
const { define, shardId } = require('./ops.cjs')

const coordinator = {
  getters: { phase: 'phase', isActive: 'is_active', token: 'token' },
  methods: {
    homeOf (shard) { return this.op('home_of', [shardId(shard)]) },
    /** Registered regions in map order, with their nodes and shards (oldest first). */
    regions: 'allocations',
    metrics: 'metrics',
    handoffsInProgress: 'handoffs_in_progress',
  },
}
define(native.Coordinator, coordinator)
define(native.CoordinatorDriver, coordinator)
