'use strict'
// The package entry (CommonJS): the native module plus the actor-ts-shaped strategies.

const native = require('../index.js')
const actorTs = require('./actor-ts.cjs')

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

module.exports = { ...native, ...actorTs, ErrorCode }
