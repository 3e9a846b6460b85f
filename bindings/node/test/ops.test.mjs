// Operations by name: the queries the package names over each native class's `op(name, args)`
// carry their values and name what is wrong with a call.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Coordinator, Region } from 'shardline'

const coordinator = () => new Coordinator({ strategy: { kind: 'least-shard' }, selfAddress: 'pekko://sys@h:1' })

test('queries answer through op and keep their public names', () => {
  const c = coordinator()
  assert.equal(c.phase, 'idle')
  assert.equal(c.token, null)
  assert.equal(c.homeOf(7), null)
  assert.deepEqual(c.regions(), [])
  assert.deepEqual(c.unallocated(), [])
  assert.deepEqual(c.shardsOf('r1'), [])
  assert.equal(c.isAlive('r1'), false)
  assert.equal(typeof c.snapshot(), 'object')
  assert.equal(c.config.rebalanceIntervalMs, 10_000)
  assert.ok(c.metrics().some((m) => m.name.startsWith('shardline.coordinator.')))
  assert.ok(!Object.keys(c).includes('phase'), 'queries live on the prototype')
})

test('a bad call names the object, the operation and the argument', () => {
  const c = coordinator()
  const thrown = (f) => { try { f() } catch (e) { return e } assert.fail('did not throw') }
  let e = thrown(() => c.homeOf())
  assert.equal(e.code, 'NULL_POINTER')
  assert.equal(e.message, 'Coordinator.home_of: shard is required')
  e = thrown(() => c.homeOf(true))
  assert.match(e.message, /^Coordinator\.home_of: shard /)
  e = thrown(() => c.op('rebalanceNow', []))
  assert.equal(e.message, 'Coordinator has no operation "rebalanceNow"')
  e = thrown(() => c.op('home_of', [Symbol('x')]))
  assert.match(e.message, /^Coordinator\.home_of: argument 1: a symbol cannot be converted/)
  e = thrown(() => c.op(1, []))
  assert.match(e.message, /^Coordinator\.op: name: expected a string/)
  c.close()
  assert.equal(thrown(() => c.phase).code, 'INVALID_STATE')
})

test('a region answers its queries through op', () => {
  const r = new Region({ id: 'r1', node: 'pekko://sys@h:1', extractor: { kind: 'pekko', numberOfShards: 10 } })
  assert.equal(r.id, 'r1')
  assert.equal(r.isRegistered, false)
  assert.equal(r.buffered, 0)
  assert.equal(r.bufferedFor(3), 0)
  assert.equal(r.latestStamp('3'), null)
  assert.deepEqual(r.localShards(), [])
  assert.equal(r.homeOf(3), null)
})
