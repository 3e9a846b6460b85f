// Load reports, offers and drains through the callback drivers: a region's report changes
// where least-load puts a shard, and a drained region's shards move away.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Cluster } from './cluster.mjs'

/** a hosts shards p-s, b shards t-w; with `reported`, a's weigh 5 and b's 1. */
function fourAndFour(reported) {
  const c = new Cluster({ strategy: { kind: 'least-load', absoluteLimit: 2 }, config: { rebalanceIntervalMs: 1_000 } })
  c.addRegion('a', 1).start()
  c.coordinator.start()
  c.pump()
  for (const s of 'pqrs') c.regions.get('a').route(`${s}-1`, s)
  c.pump()
  c.addRegion('b', 2).start()
  c.pump()
  for (const s of 'tuvw') c.regions.get('b').route(`${s}-1`, s)
  c.pump()
  assert.deepEqual(c.coordinator.regions().map((r) => r.shards.join('')), ['pqrs', 'tuvw'])
  if (reported) {
    c.regions.get('a').reportLoads({ p: 5, q: 5, r: 5, s: 5 })
    c.regions.get('b').reportLoads({ t: 1, u: 1, v: 1, w: 1.0 })
    c.pump()
  }
  return c
}

for (const [reported, home] of [[false, 'a'], [true, 'b']]) {
  test(`least-load puts a new shard on ${home} when loads are ${reported ? '' : 'not '}reported`, () => {
    const c = fourAndFour(reported)
    c.regions.get('a').route('z-1', 'z')
    c.pump()
    // Counted by shards the two are even and map order picks a; a's load sends it to b.
    assert.equal(c.coordinator.homeOf('z'), home)
    assert.equal('loads' in c.coordinator.snapshot(), reported)
  })
}

test('a drained region gives its shards away; bad loads are named', () => {
  const c = fourAndFour(false)
  c.coordinator.drain('a')
  for (let i = 0; i < 4; i++) {
    c.clock.advance(1_000)
    c.coordinator.poll()
    c.pump()
  }
  assert.deepEqual(c.coordinator.shardsOf('a'), [])
  assert.equal(c.coordinator.snapshot().regions[0].draining, true)
  c.coordinator.undrain('a')
  assert.equal('draining' in c.coordinator.snapshot().regions[0], false)
  assert.throws(() => c.regions.get('a').reportLoads({ p: -1 }), {
    code: 'INVALID_ARGUMENT',
    message: /loads\.p: expected a finite number >= 0, got -1/,
  })
  assert.throws(() => c.regions.get('a').updateOffer({ capacity: 0 }), { message: /capacity: expected a finite number > 0/ })
  const plain = new Cluster()
  plain.addRegion('a', 1).start()
  plain.coordinator.start()
  plain.pump()
  assert.throws(() => plain.coordinator.drain('a'), { code: 'INVALID_STATE', message: /strategy least-shard does not drain/ })
})
