//! The allocation map a coordinator keeps: regions in map order, each with its shards in
//! allocation order, plus the indexes that let strategies decide in O(log R).
//!
//! Pekko breaks ties by the iteration order of its allocation map; here that order is explicit
//! (registration order, [`AllocationState::add_region`]) so decisions are reproducible.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use crate::hashing::string_hash;
use crate::jvm::{self, ContractViolation};
use crate::model::{ActorTsKey, Address};
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
    /// Each shard with its load, kept here so listing a region's shards by load reads them
    /// in place rather than looking each up in the load book.
    shards: BTreeMap<u64, Placed>,
    /// `(allocation sequence, ring position)` of each shard, in allocation order: a
    /// consistent-hashing round reads one position per shard, and a flat array of them costs
    /// a fraction of walking the map and hashing every id again.
    ring_positions: Vec<(u64, i32)>,
    /// What the ranking indexes hold for this region, so it can be taken out even after the
    /// member it was ranked by has changed.
    rank: Option<(RankKey, MemberStatus, Version)>,
    addr_key: ActorTsKey,
    profile: RegionProfile,
    /// Sum of its shards' loads.
    load: LoadVec,
    /// Where [`AllocationState`]'s class index holds it, when it may receive shards.
    class: Option<(ClassKey, ClassEntry)>,
}

/// A shard as its region lists it.
#[derive(Debug, Clone)]
struct Placed {
    id: ShardId,
    load: LoadVec,
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
        self.shards.values().map(|p| &p.id)
    }
    /// `(allocation sequence, position on Pekko's consistent-hash ring)` of each shard, in
    /// allocation order; the position is [`crate::hashing::string_hash`] of the id, worked out
    /// once when the shard is placed.
    pub fn ring_positions(&self) -> &[(u64, i32)] {
        &self.ring_positions
    }
    /// The shard placed here with allocation sequence `seq`.
    pub fn shard_at(&self, seq: u64) -> Option<&ShardId> {
        self.shards.get(&seq).map(|p| &p.id)
    }
    /// Shards in allocation order with their allocation sequence (see
    /// [`AllocationState::shard_sequence`]) and load.
    pub fn shards_with_load(&self) -> impl Iterator<Item = (u64, &ShardId, &LoadVec)> {
        self.shards.iter().map(|(k, p)| (*k, &p.id, &p.load))
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
}

/// `ShardSuitabilityOrdering` as a total order; valid while [`AllocationState`] reports the
/// ranking as orderly.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RankKey {
    leaving: bool,
    version: Reverse<VersionKey>,
    count: usize,
    pos: u64,
}

#[derive(Debug, Clone, Copy)]
struct Home {
    slot: usize,
    seq: u64,
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
    homes: ShardMap<Home>,
    /// node address -> map positions of the regions on it
    by_node: HashMap<String, BTreeSet<u64>>,
    rank_all: BTreeSet<RankKey>,
    rank_eligible: BTreeSet<RankKey>,
    ranked_status: [usize; 6],
    ranked_versions: OrderlyVersions,
    /// (count, actor-ts address order, candidate position) of eligible regions: actor-ts
    /// least-shard.
    load_eligible: BTreeSet<(usize, ActorTsKey, u64, usize)>,
    /// Eligible regions by (actor-ts address order, candidate position): actor-ts hash.
    sorted_eligible: Vec<(ActorTsKey, u64, usize)>,
    topology_gen: u64,
    /// Bumped by every change but a shard's load (see [`Self::placement_stamp`]).
    placement_gen: u64,
    loads: LoadBook,
    /// Regions that may receive shards (a member, eligible, not draining) by class.
    classes: ClassIndex,
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
            homes: ShardMap::default(),
            by_node: HashMap::new(),
            rank_all: BTreeSet::new(),
            rank_eligible: BTreeSet::new(),
            ranked_status: [0; 6],
            ranked_versions: OrderlyVersions::default(),
            load_eligible: BTreeSet::new(),
            sorted_eligible: Vec::new(),
            topology_gen: 0,
            placement_gen: 0,
            loads: LoadBook::default(),
            classes: ClassIndex::default(),
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
            by_node: self.by_node.clone(),
            rank_all: self.rank_all.clone(),
            rank_eligible: self.rank_eligible.clone(),
            ranked_status: self.ranked_status,
            ranked_versions: self.ranked_versions.clone(),
            load_eligible: self.load_eligible.clone(),
            sorted_eligible: self.sorted_eligible.clone(),
            topology_gen: self.topology_gen,
            placement_gen: self.placement_gen,
            loads: self.loads.clone(),
            classes: self.classes.clone(),
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
            shards: BTreeMap::new(),
            ring_positions: Vec::new(),
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
        if let Some((k, e)) = self.slots[slot].as_mut().expect("live").class.take() {
            self.classes.remove(&k, &e);
        }
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
        let shards: Vec<ShardId> = region.shards.into_values().map(|p| p.id).collect();
        for s in &shards {
            self.homes.remove(s);
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
        self.order
            .values()
            .map(move |&s| self.slots[s].as_ref().expect("ordered slot is live"))
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
        let slot = self.slot(region)?;
        if let Some(home) = self.homes.get(shard) {
            let owner = self.slots[home.slot]
                .as_ref()
                .map(|r| r.id.to_string())
                .unwrap_or_default();
            return Err(Error::invalid_state(format!(
                "shard {shard:?} is already allocated to region {owner:?}"
            )));
        }
        // a shard with a load set shares the load book's id rather than allocating its own
        let (shard, load): (ShardId, LoadVec) = match self.loads.shard_loads.get_key_value(shard) {
            Some((id, load)) => (id.clone(), load.clone()),
            None => (Arc::from(shard), LoadVec::UNIT),
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        let r = self.slots[slot].as_mut().expect("live");
        r.load.add(&load);
        self.recount(slot, |shards| {
            shards.insert(
                seq,
                Placed {
                    id: shard.clone(),
                    load,
                },
            );
        });
        let r = self.slots[slot].as_mut().expect("live");
        // Sequences only grow, so a push keeps allocation order.
        r.ring_positions.push((seq, string_hash(&shard)));
        self.reentry(slot);
        self.homes.insert(shard, Home { slot, seq });
        Ok(())
    }

    /// Deallocates a shard, returning the region that held it.
    pub fn remove_shard(&mut self, shard: &str) -> Result<RegionId> {
        let home = self
            .homes
            .remove(shard)
            .ok_or_else(|| Error::invalid_state(format!("shard {shard:?} is not allocated")))?;
        let mut load = LoadVec::default();
        self.recount(home.slot, |shards| {
            load = shards
                .remove(&home.seq)
                .expect("homed shard is listed")
                .load;
        });
        let r = self.slots[home.slot].as_mut().expect("live");
        if let Ok(i) = r
            .ring_positions
            .binary_search_by_key(&home.seq, |&(seq, _)| seq)
        {
            r.ring_positions.remove(i);
        }
        if r.shards.is_empty() {
            // exactly zero, not what float subtraction leaves
            r.load = LoadVec::default();
        } else {
            r.load.sub(&load);
        }
        self.reentry(home.slot);
        Ok(self.slots[home.slot].as_ref().expect("live").id.clone())
    }

    /// The region a shard is allocated to.
    pub fn home_of(&self, shard: &str) -> Option<&Region> {
        self.homes
            .get(shard)
            .and_then(|h| self.slots[h.slot].as_ref())
    }

    pub fn shard_count(&self) -> usize {
        self.homes.len()
    }

    /// The position of a shard in its region's allocation order (smaller is older).
    pub fn shard_sequence(&self, shard: &str) -> Option<u64> {
        self.homes.get(shard).map(|h| h.seq)
    }

    // ---- loads, capacities, rules (least-load) -------------------------------------------

    /// Sets a shard's load (allocated or not); a region holding it re-sums at once.
    pub fn set_shard_load(&mut self, shard: &str, load: &Amount) -> Result<()> {
        let new = self
            .loads
            .resolve_load(&format!("load of shard {shard:?}"), load)?;
        if let Some(home) = self.homes.get(shard) {
            let r = self.slots[home.slot].as_mut().expect("live");
            let listed = &mut r
                .shards
                .get_mut(&home.seq)
                .expect("homed shard is listed")
                .load;
            r.load.sub(listed);
            r.load.add(&new);
            *listed = new.clone();
            let slot = home.slot;
            self.reentry(slot);
        }
        if new.is_unit() {
            self.loads.shard_loads.remove(shard);
        } else {
            self.loads.shard_loads.insert(Arc::from(shard), new);
        }
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
        &self.classes
    }

    /// The region in a slot of [`Self::receiving_classes`].
    pub(crate) fn region_in_slot(&self, slot: usize) -> &Region {
        self.slots[slot].as_ref().expect("indexed slot is live")
    }

    /// Moves a region within its class after its load or shard count changed.
    fn reentry(&mut self, slot: usize) {
        let r = self.slots[slot].as_mut().expect("live");
        if let Some((k, e)) = r.class.as_mut() {
            let new = (Ordered(r.load.get(0)), r.shards.len(), r.pos, slot);
            self.classes.replace(k, e, new);
            *e = new;
        }
    }

    /// Puts a region where the class index should hold it (nowhere, if it may not receive).
    fn reclass(&mut self, slot: usize) {
        self.placement_gen += 1;
        let r = self.slots[slot].as_mut().expect("live");
        if let Some((k, e)) = r.class.take() {
            self.classes.remove(&k, &e);
        }
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
        let entry = (Ordered(r.load.get(0)), r.shards.len(), r.pos, slot);
        self.classes.insert(key.clone(), entry);
        r.class = Some((key, entry));
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
            let set = if eligible_only {
                &self.rank_eligible
            } else {
                &self.rank_all
            };
            return set.first().map(|k| self.region_at(k.pos));
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
            let set = if eligible_only {
                &self.rank_eligible
            } else {
                &self.rank_all
            };
            return Ok(set.iter().map(|k| self.region_at(k.pos)).collect());
        }
        let mut v: Vec<&Region> = self.ranked_regions_in_map_order(eligible_only).collect();
        jvm::sort_by(&mut v, |a, b| self.pekko_compare(a, b))?;
        Ok(v)
    }

    /// `isAGoodTimeToRebalance`, given Pekko's sorted entries: the reasons it is not.
    pub fn pekko_rebalance_blockers(&self, sorted: &[&Region]) -> Vec<RebalanceBlocker> {
        let mut out = Vec::new();
        let Some(first) = sorted.first() else {
            out.push(RebalanceBlocker::NoRegions);
            return out;
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
        if mixed {
            let mut versions: Vec<String> = sorted
                .iter()
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
        self.load_eligible
            .first()
            .map(|(_, _, _, slot)| self.slots[*slot].as_ref().expect("live"))
    }

    /// Eligible regions in candidate order.
    pub fn eligible_in_candidate_order(&self) -> Vec<&Region> {
        let mut v: Vec<&Region> = self.regions().filter(|r| r.eligible).collect();
        v.sort_by_key(|r| r.candidate_pos);
        v
    }

    // ---- internals ----------------------------------------------------------------------

    fn region_at(&self, pos: u64) -> &Region {
        self.slots[self.order[&pos]]
            .as_ref()
            .expect("ordered slot is live")
    }

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

    /// Changes a region's shards and moves it within the count-keyed indexes; its member is
    /// unchanged, so the status and version tallies stay as they are.
    fn recount(&mut self, slot: usize, change: impl FnOnce(&mut BTreeMap<u64, Placed>)) {
        self.placement_gen += 1;
        let r = self.slots[slot].as_mut().expect("live");
        let before = r.shards.len();
        change(&mut r.shards);
        let after = r.shards.len();
        if let Some((key, _, _)) = r.rank.as_mut() {
            let old = key.clone();
            key.count = after;
            let in_eligible = self.rank_eligible.remove(&old);
            self.rank_all.remove(&old);
            self.rank_all.insert(key.clone());
            if in_eligible {
                self.rank_eligible.insert(key.clone());
            }
        }
        if r.eligible {
            self.load_eligible
                .remove(&(before, r.addr_key.clone(), r.candidate_pos, slot));
            self.load_eligible
                .insert((after, r.addr_key.clone(), r.candidate_pos, slot));
        }
    }

    /// Takes a region out of the count-dependent indexes (before its shards or member change).
    fn unindex(&mut self, slot: usize) {
        self.placement_gen += 1;
        let r = self.slots[slot].as_mut().expect("live");
        if let Some((key, status, version)) = r.rank.take() {
            self.rank_all.remove(&key);
            self.rank_eligible.remove(&key);
            self.ranked_status[status as usize] -= 1;
            self.ranked_versions.remove(&version);
        }
        if r.eligible {
            self.load_eligible
                .remove(&(r.shards.len(), r.addr_key.clone(), r.candidate_pos, slot));
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
            let key = RankKey {
                leaving: m.status.is_leaving(),
                version: Reverse(m.app_version.sort_key()),
                count: r.shards.len(),
                pos: r.pos,
            };
            (key, m.status, m.app_version.clone())
        });
        if r.eligible {
            self.load_eligible
                .insert((r.shards.len(), r.addr_key.clone(), r.candidate_pos, slot));
        }
        let eligible = r.eligible;
        if let Some((key, status, version)) = ranked {
            self.rank_all.insert(key.clone());
            if eligible {
                self.rank_eligible.insert(key.clone());
            }
            self.ranked_status[status as usize] += 1;
            self.ranked_versions.add(&version);
            self.slots[slot].as_mut().expect("live").rank = Some((key, status, version));
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
