// Every conformance vector in tests/vectors, replayed through decide() (as every binding
// does), through the object API, and (actor-ts ones) through the actor-ts-shaped strategies.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import {
  decide,
  decideJson,
  pekkoShardId,
  actorTsShardId,
  pekkoStringHash,
  AllocationState,
  Strategy,
  HashAllocationStrategy,
  LeastShardAllocationStrategy,
  ShardlineAllocationStrategy,
} from 'shardline'
import { vectors, check, thrown } from './helpers.mjs'

function replay(file) {
  const all = vectors(file)
  assert.ok(all.length > 0)
  const failures = []
  for (const v of all) {
    const got = decide(v)
    const diff = check(v, got)
    if (diff) failures.push(diff)
    const explained = decide(v, { explain: true })
    assert.ok(explained.explanation, `${v.id}: no explanation`)
    delete explained.explanation
    assert.deepEqual(explained, got, `${v.id}: explaining changed the decision`)
  }
  assert.deepEqual(failures, [], `${failures.length} of ${all.length} vectors failed`)
  return all.length
}

test('pekko-strategies.json: every vector decides as expected', () => {
  assert.equal(replay('pekko-strategies.json'), vectors('pekko-strategies.json').length)
})

test('actor-ts-strategies.json: every vector decides as expected', () => {
  replay('actor-ts-strategies.json')
})

test('least-load.json: every vector decides as expected', () => {
  replay('least-load.json')
})

test('a whole file decides as an array, and decideJson agrees with decide', () => {
  const all = vectors('pekko-strategies.json')
  const got = decide(all)
  assert.equal(got.length, all.length)
  assert.deepEqual(JSON.parse(decideJson(JSON.stringify(all))), got)
})

test('malformed vectors fail with INVALID_ARGUMENT naming the vector and field', () => {
  const v = structuredClone(vectors('pekko-strategies.json')[0])
  v.regions[1].address = 'not an address'
  const e = thrown(() => decide(v))
  assert.equal(e.code, 'INVALID_ARGUMENT')
  assert.match(e.message, /least-01/)
  assert.match(e.message, /regions\[1\]\.address/)
  const e2 = thrown(() => decideJson('{nope'))
  assert.equal(e2.code, 'INVALID_ARGUMENT')
})

// The same vectors through AllocationState + Strategy instead of decide(): an independent
// path from JavaScript objects into the core.
function objectApi(v) {
  let state
  if (v.cluster) {
    state = new AllocationState(v.cluster.self)
    v.cluster.members.forEach((m, i) => state.upsertMember({ upNumber: i + 1, ...m }))
    for (const u of v.cluster.unreachable ?? []) state.setReachable(u, false)
  } else {
    state = AllocationState.build({
      regions: [],
      candidates: [],
      selfAddress: v.regions[0]?.address ?? v.candidates?.[0],
    })
    const addrs = [...v.regions.map((r) => r.address), ...(v.candidates ?? [])]
    addrs.forEach((a, i) => {
      if (!state.members().some((m) => m.address === a)) state.upsertMember({ address: a, upNumber: i + 1 })
    })
  }
  for (const r of v.regions) {
    state.addRegion(r.region, r.address, r.local ?? false)
    for (const s of r.shards ?? []) state.addShard(r.region, s)
  }
  if (v.candidates) {
    for (const c of v.candidates) if (!state.region(c)) state.addRegion(c, c)
    for (const r of state.regions()) state.setEligible(r.id, false)
    for (const c of v.candidates) state.setEligible(c, true)
  }
  const strategy = new Strategy(v.strategy)
  if (v.op === 'allocate') {
    try {
      const region = strategy.allocate(state, v.shardId, v.requester ?? null)
      return region === null ? { pending: true } : { region }
    } catch (e) {
      if (e.code === 'NO_CANDIDATES') return { error: 'no-candidates' }
      throw e
    }
  }
  const picked = strategy.rebalance(state, v.rebalanceInProgress ?? [])
  return { shards: [...picked].sort(), shardsInOrder: picked }
}

test('vectors replayed through AllocationState and Strategy decide alike', () => {
  const failures = []
  let n = 0
  for (const file of ['pekko-strategies.json', 'actor-ts-strategies.json']) {
    for (const v of vectors(file)) {
      if (v.op === 'rank' || v.then) continue
      const expect = { ...v.expect }
      const got = objectApi(v)
      for (const key of Object.keys(expect)) {
        if (JSON.stringify(got[key]) !== JSON.stringify(expect[key])) failures.push(`${v.id}: ${key}: ${JSON.stringify(got[key])}`)
      }
      n++
    }
  }
  assert.ok(n > 150)
  assert.deepEqual(failures, [])
})

class NodeAddress {
  constructor(text) {
    this.text = text
  }
  toString() {
    return this.text
  }
}

function actorTsShaped(v) {
  switch (v.strategy.kind) {
    case 'actor-ts-hash':
      return new HashAllocationStrategy()
    case 'actor-ts-least-shard':
      return new LeastShardAllocationStrategy(v.strategy.rebalanceThreshold, v.strategy.maxSimultaneousRebalance)
  }
  throw new Error(v.strategy.kind)
}

test('actor-ts vectors through the actor-ts-shaped strategies, with actor-ts argument shapes', () => {
  const failures = []
  for (const v of vectors('actor-ts-strategies.json')) {
    const strategy = actorTsShaped(v)
    const addresses = v.candidates ?? v.regions.map((r) => r.address)
    const candidates = addresses.map((a) => new NodeAddress(a))
    const currentShards = new Map(v.regions.map((r) => [r.address, new Set(r.shards.map(Number))]))
    if (v.op === 'allocate') {
      if (v.expect.error) {
        const e = thrown(() => strategy.allocate(Number(v.shardId), candidates, currentShards))
        if (e.code !== 'NO_CANDIDATES') failures.push(`${v.id}: threw ${e.code}`)
        continue
      }
      const got = strategy.allocate(Number(v.shardId), candidates, currentShards)
      if (!candidates.includes(got)) failures.push(`${v.id}: did not return one of the candidate objects`)
      else if (String(got) !== v.expect.region) failures.push(`${v.id}: ${got} != ${v.expect.region}`)
    } else {
      const inProgress = new Set(v.rebalanceInProgress.map(Number))
      const got = strategy.rebalance(currentShards, candidates, inProgress)
      if (!(got instanceof Set)) failures.push(`${v.id}: not a Set`)
      const inOrder = [...got]
      if (!inOrder.every((s) => typeof s === 'number')) failures.push(`${v.id}: shard ids are not numbers`)
      if (JSON.stringify(inOrder.map(String)) !== JSON.stringify(v.expect.shardsInOrder)) {
        failures.push(`${v.id}: ${JSON.stringify(inOrder)} != ${JSON.stringify(v.expect.shardsInOrder)}`)
      }
    }
  }
  assert.deepEqual(failures, [])
})

test('actor-ts-shaped strategies accept plain address strings and arrays, and wrap any strategy', () => {
  const s = new HashAllocationStrategy()
  assert.equal(s.allocate(4, ['s@h:2', 's@h:1']), 's@h:1')
  const shards = new Map([
    ['s@h:1', [0, 1, 2, 3]],
    ['s@h:2', []],
  ])
  assert.deepEqual([...new LeastShardAllocationStrategy(1, 2).rebalance(shards, ['s@h:1', 's@h:2'], [])], [0, 1])
  const custom = new ShardlineAllocationStrategy({
    allocate: (state) => state.regions().at(-1).id,
  })
  assert.equal(custom.allocate(7, ['s@h:1', 's@h:2'], new Map()), 's@h:2')
  assert.deepEqual([...custom.rebalance(shards, ['s@h:1'], new Set())], [])
})

test('hashing.json: entity -> shard cases and MurmurHash', () => {
  const h = vectors('hashing.json')
  let n = 0
  for (const c of h.actorTsHashShardId.values) {
    assert.equal(actorTsShardId(c.entityId, c.numShards), c.shard, `hashShardId(${JSON.stringify(c.entityId)}, ${c.numShards})`)
    n++
  }
  for (const c of h.pekkoHashCodeExtractor.values) {
    assert.equal(pekkoShardId(c.entityId, c.numShards), c.shard, `shardId(${JSON.stringify(c.entityId)}, ${c.numShards})`)
    n++
  }
  for (const [input, hash] of Object.entries(h.pekkoMurmurStringHash.values)) {
    assert.equal(pekkoStringHash(input), hash, `stringHash(${JSON.stringify(input)})`)
    n++
  }
  assert.ok(n > 100)
  assert.equal(thrown(() => actorTsShardId('a', 0)).code, 'INVALID_ARGUMENT')
  assert.equal(thrown(() => pekkoShardId('a', 0)).code, 'INVALID_ARGUMENT')
})
