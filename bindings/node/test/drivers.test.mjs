// The coordinator and regions end to end: callback drivers, the step API, failover with the
// in-memory lease and store, and backends written in JavaScript.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Coordinator, CoordinatorDriver, Region, InMemoryLease, InMemoryStore, ManualClock, Strategy } from 'shardline'
import { Cluster, node } from './cluster.mjs'

test('callback drivers carry messages to their entities', () => {
  const c = new Cluster()
  c.addRegion('a', 1)
  c.addRegion('b', 2)
  c.coordinator.start()
  assert.equal(c.coordinator.phase, 'active')
  assert.deepEqual(c.coordinator.takeNotices(), [{ type: 'active', token: 1 }])
  for (const r of c.regions.values()) r.start()
  c.pump()
  assert.ok([...c.regions.values()].every((r) => r.isRegistered))
  c.regions.get('b').route('x-1', 'hello')
  c.pump()
  c.regions.get('a').route('x-2', Buffer.from('again'))
  c.pump()
  assert.deepEqual(c.log, ['a start x', 'a x-1=hello', 'a x-2=again'])
  assert.equal(c.coordinator.homeOf('x'), 'a')
  assert.deepEqual(c.coordinator.regions().map((r) => [r.region, r.shards]), [['a', ['x']], ['b', []]])
  assert.equal(c.regions.get('b').homeOf('x'), 'a')
})

test('a rebalance moves shards to a joining region without losing messages', () => {
  const c = new Cluster({ config: { rebalanceIntervalMs: 1_000 }, strategy: { kind: 'least-shard', absoluteLimit: 1, relativeLimit: 1.0 } })
  c.addRegion('a', 1).start()
  c.coordinator.start()
  c.pump()
  for (const s of 'pqrs') c.regions.get('a').route(`${s}-1`, s)
  c.pump()
  c.addRegion('b', 2).start()
  c.pump()
  c.clock.advance(1_000)
  c.coordinator.poll()
  c.pump()
  const moved = c.coordinator.takeNotices().filter((n) => n.type === 'handOffCompleted')
  assert.ok(moved.length >= 1, 'at least one hand-off completed')
  for (const s of 'pqrs') c.regions.get('a').route(`${s}-2`, s)
  c.pump()
  const counts = c.coordinator.regions().map((r) => r.shards.length)
  assert.equal(counts.reduce((a, b) => a + b), 4)
  assert.ok(counts[1] >= 1, 'b hosts a shard after the rebalance')
  for (const s of 'pqrs') {
    assert.equal(c.log.filter((l) => l.endsWith(` ${s}-1=${s}`)).length, 1)
    assert.equal(c.log.filter((l) => l.endsWith(` ${s}-2=${s}`)).length, 1)
  }
})

test('failover: a contender takes the lease and restores the state from the shared store', () => {
  const clock = new ManualClock(1_000)
  const lease = new InMemoryLease('c1', 30_000)
  const store = new InMemoryStore()
  const wire = []
  const mk = (l) =>
    new CoordinatorDriver({ strategy: { kind: 'least-shard' }, selfAddress: node(0), transport: (e) => wire.push(e), clock, lease: l, store })
  const c1 = mk(lease)
  const c2 = mk(lease.contender('c2'))
  c1.member({ address: node(1) })
  c2.member({ address: node(1) })
  c1.start()
  c2.start()
  assert.equal(c1.isActive, true)
  assert.equal(c2.isActive, false)
  const region = new Region({ id: 'a', node: node(1), extractor: { kind: 'actor-ts', numShards: 8 } })
  region.start(1_000)
  const deliver = (to) => {
    for (let o = region.pollOutput(); o; o = region.pollOutput()) if (o.type === 'send') to.receive(o.envelope)
    while (wire.length) {
      const e = wire.shift()
      if (e.to !== 'coordinator') region.handle(clock.nowMs(), { type: 'receive', envelope: e })
    }
  }
  deliver(c1)
  region.route(clock.nowMs(), 'user-7', 'hi')
  for (let i = 0; i < 3; i++) deliver(c1)
  const shard = region.shardOf('user-7')
  assert.equal(c1.homeOf(shard), 'a')
  assert.ok(store.contents().events.length >= 2)
  assert.equal(lease.holder(clock.nowMs()).owner, 'c1')

  clock.advance(31_000)
  c1.poll()
  assert.equal(c1.isActive, false, 'c1 stops acting at its own deadline')
  c2.poll()
  assert.equal(c2.isActive, true)
  assert.equal(c2.token, 2)
  assert.equal(c2.homeOf(shard), 'a', 'restored from the store')
  assert.equal(store.highestToken, 2)
})

test('the step API: outputs in order, with the lease and store carried out by the host', () => {
  const lease = new InMemoryLease('c', 10_000)
  const store = new InMemoryStore()
  const c = new Coordinator({ strategy: new Strategy({ kind: 'least-shard' }), selfAddress: node(0) })
  assert.equal(c.phase, 'idle')
  c.start(0)
  let now = 0
  const sent = []
  const carryOut = () => {
    for (let o = c.pollOutput(); o; o = c.pollOutput()) {
      switch (o.type) {
        case 'lease':
          if (o.request.type === 'acquire') {
            const g = lease.acquire(now)
            c.handle(now, g ? { type: 'leaseGranted', ...g } : { type: 'leaseDenied' })
          }
          break
        case 'loadState': {
          const s = store.load(o.token)
          c.handle(now, s ? { type: 'stateLoaded', state: s } : { type: 'stateLoadFailed', fenced: true })
          break
        }
        case 'persist':
          assert.deepEqual(store.append(o.token, o.record), { outcome: 'written' })
          break
        case 'send':
          sent.push(o.envelope)
          break
      }
    }
  }
  carryOut()
  assert.equal(c.phase, 'active')
  c.handle(now, { type: 'member', member: { address: node(1) } })
  c.handle(now, { type: 'receive', envelope: { from: { region: 'r1' }, to: 'coordinator', message: { command: { type: 'register', node: node(1) } } } })
  carryOut()
  assert.deepEqual(sent.at(-1).message.directive, { type: 'registerAck', token: 1 })
  c.handle(now, { type: 'receive', envelope: { from: { region: 'r1' }, to: 'coordinator', message: { command: { type: 'getShardHome', shard: '3' } } } })
  carryOut()
  assert.equal(c.homeOf(3), 'r1')
  assert.deepEqual(
    store.contents().events.map((r) => r.event.type),
    ['shardRegionRegistered', 'shardHomeAllocated'],
  )
  assert.ok(c.nextDeadline() > 0)
})

test('region step API: forwards carry Buffers and unknown homes buffer messages', () => {
  const r = new Region({ id: 'a', node: node(1), extractor: { kind: 'pekko', numberOfShards: 10 } })
  r.start(0)
  const out = r.drainOutputs()
  assert.deepEqual(out.map((o) => o.type), ['send'])
  assert.deepEqual(out[0].envelope.message, { command: { type: 'register', node: node(1) } })
  r.route(0, 'e1', new Uint8Array([1, 2, 3]))
  assert.equal(r.buffered, 1)
  assert.equal(r.bufferedFor(r.shardOf('e1')), 1)
  const ask = r.drainOutputs()
  assert.deepEqual(ask.map((o) => o.envelope.message.command.type), ['getShardHome'])
  const shard = r.shardOf('e1')
  r.handle(0, { type: 'receive', envelope: { from: 'coordinator', to: { region: 'a' }, message: { directive: { type: 'registerAck', token: 1 } } } })
  r.handle(0, { type: 'receive', envelope: { from: 'coordinator', to: { region: 'a' }, message: { directive: { type: 'shardHome', shard, region: 'b', stamp: { token: 1, version: 1 } } } } })
  const fwd = r.drainOutputs().filter((o) => o.type === 'send' && o.envelope.message.forward)
  assert.equal(fwd.length, 1)
  const payload = fwd[0].envelope.message.forward.payload
  assert.ok(Buffer.isBuffer(payload))
  assert.deepEqual([...payload], [1, 2, 3])
  // Payloads are typed bytes in the core: a JSON array of numbers is no payload.
  assert.throws(
    () => r.handle(0, { type: 'receive', envelope: { from: { region: 'b' }, to: { region: 'a' }, message: { forward: { shard, entity: 'e1', payload: [1, 2] } } } }),
    /base64/,
  )
})

test('lease and store written in JavaScript drive the coordinator', () => {
  const calls = []
  let token = 0
  const events = []
  const c = new Cluster({
    coordinator: {
      lease: {
        acquire(now) {
          calls.push('acquire')
          return { token: ++token, validUntilMs: now + 60_000 }
        },
        renew(t, now) {
          calls.push('renew')
          return now + 60_000
        },
        release(t) {
          calls.push(`release ${t}`)
        },
      },
      store: {
        append(t, record) {
          events.push(record)
        },
        saveSnapshot() {
          return { outcome: 'written' }
        },
        load() {
          return { snapshot: null, events: [] }
        },
      },
    },
  })
  c.addRegion('a', 1).start()
  c.coordinator.start()
  c.pump()
  c.regions.get('a').route('k-1', 'v')
  c.pump()
  assert.deepEqual(c.log, ['a start k', 'a k-1=v'])
  assert.deepEqual(events.map((r) => r.seq), [1, 2])
  c.coordinator.stop()
  assert.deepEqual(calls, ['acquire', 'release 1'])
  assert.equal(c.coordinator.phase, 'stopped')
})

test('graceful shutdown hands shards off and tells the host', () => {
  const c = new Cluster()
  let stopped = 0
  c.addRegion('a', 1, { ...c.host('a'), stopped: () => stopped++ }).start()
  c.addRegion('b', 2).start()
  c.coordinator.start()
  c.pump()
  c.regions.get('a').route('m-1', '1')
  c.pump()
  const home = c.coordinator.homeOf('m')
  const leaving = c.regions.get(home)
  leaving.gracefulShutdown()
  c.pump()
  if (home === 'a') assert.equal(stopped, 1)
  assert.deepEqual(leaving.localShards(), [])
  const other = home === 'a' ? 'b' : 'a'
  c.regions.get(other).route('m-2', '2')
  c.pump()
  assert.equal(c.coordinator.homeOf('m'), other)
  assert.ok(c.log.includes(`${other} m-2=2`))
})

test('decision events explain each allocation and metrics count it', () => {
  const c = new Coordinator({ strategy: { kind: 'least-shard' }, selfAddress: node(0), config: { decisionEvents: true } })
  c.start(0)
  c.handle(0, { type: 'leaseGranted', token: 1, validUntilMs: Number.MAX_SAFE_INTEGER })
  c.handle(0, { type: 'stateLoaded', state: { snapshot: null, events: [] } })
  c.handle(0, { type: 'member', member: { address: node(1) } })
  const from = { region: 'r1' }
  c.handle(0, { type: 'receive', envelope: { from, to: 'coordinator', message: { command: { type: 'register', node: node(1) } } } })
  c.handle(0, { type: 'receive', envelope: { from, to: 'coordinator', message: { command: { type: 'getShardHome', shard: '7' } } } })
  const notices = c.drainOutputs().filter((o) => o.type === 'notice').map((o) => o.notice)
  const allocated = notices.filter((n) => n.type === 'allocated')
  assert.equal(allocated.length, 1)
  assert.deepEqual([allocated[0].shard, allocated[0].region, allocated[0].requester], ['7', 'r1', 'r1'])
  assert.equal(allocated[0].explanation.op, 'allocate')
  assert.equal(allocated[0].explanation.candidates[0].region, 'r1')
  const metric = (name, region) =>
    c.metrics().find((m) => m.name === name && (m.attributes ?? {})['shardline.region'] === region)
  assert.equal(metric('shardline.coordinator.allocations').value, 1)
  assert.equal(metric('shardline.coordinator.allocations').kind, 'counter')
  assert.equal(metric('shardline.coordinator.shards', 'r1').value, 1)
  assert.equal(metric('shardline.coordinator.active').value, 1)
  const r = new Region({ id: 'x', node: node(1), extractor: { kind: 'pekko', numberOfShards: 12 } })
  assert.equal(r.metrics().find((m) => m.name === 'shardline.region.registered').value, 0)
  c.close()
  r.close()
})
