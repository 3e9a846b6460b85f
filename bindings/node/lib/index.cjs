'use strict'
// The package entry (CommonJS): the native module plus the actor-ts-shaped strategies.

const native = require('../index.js')
const actorTs = require('./actor-ts.cjs')
require('./envelope.cjs') // the flat envelope path of the step methods
require('./inputs.cjs') // the drivers' one-input methods
require('./machines.cjs') // the machines' queries, over `op`
require('./ids.cjs') // the operations of ids and backends
require('./etcd.cjs') // etcd's operations, answering Promises
require('./state.cjs') // AllocationState's and Strategy's operations, over `op`
const functions = require('./functions.cjs')
const aio = require('./aio.cjs') // AsyncCoordinatorDriver, over CoordinatorPipeline

/** The `err.code` of every error shardline throws. */
const ErrorCode = Object.freeze({
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  NULL_POINTER: 'NULL_POINTER',
  INVALID_STATE: 'INVALID_STATE',
  NO_CANDIDATES: 'NO_CANDIDATES',
  CALLBACK_FAILED: 'CALLBACK_FAILED',
  REENTRANT_CALL: 'REENTRANT_CALL',
  PANIC: 'PANIC',
  INTERNAL: 'INTERNAL',
})

// `_setSendBuilder`, `_receive` and `_drain` are envelope.cjs's alone, `_op` ops.cjs's and functions.cjs's,
// `_checkHosts` aio.cjs's, `_allocate` and `_regionCount` state.cjs's.
const { _setSendBuilder, _receive, _drain, _op, _checkHosts, _allocate, _regionCount, ...api } = native

module.exports = { ...api, ...functions, ...aio, ...actorTs, ErrorCode }
