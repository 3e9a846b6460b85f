'use strict'
// The coordinator on the event loop: host methods may return promises, and nothing blocks.
// An input steps the state machine and starts the host calls it needs; a promise's result
// goes back to the coordinator when it settles. A store write holds back everything the
// coordinator does after it until the write completes (the native pipeline keeps that
// rule). What each call is and how its answer is read is decided in the shared core, as for
// the synchronous CoordinatorDriver; the host objects have the same methods.

const { EventEmitter } = require('node:events')

const native = require('../index.js')
const { define } = require('./ops.cjs')
const { coordinator: queries } = require('./machines.cjs')
const { coordinatorInputs } = require('./inputs.cjs')

const monotonicMs = () => Math.floor(performance.now())

/**
 * Also an EventEmitter: every notice is emitted as `'notice'` and under its own type
 * (`'allocated'`, `'rebalanceRound'`, `'handOffTimedOut'`, ...) as it happens, and is kept
 * for `takeNotices()` as well.
 */
class AsyncCoordinatorDriver extends EventEmitter {
  /**
   * `{strategy, selfAddress, transport, lease, store, clock?, config?}`; `clock` is a function
   * or an object with `nowMs()` (monotonic milliseconds; `performance.now()` by default).
   * Calls that reject are given to `onError` (default: kept for `takeErrors()`).
   */
  constructor ({ strategy, selfAddress, transport, lease, store, clock, config, onError }) {
    super()
    native._checkHosts(transport, lease, store) // as the synchronous driver checks them
    this._pipeline = new native.CoordinatorPipeline({ strategy, selfAddress, config })
    this._hosts = { transport, lease, store }
    this._now = clock == null ? monotonicMs : typeof clock === 'function' ? clock : () => clock.nowMs()
    this._pending = new Set()
    this._errors = []
    this._notices = []
    this._onError = onError ?? ((e) => this._errors.push(e))
    this._timer = null
    this._running = false
  }

  /** Starts contending for the lease and fires the timers at their deadlines until stopped. */
  start () {
    this._running = true
    this._pipeline.start(this._now())
    this._pump()
  }

  /** Any step input (the one-input methods `member`, `stop`, ... are inputs.cjs's). */
  handle (input) {
    this._pipeline.handle(this._now(), input)
    this._pump()
  }

  receive (envelope) { this.handle({ type: 'receive', envelope }) }
  leaseLost () {
    const token = this.token
    if (token != null) this.handle({ type: 'leaseLost', token })
  }

  /** Resolves once no host call is in flight. */
  async settled () {
    while (this._pending.size > 0) await Promise.allSettled([...this._pending])
  }

  nextDeadline () { return this._pipeline.nextDeadline() }
  get inFlight () { return this._pipeline.inFlight }
  takeNotices () { const n = this._notices; this._notices = []; return n }
  takeErrors () { const e = this._errors; this._errors = []; return e }
  op (name, args) { return this._pipeline.op(name, args) }

  _pump () {
    let call
    while ((call = this._pipeline.nextCall(this._now())) !== null) {
      const [ticket, role, method, args] = call
      const host = this._hosts[role]
      const target = typeof host[method] === 'function' ? host[method].bind(host) : host
      let answer
      try {
        answer = target(...args)
      } catch (e) {
        this._failed(ticket, e)
        continue
      }
      if (answer != null && typeof answer.then === 'function') {
        const p = Promise.resolve(answer).then(
          (v) => this._answer(ticket, v),
          (e) => this._failed(ticket, e),
        ).finally(() => { this._pending.delete(p); this._pump() })
        this._pending.add(p)
      } else {
        this._answer(ticket, answer)
      }
    }
    for (const n of this._pipeline.takeNotices()) {
      this._notices.push(n)
      this.emit('notice', n)
      this.emit(n.type, n)
    }
    this._schedule()
  }

  _answer (ticket, value) {
    try {
      this._pipeline.answer(this._now(), ticket, value === undefined ? null : value)
    } catch (e) {
      this._onError(e) // the answer did not fit; the call counted as failed
    }
  }

  _failed (ticket, error) {
    this._onError(error)
    this._pipeline.fail(this._now(), ticket)
  }

  _schedule () {
    if (this._timer !== null) clearTimeout(this._timer)
    this._timer = null
    const deadline = this._pipeline.nextDeadline()
    if (!this._running || deadline === null || this.phase === 'stopped') return
    this._timer = setTimeout(() => {
      this._timer = null
      this._pipeline.onTimeout(this._now())
      this._pump()
    }, Math.max(0, deadline - this._now()))
    // The host's own sockets keep the process alive; the coordinator's timers alone do not.
    this._timer.unref()
  }
}
define(AsyncCoordinatorDriver, queries)
Object.assign(AsyncCoordinatorDriver.prototype, coordinatorInputs)

module.exports = { AsyncCoordinatorDriver }
