// The package entry (ES module): the same objects as the CommonJS entry.
import shardline from './index.cjs'

export const {
  VERSION,
  ErrorCode,
  decide,
  decideJson,
  replay,
  pekkoShardId,
  actorTsShardId,
  pekkoStringHash,
  AllocationState,
  Strategy,
  Coordinator,
  CoordinatorDriver,
  CoordinatorPipeline,
  AsyncCoordinatorDriver,
  Region,
  RegionDriver,
  ManualClock,
  InMemoryLease,
  InMemoryStore,
  Etcd,
  EtcdLease,
  EtcdStore,
  Snowflake,
  decomposeSnowflake,
  WorkerIdRegistry,
  WorkerIdHolder,
  ShardlineAllocationStrategy,
  HashAllocationStrategy,
  LeastShardAllocationStrategy,
  PekkoLeastShardAllocationStrategy,
  PekkoLegacyLeastShardAllocationStrategy,
  ConsistentHashingShardAllocationStrategy,
} = shardline

export default shardline
