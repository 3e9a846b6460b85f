// The coordinator on the event loop: promise-returning hosts, nothing blocks, and a store
// write holds back what the coordinator does after it until the write completes.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setImmediate as tick } from 'node:timers/promises'

import { AsyncCoordinatorDriver, AsyncRegionDriver, CoordinatorDriver, InMemoryLease, InMemoryStore, ManualClock } from 'shardline'

const NODE = (i) => `pekko://sys@h${i}:2552`
const command = (cmd) => ({ from: { region: 'a' }, to: 'coordinator', message: { command: cmd } })

class SlowStore {
  constructor () { this.inner = new InMemoryStore(); this.gate = Promise.resolve(); this.writes = 0 }
  pause () { this.gate = new Promise((resolve) => { this.resume = resolve }) }
  async append (token, record) { this.writes++; await this.gate; return this.inner.append(token, record) }
  async saveSnapshot (token, snapshot) { await this.gate; return this.inner.saveSnapshot(token, snapshot) }
  async load (token) { await tick(); return this.inner.load(token) }
}

const asyncLease = (lease) => ({
  async acquire (now) { await tick(); return lease.acquire(now) },
  async renew (token, now) { return lease.renew(token, now) },
  release (token) { lease.release(token) },
})

test('the loop keeps running while a write waits, and later calls wait for it', async () => {
  const clock = new ManualClock(0)
  const store = new SlowStore()
  const sent = []
  const d = new AsyncCoordinatorDriver({
    strategy: { kind: 'least-shard' }, selfAddress: NODE(0), transport: (e) => sent.push(e),
    lease: asyncLease(new InMemoryLease('c1', 30_000)), store, clock,
    config: { decisionEvents: true },
  })
  const allocated = []
  const all = []
  d.on('allocated', (n) => allocated.push(n))
  d.on('notice', (n) => all.push(n.type))
  d.member({ address: NODE(1) })
  d.start()
  await d.settled()
  assert.equal(d.phase, 'active')
  store.pause()
  d.receive(command({ type: 'register', node: NODE(1) }))
  d.receive(command({ type: 'getShardHome', shard: '7' }))
  let ticks = 0
  for (let i = 0; i < 20; i++) { await tick(); ticks++ }
  assert.equal(ticks, 20)
  assert.equal(d.inFlight, 1)
  assert.deepEqual(sent, [], 'nothing after the unfinished write may be sent')
  store.resume()
  await d.settled()
  const types = sent.map((e) => e.message.directive.type)
  assert.equal(types[0], 'registerAck')
  assert.ok(types.includes('shardHome'), types.join())
  assert.equal(d.homeOf('7'), 'a')
  assert.deepEqual(d.takeErrors(), [])
  assert.deepEqual(allocated.map((n) => [n.shard, n.region]), [['7', 'a']], 'emitted as it happened')
  assert.equal(allocated[0].explanation.op, 'allocate')
  assert.deepEqual(all.slice(0, 1), ['active'])
  assert.deepEqual(d.takeNotices().map((n) => n.type), all, 'and kept for takeNotices')
  d.stop()
  await d.settled()
  assert.equal(d.phase, 'stopped')
})

test('a rejected call is reported and a wrong answer names the method', async () => {
  const d = new AsyncCoordinatorDriver({
    strategy: { kind: 'least-shard' }, selfAddress: NODE(0), transport: () => {},
    lease: { acquire: () => 'yes', renew: () => null, release: () => {} },
    store: new InMemoryStore(), clock: new ManualClock(0),
  })
  d.start()
  await d.settled()
  const [error] = d.takeErrors()
  assert.equal(error.code, 'CALLBACK_FAILED')
  assert.match(error.message, /the lease's acquire returned "yes"/)
  assert.equal(d.isActive, false)
  d.stop()
  assert.throws(() => new AsyncCoordinatorDriver({
    strategy: { kind: 'least-shard' }, selfAddress: NODE(0), transport: () => {},
    lease: new InMemoryLease('c', 1000), store: { append () {}, saveSnapshot () {} },
  }), /the store has no load method/)
})

test('timers run on their own and a contender takes over with the same state', async () => {
  const lease = new InMemoryLease('c1', 300)
  const store = new InMemoryStore()
  const sent = []
  const drivers = [0, 1].map((i) => new AsyncCoordinatorDriver({
    strategy: { kind: 'least-shard' }, selfAddress: NODE(0), transport: (e) => sent.push(e),
    lease: asyncLease(i === 0 ? lease : lease.contender('c2')), store,
    config: { leaseRetryIntervalMs: 50 },
  }))
  for (const d of drivers) { d.member({ address: NODE(1) }); d.start() }
  await Promise.all(drivers.map((d) => d.settled()))
  const [first, second] = drivers
  assert.equal(first.isActive, true)
  assert.equal(second.isActive, false)
  first.receive(command({ type: 'register', node: NODE(1) }))
  first.receive(command({ type: 'getShardHome', shard: '3' }))
  await first.settled()
  const token = first.token
  first.stop()
  for (let i = 0; i < 100 && !second.isActive; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  assert.equal(second.isActive, true)
  assert.ok(second.token > token)
  assert.equal(second.homeOf('3'), 'a', 'the successor restored the stored state')
  second.stop()
  await second.settled()
  assert.equal(second.phase, 'stopped')
})

test('a region on the event loop: promise hosts, a stopShard that settles later, timers by themselves', async () => {
  const delivered = []
  const stops = []
  const host = {
    async startShard () { await tick() },
    async deliver (shard, entity, payload) { await tick(); delivered.push(`${entity}=${payload}`) },
    // A shard stops when the host says so, after the call returned.
    stopShard (shard) { return new Promise((resolve) => stops.push(() => resolve(true))) },
  }
  const toCoordinator = []
  const r = new AsyncRegionDriver({
    id: 'a', node: NODE(1), extractor: { kind: 'pekko', numberOfShards: 10 },
    config: { retryIntervalMs: 10 }, transport: (e) => toCoordinator.push(e), host,
  })
  const c = new CoordinatorDriver({
    strategy: { kind: 'least-shard' }, selfAddress: NODE(0),
    transport: (e) => { setImmediate(() => r.receive(e)) },
  })
  c.member({ address: NODE(1) })
  c.start()
  const registered = []
  r.on('registered', (n) => registered.push(n))
  r.start()
  // No coordinator answers yet: the region's own timer registers again, with nobody polling.
  await new Promise((resolve) => setTimeout(resolve, 60))
  const registers = toCoordinator.filter((e) => e.message.command?.type === 'register')
  assert.ok(registers.length >= 2, `registered again by its timer: ${registers.length}`)
  const pump = async () => {
    for (let i = 0; i < 50; i++) {
      while (toCoordinator.length > 0) c.receive(toCoordinator.shift())
      await tick()
    }
  }
  await pump()
  assert.equal(r.isRegistered, true)
  assert.equal(registered.length >= 1, true, 'the notice was emitted')
  r.route('e1', 'hello')
  await pump()
  assert.deepEqual(delivered, ['e1=hello'])
  r.gracefulShutdown()
  await pump()
  assert.equal(stops.length, 1, 'the coordinator asked for the shard back')
  assert.deepEqual(r.localShards(), [r.shardOf('e1')], 'not stopped until the promise settles')
  stops[0]()
  await pump()
  assert.deepEqual(r.localShards(), [], 'the region was told when it settled')
  assert.deepEqual(r.takeErrors(), [])
})

test('a region host promise that rejects is reported, not thrown', async () => {
  const r = new AsyncRegionDriver({
    id: 'a', node: NODE(1), extractor: { kind: 'pekko', numberOfShards: 10 },
    transport: async () => { throw new Error('wire cut') }, host: { startShard () {}, deliver () {}, stopShard () { return true } },
  })
  r.start()
  await r.settled()
  const [error] = r.takeErrors()
  assert.match(String(error), /wire cut/)
})
