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
 * What both drivers do on the event loop: the clock, the host promises still pending and the
 * errors they ended in, the notices (emitted as `'notice'` and under their own type, and kept
 * for `takeNotices()`), and the one timer at the next deadline.
 */
class OnTheLoop extends EventEmitter {
  constructor (clock, onError) {
    super()
    this._now = clock == null ? monotonicMs : typeof clock === 'function' ? clock : () => clock.nowMs()
    this._pending = new Set()
    this._errors = []
    this._notices = []
    this._onError = onError ?? ((e) => this._errors.push(e))
    this._timer = null
    this._running = false
  }

  /** Resolves once no host call is in flight. */
  async settled () {
    while (this._pending.size > 0) await Promise.allSettled([...this._pending])
  }

  takeNotices () { const n = this._notices; this._notices = []; return n }
  takeErrors () { const e = this._errors; this._errors = []; return e }

  _emitNotices (notices) {
    for (const n of notices) {
      this._notices.push(n)
      this.emit('notice', n)
      this.emit(n.type, n)
    }
  }

  /** Runs `fire` at `deadline` (replacing the timer set before), while running. */
  _arm (deadline, fire) {
    if (this._timer !== null) clearTimeout(this._timer)
    this._timer = null
    if (!this._running || deadline === null) return
    this._timer = setTimeout(() => {
      this._timer = null
      fire()
    }, Math.max(0, deadline - this._now()))
    // The host's own sockets keep the process alive; the drivers' timers alone do not.
    this._timer.unref()
  }
}

/**
 * Also an EventEmitter: every notice is emitted as `'notice'` and under its own type
 * (`'allocated'`, `'rebalanceRound'`, `'handOffTimedOut'`, ...) as it happens, and is kept
 * for `takeNotices()` as well.
 */
class AsyncCoordinatorDriver extends OnTheLoop {
  /**
   * `{strategy, selfAddress, transport, lease, store, clock?, config?}`; `clock` is a function
   * or an object with `nowMs()` (monotonic milliseconds; `performance.now()` by default).
   * Calls that reject are given to `onError` (default: kept for `takeErrors()`).
   */
  constructor ({ strategy, selfAddress, transport, lease, store, clock, config, onError }) {
    native._checkHosts(transport, lease, store) // as the synchronous driver checks them
    super(clock, onError)
    this._pipeline = new native.CoordinatorPipeline({ strategy, selfAddress, config })
    this._hosts = { transport, lease, store }
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

  nextDeadline () { return this._pipeline.nextDeadline() }
  get inFlight () { return this._pipeline.inFlight }
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
    this._emitNotices(this._pipeline.takeNotices())
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
    const deadline = this.phase === 'stopped' ? null : this._pipeline.nextDeadline()
    this._arm(deadline, () => {
      this._pipeline.onTimeout(this._now())
      this._pump()
    })
  }
}
define(AsyncCoordinatorDriver, queries)
Object.assign(AsyncCoordinatorDriver.prototype, coordinatorInputs)

const isPromise = (v) => v != null && typeof v.then === 'function'

/**
 * A region on the event loop: the RegionDriver, whose transport and entity-host methods may
 * return promises, with its timers fired at their deadlines after `start()`. A promise runs on
 * by itself and its rejection goes to `onError`; a `stopShard` that returns a promise counts as
 * "not stopped yet", and the region is told the shard stopped when it resolves (unless to
 * false, which leaves `shardStopped` to you). Also an EventEmitter of the region's notices,
 * as AsyncCoordinatorDriver is of the coordinator's.
 */
class AsyncRegionDriver extends OnTheLoop {
  /** The RegionDriver's options, and `onError` (default: kept for `takeErrors()`). */
  constructor ({ transport, host, clock, onError, ...options }) {
    super(clock, onError)
    const send = typeof transport === 'function' ? transport : transport?.send?.bind(transport)
    this._driver = new native.RegionDriver({
      ...options,
      clock: this._now, // one clock for the driver and for the timers' delays
      transport: send == null ? transport : (envelope) => this._detach(send(envelope)),
      host: host == null ? host : this._host(host),
    })
  }

  /** Registers with the coordinator and fires the timers at their deadlines from now on. */
  start () {
    this._running = true
    this._step(() => this._driver.start())
  }

  /** Stops the timers and frees the region (see RegionDriver's `close`); idempotent. */
  close () {
    this._running = false
    if (this._timer !== null) clearTimeout(this._timer)
    this._timer = null
    this._driver.close()
  }

  /** The entity host as the synchronous driver sees it. */
  _host (host) {
    const wrapped = Object.create(host)
    for (const method of ['startShard', 'startEntities', 'deliver', 'undeliverable', 'stopped']) {
      if (typeof host[method] === 'function') {
        wrapped[method] = (...args) => this._detach(host[method](...args))
      }
    }
    if (typeof host.stopShard === 'function') {
      wrapped.stopShard = (shard) => {
        const answer = host.stopShard(shard)
        if (!isPromise(answer)) return answer
        this._detach(answer, (done) => { if (done !== false) this.shardStopped(shard) })
        return false
      }
    }
    return wrapped
  }

  /** A promise runs on by itself; anything else is the answer. */
  _detach (answer, then) {
    if (!isPromise(answer)) return answer
    const p = Promise.resolve(answer).then(then, (e) => this._onError(e))
      .finally(() => this._pending.delete(p))
    this._pending.add(p)
    return undefined
  }

  /** Runs one call of the driver, then hands out its notices and looks at the timers again. */
  _step (call) {
    try {
      return call()
    } finally {
      this._emitNotices(this._driver.takeNotices())
      this._arm(this._driver.nextDeadline(), () => this._step(() => this._driver.poll()))
    }
  }
}

// Every other method of the RegionDriver: inputs step it through `_step`, queries read it.
for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(native.RegionDriver.prototype))) {
  if (name === 'constructor' || name in AsyncRegionDriver.prototype) continue
  if (typeof d.get === 'function') {
    Object.defineProperty(AsyncRegionDriver.prototype, name, { get () { return this._driver[name] }, configurable: true })
  } else if (typeof d.value === 'function') {
    Object.defineProperty(AsyncRegionDriver.prototype, name, {
      value (...args) { return this._step(() => this._driver[name](...args)) },
      writable: true,
      configurable: true,
    })
  }
}

module.exports = { AsyncCoordinatorDriver, AsyncRegionDriver }
