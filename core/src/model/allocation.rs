//! The allocation map a coordinator keeps: regions in map order, each with its shards in
//! allocation order, plus the indexes that let strategies decide in O(log R).
//!
//! Pekko breaks ties by the iteration order of its allocation map; here that order is explicit
//! (registration order, [`AllocationState::add_region`]) so decisions are reproducible.

use std::cmp::{Ordering, Reverse};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::jvm::{self, ContractViolation};
use crate::model::placed::PlacedShards;
use crate::model::{key, ActorTsKey, Address, IdKey, IdMap};
use crate::model::{
    Amount, ClassEntry, ClassIndex, ClassKey, Dimensions, LoadBook, LoadVec, Ordered,
    RegionProfile, ShardMap, ShardRule,
};
use crate::model::{ClusterView, Member, MemberStatus};
use crate::model::{OrderlyVersions, Version, VersionKey};
use crate::{Error, Result};

pub type ShardId = Arc<str>;
pub type RegionId = Arc<str>;

/// One shard region: where it lives and which shards it hosts, oldest first.
#[derive(Debug, Clone)]
pub struct Region {
    id: RegionId,
    address: Address,
    local: bool,
    pos: u64,
    candidate_pos: u64,
    eligible: bool,
    /// Each shard with its load and ring position, kept here so listing a region's shards by
    /// load, or a consistent-hashing round, reads them in place rather than looking each up
    /// in the load book or hashing every id again.
    shards: PlacedShards,
    /// The member it was ranked by and its group in the ranking indexes, so it can be taken
    /// out even after the member changed.
    rank: Option<(RankGroup, MemberStatus, Version)>,
    addr_key: ActorTsKey,
    profile: RegionProfile,
    /// Sum of its shards' loads.
    load: LoadVec,
    /// The class [`AllocationState`]'s class index holds it in, when it may receive shards
    /// (its entry there: [`Region::class_entry`]).
    class: Option<ClassKey>,
}

impl Region {
    pub fn id(&self) -> &RegionId {
        &self.id
    }
    /// The region's own address; for a local region, see [`AllocationState::node_of`].
    pub fn address(&self) -> &Address {
        &self.address
    }
    pub fn is_local(&self) -> bool {
        self.local
    }
    /// Eligible regions may receive new shards; others (shutting down, terminating, not a
    /// candidate) only give shards away.
    pub fn is_eligible(&self) -> bool {
        self.eligible
    }
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }
    /// Shards in allocation order, oldest first.
    pub fn shards(&self) -> impl DoubleEndedIterator<Item = &ShardId> + ExactSizeIterator {
        self.shards.iter().map(|(_, id, _)| id)
    }
    /// `(allocation sequence, position on Pekko's consistent-hash ring)` of each shard, in
    /// allocation order; the position is [`crate::hashing::string_hash`] of the id, worked out
    /// once when the shard is placed.
    pub fn ring_positions(&self) -> impl Iterator<Item = (u64, i32)> + '_ {
        self.shards.ring_positions()
    }
    /// The shard placed here with allocation sequence `seq`.
    pub fn shard_at(&self, seq: u64) -> Option<&ShardId> {
        self.shards.get(seq)
    }
    /// Shards in allocation order with their allocation sequence (see
    /// [`AllocationState::shard_sequence`]) and load.
    pub fn shards_with_load(&self) -> impl Iterator<Item = (u64, &ShardId, &LoadVec)> {
        self.shards.iter()
    }
    /// Shards in allocation order with a compact index for [`Region::shard_by_index`], good
    /// while the state does not change.
    pub(crate) fn shards_indexed(&self) -> impl Iterator<Item = (u32, &ShardId, &LoadVec)> {
        self.shards.indexed()
    }
    /// [`Region::shards_indexed`] without the ids.
    pub(crate) fn loads_indexed(&self) -> impl Iterator<Item = (u32, &LoadVec)> {
        self.shards.loads_indexed()
    }
    /// The shard [`Region::shards_indexed`] gave `index`.
    pub(crate) fn shard_by_index(&self, index: u32) -> Option<(&ShardId, &LoadVec)> {
        self.shards.at(index)
    }
    /// Position in map order (registration order); smaller is earlier.
    pub fn map_position(&self) -> u64 {
        self.pos
    }
    /// Position in candidate order (when it last became eligible).
    pub fn candidate_position(&self) -> u64 {
        self.candidate_pos
    }
    /// Capacity, tags, shard cap and draining flag (see `model/load.rs`).
    pub fn profile(&self) -> &RegionProfile {
        &self.profile
    }
    /// The summed load of its shards.
    pub fn load(&self) -> &LoadVec {
        &self.load
    }
    /// Whether its member is leaving, and the member's app version, as last ranked; `None`
    /// when no cluster member hosts it.
    pub(crate) fn member_class(&self) -> Option<(bool, &Version)> {
        self.rank.as_ref().map(|(_, s, v)| (s.is_leaving(), v))
    }

    /// Its group and entry in the ranking indexes, at `count` shards.
    fn rank_key(&self, count: usize, slot: usize) -> Option<(&RankGroup, RankEntry)> {
        self.rank
            .as_ref()
            .map(|(g, _, _)| (g, (count, self.pos, slot)))
    }

    /// Its key in `load_eligible`, at `count` shards.
    fn load_key(&self, count: usize, slot: usize) -> (usize, ActorTsKey, u64, usize) {
        (count, self.addr_key.clone(), self.candidate_pos, slot)
    }

    /// Its entry in the class index, at `load` (the first dimension) and `count` shards.
    fn class_entry(&self, load: f64, count: usize, slot: usize) -> ClassEntry {
        (Ordered(load), count, self.pos, slot)
    }
}

/// Shard counts at the ends of Pekko's ranking ([`AllocationState::ranked_counts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankedCounts {
    /// Of the region sorted first.
    pub first: usize,
    pub fewest: usize,
    pub most: usize,
}

/// A region's group in the ranking: leaving, then newest app version first.
type RankGroup = (bool, Reverse<VersionKey>);
/// Its place in the group: (shard count, map position, slot; positions are unique, so the slot
/// never decides).
type RankEntry = (usize, u64, usize);

/// `ShardSuitabilityOrdering` as a total order, valid while [`AllocationState`] reports the
/// ranking as orderly: by group, then shard count and map position. Kept per group, so moving
/// a region compares counts and positions rather than versions.
#[derive(Debug, Default, Clone, PartialEq)]
struct RankIndex(BTreeMap<RankGroup, BTreeSet<RankEntry>>);

impl RankIndex {
    fn insert(&mut self, group: &RankGroup, entry: RankEntry) {
        match self.0.get_mut(group) {
            Some(set) => {
                set.insert(entry);
            }
            None => {
                self.0.insert(group.clone(), BTreeSet::from([entry]));
            }
        }
    }

    fn remove(&mut self, group: &RankGroup, entry: &RankEntry) {
        if let Some(set) = self.0.get_mut(group) {
            set.remove(entry);
            if set.is_empty() {
                self.0.remove(group);
            }
        }
    }

    fn replace(&mut self, group: &RankGroup, old: &RankEntry, new: RankEntry) {
        if let Some(set) = self.0.get_mut(group) {
            set.remove(old);
            set.insert(new);
        }
    }

    /// The first slot in ranking order (no group is empty).
    fn first(&self) -> Option<usize> {
        self.0
            .values()
            .next()
            .and_then(|set| set.first())
            .map(|e| e.2)
    }

    /// Slots in ranking order.
    fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.values().flat_map(|set| set.iter().map(|e| e.2))
    }
}

/// What the map knows of one shard. A coordinator's table also keeps the version of the
/// shard's last allocation change here (see `coordinator::state`), beside the home so that
/// answering `GetShardHome` takes one probe; a version outlives the allocation, so an entry
/// stays without a home while it holds one.
#[derive(Debug, Clone, Copy)]
struct Home {
    seq: u64,
    /// Meaningful when `versioned`.
    version: u64,
    /// The home region's slot, [`HOMELESS`] when it has none.
    slot: u32,
    versioned: bool,
    /// Where the shard went in its region's arrays when placed ([`NO_HINT`] past `u16`'s
    /// range): right until the region compacts them, and then only a lookup's first guess.
    /// Taking a shard off its region reads one cache line there instead of a binary search's
    /// chain of misses; it fits in what was padding.
    hint: u16,
}

const NO_HINT: u16 = u16::MAX;

const HOMELESS: u32 = u32::MAX;

impl Home {
    fn homed(&self) -> Option<&Home> {
        (self.slot != HOMELESS).then_some(self)
    }

    fn slot(&self) -> usize {
        self.slot as usize
    }
}

/// The ranking indexes, keyed by a region's shard count.
#[derive(Debug, Default, Clone, PartialEq)]
struct Ranked {
    rank_all: RankIndex,
    rank_eligible: RankIndex,
    /// (count, actor-ts address order, candidate position) of eligible regions: actor-ts
    /// least-shard.
    load_eligible: BTreeSet<(usize, ActorTsKey, u64, usize)>,
}

/// An index whose keys hold a region's shard count or load.
trait CountKeyed: Default {
    /// Moves `slot`'s keys from the `count` and `load` they were made at to the region's.
    fn rekey(&mut self, r: &Region, slot: usize, count: usize, load: f64);

    /// [`Self::rekey`] for each of `marked` ((slot, count, load), `is_marked` by slot).
    fn rekey_all(
        &mut self,
        slots: &[Option<Region>],
        marked: &[(usize, usize, f64)],
        _is_marked: &[bool],
    ) {
        rekey_each(self, slots, marked);
    }
}

/// [`CountKeyed::rekey`] for each of `marked`, one region at a time.
fn rekey_each<T: CountKeyed>(ix: &mut T, slots: &[Option<Region>], marked: &[(usize, usize, f64)]) {
    for &(slot, count, load) in marked {
        let r = slots[slot].as_ref().expect("a marked region is live");
        ix.rekey(r, slot, count, load);
    }
}

impl CountKeyed for Ranked {
    fn rekey(&mut self, r: &Region, slot: usize, count: usize, _load: f64) {
        let now = r.shards.len();
        if now == count {
            return;
        }
        if let Some((g, old)) = r.rank_key(count, slot) {
            let new = (now, r.pos, slot);
            if r.eligible {
                self.rank_eligible.replace(g, &old, new);
            }
            self.rank_all.replace(g, &old, new);
        }
        if r.eligible {
            self.load_eligible.remove(&r.load_key(count, slot));
            self.load_eligible.insert(r.load_key(now, slot));
        }
    }
}

impl CountKeyed for ClassIndex {
    fn rekey(&mut self, r: &Region, slot: usize, count: usize, load: f64) {
        if let Some(k) = &r.class {
            let old = r.class_entry(load, count, slot);
            let new = r.class_entry(r.load.get(0), r.shards.len(), slot);
            if old != new {
                self.replace(k, &old, new);
            }
        }
    }

    /// When many regions changed (a round's hand-off re-homes shards everywhere), each class
    /// is rebuilt from its entries, the marked ones re-made: one sort and a bulk build instead
    /// of a removal and an insertion per region, each a walk down the tree.
    fn rekey_all(
        &mut self,
        slots: &[Option<Region>],
        marked: &[(usize, usize, f64)],
        is_marked: &[bool],
    ) {
        if marked.len() * 8 < self.len() {
            return rekey_each(self, slots, marked);
        }
        // A region's entry is in the class it is keyed by, made at the count and load it was
        // marked at ([`ClassIndex::replace`] finds it there), so re-making the entries found
        // in each class for marked slots moves exactly the keys `rekey` would.
        self.rebuild(|e| {
            let slot = e.3;
            if !is_marked.get(slot).copied().unwrap_or(false) {
                return e;
            }
            let r = slots[slot].as_ref().expect("a marked region is live");
            r.class_entry(r.load.get(0), r.shards.len(), slot)
        });
    }
}

/// A [`CountKeyed`] index, re-keyed when next read rather than on every shard placed, removed
/// or re-weighed: a coordinator re-homing a rebalance's shards moves each region's keys once
/// per round instead of once per shard, and an index no strategy reads (least-load never reads
/// the ranking) is never re-keyed at all. Until then a changed region is marked with the count
/// and load its keys were made from; every other region's keys match it as it is.
///
/// Reading with nothing marked is one check of the `OnceLock`; the lock is taken only to
/// re-key, once, by the first read after a change.
#[derive(Debug)]
struct Lazy<T> {
    /// The index when nothing is marked.
    settled: OnceLock<T>,
    /// The index and the marks while something is marked.
    marked: Mutex<Marked<T>>,
}

#[derive(Debug)]
struct Marked<T> {
    /// Set exactly when `settled` is not.
    index: Option<T>,
    /// (slot, shard count, load) of each marked region, as its keys were made.
    regions: Vec<(usize, usize, f64)>,
    /// By slot: whether it is in `regions`.
    is_marked: Vec<bool>,
}

impl<T: CountKeyed> Lazy<T> {
    fn new(index: T) -> Lazy<T> {
        Lazy {
            settled: OnceLock::from(index),
            marked: Mutex::new(Marked {
                index: None,
                regions: Vec::new(),
                is_marked: Vec::new(),
            }),
        }
    }

    /// The index, re-keyed first if a region changed since the last read.
    fn get(&self, slots: &[Option<Region>]) -> &T {
        self.settled.get_or_init(|| {
            self.marked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .rekey(slots)
        })
    }

    /// The same, to change.
    fn get_mut(&mut self, slots: &[Option<Region>]) -> &mut T {
        if self.settled.get().is_none() {
            let marked = self
                .marked
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner);
            let _ = self.settled.set(marked.rekey(slots));
        }
        self.settled.get_mut().expect("just settled")
    }

    /// Marks the region in `slot`, at `count` shards and `load`, whose count or load is about
    /// to change.
    fn mark(&mut self, slot: usize, count: usize, load: f64) {
        let marked = self
            .marked
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(ix) = self.settled.take() {
            marked.index = Some(ix);
        }
        if marked.is_marked.len() <= slot {
            marked.is_marked.resize(slot + 1, false);
        }
        if !marked.is_marked[slot] {
            marked.is_marked[slot] = true;
            marked.regions.push((slot, count, load));
        }
    }
}

impl<T: CountKeyed> Marked<T> {
    /// Moves every marked region's keys to its current count and load.
    fn rekey(&mut self, slots: &[Option<Region>]) -> T {
        let mut ix = self.index.take().expect("unsettled indexes wait here");
        ix.rekey_all(slots, &self.regions, &self.is_marked);
        for (slot, _, _) in self.regions.drain(..) {
            self.is_marked[slot] = false;
        }
        ix
    }
}

/// A shard [`AllocationState::take_shards`] took off its region, with what placing it again
/// needs.
#[derive(Debug)]
pub struct TakenShard {
    id: ShardId,
    load: LoadVec,
    /// (the state's uid, its load generation) when taken: the load it carries is the shard's
    /// while both stand.
    loads_stamp: (u64, u64),
}

impl TakenShard {
    pub fn id(&self) -> &ShardId {
        &self.id
    }
}

static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// The allocation map plus the cluster view, kept incrementally.
#[derive(Debug)]
pub struct AllocationState {
    uid: u64,
    cluster: ClusterView,
    slots: Vec<Option<Region>>,
    free: Vec<usize>,
    by_id: ShardMap<usize>,
    order: BTreeMap<u64, usize>,
    next_pos: u64,
    next_candidate: u64,
    next_seq: u64,
    /// Keyed inline, as the coordinator's `GetShardHome` answers from here: a lookup
    /// compares the key without a miss on the shared id's allocation.
    homes: IdMap<Home>,
    /// Entries of `homes` with a home.
    placed: usize,
    /// node address -> map positions of the regions on it
    by_node: HashMap<String, BTreeSet<u64>>,
    ranked: Lazy<Ranked>,
    /// Regions that may receive shards (a member, eligible, not draining) by class.
    classes: Lazy<ClassIndex>,
    ranked_status: [usize; 6],
    ranked_versions: OrderlyVersions,
    /// Eligible regions by (actor-ts address order, candidate position): actor-ts hash.
    sorted_eligible: Vec<(ActorTsKey, u64, usize)>,
    topology_gen: u64,
    /// Bumped by every change but a shard's load (see [`Self::placement_stamp`]).
    placement_gen: u64,
    loads: LoadBook,
}

impl AllocationState {
    pub fn new(cluster: ClusterView) -> AllocationState {
        AllocationState {
            uid: NEXT_UID.fetch_add(1, AtomicOrdering::Relaxed),
            cluster,
            slots: Vec::new(),
            free: Vec::new(),
            by_id: ShardMap::default(),
            order: BTreeMap::new(),
            next_pos: 0,
            next_candidate: 0,
            next_seq: 0,
            homes: IdMap::default(),
            placed: 0,
            by_node: HashMap::new(),
            ranked: Lazy::new(Ranked::default()),
            classes: Lazy::new(ClassIndex::default()),
            ranked_status: [0; 6],
            ranked_versions: OrderlyVersions::default(),
            sorted_eligible: Vec::new(),
            topology_gen: 0,
            placement_gen: 0,
            loads: LoadBook::default(),
        }
    }

    /// A copy that goes on independently (feature `model-check`). It gets its own uid, so a
    /// strategy's cache of one can never be taken for the other's once they diverge.
    #[cfg(feature = "model-check")]
    pub fn fork(&self) -> AllocationState {
        AllocationState {
            uid: NEXT_UID.fetch_add(1, AtomicOrdering::Relaxed),
            cluster: self.cluster.clone(),
            slots: self.slots.clone(),
            free: self.free.clone(),
            by_id: self.by_id.clone(),
            order: self.order.clone(),
            next_pos: self.next_pos,
            next_candidate: self.next_candidate,
            next_seq: self.next_seq,
            homes: self.homes.clone(),
            placed: self.placed,
            by_node: self.by_node.clone(),
            ranked: Lazy::new(self.ranked().clone()),
            classes: Lazy::new(self.classes().clone()),
            ranked_status: self.ranked_status,
            ranked_versions: self.ranked_versions.clone(),
            sorted_eligible: self.sorted_eligible.clone(),
            topology_gen: self.topology_gen,
            placement_gen: self.placement_gen,
            loads: self.loads.clone(),
        }
    }

    /// Identifies this state and its current set of regions and node addresses; strategies
    /// cache derived structures (the hash ring) under it.
    pub fn topology_stamp(&self) -> (u64, u64) {
        (self.uid, self.topology_gen)
    }

    /// Identifies this state up to shard loads: it changes with every region, shard, member,
    /// reachability, eligibility, profile or rule change, and not when only a load is set
    /// (regions report loads every few seconds). A strategy that reads no loads may reuse an
    /// answer computed under the same stamp.
    pub fn placement_stamp(&self) -> (u64, u64) {
        (self.uid, self.placement_gen)
    }

    pub fn cluster(&self) -> &ClusterView {
        &self.cluster
    }

    // ---- regions ------------------------------------------------------------------------

    /// Registers a region at the end of map order; it starts eligible, with no shards.
    pub fn add_region(&mut self, id: &str, address: Address, local: bool) -> Result<()> {
        if id.is_empty() {
            return Err(Error::invalid_argument("region id is empty"));
        }
        if self.by_id.contains_key(id) {
            return Err(Error::invalid_state(format!(
                "region {id:?} is already registered"
            )));
        }
        let id: RegionId = Arc::from(id);
        let region = Region {
            id: id.clone(),
            addr_key: address.actor_ts_key(),
            address,
            local,
            pos: self.next_pos,
            candidate_pos: self.next_candidate,
            eligible: false,
            shards: PlacedShards::default(),
            rank: None,
            profile: RegionProfile::default(),
            load: LoadVec::default(),
            class: None,
        };
        self.next_pos += 1;
        self.next_candidate += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s] = Some(region);
                s
            }
            None => {
                self.slots.push(Some(region));
                self.slots.len() - 1
            }
        };
        self.by_id.insert(id, slot);
        let pos = self.next_pos - 1;
        self.order.insert(pos, slot);
        let node = self.node_key(slot);
        self.by_node.entry(node).or_default().insert(pos);
        self.reindex(slot);
        self.set_eligible_slot(slot, true);
        self.topology_gen += 1;
        Ok(())
    }

    /// Removes a region; its shards become unallocated and are returned, oldest first.
    pub fn remove_region(&mut self, id: &str) -> Result<Vec<ShardId>> {
        let slot = self.slot(id)?;
        self.set_eligible_slot(slot, false);
        self.unindex(slot);
        let node = self.node_key(slot);
        self.unclass(slot);
        // settled, so a freed slot carries no marks
        self.ranked_mut();
        self.classes_mut();
        let region = self.slots[slot].take().expect("slot is live");
        if !region.profile.is_default() {
            self.loads.custom_regions -= 1;
        }
        if let Some(set) = self.by_node.get_mut(&node) {
            set.remove(&region.pos);
            if set.is_empty() {
                self.by_node.remove(&node);
            }
        }
        self.order.remove(&region.pos);
        self.by_id.remove(&region.id);
        self.free.push(slot);
        let shards: Vec<ShardId> = region.shards.into_ids();
        for s in &shards {
            self.unhome(s);
        }
        self.topology_gen += 1;
        Ok(shards)
    }

    /// Marks a region as able (or not) to receive new shards. Becoming eligible moves it to
    /// the end of candidate order.
    pub fn set_eligible(&mut self, id: &str, eligible: bool) -> Result<()> {
        let slot = self.slot(id)?;
        self.set_eligible_slot(slot, eligible);
        Ok(())
    }

    pub fn region(&self, id: &str) -> Option<&Region> {
        self.by_id.get(id).and_then(|&s| self.slots[s].as_ref())
    }

    /// Regions in map order.
    pub fn regions(&self) -> impl DoubleEndedIterator<Item = &Region> + '_ {
        self.slotted_regions().map(|(_, r)| r)
    }

    /// Regions in map order, each with its slot (see [`Self::region_in`]).
    pub(crate) fn slotted_regions(&self) -> impl DoubleEndedIterator<Item = (usize, &Region)> + '_ {
        self.order.values().map(move |&s| {
            let r = self.slots[s].as_ref().expect("ordered slot is live");
            (s, r)
        })
    }

    /// The region in `slot` now, if any: a slot kept from [`Self::slotted_regions`] may have
    /// been freed, or given to another region, since.
    pub(crate) fn region_in(&self, slot: usize) -> Option<&Region> {
        self.slots.get(slot)?.as_ref()
    }

    pub fn region_count(&self) -> usize {
        self.by_id.len()
    }

    /// Regions whose node address is `node`, in map order.
    pub fn regions_on(&self, node: &str) -> impl Iterator<Item = &Region> + '_ {
        self.by_node.get(node).into_iter().flat_map(move |set| {
            set.iter()
                .map(move |p| self.slots[self.order[p]].as_ref().expect("live"))
        })
    }

    /// The node a region runs on: the self address for a local region (Pekko's `regionEntriesFor`).
    pub fn node_of<'a>(&'a self, region: &'a Region) -> &'a Address {
        if region.local {
            self.cluster.self_address()
        } else {
            &region.address
        }
    }

    /// The cluster member hosting a region, if the cluster view knows it.
    pub fn member_of(&self, region: &Region) -> Option<&Member> {
        self.cluster.member(self.node_of(region).as_str())
    }

    // ---- shards -------------------------------------------------------------------------

    /// Appends `shard` to `region`'s list. Fails if the shard is already allocated.
    pub fn add_shard(&mut self, region: &str, shard: &str) -> Result<()> {
        self.place(region, shard, None)
    }

    /// [`Self::add_shard`], setting the shard's version when given (a coordinator's table).
    pub(crate) fn place(&mut self, region: &str, shard: &str, version: Option<u64>) -> Result<()> {
        let slot = self.slot(region)?;
        // a shard with a load set shares the load book's id rather than allocating its own
        let (id, load): (ShardId, LoadVec) = match self.loads.shard_loads.get_key_value(shard) {
            Some((id, load)) => (id.clone(), load.clone()),
            None => (Arc::from(shard), LoadVec::UNIT),
        };
        self.place_in(slot, id, load, version)
    }

    /// Places a shard [`Self::take_shards`] took off its region on `region`: as
    /// [`Self::add_shard`] with the taken shard's id, reusing the id and load it carries rather
    /// than looking them up again while no load changed since (a hand-off's pattern: taken off
    /// its region, placed where the strategy then decides).
    pub fn place_taken(&mut self, region: &str, taken: TakenShard) -> Result<()> {
        let TakenShard {
            id,
            load,
            loads_stamp,
        } = taken;
        if loads_stamp != (self.uid, self.loads.loads_gen) {
            return self.add_shard(region, &id);
        }
        let slot = self.slot(region)?;
        self.place_in(slot, id, load, None)
    }

    fn place_in(
        &mut self,
        slot: usize,
        id: ShardId,
        load: LoadVec,
        version: Option<u64>,
    ) -> Result<()> {
        let shard: &str = &id;
        let seq = self.next_seq;
        let next = self.slots[slot].as_ref().expect("live").shards.next_index();
        let mut home = Home {
            seq,
            version: 0,
            slot: u32::try_from(slot).expect("fewer than 2^32 regions"),
            versioned: false,
            hint: u16::try_from(next).unwrap_or(NO_HINT),
        };
        // one lookup both refuses a shard already placed and makes (or finds) its entry
        let entry = self.homes.entry(IdKey::new(shard));
        if let Entry::Occupied(e) = &entry {
            if e.get().slot != HOMELESS {
                let owner = self.slots[e.get().slot()]
                    .as_ref()
                    .map(|r| r.id.to_string())
                    .unwrap_or_default();
                return Err(Error::invalid_state(format!(
                    "shard {shard:?} is already allocated to region {owner:?}"
                )));
            }
            // the version outlives the allocation before
            (home.version, home.versioned) = (e.get().version, e.get().versioned);
        }
        if let Some(v) = version {
            (home.version, home.versioned) = (v, true);
        }
        entry.insert_entry(home);
        self.placed += 1;
        self.next_seq += 1;
        self.mark(slot);
        let r = self.slots[slot].as_mut().expect("live");
        r.load.add(&load);
        // Sequences only grow, so a push keeps allocation order.
        r.shards.push(seq, id, load);
        Ok(())
    }

    /// Deallocates a shard, returning the region that held it.
    pub fn remove_shard(&mut self, shard: &str) -> Result<RegionId> {
        let (slot, _, _) = self.unplace(shard, None)?;
        Ok(self.slots[slot].as_ref().expect("live").id.clone())
    }

    /// Deallocates each of `shards` in turn as [`Self::remove_shard`] does, handing them over
    /// to be placed again with [`Self::place_taken`]; stops at the first that is not allocated
    /// (those before it stay deallocated): a rebalance round's hand-off. It does not name the
    /// regions they left ([`Self::home_of`] does, before): sharing a region's id is a
    /// reference count's locked write, which waits for every earlier store, and those for
    /// their cold cache lines. Owned ids (a rebalance's answer) are dropped as they are taken,
    /// while their reference counts are still cached.
    pub fn take_shards<S: AsRef<str>>(
        &mut self,
        shards: impl IntoIterator<Item = S>,
    ) -> Result<Vec<TakenShard>> {
        // Where each shard is in its region's arrays, found in a read-only pass over a batch
        // first: those lookups do not depend on each other, so their cache misses overlap,
        // where each take is a chain of misses that waits for the one before it. Batches stay
        // small enough that what the pass brought in is still cached for the takes.
        const BATCH: usize = 32;
        let mut shards = shards.into_iter();
        let mut taken = Vec::with_capacity(shards.size_hint().0);
        let mut batch: Vec<S> = Vec::with_capacity(BATCH);
        loop {
            batch.extend(shards.by_ref().take(BATCH));
            if batch.is_empty() {
                return Ok(taken);
            }
            let mut found = [None; BATCH];
            for (f, s) in found.iter_mut().zip(&batch) {
                *f = self.home(s.as_ref()).and_then(|h| {
                    let r = self.slots[h.slot()].as_ref()?;
                    r.shards.index_of(h.seq, usize::from(h.hint))
                });
            }
            for (s, at) in batch.drain(..).zip(found) {
                taken.push(self.take_at(s.as_ref(), at)?);
            }
        }
    }

    /// Takes one shard for [`Self::take_shards`], looking for it at index `at` of its region's
    /// arrays first.
    fn take_at(&mut self, shard: &str, at: Option<usize>) -> Result<TakenShard> {
        let (_, id, load) = self.unplace(shard, at)?;
        Ok(TakenShard {
            id,
            load,
            loads_stamp: (self.uid, self.loads.loads_gen),
        })
    }

    /// Takes a shard off its region, looking for it at index `at` of the region's arrays
    /// first (else where it was placed): (the region's slot, the shard's id, its load).
    fn unplace(&mut self, shard: &str, at: Option<usize>) -> Result<(usize, ShardId, LoadVec)> {
        let home = self
            .unhome(shard)
            .ok_or_else(|| Error::invalid_state(format!("shard {shard:?} is not allocated")))?;
        let slot = home.slot();
        self.mark(slot);
        let r = self.slots[slot].as_mut().expect("live");
        let (id, load) = r
            .shards
            .remove(home.seq, at.unwrap_or(usize::from(home.hint)))
            .expect("homed shard is listed");
        if r.shards.is_empty() {
            // exactly zero, not what float subtraction leaves
            r.load = LoadVec::default();
        } else {
            r.load.sub(&load);
        }
        Ok((slot, id, load))
    }

    /// Takes away a shard's home and returns it (the region's list is the caller's); the
    /// entry stays while it holds a version. Removed and put back rather than changed in
    /// place, so a plain allocation map drops a shard with one probe.
    fn unhome(&mut self, shard: &str) -> Option<Home> {
        let (id, home) = self.homes.remove_entry(shard)?;
        if home.versioned {
            self.homes.insert(
                id,
                Home {
                    slot: HOMELESS,
                    ..home
                },
            );
        }
        let homed = home.homed().copied();
        if homed.is_some() {
            self.placed -= 1;
        }
        homed
    }

    #[inline]
    fn home(&self, shard: &str) -> Option<&Home> {
        key::get(&self.homes, shard).and_then(Home::homed)
    }

    /// The region a shard is allocated to.
    pub fn home_of(&self, shard: &str) -> Option<&Region> {
        self.home(shard).and_then(|h| self.slots[h.slot()].as_ref())
    }

    pub fn shard_count(&self) -> usize {
        self.placed
    }

    /// The position of a shard in its region's allocation order (smaller is older).
    pub fn shard_sequence(&self, shard: &str) -> Option<u64> {
        self.home(shard).map(|h| h.seq)
    }

    /// The shard's home region's id and its version (0 when it has none), in one probe.
    pub(crate) fn home_and_version(&self, shard: &str) -> Option<(&RegionId, u64)> {
        let h = self.home(shard)?;
        let r = self.slots[h.slot()]
            .as_ref()
            .expect("a home's slot is live");
        Some((&r.id, if h.versioned { h.version } else { 0 }))
    }

    /// The shard's version, if it was ever given one.
    pub(crate) fn shard_version(&self, shard: &str) -> Option<u64> {
        self.homes
            .get(shard)
            .and_then(|h| h.versioned.then_some(h.version))
    }

    /// The shard's version, 0 (and kept from now on) if it had none.
    pub(crate) fn version_mut(&mut self, shard: &str) -> &mut u64 {
        if !self.homes.contains_key(shard) {
            let homeless = Home {
                seq: 0,
                version: 0,
                slot: HOMELESS,
                versioned: false,
                hint: NO_HINT,
            };
            self.homes.insert(IdKey::new(shard), homeless);
        }
        let e = self.homes.get_mut(shard).expect("just ensured");
        if !e.versioned {
            (e.version, e.versioned) = (0, true);
        }
        &mut e.version
    }

    /// Every shard with a version, placed or not, in no particular order.
    pub(crate) fn shard_versions(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.homes
            .iter()
            .filter_map(|(s, h)| Some((s.as_str(), h.versioned.then_some(h.version)?)))
    }

    // ---- loads, capacities, rules (least-load) -------------------------------------------

    /// Sets a shard's load (allocated or not); a region holding it re-sums at once.
    pub fn set_shard_load(&mut self, shard: &str, load: &Amount) -> Result<()> {
        let new = self
            .loads
            .resolve_load(&format!("load of shard {shard:?}"), load)?;
        if let Some(&home) = self.home(shard) {
            self.mark(home.slot());
            let r = self.slots[home.slot()].as_mut().expect("live");
            let listed = r.shards.load_mut(home.seq).expect("homed shard is listed");
            r.load.sub(listed);
            r.load.add(&new);
            *listed = new.clone();
        }
        if new.is_unit() {
            self.loads.shard_loads.remove(shard);
        } else {
            self.loads.shard_loads.insert(Arc::from(shard), new);
        }
        self.loads.loads_gen += 1;
        Ok(())
    }

    /// A shard's load: 1 in every dimension unless set.
    pub fn shard_load(&self, shard: &str) -> &LoadVec {
        self.loads.load_of(shard)
    }

    /// Named load dimensions, in the order first seen.
    pub fn load_dimensions(&self) -> &Dimensions {
        &self.loads.dims
    }

    /// Sets the tags a shard's region must have and the region it is pinned to.
    pub fn set_shard_rule(&mut self, shard: &str, rule: ShardRule) {
        self.placement_gen += 1;
        if rule.is_empty() {
            self.loads.rules.remove(shard);
        } else {
            self.loads.rules.insert(Arc::from(shard), rule);
        }
    }

    pub fn shard_rule(&self, shard: &str) -> Option<&ShardRule> {
        self.loads.rules.get(shard)
    }

    /// Every shard with a rule, in no particular order.
    pub fn shard_rules(&self) -> impl Iterator<Item = (&ShardId, &ShardRule)> + '_ {
        self.loads.rules.iter()
    }

    /// Sets a region's capacity (a number, or a number per dimension; default 1).
    pub fn set_region_capacity(&mut self, id: &str, capacity: &Amount) -> Result<()> {
        let slot = self.slot(id)?;
        let cap = self
            .loads
            .resolve_capacity(&format!("capacity of region {id:?}"), capacity)?;
        self.edit_profile(slot, |p| p.capacity = cap);
        Ok(())
    }

    pub fn set_region_tags<'a>(
        &mut self,
        id: &str,
        tags: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        let slot = self.slot(id)?;
        let tags = tags.into_iter().map(Arc::from).collect();
        self.edit_profile(slot, |p| p.tags = tags);
        Ok(())
    }

    /// At most `max` shards may live on the region (`None`: no cap).
    pub fn set_region_max_shards(&mut self, id: &str, max: Option<usize>) -> Result<()> {
        let slot = self.slot(id)?;
        self.edit_profile(slot, |p| p.max_shards = max);
        Ok(())
    }

    /// A draining region receives no shards and gives all of its shards away.
    pub fn set_region_draining(&mut self, id: &str, draining: bool) -> Result<()> {
        let slot = self.slot(id)?;
        self.edit_profile(slot, |p| p.draining = draining);
        Ok(())
    }

    /// True when no load, capacity or rule differs from the defaults: every shard weighs 1
    /// and every region holds 1, so load is the shard count.
    pub fn loads_are_uniform(&self) -> bool {
        self.loads.is_uniform()
    }

    fn edit_profile(&mut self, slot: usize, edit: impl FnOnce(&mut RegionProfile)) {
        let r = self.slots[slot].as_mut().expect("live");
        let was = r.profile.is_default();
        edit(&mut r.profile);
        let is = r.profile.is_default();
        match (was, is) {
            (true, false) => self.loads.custom_regions += 1,
            (false, true) => self.loads.custom_regions -= 1,
            _ => {}
        }
        self.reclass(slot);
    }

    /// Regions that may receive shards, by class (see [`ClassIndex`]); ids are slots.
    pub(crate) fn receiving_classes(&self) -> &ClassIndex {
        self.classes()
    }

    /// The region in a slot of [`Self::receiving_classes`] (or of a ranking index).
    pub(crate) fn region_in_slot(&self, slot: usize) -> &Region {
        self.slots[slot].as_ref().expect("indexed slot is live")
    }

    /// The ranking indexes, re-keyed first if a region changed since the last read.
    fn ranked(&self) -> &Ranked {
        self.ranked.get(&self.slots)
    }

    /// The same, to change.
    fn ranked_mut(&mut self) -> &mut Ranked {
        self.ranked.get_mut(&self.slots)
    }

    /// The class index, re-keyed first if a region changed since the last read.
    fn classes(&self) -> &ClassIndex {
        self.classes.get(&self.slots)
    }

    /// The same, to change.
    fn classes_mut(&mut self) -> &mut ClassIndex {
        self.classes.get_mut(&self.slots)
    }

    /// Marks a region whose shard count or load is about to change, so the next read of each
    /// index re-keys it (see [`Lazy`]).
    fn mark(&mut self, slot: usize) {
        self.placement_gen += 1;
        let r = self.slots[slot].as_ref().expect("live");
        let (count, load) = (r.shards.len(), r.load.get(0));
        self.ranked.mark(slot, count, load);
        self.classes.mark(slot, count, load);
    }

    /// Takes a region out of the class index.
    fn unclass(&mut self, slot: usize) {
        let r = self.slots[slot].as_ref().expect("live");
        let Some(k) = r.class.clone() else {
            return;
        };
        let e = r.class_entry(r.load.get(0), r.shards.len(), slot);
        self.classes_mut().remove(&k, &e);
        self.slots[slot].as_mut().expect("live").class = None;
    }

    /// Puts a region where the class index should hold it (nowhere, if it may not receive).
    fn reclass(&mut self, slot: usize) {
        self.placement_gen += 1;
        self.unclass(slot);
        let r = self.slots[slot].as_ref().expect("live");
        let Some((_, status, version)) = &r.rank else {
            return;
        };
        if !r.eligible || r.profile.draining {
            return;
        }
        let key = ClassKey::new(
            status.is_leaving(),
            version,
            &r.profile.capacity,
            &r.profile.tags,
        );
        let entry = r.class_entry(r.load.get(0), r.shards.len(), slot);
        self.classes_mut().insert(key.clone(), entry);
        self.slots[slot].as_mut().expect("live").class = Some(key);
    }

    // ---- cluster view -------------------------------------------------------------------

    pub fn upsert_member(&mut self, member: Member) {
        self.placement_gen += 1;
        let node = member.address.as_str().to_owned();
        let self_changed = node == self.cluster.self_address().as_str();
        self.cluster.upsert_member(member);
        self.member_changed(&node, self_changed);
    }

    pub fn remove_member(&mut self, address: &str) -> Option<Member> {
        self.placement_gen += 1;
        let self_changed = address == self.cluster.self_address().as_str();
        let m = self.cluster.remove_member(address);
        self.member_changed(address, self_changed);
        m
    }

    pub fn set_reachable(&mut self, address: &str, reachable: bool) {
        self.placement_gen += 1;
        self.cluster.set_reachable(address, reachable);
    }

    fn member_changed(&mut self, node: &str, self_changed: bool) {
        let slots: Vec<usize> = if self_changed {
            // local regions resolve to the self member too
            self.order.values().copied().collect()
        } else {
            self.by_node
                .get(node)
                .map(|s| s.iter().map(|p| self.order[p]).collect())
                .unwrap_or_default()
        };
        for slot in slots {
            self.unindex(slot);
            self.reindex(slot);
        }
    }

    // ---- ranking (Pekko ShardSuitabilityOrdering) -----------------------------------------

    /// True when the indexes reproduce Pekko's comparator exactly: one status per class
    /// (leaving / not leaving) and versions that Pekko orders consistently.
    pub fn ranking_is_orderly(&self) -> bool {
        let distinct = |class: bool| {
            MemberStatus::ALL
                .iter()
                .enumerate()
                .filter(|(i, s)| s.is_leaving() == class && self.ranked_status[*i] > 0)
                .count()
        };
        distinct(false) <= 1 && distinct(true) <= 1 && self.ranked_versions.is_orderly()
    }

    /// Pekko `ShardSuitabilityOrdering.compare(x, y)`, sign only.
    pub fn pekko_compare(&self, x: &Region, y: &Region) -> Ordering {
        let (mx, my) = match (self.member_of(x), self.member_of(y)) {
            (Some(a), Some(b)) => (a, b),
            _ => return Ordering::Equal,
        };
        if mx.status != my.status {
            return mx.status.is_leaving().cmp(&my.status.is_leaving());
        }
        if !mx.app_version.pekko_eq(&my.app_version) {
            return my.app_version.pekko_compare(&mx.app_version).cmp(&0);
        }
        x.shard_count().cmp(&y.shard_count())
    }

    /// The first region in `ShardSuitabilityOrdering` (a left fold, first minimum in map
    /// order), among regions with a known member; `eligible_only` restricts to regions that
    /// may receive shards.
    pub fn pekko_min(&self, eligible_only: bool) -> Option<&Region> {
        if self.ranking_is_orderly() {
            let c = self.ranked();
            let set = if eligible_only {
                &c.rank_eligible
            } else {
                &c.rank_all
            };
            return set.first().map(|s| self.region_in_slot(s));
        }
        let mut best: Option<&Region> = None;
        for r in self.ranked_regions_in_map_order(eligible_only) {
            best = match best {
                Some(b) if self.pekko_compare(b, r) != Ordering::Greater => Some(b),
                _ => Some(r),
            };
        }
        best
    }

    /// Regions with a known member, stably sorted by `ShardSuitabilityOrdering` exactly as
    /// Pekko's `Vector.sorted` (java.util.TimSort) would. Err when TimSort would throw.
    pub fn pekko_sorted(&self, eligible_only: bool) -> Result<Vec<&Region>, ContractViolation> {
        if self.ranking_is_orderly() {
            let c = self.ranked();
            let set = if eligible_only {
                &c.rank_eligible
            } else {
                &c.rank_all
            };
            let mut v = Vec::with_capacity(self.slots.len());
            v.extend(set.slots().map(|s| self.region_in_slot(s)));
            return Ok(v);
        }
        let mut v: Vec<&Region> = self.ranked_regions_in_map_order(eligible_only).collect();
        jvm::sort_by(&mut v, |a, b| self.pekko_compare(a, b))?;
        Ok(v)
    }

    /// While the ranking is orderly: the shard counts of the region Pekko sorts first and the
    /// fewest and most any region it sorts holds, read off the ends of each ranking group (a
    /// handful: leaving or not, per app version) instead of sorting the R regions. `None` when
    /// no region has a member.
    pub fn ranked_counts(&self) -> Option<RankedCounts> {
        debug_assert!(self.ranking_is_orderly());
        let groups = &self.ranked().rank_all.0;
        let ends = || {
            groups
                .values()
                .filter_map(|set| Some((set.first()?.0, set.last()?.0)))
        };
        Some(RankedCounts {
            first: ends().next()?.0,
            fewest: ends().map(|e| e.0).min()?,
            most: ends().map(|e| e.1).max()?,
        })
    }

    /// `isAGoodTimeToRebalance`, given Pekko's sorted entries: the reasons it is not.
    pub fn pekko_rebalance_blockers(&self, sorted: &[&Region]) -> Vec<RebalanceBlocker> {
        let Some(first) = sorted.first() else {
            return vec![RebalanceBlocker::NoRegions];
        };
        let v0 = &self
            .member_of(first)
            .expect("ranked regions have members")
            .app_version;
        let mixed = if self.ranking_is_orderly() {
            !self.ranked_versions.all_equal()
        } else {
            sorted
                .iter()
                .any(|r| !self.member_of(r).expect("member").app_version.pekko_eq(v0))
        };
        self.blockers(mixed, sorted.iter().copied())
    }

    /// The same while [`Self::ranking_is_orderly`], without the sorted entries: then whether
    /// versions are mixed does not depend on which region sorts first.
    pub fn orderly_rebalance_blockers(&self) -> Vec<RebalanceBlocker> {
        debug_assert!(self.ranking_is_orderly());
        if self.ranked_status.iter().all(|&n| n == 0) {
            return vec![RebalanceBlocker::NoRegions];
        }
        let mixed = !self.ranked_versions.all_equal();
        self.blockers(mixed, self.ranked_regions_in_map_order(false))
    }

    /// The shards of regions with a known member (the regions Pekko's sorted entries hold).
    pub fn ranked_shard_count(&self) -> usize {
        self.slots
            .iter()
            .flatten()
            .filter(|r| r.rank.is_some())
            .map(Region::shard_count)
            .sum()
    }

    /// The reasons after "no regions", given whether versions are mixed among `ranked`.
    fn blockers<'a>(
        &'a self,
        mixed: bool,
        ranked: impl Iterator<Item = &'a Region>,
    ) -> Vec<RebalanceBlocker> {
        let mut out = Vec::new();
        if mixed {
            let mut versions: Vec<String> = ranked
                .map(|r| self.member_of(r).expect("member").app_version.to_string())
                .collect();
            versions.sort();
            versions.dedup();
            out.push(RebalanceBlocker::MixedVersions(versions));
        }
        if self.cluster.has_unreachable_in_self_dc() {
            out.push(RebalanceBlocker::Unreachable(
                self.cluster
                    .unreachable_in_self_dc()
                    .map(String::from)
                    .collect(),
            ));
        }
        if self.cluster.has_joining_in_self_dc() {
            out.push(RebalanceBlocker::Joining(
                self.cluster
                    .joining_in_self_dc()
                    .map(String::from)
                    .collect(),
            ));
        }
        out
    }

    fn ranked_regions_in_map_order(
        &self,
        eligible_only: bool,
    ) -> impl Iterator<Item = &Region> + '_ {
        self.regions()
            .filter(move |r| r.rank.is_some() && (!eligible_only || r.eligible))
    }

    // ---- actor-ts indexes ---------------------------------------------------------------

    /// Eligible regions sorted as actor-ts sorts node addresses (`localeCompare`, see
    /// [`ActorTsKey`]), then candidate order.
    pub fn eligible_by_address(&self) -> impl ExactSizeIterator<Item = &Region> + '_ {
        self.sorted_eligible
            .iter()
            .map(move |(_, _, slot)| self.slots[*slot].as_ref().expect("live"))
    }

    /// The `i`-th eligible region in actor-ts address order.
    pub fn eligible_by_address_nth(&self, i: usize) -> Option<&Region> {
        self.sorted_eligible
            .get(i)
            .map(|(_, _, slot)| self.slots[*slot].as_ref().expect("live"))
    }

    /// The eligible region with the fewest shards, ties to the lowest address in actor-ts order,
    /// then to the earliest candidate.
    pub fn least_loaded_eligible(&self) -> Option<&Region> {
        self.ranked()
            .load_eligible
            .first()
            .map(|(_, _, _, slot)| self.slots[*slot].as_ref().expect("live"))
    }

    /// Eligible regions in candidate order.
    pub fn eligible_in_candidate_order(&self) -> Vec<&Region> {
        // candidate positions are unique, so the slots' order makes no difference
        let mut v: Vec<&Region> = self.slots.iter().flatten().filter(|r| r.eligible).collect();
        v.sort_unstable_by_key(|r| r.candidate_pos);
        v
    }

    // ---- internals ----------------------------------------------------------------------

    fn slot(&self, id: &str) -> Result<usize> {
        self.by_id
            .get(id)
            .copied()
            .ok_or_else(|| Error::invalid_state(format!("region {id:?} is not registered")))
    }

    fn node_key(&self, slot: usize) -> String {
        let r = self.slots[slot].as_ref().expect("live");
        self.node_of(r).as_str().to_owned()
    }

    fn set_eligible_slot(&mut self, slot: usize, eligible: bool) {
        let was = self.slots[slot].as_ref().expect("live").eligible;
        if was == eligible {
            return;
        }
        self.unindex(slot);
        let next = self.next_candidate;
        let r = self.slots[slot].as_mut().expect("live");
        r.eligible = eligible;
        let (addr, cand) = (r.addr_key.clone(), r.candidate_pos);
        if eligible {
            r.candidate_pos = next;
            self.next_candidate += 1;
            let i = self
                .sorted_eligible
                .partition_point(|(a, c, _)| (a, *c) < (&addr, next));
            self.sorted_eligible.insert(i, (addr, next, slot));
        } else {
            let i = self
                .sorted_eligible
                .partition_point(|(a, c, _)| (a, *c) < (&addr, cand));
            debug_assert_eq!(self.sorted_eligible.get(i).map(|e| e.2), Some(slot));
            self.sorted_eligible.remove(i);
        }
        self.reindex(slot);
        self.topology_gen += 1;
    }

    /// Takes a region out of the count-dependent indexes (before its member changes).
    fn unindex(&mut self, slot: usize) {
        self.placement_gen += 1;
        // settled first, so its keys are made from the region as it is
        self.ranked_mut();
        let r = self.slots[slot].as_mut().expect("live");
        let (count, pos, eligible) = (r.shards.len(), r.pos, r.eligible);
        let key = r.load_key(count, slot);
        let rank = r.rank.take();
        let c = self.ranked_mut();
        if let Some((group, _, _)) = &rank {
            c.rank_all.remove(group, &(count, pos, slot));
            c.rank_eligible.remove(group, &(count, pos, slot));
        }
        if eligible {
            c.load_eligible.remove(&key);
        }
        if let Some((_, status, version)) = rank {
            self.ranked_status[status as usize] -= 1;
            self.ranked_versions.remove(&version);
        }
    }

    /// Puts a region back into the count-dependent indexes.
    fn reindex(&mut self, slot: usize) {
        self.placement_gen += 1;
        let r = self.slots[slot].as_ref().expect("live");
        let node = if r.local {
            self.cluster.self_address()
        } else {
            &r.address
        };
        let ranked = self.cluster.member(node.as_str()).map(|m| {
            let group = (m.status.is_leaving(), Reverse(m.app_version.sort_key()));
            (group, m.status, m.app_version.clone())
        });
        let (count, pos, eligible) = (r.shards.len(), r.pos, r.eligible);
        let key = r.load_key(count, slot);
        let c = self.ranked_mut();
        if eligible {
            c.load_eligible.insert(key);
        }
        if let Some((group, status, version)) = ranked {
            if eligible {
                c.rank_eligible.insert(&group, (count, pos, slot));
            }
            c.rank_all.insert(&group, (count, pos, slot));
            self.ranked_status[status as usize] += 1;
            self.ranked_versions.add(&version);
            self.slots[slot].as_mut().expect("live").rank = Some((group, status, version));
        }
        self.reclass(slot);
    }
}

/// Why Pekko's `isAGoodTimeToRebalance` says no.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RebalanceBlocker {
    NoRegions,
    MixedVersions(Vec<String>),
    Unreachable(Vec<String>),
    Joining(Vec<String>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_entry_stays_24_bytes() {
        // one per shard in the map GetShardHome probes: the hint lives in former padding
        assert_eq!(std::mem::size_of::<Home>(), 24);
    }

    /// Shards taken in a batch and placed again end as removed and added ones do: same homes,
    /// loads, region loads and order, the load current at placing even when it changed while
    /// the shard was away; a batch stops at a shard that is not allocated.
    #[test]
    fn taken_shards_place_again_as_removed_and_added_ones() {
        let addr = |i: usize| Address::parse(&format!("pekko://s@10.0.0.{i}:2552")).unwrap();
        let build = || {
            let mut st = AllocationState::new(ClusterView::new(addr(0)));
            for i in 0..3 {
                st.upsert_member(Member::new(addr(i)));
                st.add_region(&format!("r{i}"), addr(i), false).unwrap();
            }
            for k in 0..90 {
                let id = format!("s{k}");
                st.set_shard_load(&id, &Amount::Uniform(1.0 + (k % 7) as f64))
                    .unwrap();
                st.add_shard(&format!("r{}", k % 3), &id).unwrap();
            }
            st
        };
        let (mut a, mut b) = (build(), build());
        // enough to compact r0's arrays on the way, so some hints go stale
        let moved: Vec<String> = (0..90)
            .step_by(3)
            .take(25)
            .map(|k| format!("s{k}"))
            .collect();
        // owned ids, dropped as they are taken (the error case below passes an array)
        let taken = a.take_shards(moved.clone()).unwrap();
        for s in &moved {
            b.remove_shard(s).unwrap();
        }
        a.set_shard_load("s3", &Amount::Uniform(9.5)).unwrap();
        b.set_shard_load("s3", &Amount::Uniform(9.5)).unwrap();
        for (t, s) in taken.into_iter().zip(&moved) {
            assert_eq!(&**t.id(), s);
            a.place_taken("r1", t).unwrap();
            b.add_shard("r1", s).unwrap();
        }
        let view = |st: &AllocationState| {
            st.regions()
                .map(|r| {
                    let shards: Vec<(String, f64)> = r
                        .shards_with_load()
                        .map(|(_, id, l)| (id.to_string(), l.get(0)))
                        .collect();
                    (r.id().to_string(), r.load().get(0), shards)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(view(&a), view(&b));
        assert_eq!(a.shard_load("s3").get(0), 9.5);
        assert_eq!(a.shard_count(), 90);
        // a batch stops at the first shard it cannot take; those before it are taken
        let err = a
            .take_shards(["s1", "nope", "s4"])
            .expect_err("not allocated");
        assert!(
            err.to_string().contains("\"nope\" is not allocated"),
            "{err}"
        );
        assert!(a.home_of("s1").is_none());
        assert!(a.home_of("s4").is_some());
    }

    /// The count- and load-keyed indexes made afresh from the regions as they are.
    fn from_scratch(s: &AllocationState) -> (Ranked, ClassIndex) {
        let (mut c, mut classes) = (Ranked::default(), ClassIndex::default());
        for (slot, r) in s.slots.iter().enumerate() {
            let Some(r) = r else { continue };
            let count = r.shards.len();
            if let Some((g, e)) = r.rank_key(count, slot) {
                if r.eligible {
                    c.rank_eligible.insert(g, e);
                }
                c.rank_all.insert(g, e);
            }
            if r.eligible {
                c.load_eligible.insert(r.load_key(count, slot));
            }
            if let Some(k) = &r.class {
                let e = r.class_entry(r.load.get(0), count, slot);
                classes.insert(k.clone(), e);
            }
        }
        (c, classes)
    }

    /// Shards placed, removed, moved and re-weighed in runs between reads, mixed with region
    /// and member changes: whenever read, the re-keyed indexes are the ones made afresh. With
    /// 6 regions every read that finds one marked rebuilds the class index; with 400 most
    /// find too few marked for that (the ~20 steps between reads mark at most as many) and
    /// re-key each in place.
    #[test]
    fn lazily_rekeyed_indexes_match_ones_made_from_scratch() {
        for regions in [6, 400] {
            rekeyed_indexes_match_ones_made_from_scratch(regions);
        }
    }

    fn rekeyed_indexes_match_ones_made_from_scratch(region_count: usize) {
        let mut seed = 7u64;
        let mut next = move |n: usize| {
            seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n as u64) as usize
        };
        let addr = |i: usize| Address::parse(&format!("pekko://s@10.0.0.{i}:2552")).unwrap();
        let mut state = AllocationState::new(ClusterView::new(addr(0)));
        let regions: Vec<String> = (0..region_count).map(|i| format!("r{i}")).collect();
        for (i, id) in regions.iter().enumerate() {
            state.upsert_member(Member::new(addr(i)));
            state.add_region(id, addr(i), false).unwrap();
        }
        let mut placed: Vec<String> = Vec::new();
        let (mut reads, mut stale_reads) = (0, 0);
        for k in 0..4000 {
            let region = &regions[next(regions.len())];
            match next(21) {
                0..=5 => {
                    let id = format!("s{k}");
                    state.add_shard(region, &id).unwrap();
                    placed.push(id);
                }
                6..=8 if !placed.is_empty() => {
                    let id = placed.swap_remove(next(placed.len()));
                    state.remove_shard(&id).unwrap();
                }
                9..=11 if !placed.is_empty() => {
                    let id = &placed[next(placed.len())];
                    state.remove_shard(id).unwrap();
                    state.add_shard(region, id).unwrap();
                }
                12..=14 if !placed.is_empty() => {
                    let id = &placed[next(placed.len())];
                    let load = Amount::Uniform(next(40) as f64 / 8.0);
                    state.set_shard_load(id, &load).unwrap();
                }
                15 => state.set_eligible(region, next(4) > 0).unwrap(),
                16 => state.set_region_draining(region, next(4) == 0).unwrap(),
                17 => {
                    let cap = Amount::Uniform([1.0, 2.0][next(2)]);
                    state.set_region_capacity(region, &cap).unwrap();
                }
                18 => {
                    let i = regions.iter().position(|r| r == region).unwrap();
                    let mut m = Member::new(addr(i));
                    if next(4) == 0 {
                        m.status = MemberStatus::Leaving;
                    }
                    state.upsert_member(m);
                }
                19 => {
                    // freed and taken again at once: the slot is reused
                    let i = regions.iter().position(|r| r == region).unwrap();
                    let gone = state.remove_region(region).unwrap();
                    placed.retain(|s| !gone.iter().any(|g| **g == **s));
                    if next(2) == 0 {
                        // read while the slot is free
                        assert_eq!(
                            (state.ranked().clone(), state.classes().clone()),
                            from_scratch(&state)
                        );
                    }
                    state.add_region(region, addr(i), false).unwrap();
                }
                _ => {
                    reads += 1;
                    stale_reads += usize::from(state.ranked.settled.get().is_none());
                    // read in either order: each index re-keys on its own
                    let (ranked, classes) = from_scratch(&state);
                    if next(2) == 0 {
                        assert_eq!(*state.classes(), classes, "read {reads}");
                        assert_eq!(*state.ranked(), ranked, "read {reads}");
                    } else {
                        assert_eq!(*state.ranked(), ranked, "read {reads}");
                        assert_eq!(*state.classes(), classes, "read {reads}");
                    }
                }
            }
        }
        assert_eq!(
            (state.ranked().clone(), state.classes().clone()),
            from_scratch(&state)
        );
        // the runs between reads left something to re-key
        assert!(
            stale_reads > reads / 2,
            "{stale_reads} of {reads} reads re-keyed"
        );
    }
}
