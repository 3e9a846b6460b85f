// Worker ids and Snowflake ids: the sans-IO generator, and a holder reserving ids in the
// in-memory registry under a simulated clock.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Snowflake, decomposeSnowflake, WorkerIdRegistry, WorkerIdHolder } from 'shardline'
import { thrown } from './helpers.mjs'

const T0 = Date.UTC(2026, 0, 1)

test('Snowflake issues increasing bigint ids that decompose to their parts', () => {
  const g = new Snowflake(5)
  const a = g.next(T0)
  const b = g.next(T0)
  const c = g.next(T0 + 1)
  assert.equal(typeof a, 'bigint')
  assert.ok(a < b && b < c)
  assert.deepEqual(decomposeSnowflake(b), { unixMs: T0, worker: 5, sequence: 1 })
  assert.deepEqual(decomposeSnowflake(c), { unixMs: T0 + 1, worker: 5, sequence: 0 })
  assert.equal(g.worker, 5)
  assert.equal(g.lastTimestampMs, T0 + 1)
})

test('Snowflake asks to wait when a millisecond is used up, and refuses bad layouts', () => {
  const g = new Snowflake(1, { layout: { timestampBits: 41, workerBits: 10, sequenceBits: 1 } })
  assert.notEqual(g.next(T0), null)
  assert.notEqual(g.next(T0), null)
  assert.equal(g.next(T0), null)
  assert.equal(g.waitUntilMs, T0 + 1)
  assert.notEqual(g.next(T0 + 1), null)
  assert.equal(thrown(() => new Snowflake(1, { layout: { timestampBits: 60 } })).code, 'INVALID_ARGUMENT')
  assert.equal(thrown(() => new Snowflake(4096)).code, 'INVALID_ARGUMENT')
  const fenced = new Snowflake(2, { floorMs: T0 + 50 })
  assert.equal(fenced.floorMs, T0 + 50)
  assert.equal(thrown(() => fenced.next(T0 + 100)).code, 'INVALID_STATE', 'a fenced generator needs a budget first')
  fenced.extendBudget(T0 + 1_000)
  assert.equal(decomposeSnowflake(fenced.next(T0 + 100)).unixMs, T0 + 100)
  assert.equal(fenced.next(T0 + 10), null, 'never below the floor')
  assert.ok(fenced.waitUntilMs > T0 + 50)
})

function simClock(registry) {
  return {
    wall: T0,
    mono: 0,
    wallMs() {
      return this.wall
    },
    monotonicMs() {
      return this.mono
    },
    sleepUntil(ms) {
      if (ms > this.mono) {
        this.wall += ms - this.mono
        this.mono = ms
        registry.advanceTo(this.mono)
      }
    },
  }
}

test('WorkerIdHolder reserves distinct ids, issues unique ids, and frees them on release', () => {
  const registry = new WorkerIdRegistry()
  const clock = simClock(registry)
  const a = new WorkerIdHolder(registry, { owner: 'a', incarnation: 1, clock, ttlMs: 3_000 })
  const b = new WorkerIdHolder(registry, { owner: 'b', incarnation: 1, clock, ttlMs: 3_000 })
  assert.deepEqual([a.workerId, b.workerId], [0, 1])
  assert.deepEqual(registry.liveClaims().map((c) => [c.workerId, c.owner]), [[0, 'a'], [1, 'b']])
  const ids = new Set()
  for (let i = 0; i < 2_000; i++) {
    ids.add(a.nextId())
    ids.add(b.nextId())
    if (i % 500 === 0) clock.sleepUntil(clock.mono + 1_000)
  }
  assert.equal(ids.size, 4_000)
  for (const id of ids) assert.equal(typeof id, 'bigint')
  assert.ok(a.budgetMs >= clock.wall)
  a.release()
  assert.equal(thrown(() => a.nextId()).code, 'INVALID_STATE')
  assert.deepEqual(registry.liveClaims().map((c) => c.workerId), [1])
  const c = new WorkerIdHolder(registry, { owner: 'c', incarnation: 1, clock })
  assert.equal(c.workerId, 0, 'the released id is reused')
  const reused = c.nextId()
  assert.ok(![...ids].includes(reused), 'the next holder of id 0 never repeats an id')
  b.close()
  b.close()
  c.close()
  assert.deepEqual(registry.liveClaims(), [])
})

test('a holder whose registry session ends loses its id; clock exceptions propagate', () => {
  const registry = new WorkerIdRegistry()
  const clock = simClock(registry)
  const h = new WorkerIdHolder(registry, { owner: 'a', incarnation: 1, clock, ttlMs: 3_000 })
  h.nextId()
  // Time passes without upkeep: the server ends the session, the local deadline passes.
  clock.mono += 10_000
  clock.wall += 10_000
  registry.advanceTo(clock.mono)
  assert.equal(thrown(() => h.nextId()).code, 'INVALID_STATE')

  const err = new Error('no clock')
  const broken = { wallMs: () => T0, monotonicMs: () => { throw err }, sleepUntil() {} }
  assert.equal(thrown(() => new WorkerIdHolder(registry, { owner: 'z', incarnation: 1, clock: broken })), err)
  assert.equal(thrown(() => new WorkerIdHolder({}, { owner: 'q', incarnation: 1, clock })).code, 'INVALID_ARGUMENT')
  const tiny = new WorkerIdRegistry()
  const one = new WorkerIdHolder(tiny, { owner: 'x', incarnation: 1, clock: simClock(tiny), workerBits: 1 })
  new WorkerIdHolder(tiny, { owner: 'y', incarnation: 1, clock: simClock(tiny), workerBits: 1 })
  assert.equal(thrown(() => new WorkerIdHolder(tiny, { owner: 'w', incarnation: 1, clock: simClock(tiny), workerBits: 1 })).code, 'NO_CANDIDATES')
  one.close()
})

test('ids above 2^53 stay exact', () => {
  const g = new Snowflake(1023)
  const wall = g.layout.epochMs + 2 ** 40
  const id = g.next(wall)
  assert.ok(id > 2n ** 53n)
  assert.deepEqual(decomposeSnowflake(id), { unixMs: wall, worker: 1023, sequence: 0 })
  assert.deepEqual(decomposeSnowflake(id + 1n), { unixMs: wall, worker: 1023, sequence: 1 })
  assert.equal(g.lastTimestampMs, wall)
})
