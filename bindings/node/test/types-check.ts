// Compiled (not run) by types.test.mjs: the published typings must describe the API.
import {
  AllocationState,
  Strategy,
  CoordinatorDriver,
  RegionDriver,
  ManualClock,
  InMemoryLease,
  InMemoryStore,
  HashAllocationStrategy,
  LeastShardAllocationStrategy,
  decide,
  replay,
  ErrorCode,
  type Envelope,
  type CoordinatorOutput,
  type CoordinatorPhase,
  type LeaseRequest,
  type RegionOutput,
  type ShardlineError,
  type ErrorCode as ErrorCodeType,
  Snowflake,
  WorkerIdRegistry,
  WorkerIdHolder,
  decomposeSnowflake,
  AsyncCoordinatorDriver,
  AsyncRegionDriver,
  Etcd,
} from 'shardline'

class NodeAddress {
  constructor(readonly host: string) {}
  toString(): string {
    return `sys@${this.host}:1`
  }
}

const candidates = [new NodeAddress('a'), new NodeAddress('b')]
const chosen: NodeAddress = new HashAllocationStrategy().allocate(3, candidates, new Map<string, Set<number>>())
const moves: Set<number> = new LeastShardAllocationStrategy(1, 3).rebalance(new Map(), candidates, new Set<number>())

const state = AllocationState.build({ regions: [{ id: 'sys@a:1', shards: [1, '2'] }] })
const custom = new Strategy({ name: 'mine', allocate: (s, shard, requester) => s.regions()[0]?.id ?? null })
const region: string | null = new Strategy({ kind: 'least-shard', absoluteLimit: 3 }).allocate(state, 'x')
const explained = custom.explainRebalance(state, ['1'])
const summary: string = explained.explanation.summary

const wire: Envelope[] = []
const clock = new ManualClock(0)
const lease = new InMemoryLease('c1', 10_000)
const coordinator = new CoordinatorDriver({
  strategy: custom,
  selfAddress: 'pekko://sys@h:1',
  transport: (e) => wire.push(e),
  clock,
  lease: lease.contender('c2'),
  store: new InMemoryStore(),
})
const driver = new RegionDriver({
  id: 'r1',
  node: 'pekko://sys@h:2',
  extractor: { kind: 'actor-ts', numShards: 64 },
  transport: { send: (e: Envelope) => wire.push(e) },
  host: { startShard() {}, deliver(shard, entity, payload: Buffer) {}, stopShard: () => true },
})
driver.route('user-1', 'hello')
const next: number | null = coordinator.poll()
const outputs: CoordinatorOutput[] = []
const d = decide({ strategy: { kind: 'actor-ts-hash' }, op: 'allocate', candidates: ['s@h:1'], shardId: '1' })
const replayed = replay('')
const mismatches: number = replayed.mismatches
const firstLine: number | undefined = replayed.first?.line
const expectedOutputs: unknown[] | undefined = replayed.first?.expected.outputs
const code: 'NO_CANDIDATES' = ErrorCode.NO_CANDIDATES
const anyCode: ErrorCodeType = code
function onError(e: ShardlineError) {
  const c: string = e.code
}

const flake: bigint | null = new Snowflake(3, { layout: { sequenceBits: 10 } }).next(Date.now())
const registry = new WorkerIdRegistry()
const holder = new WorkerIdHolder(registry, { owner: 'me', incarnation: 1 })
const id: bigint = holder.nextId()
const parts: number = decomposeSnowflake(id).worker

// etcd: the lease and store answer Promises, and the drivers take them.
async function onEtcd(etcd: Etcd) {
  const ns: string = etcd.namespace
  const l = etcd.lease('coordinator', 'me', { ttlMs: 10_000 })
  const h = await l.holder()
  const token: number | undefined = h?.token
  const s = etcd.store('state', { boundToLease: 'coordinator' })
  const loaded = await s.load(1)
  new AsyncCoordinatorDriver({ strategy: { kind: 'least-shard' }, selfAddress: 'pekko://sys@h:1', transport: () => {}, lease: l, store: s })
  new CoordinatorDriver({ strategy: { kind: 'least-shard' }, selfAddress: 'pekko://sys@h:1', transport: () => {}, lease: l, store: s })
  new WorkerIdHolder(etcd, { owner: 'me', incarnation: 1, ttlMs: 10_000 })
  const ar = new AsyncRegionDriver({
    id: 'r1', node: 'pekko://sys@h:2', extractor: { kind: 'pekko', numberOfShards: 10 }, transport: async () => {},
    host: { startShard () {}, deliver () {}, stopShard: async () => true },
  })
  ar.on('registered', () => {})
  ar.start()
  const homed: string | null = ar.homeOf('7')
  await ar.settled()
  // @ts-expect-error: options are an object
  etcd.lease('coordinator', 'me', 10_000)
}

// The wire forms are generated from the wire contract: outputs narrow on `type`, payloads are
// Buffers, and names are the contract's.
function payloadOf(o: RegionOutput): Buffer | null {
  return o.type === 'deliver' ? o.payload : null
}
const phase: CoordinatorPhase = 'acquiringLease'
// @ts-expect-error: phases are the contract's names
const badPhase: CoordinatorPhase = 'acquiring'
// @ts-expect-error: renewing names the token
const badRequest: LeaseRequest = { type: 'renew' }

// @ts-expect-error: kinds are checked
new Strategy({ kind: 'least-shards' })
// @ts-expect-error: a region driver needs a host
new RegionDriver({ id: 'r', node: 'n', extractor: { kind: 'pekko', numberOfShards: 10 }, transport: () => {} })
// @ts-expect-error: rebalance returns a Set of numbers
const wrong: string[] = new HashAllocationStrategy().rebalance(new Map(), [])

export { payloadOf, phase, badPhase, badRequest, anyCode, flake, parts, chosen, moves, region, summary, next, outputs, d, code, onError, wrong }
