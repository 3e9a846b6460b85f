// Seeded random vectors decided in Node (decide, the object API, the actor-ts-shaped
// strategies) and by `target/debug/shardline decide`: every decision must agree.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

import { decide, AllocationState, Strategy, HashAllocationStrategy, LeastShardAllocationStrategy } from 'shardline'
import { repo, seeded } from './helpers.mjs'

const COUNT = 200
const SEED = Number(process.env.SHARDLINE_SEED ?? 20260901)

function generate(seed, count) {
  const { rnd, int, pick, shuffle } = seeded(seed)
  const out = []
  for (let i = 0; i < count; i++) {
    const kind = pick(['least-shard', 'least-shard-legacy', 'consistent-hashing', 'bounded-load-hashing', 'external', 'actor-ts-hash', 'actor-ts-least-shard'])
    const actorTs = kind.startsWith('actor-ts')
    const nRegions = int(6) + (kind === 'external' ? 1 : 0)
    const nShards = int(30)
    const addrs = shuffle(Array.from({ length: nRegions + 2 }, (_, k) => (actorTs ? `sys@host${k}:${2550 + int(3)}` : `pekko://sys@10.0.0.${k + 1}:2552`)))
    const uniq = [...new Set(addrs)]
    const regions = uniq.slice(0, nRegions).map((a, k) => ({ region: actorTs ? a : `r${k}-${a.slice(-9)}`, address: a, shards: [] }))
    const shards = shuffle(Array.from({ length: nShards }, (_, k) => String(k)))
    const allocated = regions.length ? shards.slice(0, int(nShards + 1)) : []
    // Half the cases pile shards onto one region, so rebalances have something to move.
    const skew = rnd() < 0.5
    for (const s of allocated) (skew && rnd() < 0.6 ? regions[0] : pick(regions)).shards.push(s)
    const unallocated = shards.filter((s) => !allocated.includes(s))
    const v = { id: `random-${seed}-${i}`, strategy: { kind }, regions }
    switch (kind) {
      case 'least-shard':
        Object.assign(v.strategy, { absoluteLimit: int(6) + 1, relativeLimit: pick([0.1, 0.3, 0.5, 1.0]), tieBreakByAge: rnd() < 0.3 })
        break
      case 'least-shard-legacy':
        Object.assign(v.strategy, { rebalanceThreshold: int(4) + 1, maxSimultaneousRebalance: int(5) + 1 })
        break
      case 'consistent-hashing':
        Object.assign(v.strategy, { rebalanceLimit: int(5) })
        break
      case 'bounded-load-hashing':
        Object.assign(v.strategy, { epsilon: pick([0.1, 0.25, 1.0]), absoluteLimit: int(6) + 1, virtualNodesFactor: pick([1, 10, 100]) })
        break
      case 'external':
        v.strategy.locations = Object.fromEntries(shards.filter(() => rnd() < 0.5).map((s) => [s, pick(uniq)]))
        break
      case 'actor-ts-least-shard':
        Object.assign(v.strategy, { rebalanceThreshold: int(3) + 1, maxSimultaneousRebalance: int(5) })
        break
    }
    if (actorTs) {
      v.candidates = shuffle(uniq.filter(() => rnd() < 0.8))
    } else if (rnd() < 0.6 && regions.length) {
      v.cluster = {
        self: regions[0].address,
        members: uniq.map((a, k) => ({ address: a, status: rnd() < 0.15 ? 'Leaving' : 'Up', appVersion: '1.0.0', upNumber: k + 1 })),
      }
    }
    const inProgress = allocated.filter(() => rnd() < 0.1)
    v.rebalanceInProgress = inProgress
    if (rnd() < 0.5 && unallocated.length) {
      v.op = 'allocate'
      v.shardId = pick(unallocated)
      if (!actorTs && regions.length && rnd() < 0.7) v.requester = pick(regions).region
    } else {
      v.op = 'rebalance'
    }
    out.push(v)
  }
  return out
}

function cli(vectorsIn, explain) {
  const target = process.env.CARGO_TARGET_DIR ?? join(repo, 'target')
  const bin = join(target, 'debug', 'shardline')
  if (!existsSync(bin)) {
    const b = spawnSync('cargo', ['build', '-q', '-p', 'shardline-cli'], { cwd: repo, stdio: ['ignore', 'inherit', 'inherit'] })
    assert.equal(b.status, 0, 'cargo build -p shardline-cli failed')
  }
  const r = spawnSync(bin, explain ? ['decide', '--explain'] : ['decide'], {
    input: JSON.stringify(vectorsIn),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

function viaObjects(v) {
  const state = AllocationState.build({
    selfAddress: v.cluster?.self,
    members: v.cluster?.members,
    regions: v.regions.map((r) => ({ id: r.region, address: r.address, shards: r.shards })),
    candidates: v.candidates,
  })
  const strategy = new Strategy(v.strategy)
  if (v.op === 'allocate') {
    try {
      const r = strategy.allocate(state, v.shardId, v.requester)
      return r === null ? { pending: true } : { region: r }
    } catch (e) {
      if (e.code === 'NO_CANDIDATES') return { error: 'no-candidates' }
      throw e
    }
  }
  const picked = strategy.rebalance(state, new Set(v.rebalanceInProgress))
  return { shards: [...picked].sort(), shardsInOrder: picked }
}

function viaActorTs(v) {
  const strategy =
    v.strategy.kind === 'actor-ts-hash'
      ? new HashAllocationStrategy()
      : new LeastShardAllocationStrategy(v.strategy.rebalanceThreshold, v.strategy.maxSimultaneousRebalance)
  const candidates = v.candidates.map((a) => ({ toString: () => a }))
  const current = new Map(v.regions.map((r) => [r.address, new Set(r.shards.map(Number))]))
  if (v.op === 'allocate') {
    try {
      return { region: String(strategy.allocate(Number(v.shardId), candidates, current)) }
    } catch (e) {
      if (e.code === 'NO_CANDIDATES') return { error: 'no-candidates' }
      throw e
    }
  }
  const picked = [...strategy.rebalance(current, candidates, new Set(v.rebalanceInProgress.map(Number)))].map(String)
  return { shards: [...picked].sort(), shardsInOrder: picked }
}

test(`${COUNT} seeded random vectors decide alike in Node and in shardline decide (seed ${SEED})`, () => {
  const vs = generate(SEED, COUNT)
  const expected = cli(vs, false)
  assert.equal(expected.length, COUNT)
  assert.deepEqual(decide(vs), expected)
  assert.deepEqual(decide(vs, { explain: true }), cli(vs, true))
  const kinds = new Set()
  const mismatches = []
  vs.forEach((v, i) => {
    kinds.add(`${v.strategy.kind}/${v.op}`)
    const want = expected[i]
    const got = viaObjects(v)
    for (const k of Object.keys(want)) {
      if (k === 'shards' && want.shardsInOrder === undefined && JSON.stringify(got.shards) === JSON.stringify(want.shards)) continue
      if (JSON.stringify(got[k]) !== JSON.stringify(want[k])) mismatches.push(`${v.id} objects ${k}: ${JSON.stringify(got[k])} != ${JSON.stringify(want[k])}`)
    }
    if (v.strategy.kind.startsWith('actor-ts')) {
      const a = viaActorTs(v)
      for (const k of Object.keys(want)) {
        if (JSON.stringify(a[k]) !== JSON.stringify(want[k])) mismatches.push(`${v.id} actor-ts ${k}: ${JSON.stringify(a[k])} != ${JSON.stringify(want[k])}`)
      }
    }
  })
  assert.deepEqual(mismatches, [])
  assert.ok(kinds.size >= 10, `too few kinds of case: ${[...kinds]}`)
})
