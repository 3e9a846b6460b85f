// Types of the package entry: the native module's (generated, ../index.d.ts) plus the
// actor-ts-shaped strategies of ./actor-ts.cjs.

import type { ErrorCode as ErrorCodeName, CoordinatorOutput, CoordinatorPhase, CoordinatorRegion, Envelope, MemberInit, Metric, RegionOutput, ShardId, Strategy, StrategyConfig, CustomStrategy } from '../index'

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
}

// Methods written in JavaScript: the queries over each native class's `op(name, args)`
// (./machines.cjs and the other modules that call ./ops.cjs's `define`), the drivers'
// one-input methods (./inputs.cjs, over `handle`) and the step API's envelope path
// (./envelope.cjs).
declare module '../index' {
  interface Coordinator extends CoordinatorQueries {
    /** Every queued output, in the order they must be carried out. */
    drainOutputs(): CoordinatorOutput[]
  }
  interface Region {
    drainOutputs(): RegionOutput[]
  }
  interface CoordinatorDriver extends CoordinatorQueries {
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
  }
  interface RegionDriver {
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
  }
}
