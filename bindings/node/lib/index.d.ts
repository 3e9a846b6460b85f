// Types of the package entry: the native module's (generated, ../index.d.ts) plus the
// actor-ts-shaped strategies of ./actor-ts.cjs.

import type { ErrorCode as ErrorCodeName, AllocationState, Amount, ShardRule, RegionOffer, CoordinatorConfig, CoordinatorInput, CoordinatorNotice, CoordinatorOutput, CoordinatorPhase, CoordinatorRegion, Decision, Envelope, Explanation, LeaseGrant, Member, MemberInit, Metric, RegionInfo, RegionNotice, RegionOptions, RegionInput, Payload, RegionOutput, Replayed, ShardId, Snapshot, SnowflakeLayout, Stamp, StoredRecord, StoredState, Strategy, StrategyConfig, CustomStrategy, Vector, WriteOutcome } from '../index'

import { EventEmitter } from 'node:events'

export * from '../index'

/** The `err.code` of every error shardline throws, by name. */
export declare const ErrorCode: { readonly [K in ErrorCodeName]: K }
/** One of the status names (a local declaration hides the re-exported one, so restate it). */
export type ErrorCode = ErrorCodeName

/** An error thrown by shardline (a value thrown by your callback comes back as it was). */
export interface ShardlineError extends Error {
  code: ErrorCodeName
}

/** What actor-ts passes as a node: a NodeAddress or anything whose `toString()` is its address. */
export type NodeAddressLike = { toString(): string } | string

/**
 * actor-ts's `AllocationStrategy` shape over a shardline strategy: pass it to actor-ts as
 * `allocationStrategy`.
 */
export declare class ShardlineAllocationStrategy {
  constructor(strategy: Strategy | StrategyConfig | CustomStrategy)
  readonly strategy: Strategy
  /**
   * The element of `candidates` (the same object) that should host `shardId`; undefined when
   * the strategy decides later. Throws NO_CANDIDATES when `candidates` is empty.
   */
  allocate<A extends NodeAddressLike>(
    shardId: ShardId,
    candidates: readonly A[],
    currentShards?: ReadonlyMap<string, ReadonlySet<ShardId> | readonly ShardId[]>,
  ): A
  /** Shards to hand off, in decision order; numeric ids come back as numbers. */
  rebalance(
    currentShards: ReadonlyMap<string, ReadonlySet<ShardId> | readonly ShardId[]>,
    candidates: readonly NodeAddressLike[],
    rebalanceInProgress?: ReadonlySet<ShardId> | readonly ShardId[],
  ): Set<number>
}

/** actor-ts `HashAllocationStrategy`. */
export declare class HashAllocationStrategy extends ShardlineAllocationStrategy {
  constructor()
}

/** actor-ts `LeastShardAllocationStrategy`, with a strict threshold. */
export declare class LeastShardAllocationStrategy extends ShardlineAllocationStrategy {
  constructor(rebalanceThreshold?: number, maxSimultaneousRebalance?: number)
}

/** A node's least-load profile: capacity (default 1), tags, a shard cap, draining. */
export interface NodeProfile {
  capacity?: Amount
  tags?: string[]
  maxShards?: number
  draining?: boolean
}

/**
 * shardline's least-load in actor-ts's shape, over the loads and node profiles the host
 * reports; with none reported it decides as Pekko's least-shard.
 */
export declare class LeastLoadAllocationStrategy extends ShardlineAllocationStrategy {
  constructor(options?: { absoluteLimit?: number; relativeLimit?: number; band?: number; maxLoadMoved?: Amount })
  /** A shard's load; null goes back to the default 1. */
  setLoad(shardId: ShardId, load: Amount | null): void
  /** A node's profile; null goes back to the defaults. */
  setNode(address: NodeAddressLike, profile: NodeProfile | null): void
  /** Where a shard may live (pin: a node address); null removes the rule. */
  setRule(shardId: ShardId, rule: ShardRule | null): void
}

/** Pekko/Akka 2.6 `LeastShardAllocationStrategy(absoluteLimit, relativeLimit)`. */
export declare class PekkoLeastShardAllocationStrategy extends ShardlineAllocationStrategy {
  constructor(absoluteLimit?: number, relativeLimit?: number)
}

/** Pekko's default `ShardCoordinator.LeastShardAllocationStrategy`. */
export declare class PekkoLegacyLeastShardAllocationStrategy extends ShardlineAllocationStrategy {
  constructor(rebalanceThreshold?: number, maxSimultaneousRebalance?: number)
}

/** Pekko `ConsistentHashingShardAllocationStrategy`. */
export declare class ConsistentHashingShardAllocationStrategy extends ShardlineAllocationStrategy {
  constructor(rebalanceLimit?: number, virtualNodesFactor?: number)
}

declare const shardline: typeof import('./index')
export default shardline

// The library's functions (./functions.cjs).
/** Pekko `HashCodeMessageExtractor`: `abs(entityId.hashCode % numberOfShards)`, as a string. */
export declare function pekkoShardId(entityId: string, numberOfShards: number): string
/** actor-ts `hashShardId`: `Math.abs(fnv1a32(entityId)) % numShards`. */
export declare function actorTsShardId(entityId: string, numShards: number): number
/** Pekko `MurmurHash.stringHash` (the consistent-hashing ring's hash), a signed 32-bit int. */
export declare function pekkoStringHash(text: string): number
/** Decides one conformance vector (or an array of them) exactly like `shardline decide`. */
export declare function decide(vector: Vector | Vector[], options?: { explain?: boolean }): Decision | Decision[]
/** `decide` on JSON text, returning JSON text (byte for byte what the CLI prints). */
export declare function decideJson(json: string, explain?: boolean): string
/**
 * Replays a state-machine trace (JSON lines, tests/traces/README.md) on fresh coordinator
 * and region machines and checks every output: `{steps, mismatches, first}`, `first` naming
 * the first step that differs or null. Throws INVALID_ARGUMENT for a trace that cannot be
 * read, naming the line and field.
 */
export declare function replay(text: string): Replayed

/** Splits an id into its Unix millisecond, worker and sequence. */
export declare function decomposeSnowflake(id: bigint | number, layout?: SnowflakeLayout): { unixMs: number; worker: number; sequence: number }

/** Every native class's operations by their shared snake_case names (./ops.cjs). */
export interface NamedOperations {
  op(name: string, args: unknown[]): unknown
}

/** What a coordinator answers, the step machine and the driver alike (./machines.cjs). */
export interface CoordinatorQueries {
  readonly phase: CoordinatorPhase
  readonly isActive: boolean
  /** The fencing token of the lease held, or null. */
  readonly token: number | null
  homeOf(shard: ShardId): string | null
  /** Registered regions in map order, with their nodes and shards (oldest first). */
  regions(): CoordinatorRegion[]
  /** Gauges and counters under OpenTelemetry-style names (`shardline.coordinator.*`). */
  metrics(): Metric[]
  handoffsInProgress(): string[]
  /** Whether a region is registered and has not been seen to die. */
  isAlive(region: string): boolean
  /** A region's shards, oldest first. */
  shardsOf(region: string): string[]
  /** Shards the coordinator knows of that have no home. */
  unallocated(): string[]
  /** The persistent state as a snapshot. */
  snapshot(): Snapshot
  /** The settings it runs with, defaults filled in. */
  readonly config: CoordinatorConfig
}

/** What a region answers, the step machine and the driver alike (./machines.cjs). */
export interface RegionQueries {
  readonly id: string
  readonly isRegistered: boolean
  /** Messages waiting for shard homes. */
  readonly buffered: number
  /** Shards hosted here (in any state), sorted. */
  localShards(): string[]
  /** Shards hosted here and accepting messages, sorted. */
  runningShards(): string[]
  homeOf(shard: ShardId): string | null
  bufferedFor(shard: ShardId): number
  /** The fencing token and version of the newest directive seen for `shard`, or null. */
  latestStamp(shard: ShardId): Stamp | null
  /** Gauges and counters under OpenTelemetry-style names (`shardline.region.*`). */
  metrics(): Metric[]
}

// Methods written in JavaScript: the queries over each native class's `op(name, args)`
// (./machines.cjs and the other modules that call ./ops.cjs's `define`), the drivers'
// one-input methods (./inputs.cjs, over `handle`) and the step API's envelope path
// (./envelope.cjs).
/**
 * The coordinator on the event loop: host methods may return promises; an input steps the
 * state machine and starts the calls it needs, and nothing after a store write starts before
 * the write has completed. Timers run by themselves after `start()` until `stop()`.
 */
export interface AsyncCoordinatorDriver extends CoordinatorQueries {}
export declare class AsyncCoordinatorDriver extends EventEmitter {
  constructor(options: {
    strategy: Strategy | StrategyConfig | CustomStrategy
    selfAddress: string
    transport: ((envelope: Envelope) => unknown) | { send(envelope: Envelope): unknown }
    lease: {
      acquire(nowMs: number): unknown
      renew(token: number, nowMs: number): unknown
      release(token: number): unknown
    }
    store: {
      append(token: number, record: StoredRecord): unknown
      saveSnapshot(token: number, snapshot: Snapshot): unknown
      load(token: number): unknown
    }
    clock?: (() => number) | { nowMs(): number }
    config?: CoordinatorConfig
    /** A call that rejected, or answered in a form that does not fit (default: kept for takeErrors). */
    onError?: (error: unknown) => void
  })
  start(): void
  /** Any step input, e.g. `{ type: 'regionTerminated', region: 'r1' }`. */
  handle(input: CoordinatorInput): void
  receive(envelope: Envelope): void
  member(member: MemberInit): void
  memberRemoved(address: string): void
  reachability(address: string, reachable: boolean): void
  regionTerminated(region: string): void
  leaseLost(): void
  preparingForShutdown(): void
  stop(): void
  /** A planned shutdown of `region`: least-load moves its shards away within its budget. */
  drain(region: string): void
  undrain(region: string): void
  /** Resolves once no host call is in flight. */
  settled(): Promise<void>
  nextDeadline(): number | null
  readonly inFlight: number
  takeNotices(): CoordinatorNotice[]
  takeErrors(): unknown[]
}

/**
 * A region on the event loop: the RegionDriver, whose transport and entity-host methods may
 * return promises, with its timers fired at their deadlines after `start()`. A `stopShard`
 * that returns a promise counts as "not stopped yet" until it resolves (to anything but
 * false). Emits the region's notices as `'notice'` and under their own type.
 */
/** The region drivers' one-input methods (./inputs.cjs, over `handle`). */
export interface RegionDriverInputs {
  /** A message from the coordinator or another region. */
  receive(envelope: Envelope): void
  /** The host finished stopping a shard whose `stopShard` returned false. */
  shardStopped(shard: ShardId): void
  entityPassivated(shard: ShardId, entity: string): void
  /** The coordinator moved (or may have): register again. */
  coordinatorChanged(): void
  /** Another region died: forget the homes it had. */
  regionTerminated(region: string): void
  /** Hands every shard off, then calls the host's `stopped`. */
  gracefulShutdown(): void
  /** What the host measured: shard id to a number, or to a number per dimension. */
  reportLoads(loads: Record<ShardId, Amount>): void
  /** The region's capacity, tags or shard cap changed (the whole offer). */
  updateOffer(offer: RegionOffer): void
}
export interface AsyncRegionDriver extends RegionQueries, RegionDriverInputs {}
export declare class AsyncRegionDriver extends EventEmitter {
  constructor(options: RegionOptions & {
    transport: ((envelope: Envelope) => unknown) | { send(envelope: Envelope): unknown }
    host: {
      startShard(shard: string, entities: string[]): unknown
      startEntities?(shard: string, entities: string[]): unknown
      deliver(shard: string, entity: string, payload: Buffer): unknown
      stopShard(shard: string): boolean | void | Promise<boolean | void>
      undeliverable?(shard: string, entity: string, payload: Buffer, reason: string): unknown
      stopped?(): unknown
    }
    clock?: (() => number) | { nowMs(): number }
    /** A host or transport promise that rejected (default: kept for takeErrors). */
    onError?: (error: unknown) => void
  })
  /** Registers with the coordinator and fires the timers from now on. */
  start(): void
  route(entity: string, payload: Payload): void
  routeToShard(shard: ShardId, entity: string, payload: Payload): void
  handle(input: RegionInput): void
  shardOf(entity: string): string
  /** Resolves once no promise of the host or transport is pending. */
  settled(): Promise<void>
  nextDeadline(): number | null
  takeNotices(): RegionNotice[]
  takeErrors(): unknown[]
  close(): void
}

declare module '../index' {
  interface AllocationState extends NamedOperations {
    readonly selfAddress: string
    readonly regionCount: number
    readonly shardCount: number
    /** Adds or replaces a cluster member (matched by address). */
    upsertMember(member: MemberInit): void
    /** Removes a member; true if it was known. */
    removeMember(address: string): boolean
    setReachable(address: string, reachable: boolean): void
    /** The members, sorted by address. */
    members(): Member[]
    /** Registers a region at the end of map order; it starts eligible, with no shards. */
    addRegion(id: string, address: string, local?: boolean): void
    /** Removes a region; returns its shards (now unallocated), oldest first. */
    removeRegion(id: string): string[]
    /** Whether a region may receive new shards; becoming eligible moves it to the end of candidate order. */
    setEligible(id: string, eligible: boolean): void
    addShard(region: string, shard: ShardId): void
    /** Deallocates a shard; returns the region that held it. */
    removeShard(shard: ShardId): string
    homeOf(shard: ShardId): string | null
    region(id: string): RegionInfo | null
    /** Every region in map order (the order ties are broken by). */
    regions(): RegionInfo[]
    /** least-load: a shard's load (a number, or a number per dimension; default 1). */
    setShardLoad(shard: ShardId, load: Amount): void
    /** least-load: the tags a shard's region must have and the region it is pinned to. */
    setShardRule(shard: ShardId, rule: ShardRule): void
    /** least-load: a region's capacity (a number, or a number per dimension; default 1). */
    setRegionCapacity(id: string, capacity: Amount): void
    setRegionTags(id: string, tags: Iterable<string>): void
    /** least-load: at most `max` shards on the region (null: no cap). */
    setRegionMaxShards(id: string, max: number | null): void
    /** least-load: a draining region receives no shards and gives all of its shards away. */
    setRegionDraining(id: string, draining: boolean): void
  }
  interface Strategy extends NamedOperations {
    /**
     * Where `shard` goes: a region id, or null when the strategy decides later (Pekko's
     * External strategy without an answer). Throws NO_CANDIDATES when no region can take it.
     */
    allocate(state: AllocationState, shard: ShardId, requester?: string | null): string | null
    /** The name explanations use (`least-shard`, ..., or the custom strategy's name). */
    readonly name: string
    /** The configuration with every default filled in; null for a custom strategy. */
    readonly config: StrategyConfig | null
    /** The shards to hand off, in decision order. */
    rebalance(state: AllocationState, inProgress?: Iterable<ShardId>): string[]
    /** `allocate` plus a structured explanation of the decision. */
    explainAllocate(state: AllocationState, shard: ShardId, requester?: string | null): { region: string | null; explanation: Explanation }
    /** `rebalance` plus a structured explanation of the decision. */
    explainRebalance(state: AllocationState, inProgress?: Iterable<ShardId>): { shards: string[]; explanation: Explanation }
  }
  /** The calls that move a step machine on besides its inputs (./machines.cjs). */
  interface StepCalls {
    /** Starts the machine: the coordinator contends for the lease, a region registers. */
    start(nowMs: number): void
    /** Runs every timer due at `nowMs`. */
    onTimeout(nowMs: number): void
    /** When to call `onTimeout` next, or null. */
    nextDeadline(): number | null
  }
  interface Coordinator extends CoordinatorQueries, NamedOperations, StepCalls {
    /** Frees the state machine and forgets its callbacks; idempotent. */
    close(): void
    /** Every queued output, in the order they must be carried out. */
    drainOutputs(): CoordinatorOutput[]
  }
  interface Region extends RegionQueries, NamedOperations, StepCalls {
    /** Frees the state machine and forgets its callbacks; idempotent. */
    close(): void
    drainOutputs(): RegionOutput[]
  }
  interface CoordinatorPipeline extends CoordinatorQueries, NamedOperations, StepCalls {
    /** Frees the state machine and forgets its callbacks; idempotent. */
    close(): void
    /**
     * The next host call, `[ticket, role, method, args]` (method in camelCase), or null
     * while there is none.
     */
    nextCall(nowMs: number): [number, 'transport' | 'lease' | 'store', string, unknown[]] | null
    /** What call `ticket` resolved to. */
    answer(nowMs: number, ticket: number, value: unknown): void
    /** Call `ticket` rejected; the caller keeps the reason. */
    fail(nowMs: number, ticket: number): void
    /** Calls handed out and not answered yet. */
    readonly inFlight: number
    /** Notices since the last call. */
    takeNotices(): CoordinatorNotice[]
  }
  interface CoordinatorDriver extends CoordinatorQueries, NamedOperations {
    /**
     * Frees the coordinator and forgets every callback; idempotent. Does not release the
     * lease: call `stop()` first for a clean hand-over.
     */
    close(): void
    /** Starts contending for the lease (and, once granted, loads the stored state). */
    start(): void
    /** The lease backend reports the current grant lost. */
    leaseLost(): void
    /** Runs every timer that is due; returns when to call again (or null). */
    poll(): number | null
    nextDeadline(): number | null
    /** Notices since the last call (activation, hand-offs, refusals, ...). */
    takeNotices(): CoordinatorNotice[]
    /** A message from a region or proxy. */
    receive(envelope: Envelope): void
    /** A cluster member joined or changed. */
    member(member: MemberInit): void
    memberRemoved(address: string): void
    reachability(address: string, reachable: boolean): void
    /** A region or proxy stopped while its node stays in the cluster. */
    regionTerminated(region: string): void
    preparingForShutdown(): void
    /** Stops coordinating and releases the lease. */
    stop(): void
    /** A planned shutdown of `region`: least-load moves its shards away within its budget. */
    drain(region: string): void
    undrain(region: string): void
  }
  interface RegionDriver extends RegionQueries, NamedOperations, RegionDriverInputs {
    /** Frees the region and forgets every callback; idempotent. */
    close(): void
    /** Registers with the coordinator (and keeps retrying from `poll`). */
    start(): void
    /** Runs every timer that is due; returns when to call again (or null). */
    poll(): number | null
    nextDeadline(): number | null
    takeNotices(): RegionNotice[]
  }
  // The operations of ./ids.cjs.
  interface Snowflake extends NamedOperations {
    /** After `next` returned null: the wall time to ask again at. */
    readonly waitUntilMs: number | null
    /** Allows timestamps up to `ceilingMs` (the budget a worker-id tenure grants). */
    extendBudget(ceilingMs: number): void
    /** Stops issuing ids for good (the worker id was lost). */
    revoke(): void
    readonly worker: number
    readonly layout: SnowflakeLayout
    readonly budgetMs: number | null
    readonly floorMs: number | null
    readonly lastTimestampMs: number | null
  }
  interface WorkerIdRegistry extends NamedOperations {
    /** Moves server time forward; sessions past their expiry end, with their claims. */
    advanceTo(nowMs: number): void
    readonly nowMs: number
    /** Live claims by worker id. */
    liveClaims(): { workerId: number; owner: string; incarnation: number; epoch: number }[]
    /** The timestamp fence of a worker id, or null if it was never used. */
    fence(workerId: number): { epoch: number; floorMs: number; hwmMs: number } | null
  }
  interface WorkerIdHolder extends NamedOperations {
    readonly workerId: number
    /** Grows on every acquisition of this worker id, by anyone. */
    readonly epoch: number
    /** Timestamps below this were allowed to earlier holders of the id. */
    readonly floorMs: number
    /** Timestamps up to this are acknowledged by the registry. */
    readonly budgetMs: number
    /** The local (monotonic) deadline of the reservation. */
    readonly validUntilMs: number | null
    readonly layout: SnowflakeLayout
    /** Does the upkeep that is due; returns the monotonic time of the next. */
    maintain(): number
    /** Returns the unused budget and deletes the claim; the id is free for others at once. */
    release(): void
  }
  interface ManualClock extends NamedOperations {
    nowMs(): number
    /** Moves the time forward to `nowMs` (never backwards). */
    set(nowMs: number): void
    advance(ms: number): void
  }
  interface InMemoryLease extends NamedOperations {
    /** The holder and token as the backend sees them at `nowMs`. */
    holder(nowMs: number): { owner: string; token: number } | null
    /** Test hook: the backend forgets the holder, as when its session expires server-side. */
    expireNow(): void
    acquire(nowMs: number): LeaseGrant | null
    renew(token: number, nowMs: number): number | null
    release(token: number): void
  }
  interface InMemoryStore extends NamedOperations {
    /** What a load would return now, without fencing anyone. */
    contents(): StoredState
    readonly highestToken: number
    append(token: number, record: StoredRecord): WriteOutcome
    saveSnapshot(token: number, snapshot: Snapshot): WriteOutcome
    /** Reads the state and fences every token below `token`; null when `token` is fenced. */
    load(token: number): StoredState | null
  }
  interface Etcd extends NamedOperations {
    readonly namespace: string
  }
  /** Each call is an etcd request on the libuv thread pool. */
  interface EtcdLease {
    /** The named operations (`shardline_bind::ops::etcd::lease`), each on the libuv thread pool. */
    op(name: string, args: unknown[]): Promise<unknown>
    /** The holder and token as etcd has them now. */
    holder(): Promise<{ owner: string; token: number } | null>
    acquire(nowMs: number): Promise<LeaseGrant | null>
    renew(token: number, nowMs: number): Promise<number | null>
    release(token: number): Promise<void>
  }
  /** Each call is one etcd transaction on the libuv thread pool, guarded by `token`. */
  interface EtcdStore {
    /** The named operations (`shardline_bind::ops::etcd::store`), each on the libuv thread pool. */
    op(name: string, args: unknown[]): Promise<unknown>
    append(token: number, record: StoredRecord): Promise<WriteOutcome>
    saveSnapshot(token: number, snapshot: Snapshot): Promise<WriteOutcome>
    /** Reads the state and fences every token below `token`; null when `token` is fenced. */
    load(token: number): Promise<StoredState | null>
  }
}
