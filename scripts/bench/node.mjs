// Per-call cost of the Node binding on the standard overhead workload (BENCHMARKS.md):
// allocate on a 10-region x 1000-shard state, and one coordinator step (GetShardHome for an
// allocated shard, outputs drained), and the binding's cheapest call: a plain napi function
// taking one handle and answering an integer (`_regionCount`, behind `state.regionCount`),
// which issue 18 bounds allocate's extra cost by. Run by scripts/bench/node.sh after a
// release build.
//
//   node scripts/bench/node.mjs [--quick] [--out FILE]
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { AllocationState, Coordinator, Strategy } from '../../bindings/node/lib/index.mjs'

const native = createRequire(import.meta.url)('../../bindings/node/index.js')
const args = process.argv.slice(2)
const quick = args.includes('--quick')
const outAt = args.indexOf('--out')
const out = outAt >= 0 ? args[outAt + 1] : null
if (outAt >= 0 && !out) throw new Error('--out needs a file name')

// Best of `rounds` timed loops of `n` calls, after a warm-up loop (lets the JIT settle).
function perCall (f, n) {
  for (let i = 0; i < n; i++) f()
  let best = Infinity
  for (let r = 0; r < (quick ? 3 : 7); r++) {
    const t = process.hrtime.bigint()
    for (let i = 0; i < n; i++) f()
    best = Math.min(best, Number(process.hrtime.bigint() - t) / n)
  }
  return best
}

const node = (i) => `pekko://sys@10.0.0.${i}:2552`
const n = quick ? 100_000 : 500_000

const strategy = new Strategy({ kind: 'least-shard' })
const state = new AllocationState(node(0))
for (let i = 0; i < 10; i++) {
  state.upsertMember({ address: node(i) })
  state.addRegion(`r${i}`, node(i))
}
for (let s = 0; s < 1000; s++) state.addShard(strategy.allocate(state, String(s)), String(s))
assert.match(strategy.allocate(state, 'new'), /^r\d$/)
const allocate = perCall(() => strategy.allocate(state, 'new'), n)

const c = new Coordinator({ strategy: { kind: 'least-shard' }, selfAddress: node(0) })
c.start(0)
c.handle(0, { type: 'leaseGranted', token: 1, validUntilMs: Number.MAX_SAFE_INTEGER })
c.handle(0, { type: 'stateLoaded', state: { snapshot: null, events: [] } })
c.handle(0, { type: 'member', member: { address: node(1) } })
const from = { region: 'r1' }
c.handle(0, { type: 'receive', envelope: { from, to: 'coordinator', message: { command: { type: 'register', node: node(1) } } } })
const ask = { type: 'receive', envelope: { from, to: 'coordinator', message: { command: { type: 'getShardHome', shard: '7' } } } }
c.handle(0, ask)
c.drainOutputs()
const step = () => { c.handle(0, ask); return c.drainOutputs() }
const first = step()
assert.equal(first.length, 1)
assert.equal(first[0].envelope.message.directive.type, 'shardHome')
const coordinatorStep = perCall(step, n / 5)
assert.equal(native._regionCount(state), 10)
const cheapest = perCall(() => native._regionCount(state), n)

const figures = [
  { name: 'overhead.node.allocate', value: allocate, unit: 'ns' },
  { name: 'overhead.node.coordinator-step', value: coordinatorStep, unit: 'ns' },
  { name: 'overhead.node.cheapest-call', value: cheapest, unit: 'ns' }
]
for (const f of figures) console.log(`${f.name.padEnd(32)} ${f.value.toFixed(0).padStart(8)} ns`)
if (out) writeFileSync(out, JSON.stringify({ figures, ratios: [] }, null, 1) + '\n')
