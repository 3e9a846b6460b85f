// actor-ts orders node addresses with `NodeAddress.compareTo`, which is
// `this.toString().localeCompare(other.toString())`. This differential test keeps shardline's
// actor-ts flavor on that exact order: random addresses (digits, punctuation, mixed case,
// ignorable characters, non-ASCII letters) are ordered by Node's own `localeCompare` through a
// line-for-line port of actor-ts's strategies, and by shardline's actor-ts-shaped strategies.
// A fresh seed every run (printed; set SHARDLINE_SEED to replay one).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { HashAllocationStrategy, LeastShardAllocationStrategy } from 'shardline'
import { seeded } from './helpers.mjs'

const SEED = Number(process.env.SHARDLINE_SEED ?? Math.floor(Math.random() * 2 ** 32))
const TRIALS = 1200

// actor-ts AllocationStrategy.ts, with addresses as strings (NodeAddress.toString()).
const actorTs = {
  sorted: (candidates) => [...candidates].sort((a, b) => a.localeCompare(b)),
  hashAllocate: (shardId, candidates) => {
    const sorted = actorTs.sorted(candidates)
    return sorted[shardId % sorted.length]
  },
  leastAllocate: (candidates, currentShards) => {
    let best = candidates[0]
    let bestLoad = currentShards.get(best)?.size ?? 0
    for (const c of candidates) {
      const load = currentShards.get(c)?.size ?? 0
      if (load < bestLoad || (load === bestLoad && c.localeCompare(best) < 0)) {
        best = c
        bestLoad = load
      }
    }
    return best
  },
}

// What an address may hold: system names exclude '/', '@', ':', '#', '?' and whitespace;
// hosts exclude '/', '@', '#', '?' and whitespace (shardline's address grammar).
const PUNCT = [...'!"$%&\'()*+,-.;<=>[\\]^_`{|}~']
const DIGITS = [...'0123456789']
const LOWER = [...'abcdefghijklmnopqrstuvwxyz']
const UPPER = LOWER.map((c) => c.toUpperCase())
// Characters localeCompare ignores (C0 controls that are not whitespace, DEL, soft hyphen,
// zero-width joiner), a combining accent (so "e\u0301" equals "é"), and non-ASCII letters.
const IGNORABLE = ['\u0001', '\u0007', '\u001f', '\u007f', '\u00ad', '\u200d']
const OTHER = [...'éÉèßøØæÆåÅñÑçüÜıİαΑωжЖ日本語한글', '\u0301', '\u0308', '😀', 'ǆ', 'ﬁ']

function generator(seed) {
  const { rnd, int, pick, shuffle } = seeded(seed)
  // Mostly the characters real addresses hold; sometimes anything the grammar accepts.
  const char = (forSystem) => {
    const r = rnd()
    if (r < 0.3) return pick(DIGITS)
    if (r < 0.5) return pick(LOWER)
    if (r < 0.65) return pick(UPPER)
    if (r < 0.85) return pick(forSystem ? PUNCT : [...PUNCT, ':'])
    if (r < 0.93) return pick(IGNORABLE)
    return pick(OTHER)
  }
  const word = (len, forSystem) => Array.from({ length: len }, () => char(forSystem)).join('')
  // Variations of one base address, so the strings share prefixes and differ late, as real
  // node addresses do (10.0.0.1 / 10.0.0.10, node-a / Node-A / node_a).
  const mutate = (s, forSystem) => {
    const cs = [...s]
    const i = int(cs.length + 1)
    switch (int(4)) {
      case 0:
        cs.splice(i, 0, char(forSystem))
        break
      case 1:
        if (cs.length > 1) cs.splice(Math.min(i, cs.length - 1), 1)
        break
      case 2:
        if (cs.length) cs[Math.min(i, cs.length - 1)] = char(forSystem)
        break
      default: {
        const k = Math.min(i, cs.length - 1)
        if (k >= 0) cs[k] = cs[k] === cs[k].toUpperCase() ? cs[k].toLowerCase() : cs[k].toUpperCase()
      }
    }
    const out = cs.join('')
    return out.length ? out : s
  }
  const ipv4 = () => Array.from({ length: 4 }, () => String(int(rnd() < 0.5 ? 12 : 256))).join('.')
  const address = (base) => {
    const system = rnd() < 0.7 ? base.system : mutate(base.system, true)
    let host = rnd() < 0.3 ? base.host : mutate(base.host, false)
    if (host.startsWith('[')) host = `h${host}` // '[' opens an IPv6 literal
    const port = rnd() < 0.6 ? base.port : String(int(rnd() < 0.5 ? 20 : 65536))
    return `${system}@${host}:${port}`
  }
  return () => {
    const base = {
      system: pick(['s', 'sys', 'Sys', 'my-app', 'MyApp', word(1 + int(6), true)]),
      host: pick([ipv4(), ipv4(), `node-${word(1 + int(3), false)}`, word(1 + int(10), false)]),
      port: String(pick([2552, 2553, 25520, 1, 10, 9])),
    }
    const n = 2 + int(7)
    const seen = new Set()
    for (let tries = 0; seen.size < n && tries < 4 * n; tries++) seen.add(address(base))
    return shuffle([...seen])
  }
}

test(`actor-ts address order equals localeCompare (seed ${SEED})`, (t) => {
  t.diagnostic(`seed ${SEED}: replay with SHARDLINE_SEED=${SEED}`)
  console.log(`actor-ts order differential: seed ${SEED} (replay with SHARDLINE_SEED=${SEED})`)
  const next = generator(SEED)
  const { rnd } = seeded(SEED ^ 0x5bd1e995)
  const hash = new HashAllocationStrategy()
  const least = new LeastShardAllocationStrategy()
  let compared = 0
  let ties = 0
  const differences = []
  for (let trial = 0; trial < TRIALS && differences.length < 5; trial++) {
    const candidates = next()
    // Every shard id below n lands on sorted[id], so the strategy reveals its whole order.
    const expected = actorTs.sorted(candidates)
    const got = candidates.map((_, i) => hash.allocate(i, candidates, new Map()))
    compared += candidates.length
    for (let i = 1; i < expected.length; i++) if (expected[i - 1].localeCompare(expected[i]) === 0) ties++
    if (!got.every((g, i) => g === expected[i])) {
      differences.push({ op: 'hash.allocate', candidates, expected, got })
    }
    // Least-shard: fewest shards, ties to the lowest address, then to the first candidate.
    const currentShards = new Map()
    let shard = 0
    for (const c of candidates) {
      const load = Math.floor(rnd() * 3)
      currentShards.set(c, new Set(Array.from({ length: load }, () => shard++)))
    }
    const want = actorTs.leastAllocate(candidates, currentShards)
    const have = least.allocate(shard, candidates, currentShards)
    if (have !== want) {
      differences.push({ op: 'least.allocate', candidates, loads: [...currentShards].map(([a, s]) => [a, s.size]), expected: want, got: have })
    }
  }
  t.diagnostic(`${compared} addresses ordered in ${TRIALS} trials, ${ties} localeCompare ties`)
  assert.deepEqual(differences, [], `seed ${SEED}: shardline's actor-ts order differs from localeCompare`)
  // The generator must reach the cases that matter, or the test proves little.
  assert.ok(ties > 0, 'no localeCompare ties (ignorable characters) were generated')
})

test('actor-ts address order: cases where byte order and localeCompare disagree', () => {
  const hash = new HashAllocationStrategy()
  for (const sorted of [
    ['s@10.0.0.1:2552', 's@10.0.0.10:2552', 's@10.0.0.2:2552'],
    ['a@h:1', 'B@h:1', 'S@h:1'],
    ['s@node_b:1', 's@node-a:1', 's@Node-A:1', 's@node.c:1', 's@nodea:1'],
  ]) {
    assert.deepEqual(actorTs.sorted([...sorted].reverse()), sorted, 'the expectation is localeCompare order')
    const candidates = [...sorted].reverse()
    assert.deepEqual(
      sorted.map((_, i) => hash.allocate(i, candidates, new Map())),
      sorted,
    )
  }
  // localeCompare ties (an ignorable control character): actor-ts's stable sort keeps
  // candidate order, in either order.
  for (const candidates of [['s@h\u0001:1', 's@h:1'], ['s@h:1', 's@h\u0001:1']]) {
    assert.equal(candidates[0].localeCompare(candidates[1]), 0)
    assert.deepEqual([0, 1].map((i) => hash.allocate(i, candidates, new Map())), candidates)
  }
})
