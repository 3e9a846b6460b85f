//! What placement reasons about: node addresses, cluster members and their versions, shard
//! loads, and the allocation state the strategies read. Plain values, no behaviour over time.

mod address;
mod allocation;
mod cluster;
#[cfg(feature = "model-check")]
mod fingerprint;
mod key;
mod load;
pub(crate) mod outbox;
mod placed;
mod timers;
mod version;

pub use address::{ActorTsKey, Address};
pub use allocation::{
    AllocationState, RankedCounts, RebalanceBlocker, Region, RegionId, ShardId, TakenShard,
};
pub use cluster::{ClusterView, Member, MemberStatus};
#[cfg(feature = "model-check")]
pub(crate) use fingerprint::hash_sorted;
pub(crate) use key::{IdKey, IdMap};
pub use load::{
    check_budget, utilisation, Amount, CapVec, Dimensions, LoadVec, Ordered, RegionProfile,
    ShardRule,
};
pub(crate) use load::{ClassEntry, ClassIndex, ClassKey, LoadBook, ShardMap};
pub(crate) use timers::Timers;
pub use version::{OrderlyVersions, Version, VersionKey};
