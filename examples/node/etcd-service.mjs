// An event-loop service on etcd, placed by shardline: two nodes, one coordinator at a time.
//
// Two nodes live in one process. Each runs a shard region and a coordinator contender; the
// contenders share an etcd lease and a fenced etcd store bound to it, so one coordinates and
// the other stands by. Regions talk through an in-process transport; entities record every
// message they receive. The story:
//
// 1. node A starts alone: its coordinator takes the lease and gives A every shard on first
//    contact, and traffic flows;
// 2. node B joins: the coordinator's rebalance moves shards to B while traffic keeps flowing
//    (its decision events are printed, one per line, as the coordinator emits them);
// 3. A's coordinator stops and releases the lease: B's, the standby, takes it over, restores
//    the shard homes from etcd and keeps deciding (homes for shards no one has used yet).
//
// It asserts its own outcome (every message delivered exactly once, on the node hosting the
// shard at the time; shards moved on the join; the successor became active with A's homes)
// and exits non-zero otherwise. Nothing blocks the event loop: the etcd requests run on the
// libuv thread pool and the AsyncCoordinatorDriver awaits them. Each run uses a namespace of
// its own.
//
//   etcd &        # or any etcd; the endpoints come from SHARDLINE_ETCD_ENDPOINTS or --etcd
//   node examples/node/etcd-service.mjs [--etcd URL,...]
//
// (after `npx napi build --platform --features etcd` in bindings/node, or with the published
// package). In an application the import is `from 'shardline'`.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'

import { AsyncCoordinatorDriver, AsyncRegionDriver, Etcd, pekkoShardId } from '../../bindings/node/lib/index.mjs'

const SHARDS = 12
const PER_SHARD = 3 // entities per shard
const FIRST_SHARDS = [...Array(10).keys()].map(String) // used from the start; the last two only after the takeover
// Half the shards may move in one round, so the join settles in a single rebalance.
const STRATEGY = { kind: 'least-shard', relativeLimit: 0.5 }
const COORDINATOR = {
  decisionEvents: true,
  rebalanceIntervalMs: 300,
  leaseRetryIntervalMs: 200, // how soon the standby asks for the lease again
}
const REGION = { retryIntervalMs: 200 }
const LEASE_TTL_MS = 5_000

const { values: args } = parseArgs({
  options: { etcd: { type: 'string', default: process.env.SHARDLINE_ETCD_ENDPOINTS || 'http://127.0.0.1:2379' } },
})
const endpoints = args.etcd.split(',').filter(Boolean)
const namespace = `shardline-example/${randomUUID()}`
const started = performance.now()
const now = () => Math.floor(performance.now())
const at = () => `${((performance.now() - started) / 1000).toFixed(2).padStart(5)}s`
setTimeout(() => {
  console.error('FAILED: the story did not finish within 30 s')
  process.exit(1)
}, 30_000).unref()

/** PER_SHARD entity ids for every shard, found by the shard function the regions use. */
function entitiesByShard () {
  const found = new Map()
  for (let i = 0; found.size < SHARDS || [...found.values()].some((es) => es.length < PER_SHARD); i++) {
    const entity = `account-${i}`
    const shard = pekkoShardId(entity, SHARDS)
    if (!found.has(shard)) found.set(shard, [])
    if (found.get(shard).length < PER_SHARD) found.get(shard).push(entity)
  }
  return found
}

// ---- the in-process transport: the coordinator's envelopes go to whichever is active ----

const nodes = new Map() // name -> node
const wire = []
let scheduled = false
function send (envelope) {
  wire.push(envelope) // delivered later, never from inside the callback that sent it
  if (!scheduled) {
    scheduled = true
    setImmediate(deliverAll)
  }
}
function deliverAll () {
  scheduled = false
  while (wire.length > 0) {
    const env = wire.shift()
    for (const n of nodes.values()) {
      if (env.to === 'coordinator') {
        if (n.coordinator.isActive) n.coordinator.receive(env)
      } else if (env.to.region === n.regionId) {
        n.region.receive(env)
      }
    }
  }
}

// ---- nodes ----

const deliveries = new Map() // message id -> [[node, shard, entity], ...]
const events = [] // [coordinator's node, notice]
let sent = 0

/** An actor: it records what it receives. */
class Entity {
  constructor (node, shard, id) { Object.assign(this, { node, shard, id }) }
  receive (payload) {
    const id = Number(payload.toString())
    if (!deliveries.has(id)) deliveries.set(id, [])
    deliveries.get(id).push([this.node.name, this.shard, this.id])
  }
}

class Node {
  constructor (name, index) {
    this.name = name
    this.address = `pekko://shop@10.0.0.${index}:2552`
    this.regionId = `${name}-region`
    this.entities = new Map()
    this.hosted = new Set()
    // A handle per node, as separate processes would have; the lease and the store are named
    // the same for every contender.
    const etcd = new Etcd(endpoints, namespace, { timeoutMs: 5_000 })
    this.coordinator = new AsyncCoordinatorDriver({
      strategy: STRATEGY,
      selfAddress: this.address,
      transport: send,
      lease: etcd.lease('coordinator', name, { ttlMs: LEASE_TTL_MS }),
      store: etcd.store('state', { boundToLease: 'coordinator' }),
      config: COORDINATOR,
    })
    this.watch()
    const node = this
    this.region = new AsyncRegionDriver({
      id: this.regionId,
      node: this.address,
      extractor: { kind: 'pekko', numberOfShards: SHARDS },
      config: REGION,
      transport: { send },
      clock: now,
      host: { // called by the region; nothing here calls back into it
        startShard (shard) { node.hosted.add(shard) },
        deliver (shard, entity, payload) {
          assert.ok(node.hosted.has(shard), `${name} got a message for shard ${shard}, not hosted here`)
          if (!node.entities.has(entity)) node.entities.set(entity, new Entity(node, shard, entity))
          node.entities.get(entity).receive(payload)
        },
        stopShard (shard) {
          node.hosted.delete(shard)
          for (const [id, e] of node.entities) if (e.shard === shard) node.entities.delete(id)
          return true
        },
      },
    })
  }

  start () {
    this.coordinator.start() // contends for the lease; its timers run by themselves
    this.region.start() // registers; its retries run by themselves too
  }

  /** Decision events as the coordinator emits them; a coordinator that became active is
   * announced to every region, which registers with it. */
  watch () {
    let lastRound = null
    const record = (n) => events.push([this.name, n])
    this.coordinator.on('notice', record)
    this.coordinator.on('active', (n) => {
      console.log(`  ${at()} ${this.name}  coordinator active (fencing token ${n.token})`)
      for (const m of nodes.values()) m.region.coordinatorChanged()
    })
    this.coordinator.on('allocated', (n) => {
      console.log(`  ${at()} ${this.name}  allocated       shard ${n.shard.padStart(2)} -> ${n.region}: ${n.explanation.summary}`)
    })
    this.coordinator.on('rebalanceRound', (n) => {
      // Rounds come every rebalance interval: a round is shown when it moves shards or says
      // something new.
      const summary = n.explanation.summary
      if (n.shards.length > 0 || summary !== lastRound) {
        console.log(`  ${at()} ${this.name}  rebalanceRound  moves ${n.shards.join(',') || 'nothing'}: ${summary}`)
      }
      lastRound = summary
    })
  }
}

function tell (via, entity) {
  via.region.route(entity, String(sent++))
}

const homes = () => new Map([...nodes.values()].flatMap((n) => [...n.hosted].map((s) => [s, n.name])))

async function until (cond, what, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs
  while (!cond()) {
    if (performance.now() > deadline) {
      const last = [...nodes.values()].flatMap((n) => n.coordinator.takeErrors().slice(-1).map((e) => `${n.name}'s: ${e.message}`))
      throw new Error(`timed out waiting: ${what}${last.length ? ` (last coordinator error ${last.join('; ')})` : ''}`)
    }
    await sleep(10)
  }
}
const allDelivered = (what) => until(() => deliveries.size === sent, what)
const byShardOrder = (a, b) => Number(a) - Number(b)

// ---- the story ----

const byShard = entitiesByShard()
const first = FIRST_SHARDS.flatMap((s) => byShard.get(s))
const everyone = [...byShard.values()].flat()
let seed = 7
const pick = (xs) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  return xs[seed % xs.length]
}
console.log(`etcd ${endpoints.join(',')}, namespace ${namespace}`)

console.log('node A starts alone')
const a = new Node('A', 1)
nodes.set('A', a)
a.coordinator.member({ address: a.address })
a.start()
await until(() => a.coordinator.isActive && a.region.isRegistered, 'A coordinates')
for (const e of first) tell(a, e)
await allDelivered('the first messages delivered')
assert.deepEqual(new Set(homes().values()), new Set(['A']))
console.log(`  ${homes().size} shards on A, ${sent} messages delivered`)

console.log('node B joins; its coordinator stands by; the rebalance:')
const b = new Node('B', 2)
nodes.set('B', b)
for (const n of [a, b]) {
  n.coordinator.member({ address: a.address })
  n.coordinator.member({ address: b.address })
}
b.start()
const traffic = setInterval(() => tell(pick([a, b]), pick(first)), 5)
await until(() => b.hosted.size === FIRST_SHARDS.length / 2, 'B hosts half the shards')
clearInterval(traffic)
await allDelivered('the messages sent during the rebalance delivered')
const moved = [...b.hosted].sort(byShardOrder)
assert.equal(b.coordinator.isActive, false, 'B stood by while A held the lease')
const allocations = (c) => Object.fromEntries(c.regions().map((r) => [r.region, [...r.shards].sort(byShardOrder)]))
const homesBefore = allocations(a.coordinator)
assert.deepEqual(homesBefore, { 'A-region': [...a.hosted].sort(byShardOrder), 'B-region': moved })
console.log(`  shards ${moved.join(',')} moved to B; ${sent} messages delivered so far`)

console.log("A's coordinator stops and releases the lease; B's takes over from etcd:")
const tokenBefore = a.coordinator.token
a.coordinator.stop()
await until(() => b.coordinator.isActive, "B's coordinator active")
assert.ok(b.coordinator.token > tokenBefore, `token ${b.coordinator.token} after ${tokenBefore}`)
assert.deepEqual(allocations(b.coordinator), homesBefore, 'the successor restored the homes from etcd')
console.log(`  B's coordinator restored the homes of ${Object.values(homesBefore).flat().length} shards`)
for (const e of everyone) tell(pick([a, b]), e) // the last shards are new: B's coordinator gives them homes
await allDelivered('the messages after the takeover delivered')
await until(() => homes().size === SHARDS, 'every shard hosted')
await until(() => events.some(([who, n]) => who === 'B' && n.type === 'rebalanceRound'), "a rebalance round of B's coordinator")

const late = [...byShard.keys()].filter((s) => !FIRST_SHARDS.includes(s)).sort(byShardOrder)
const decidedByB = new Set(events.filter(([who, n]) => who === 'B' && n.type === 'allocated').map(([, n]) => n.shard))
assert.ok(late.every((s) => decidedByB.has(s)), `B's coordinator homed ${late}`)
const duplicated = [...deliveries].filter(([, d]) => d.length > 1).map(([m]) => m)
assert.deepEqual(duplicated, [], 'no message delivered twice')
assert.deepEqual([...deliveries.keys()].sort((x, y) => x - y), [...Array(sent).keys()], 'every message delivered')
const decisions = events.filter(([, n]) => n.type === 'allocated' || n.type === 'rebalanceRound').length
console.log(
  `${sent} messages delivered exactly once; ${moved.length} shards moved to B on the join; ` +
  `B's coordinator took over (token ${tokenBefore} -> ${b.coordinator.token}) and homed shards ${late.join(',')}; ` +
  `${decisions} decision events; ${((performance.now() - started) / 1000).toFixed(1)}s`,
)

b.coordinator.stop() // releases the lease
await Promise.all([a.coordinator.settled(), b.coordinator.settled()])
for (const n of nodes.values()) {
  n.region.close()
  assert.deepEqual(n.coordinator.takeErrors(), [], `${n.name}'s coordinator had no failed calls`)
}
