// Three in-process nodes exchanging entity messages through shardline regions: a third node
// joins and shards are rebalanced onto it, then a node leaves gracefully, while messages keep
// flowing from every node. Checks that every message reached its entity exactly once, on a
// node hosting the entity's shard at that moment.
//
//   node examples/node/three-nodes.mjs        (after building bindings/node)
//
// In an application the import is `from 'shardline'`.
import assert from 'node:assert/strict'
import { CoordinatorDriver, RegionDriver, ManualClock, InMemoryLease, InMemoryStore } from '../../bindings/node/lib/index.mjs'

const clock = new ManualClock(0)
const wire = [] // envelopes in flight; delivered by pump(), never from inside a callback
const nodes = new Map() // region id -> node
const delivered = new Map() // message id -> times delivered
let sent = 0
let dropped = 0

const address = (i) => `pekko://shop@10.0.0.${i}:2552`

const coordinator = new CoordinatorDriver({
  strategy: { kind: 'least-shard', absoluteLimit: 3, relativeLimit: 0.5 },
  selfAddress: address(1),
  config: { rebalanceIntervalMs: 1_000, handoffTimeoutMs: 30_000 },
  transport: (envelope) => wire.push(envelope),
  clock,
  lease: new InMemoryLease('node-1', 60_000),
  store: new InMemoryStore(),
})

function startNode(i) {
  const id = `n${i}`
  const node = { id, hosted: new Set(), stopped: false }
  coordinator.member({ address: address(i) })
  node.region = new RegionDriver({
    id,
    node: address(i),
    extractor: { kind: 'actor-ts', numShards: 24 },
    transport: { send: (envelope) => wire.push(envelope) },
    clock,
    host: {
      startShard(shard) {
        node.hosted.add(shard)
      },
      deliver(shard, entity, payload) {
        assert.ok(node.hosted.has(shard), `${id} got a message for shard ${shard}, which it does not host`)
        const msg = payload.toString()
        delivered.set(msg, (delivered.get(msg) ?? 0) + 1)
      },
      stopShard(shard) {
        node.hosted.delete(shard)
        return true // stopped at once
      },
      undeliverable(shard, entity, payload, reason) {
        throw new Error(`undeliverable ${payload}: ${reason}`)
      },
      stopped() {
        node.stopped = true
      },
    },
  })
  nodes.set(id, node)
  node.region.start()
  return node
}

/** Delivers envelopes; after every `every` of them, `between` runs (to interleave sends). */
function pump(between = () => {}, every = 0) {
  for (let n = 1; wire.length; n++) {
    const e = wire.shift()
    if (e.to === 'coordinator') coordinator.receive(e)
    else if (nodes.has(e.to.region)) nodes.get(e.to.region).region.receive(e)
    else dropped++
    if (every && n % every === 0) between()
  }
}

const live = () => [...nodes.values()].filter((n) => !n.stopped)
let seed = 7
const random = (k) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  return seed % k
}

function send() {
  const from = live()[random(live().length)]
  from.region.route(`customer-${random(60)}`, `m${sent++}`)
}

/** Lets time pass: timers fire, the coordinator rebalances; messages keep coming. */
function tick(rounds) {
  let moves = 0
  for (let r = 0; r < rounds; r++) {
    clock.advance(1_000)
    coordinator.poll()
    for (const n of live()) n.region.poll()
    pump(send, 3)
    moves += coordinator.takeNotices().filter((x) => x.type === 'handOffCompleted').length
  }
  return moves
}

// Two nodes, then traffic.
startNode(1)
startNode(2)
coordinator.start()
pump()
for (let k = 0; k < 200; k++) send()
pump()
const shardsOf = () => Object.fromEntries(coordinator.regions().map((r) => [r.region, r.shards.length]))
console.log('two nodes:', shardsOf())

// A third node joins; rebalancing moves shards onto it while messages flow.
startNode(3)
pump(send, 2)
const movedIn = tick(8)
console.log(`node 3 joined: ${movedIn} shard(s) handed off`, shardsOf())
assert.ok(movedIn > 0, 'the join triggered a rebalance')
assert.ok(nodes.get('n3').hosted.size > 0, 'node 3 hosts shards')

// Node 2 leaves gracefully: its shards move to the others, nothing is lost.
const leaving = nodes.get('n2')
leaving.region.gracefulShutdown()
pump(send, 2)
tick(5)
assert.ok(leaving.stopped, 'node 2 finished its shutdown')
assert.equal(leaving.hosted.size, 0)
coordinator.memberRemoved(address(2))
for (const n of live()) n.region.regionTerminated('n2')
leaving.region.close()
nodes.delete('n2')
for (let k = 0; k < 200; k++) send()
pump()
tick(3)
console.log('node 2 left:', shardsOf())

const missing = []
const duplicated = []
for (let m = 0; m < sent; m++) {
  const times = delivered.get(`m${m}`) ?? 0
  if (times === 0) missing.push(m)
  if (times > 1) duplicated.push(m)
}
assert.deepEqual(missing, [], 'every message was delivered')
assert.deepEqual(duplicated, [], 'no message was delivered twice')
assert.equal(delivered.size, sent)
console.log(`${sent} messages, each delivered exactly once (${dropped} envelopes to the departed node dropped)`)

for (const n of nodes.values()) n.region.close()
coordinator.close()
