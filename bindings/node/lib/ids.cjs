'use strict'
// Worker ids, Snowflake ids and the embedded backends: their operations
// (shardline_bind::ops::ids and ::backends) by their JavaScript names. `next`, `nextId`,
// `close`, `contender` and the constructors are native.

const native = require('../index.js')
const { define } = require('./ops.cjs')

define(native.Snowflake, {
  getters: {
    waitUntilMs: 'wait_until_ms',
    worker: 'worker',
    layout: 'layout',
    budgetMs: 'budget_ms',
    floorMs: 'floor_ms',
    lastTimestampMs: 'last_timestamp_ms',
  },
  methods: { extendBudget: 'extend_budget', revoke: 'revoke' },
})

define(native.WorkerIdRegistry, {
  getters: { nowMs: 'now_ms' },
  methods: { advanceTo: 'advance_to', liveClaims: 'live_claims', fence: 'fence' },
})

define(native.WorkerIdHolder, {
  getters: {
    workerId: 'worker_id',
    epoch: 'epoch',
    floorMs: 'floor_ms',
    budgetMs: 'budget_ms',
    validUntilMs: 'valid_until_ms',
    layout: 'layout',
  },
  methods: { maintain: 'maintain', release: 'release' },
})

define(native.ManualClock, { methods: { nowMs: 'now_ms', set: 'set', advance: 'advance' } })

define(native.InMemoryLease, {
  methods: { holder: 'holder', expireNow: 'expire_now', acquire: 'acquire', renew: 'renew', release: 'release' },
})

define(native.InMemoryStore, {
  getters: { highestToken: 'highest_token' },
  methods: { contents: 'contents', append: 'append', saveSnapshot: 'save_snapshot', load: 'load' },
})
