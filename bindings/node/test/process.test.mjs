// Whole-process behaviour, in child processes: both module formats load, and nothing the
// binding does keeps Node alive once the objects are closed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..')

// The limit only stops a hung child from hanging the suite; no assertion depends on time.
function run(args, input) {
  const r = spawnSync(process.execPath, args, { cwd: pkg, input, encoding: 'utf8', timeout: 120_000 })
  assert.equal(r.signal, null, `the child was killed (${r.signal}): it did not exit by itself\n${r.stderr}`)
  assert.equal(r.status, 0, r.stderr)
  return r.stdout.trim()
}

test('CommonJS require and ESM import give the same API', () => {
  const cjs = JSON.parse(run(['-e', "const s = require('shardline'); console.log(JSON.stringify({keys: Object.keys(s).sort(), region: s.decide({strategy: {kind: 'actor-ts-hash'}, op: 'allocate', candidates: ['s@h:1'], regions: [], shardId: '1'}).region}))"]))
  const esm = JSON.parse(
    run(['--input-type=module', '-e', "import * as s from 'shardline'; import d from 'shardline'; console.log(JSON.stringify({keys: Object.keys(s).filter(k => k !== 'default').sort(), region: s.decide({strategy: {kind: 'actor-ts-hash'}, op: 'allocate', candidates: ['s@h:1'], regions: [], shardId: '1'}).region, same: d.Strategy === s.Strategy}))"]),
  )
  assert.equal(cjs.region, 's@h:1')
  assert.equal(esm.region, 's@h:1')
  assert.equal(esm.same, true)
  assert.deepEqual(esm.keys, cjs.keys.filter((k) => k !== '__napiBindingTarget'))
})

test('a process using drivers with callbacks exits by itself after close()', () => {
  const script = `
    const { CoordinatorDriver, RegionDriver, Strategy } = require('shardline')
    const wire = []
    const strategy = new Strategy({ allocate: (state) => state.regions()[0].id })
    const c = new CoordinatorDriver({ strategy, selfAddress: 'pekko://s@h:1', transport: { send: (e) => wire.push(e) }, clock: () => 1000 })
    const got = []
    const r = new RegionDriver({
      id: 'a', node: 'pekko://s@h:2', extractor: (e) => e, transport: (e) => wire.push(e), clock: { nowMs: () => 1000 },
      host: { startShard() {}, deliver: (s, e, p) => got.push(p.toString()), stopShard: () => true },
    })
    c.member({ address: 'pekko://s@h:2' })
    c.start(); r.start()
    const pump = () => { while (wire.length) { const e = wire.shift(); e.to === 'coordinator' ? c.receive(e) : r.receive(e) } }
    pump(); r.route('x', 'delivered'); pump()
    r.close(); c.close()
    console.log(got.join(','))
  `
  assert.equal(run(['-e', script]), 'delivered')
})
