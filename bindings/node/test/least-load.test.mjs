// least-load's inputs (loads, capacities, tags, shard caps, draining, rules) through the object
// API: AllocationState's setters and build document, and the actor-ts-shaped strategy.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { AllocationState, Strategy, LeastLoadAllocationStrategy } from 'shardline'
import { vectors, thrown } from './helpers.mjs'

const node = (i) => `pekko://sys@127.0.0.${i}:2552`

test('least-load vectors decide the same through AllocationState.build and Strategy', () => {
  let n = 0
  for (const v of vectors('least-load.json')) {
    if (v.op === 'plan') continue
    const state = AllocationState.build({
      regions: v.regions.map(({ region, ...r }) => ({ id: region, ...r })),
      loads: v.loads,
      shardRules: v.shardRules,
    })
    const strategy = new Strategy(v.strategy)
    if (v.op === 'allocate') {
      const got = strategy.allocate(state, v.shardId, v.requester)
      assert.deepEqual(got, v.expect.pending ? null : v.expect.region, v.id)
    } else {
      assert.deepEqual(strategy.rebalance(state, v.rebalanceInProgress), v.expect.shards, v.id)
    }
    n++
  }
  assert.ok(n >= 10, `only ${n} vectors`)
})

test('AllocationState setters change least-load decisions; bad input is named', () => {
  const state = new AllocationState(node(1))
  for (const i of [1, 2]) {
    state.upsertMember({ address: node(i) })
    state.addRegion(`r${i}`, node(i))
  }
  state.addShard('r1', '1')
  state.addShard('r2', '2')
  state.addShard('r2', '3')
  const leastLoad = new Strategy({ kind: 'least-load' })
  assert.equal(leastLoad.allocate(state, 'new'), 'r1')
  state.setShardLoad('1', 10)
  assert.equal(leastLoad.allocate(state, 'new'), 'r2', "r1's one shard weighs 10")
  state.setRegionCapacity('r1', { cpu: 100 })
  state.setShardLoad('1', { cpu: 10 })
  assert.equal(leastLoad.allocate(state, 'new'), 'r1', 'r1 holds 100 cpu')
  state.setRegionDraining('r1', true)
  assert.equal(leastLoad.allocate(state, 'new'), 'r2', 'r1 drains')
  state.setRegionDraining('r1', false)
  state.setRegionTags('r1', new Set(['ssd']))
  state.setShardRule('new', { tags: ['ssd'] })
  state.setRegionMaxShards('r1', 1)
  assert.equal(leastLoad.allocate(state, 'new'), null, 'the only region with the tag is full')
  state.setRegionMaxShards('r1', null)
  assert.equal(leastLoad.allocate(state, 'new'), 'r1')

  const negative = thrown(() => state.setShardLoad('1', -1))
  assert.equal(negative.code, 'INVALID_ARGUMENT')
  assert.match(negative.message, /load of shard "1"/)
  assert.match(thrown(() => state.setRegionCapacity('nope', 1)).message, /nope/)
  assert.equal(thrown(() => state.setShardRule('x', { tag: ['ssd'] })).code, 'INVALID_ARGUMENT')
})

test('LeastLoadAllocationStrategy: actor-ts shape over host-reported loads', () => {
  const a = { toString: () => 'sys@10.0.0.1:2552' }
  const b = { toString: () => 'sys@10.0.0.2:2552' }
  const current = new Map([[a, new Set([1])], [b, new Set([2, 3])]])
  const s = new LeastLoadAllocationStrategy()
  assert.equal(s.allocate(9, [a, b], current), a, 'as least-shard with nothing reported')
  s.setLoad(1, 10)
  assert.equal(s.allocate(9, [a, b], current), b, 'the same candidate object')
  s.setNode(String(a), { capacity: 100 })
  assert.equal(s.allocate(9, [a, b], current), a)
  s.setNode(String(a), { draining: true })
  assert.deepEqual(s.rebalance(current, [a, b], new Set()), new Set([1]), 'a drains its shard away')
  s.setNode(String(a), null)
  s.setLoad(1, null)
  assert.deepEqual(s.rebalance(current, [a, b], new Set()), new Set(), 'balanced again')
  s.setRule(9, { pin: String(b) })
  assert.equal(s.allocate(9, [a, b], current), b, 'pinned')
  s.setLoad(4, -2)
  assert.equal(thrown(() => s.allocate(9, [a, b], current)).code, 'INVALID_ARGUMENT')
})
