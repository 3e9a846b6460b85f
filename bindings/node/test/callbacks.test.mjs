// Errors and callbacks: err.code names the status, values thrown by callbacks come back
// unchanged from the call that ran them, re-entrancy is refused, closed objects stay closed.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { AllocationState, Strategy, Coordinator, CoordinatorDriver, RegionDriver, ManualClock, ErrorCode, WorkerIdRegistry, WorkerIdHolder } from 'shardline'
import { Cluster, node } from './cluster.mjs'
import { thrown } from './helpers.mjs'

const twoRegions = () =>
  AllocationState.build({
    regions: [
      { id: 'a', address: node(1), shards: ['1', '2', '3'] },
      { id: 'b', address: node(2) },
    ],
  })

test('err.code carries the status name', () => {
  const s = new AllocationState()
  assert.equal(thrown(() => s.addRegion('r', 'not an address!@')).code, ErrorCode.INVALID_ARGUMENT)
  assert.equal(thrown(() => s.addShard('r', 1)).code, 'INVALID_STATE')
  assert.equal(thrown(() => s.addRegion(undefined, node(1))).code, 'NULL_POINTER')
  assert.equal(thrown(() => s.addRegion(42, node(1))).code, 'INVALID_ARGUMENT')
  assert.equal(thrown(() => new Strategy({ kind: 'actor-ts-hash' }).allocate(s, 1)).code, 'NO_CANDIDATES')
  assert.equal(thrown(() => new Strategy({ kind: 'least-shard', relativeLimit: 5 })).code, 'INVALID_ARGUMENT')
  assert.equal(thrown(() => new Strategy({ kind: 'nope' })).code, 'INVALID_ARGUMENT')
  const e = thrown(() => new Strategy({ kind: 'actor-ts-hash' }).allocate(s, -3))
  assert.ok(e instanceof Error)
  assert.equal(e.code, 'INVALID_ARGUMENT')
  assert.match(e.message, /shard/)
  assert.deepEqual(Object.keys(ErrorCode).sort(), [
    'CALLBACK_FAILED', 'INTERNAL', 'INVALID_ARGUMENT', 'INVALID_STATE', 'NO_CANDIDATES', 'NULL_POINTER', 'PANIC', 'REENTRANT_CALL',
  ])
})

test('a custom strategy decides, and sees a read-only view valid only during its call', () => {
  let kept
  const seen = []
  const s = new Strategy({
    name: 'emptiest',
    allocate(state, shard, requester) {
      kept = state
      seen.push([shard, requester])
      const rs = state.regions().filter((r) => r.eligible)
      rs.sort((x, y) => x.shards.length - y.shards.length)
      return rs[0]?.id ?? null
    },
    rebalance(state, inProgress) {
      return state.region('a').shards.filter((x) => !inProgress.includes(x)).slice(0, 1)
    },
  })
  const st = twoRegions()
  assert.equal(s.name, 'emptiest')
  assert.equal(s.config, null)
  assert.equal(s.allocate(st, 9, 'a'), 'b')
  assert.deepEqual(seen, [['9', 'a']])
  assert.deepEqual(s.rebalance(st, ['1']), ['2'])
  assert.equal(thrown(() => kept.regions()).code, 'INVALID_STATE')
  const ex = s.explainAllocate(st, '4')
  assert.equal(ex.region, 'b')
  assert.equal(ex.explanation.strategy, 'emptiest')
  assert.equal(thrown(() => s.allocate(st, '5', null) && kept.addShard('a', '7')).code, 'REENTRANT_CALL')
})

test('custom strategy answers that do not fit fail the call', () => {
  const st = twoRegions()
  const unknownRegion = new Strategy({ allocate: () => 'zzz' })
  assert.equal(thrown(() => unknownRegion.allocate(st, '1')).code, 'INVALID_STATE')
  const wrongType = new Strategy({ allocate: () => 42 })
  assert.equal(thrown(() => wrongType.allocate(st, '1')).code, 'CALLBACK_FAILED')
  const badPick = new Strategy({ allocate: () => null, rebalance: () => ['99'] })
  assert.equal(badPick.allocate(st, '1'), null)
  assert.equal(thrown(() => badPick.rebalance(st)).code, 'INVALID_STATE')
  const twice = new Strategy({ allocate: () => null, rebalance: () => new Set(['1', 1]) })
  assert.equal(thrown(() => twice.rebalance(st)).code, 'INVALID_STATE')
})

test('values thrown by callbacks propagate unchanged, whatever they are', () => {
  const st = twoRegions()
  for (const value of [new TypeError('boom'), 42, 'text', { custom: true }, null, undefined]) {
    const s = new Strategy({
      allocate() {
        throw value
      },
    })
    let caught = 'nothing'
    try {
      s.allocate(st, '1')
    } catch (e) {
      caught = e
    }
    assert.equal(caught, value)
  }
})

test('an exception in a coordinator callback leaves the call after it was carried out', () => {
  const boom = new Error('transport down')
  const wire = []
  let fail = true
  const c = new Cluster()
  const r = c.addRegion('a', 1)
  c.coordinator.start()
  // A region whose transport throws once: the region still registers its buffered state.
  const flaky = new RegionDriver({
    id: 'f',
    node: node(3),
    extractor: { kind: 'actor-ts', numShards: 4 },
    transport: (e) => {
      if (fail) throw boom
      wire.push(e)
    },
    host: c.host('f'),
  })
  assert.equal(thrown(() => flaky.start()), boom)
  fail = false
  flaky.route('e', 'kept') // buffered: home unknown
  assert.equal(flaky.buffered, 1)
  r.start()
  c.pump()

  // A custom strategy that throws inside the coordinator's call: the coordinator records an
  // allocation failure, and the JavaScript caller gets the very exception.
  const err = new RangeError('no room')
  const co = new Coordinator({
    strategy: {
      allocate() {
        throw err
      },
    },
    selfAddress: node(0),
  })
  co.start(0)
  const grant = { type: 'leaseGranted', token: 1, validUntilMs: 60_000 }
  co.drainOutputs()
  co.handle(0, grant)
  co.drainOutputs()
  co.handle(0, { type: 'stateLoaded', state: { snapshot: null, events: [] } })
  co.handle(0, { type: 'member', member: { address: node(1) } })
  co.handle(0, { type: 'receive', envelope: { from: { region: 'r' }, to: 'coordinator', message: { command: { type: 'register', node: node(1) } } } })
  co.drainOutputs()
  const ask = { type: 'receive', envelope: { from: { region: 'r' }, to: 'coordinator', message: { command: { type: 'getShardHome', shard: '1' } } } }
  assert.equal(thrown(() => co.handle(0, ask)), err)
  const notices = co.drainOutputs().filter((o) => o.type === 'notice').map((o) => o.notice.type)
  assert.deepEqual(notices, ['allocationFailed'])
})

test('exceptions from the host, clock and extractor propagate too', () => {
  const c = new Cluster()
  const err = new Error('host broke')
  let broken = true
  const a = c.addRegion('a', 1, {
    startShard() {
      if (broken) throw err
    },
    deliver() {},
    stopShard: () => true,
  })
  a.start()
  c.coordinator.start()
  c.pump()
  a.route('s-1', 'x')
  let caught
  try {
    c.pump()
  } catch (e) {
    caught = e
  }
  assert.equal(caught, err)

  const clockErr = new Error('clock broke')
  const r = new RegionDriver({
    id: 'z',
    node: node(5),
    extractor: () => {
      throw 'no shard'
    },
    transport: () => {},
    clock: () => {
      throw clockErr
    },
    host: c.host('z'),
  })
  assert.equal(thrown(() => r.start()), clockErr)
  assert.equal(thrown(() => r.shardOf('x')), 'no shard')
  const bad = new RegionDriver({ id: 'y', node: node(6), extractor: () => ({}), transport: () => {}, clock: { nowMs: () => 5 }, host: c.host('y') })
  assert.equal(thrown(() => bad.route('x', 'p')).code, 'CALLBACK_FAILED')
})

test('re-entrant calls are refused with REENTRANT_CALL', () => {
  const st = twoRegions()
  const s = new Strategy({
    allocate(state, shard) {
      return s.allocate(state, shard)
    },
  })
  const e = thrown(() => s.allocate(st, '1'))
  assert.equal(e.code, 'REENTRANT_CALL')

  let inner
  const wire = []
  const d = new RegionDriver({
    id: 'a',
    node: node(1),
    extractor: { kind: 'actor-ts', numShards: 4 },
    transport: (env) => {
      wire.push(env)
      try {
        d.isRegistered // even a query
      } catch (err) {
        inner = err
      }
    },
    clock: new ManualClock(0),
    host: { startShard() {}, deliver() {}, stopShard: () => true },
  })
  d.start()
  assert.equal(inner?.code, 'REENTRANT_CALL')
  // The shared handle rule's wording, the same in every language: it names the object.
  assert.match(inner.message, /RegionDriver was called from one of its own callbacks/)
  assert.equal(wire.length, 1)

  const state = twoRegions()
  const mutating = new Strategy({
    allocate() {
      state.addShard('a', '77')
    },
  })
  assert.equal(thrown(() => mutating.allocate(state, '8')).code, 'REENTRANT_CALL')
})

test('closed objects refuse calls and forget their callbacks; close is idempotent', () => {
  const c = new Cluster()
  const r = c.addRegion('a', 1)
  r.close()
  r.close()
  assert.equal(thrown(() => r.start()).code, 'INVALID_STATE')
  assert.equal(Object.getOwnPropertyNames(r).length, 0)
  c.coordinator.close()
  assert.equal(thrown(() => c.coordinator.poll()).code, 'INVALID_STATE')
  const co = new Coordinator({ strategy: { allocate: () => null }, selfAddress: node(0) })
  co.close()
  assert.equal(thrown(() => co.start(0)).code, 'INVALID_STATE')
})

test('options are checked up front', () => {
  const base = { id: 'a', node: node(1), extractor: { kind: 'actor-ts', numShards: 4 }, transport: () => {} }
  assert.equal(thrown(() => new RegionDriver(base)).code, 'NULL_POINTER')
  assert.equal(thrown(() => new RegionDriver({ ...base, host: { deliver() {} } })).code, 'INVALID_ARGUMENT')
  assert.equal(thrown(() => new RegionDriver({ ...base, extractor: { kind: 'x' }, host: {} })).code, 'INVALID_ARGUMENT')
  assert.equal(thrown(() => new Coordinator({ strategy: { kind: 'least-shard' }, selfAddress: node(0), config: { handoffTimeoutMs: 0 } })).code, 'INVALID_ARGUMENT')
  assert.equal(thrown(() => new Coordinator({ strategy: { kind: 'least-shard' }, selfAddress: node(0), config: { typo: 1 } })).code, 'INVALID_ARGUMENT')
})

test('host objects are checked and their answers read by the rules every language shares', () => {
  const idClock = { wallMs: () => 1, monotonicMs: () => 1 }
  const noSleep = thrown(() => new WorkerIdHolder(new WorkerIdRegistry(), { owner: 'a', incarnation: 1, clock: idClock }))
  assert.equal(noSleep.code, 'INVALID_ARGUMENT')
  assert.match(noSleep.message, /the clock has no sleepUntil method/)

  const base = { id: 'a', node: node(1), extractor: { kind: 'actor-ts', numShards: 4 }, transport: () => {} }
  const host = { startShard() {}, deliver() {}, stopShard() {} }
  const late = new RegionDriver({ ...base, host, clock: { nowMs: () => 'soon' } })
  const e = thrown(() => late.start())
  assert.equal(e.code, 'CALLBACK_FAILED')
  assert.match(e.message, /the clock's nowMs returned "soon"/)

  // A grant as [token, validUntilMs]: the token it names is the one released.
  const released = []
  const d = new CoordinatorDriver({
    strategy: { kind: 'least-shard' },
    selfAddress: node(0),
    transport: () => {},
    clock: new ManualClock(0),
    lease: { acquire: () => [7, 60_000], renew: (t, now) => now + 60_000, release: (t) => released.push(t) },
    store: { append() {}, saveSnapshot: () => false, load: () => null },
  })
  d.start()
  d.stop()
  assert.deepEqual(released, [7])

  const odd = new CoordinatorDriver({
    strategy: { kind: 'least-shard' },
    selfAddress: node(0),
    transport: () => {},
    clock: new ManualClock(0),
    lease: { acquire: () => ({ token: Symbol('t'), validUntilMs: 1 }), renew() {}, release() {} },
  })
  const notData = thrown(() => odd.start())
  assert.equal(notData.code, 'CALLBACK_FAILED')
  assert.match(notData.message, /the lease's acquire returned something that is not data \(answer\.token: a symbol/)
})
