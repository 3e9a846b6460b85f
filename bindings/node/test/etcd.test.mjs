// The etcd backends against a real etcd (SHARDLINE_ETCD_ENDPOINTS, set by scripts/test-etcd.sh
// with an addon built with the `etcd` feature); skipped without one.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'

import {
  AsyncCoordinatorDriver, CoordinatorDriver, Etcd, EtcdLease, WorkerIdHolder,
} from 'shardline'

const endpoints = process.env.SHARDLINE_ETCD_ENDPOINTS?.split(',')
const skip = endpoints ? false : 'SHARDLINE_ETCD_ENDPOINTS is not set'
const NODE = (i) => `pekko://sys@h${i}:2552`
// A namespace of its own per connection, so reruns against one etcd never meet old keys.
const connect = () => new Etcd(endpoints, `node-test/${randomUUID()}`, { timeoutMs: 5_000 })

const record = (seq) => ({ seq, event: { type: 'shardRegionRegistered', region: 'r1', node: NODE(1) } })

test('an unreachable etcd is an INVALID_STATE error, and arguments are checked', async () => {
  // Connecting is lazy: the first request finds out (a build without etcd already refuses to
  // connect, with the same code).
  let etcd
  try {
    etcd = new Etcd(['http://127.0.0.1:1'], 'ns', { timeoutMs: 300 })
  } catch (e) {
    assert.equal(e.code, 'INVALID_STATE')
    assert.match(e.message, /no etcd support/)
  }
  if (etcd) await assert.rejects(etcd.lease('l', 'o').acquire(0), { code: 'INVALID_STATE', message: /lease: etcd/ })
  assert.throws(() => new Etcd(['http://127.0.0.1:1'], 'ns', { timeoutMs: 0 }), {
    code: 'INVALID_ARGUMENT', message: 'the etcd timeout must be positive',
  })
  assert.throws(() => new Etcd(['http://127.0.0.1:1'], 'ns', { timeout: 5 }), { code: 'INVALID_ARGUMENT', message: /timeout/ })
  assert.throws(() => new Etcd(null, 'ns'), { code: 'NULL_POINTER' })
})

test('a lease is acquired, renewed, and taken over with a larger token', { skip }, async () => {
  const etcd = connect()
  assert.match(etcd.namespace, /^node-test\//)
  const a = etcd.lease('coordinator', 'a', { ttlMs: 2_000 })
  const b = etcd.lease('coordinator', 'b', { ttlMs: 2_000 })
  assert.ok(a instanceof EtcdLease)
  const grant = await a.acquire(0)
  assert.ok(grant.token > 0 && grant.validUntilMs > 0, JSON.stringify(grant))
  assert.equal(await b.acquire(0), null)
  assert.deepEqual(await b.holder(), { owner: 'a', token: grant.token })
  assert.ok((await a.renew(grant.token, 10)) > 10)
  await a.release(grant.token)
  assert.equal(await a.holder(), null)
  const next = await b.acquire(20)
  assert.ok(next.token > grant.token, `${next.token} after ${grant.token}`)
  assert.equal(await a.renew(grant.token, 30), null)
  await assert.rejects(a.op('steal', []), { code: 'INVALID_ARGUMENT', message: 'EtcdLease has no operation "steal"' })
  await assert.rejects(a.renew(grant.token), { code: 'NULL_POINTER', message: 'EtcdLease.renew: nowMs is required' })
})

test('a store fences writes and loads below the highest token', { skip }, async () => {
  const store = connect().store('state')
  assert.deepEqual(await store.load(5), { snapshot: null, events: [] })
  assert.deepEqual(await store.append(5, record(1)), { outcome: 'written' })
  const fenced = await store.append(3, record(2))
  assert.equal(fenced.outcome, 'fenced')
  assert.equal(fenced.highest, 5)
  assert.equal(await store.load(4), null)
  const state = await store.load(6)
  assert.deepEqual(state.events, [record(1)])
  await assert.rejects(store.append(7, 12), { code: 'INVALID_ARGUMENT', message: /EtcdStore\.append: record/ })
})

test('a synchronous CoordinatorDriver runs on an etcd lease and store, which then serve it alone', { skip }, async () => {
  const etcd = connect()
  const lease = etcd.lease('coordinator', 'c1', { ttlMs: 5_000 })
  const store = etcd.store('state', { boundToLease: 'coordinator' })
  const d = new CoordinatorDriver({
    strategy: { kind: 'least-shard' }, selfAddress: NODE(0), transport: () => {}, lease, store,
  })
  d.member({ address: NODE(1) })
  d.start()
  assert.equal(d.isActive, true)
  const holder = await etcd.lease('coordinator', 'watcher').holder()
  assert.equal(holder.owner, 'c1')
  assert.equal(holder.token, d.token)
  await assert.rejects(lease.holder(), { code: 'INVALID_STATE', message: 'this EtcdLease serves a driver; ask etcd directly' })
  assert.throws(() => new CoordinatorDriver({
    strategy: { kind: 'least-shard' }, selfAddress: NODE(0), transport: () => {}, lease, store,
  }), { code: 'INVALID_STATE', message: 'this EtcdLease already serves a driver' })
  d.stop()
  assert.equal(await etcd.lease('coordinator', 'watcher').holder(), null)
})

test('the AsyncCoordinatorDriver calls etcd without blocking the event loop', { skip }, async () => {
  const etcd = connect()
  const make = (owner) => new AsyncCoordinatorDriver({
    strategy: { kind: 'least-shard' }, selfAddress: NODE(0), transport: () => {},
    lease: etcd.lease('coordinator', owner, { ttlMs: 5_000 }), store: etcd.store('state'),
  })
  const first = make('c1')
  first.member({ address: NODE(1) })
  let ticks = 0
  const ticker = setInterval(() => { ticks++ }, 0)
  const started = first.start()
  assert.equal(started, undefined)
  // The lease request is on the thread pool: nothing has answered yet, and the loop runs on.
  assert.equal(first.isActive, false)
  await first.settled()
  clearInterval(ticker)
  assert.equal(first.isActive, true)
  assert.ok(ticks > 0, 'the event loop ran while etcd answered')
  assert.deepEqual(first.takeErrors(), [])
  const second = make('c2')
  second.start()
  await second.settled()
  assert.equal(second.isActive, false)
  assert.equal((await etcd.lease('coordinator', 'watcher').holder()).owner, 'c1')
  first.stop()
  second.stop()
  await Promise.all([first.settled(), second.settled()])
})

test('worker-id holders reserve distinct ids in etcd and free them on close', { skip }, () => {
  const etcd = connect()
  const a = new WorkerIdHolder(etcd, { owner: 'a', incarnation: 1, ttlMs: 5_000 })
  const b = new WorkerIdHolder(etcd, { owner: 'b', incarnation: 1, ttlMs: 5_000 })
  assert.deepEqual([a.workerId, b.workerId], [0, 1])
  const ids = new Set([a.nextId(), a.nextId(), b.nextId()])
  assert.equal(ids.size, 3)
  a.close()
  const c = new WorkerIdHolder(etcd, { owner: 'c', incarnation: 1, ttlMs: 5_000 })
  assert.equal(c.workerId, 0)
  assert.ok(c.epoch > 1, `epoch ${c.epoch}`)
  b.close()
  c.close()
})
