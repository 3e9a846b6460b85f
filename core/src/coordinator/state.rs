//! The coordinator's persistent state: Pekko's `State` plus per-shard versions and
//! remembered entities, changed only through [`Event`]s whose preconditions are checked.
//!
//! Unlike Pekko's ddata encoding, the order of regions and of each region's shards is part of
//! the state, so a coordinator restored from it sees the same map order and the strategies
//! break ties the same way.
//!
//! The shards are kept once, in the allocation map the strategies read: at 100k shards a
//! second map and a second list per region would cost more than the map itself.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::loads;
use crate::model::{Address, AllocationState, Amount, ClusterView};
use crate::protocol::{EntityId, RegionId, RegionOffer, ShardId};
use crate::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "CoordinatorEvent")
)]
#[serde(tag = "type", rename_all = "camelCase")]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub enum Event {
    /// Precondition: `region` is not registered.
    ShardRegionRegistered { region: RegionId, node: String },
    /// Precondition: `proxy` is not registered.
    ShardRegionProxyRegistered { proxy: RegionId, node: String },
    /// Precondition: `region` is registered. Its shards become unallocated.
    ShardRegionTerminated { region: RegionId },
    /// Precondition: `proxy` is registered.
    ShardRegionProxyTerminated { proxy: RegionId },
    /// Precondition: `region` is registered, `shard` is unallocated, `version` is above the
    /// shard's last version.
    ShardHomeAllocated {
        shard: ShardId,
        region: RegionId,
        version: u64,
    },
    /// Precondition: `shard` is allocated, `version` is above the shard's last version.
    ShardHomeDeallocated { shard: ShardId, version: u64 },
    /// Remember-entities. Precondition: the entity is not remembered in that shard.
    EntityRemembered { shard: ShardId, entity: EntityId },
    /// Precondition: the entity is remembered in that shard.
    EntityForgotten { shard: ShardId, entity: EntityId },
    /// The region's offer (capacity, tags, shard cap) is now `offer`. Precondition: `region`
    /// is registered.
    ShardRegionOfferChanged {
        region: RegionId,
        offer: RegionOffer,
    },
    /// The region is (no longer) draining. Precondition: `region` is registered.
    ShardRegionDrainingChanged { region: RegionId, draining: bool },
    /// These shards' smoothed loads are now as given (see `coordinator::loads`). Precondition:
    /// every load is finite and >= 0.
    ShardLoadsSmoothed { loads: BTreeMap<ShardId, Amount> },
}

/// One stored event; `seq` counts from 1 without gaps across the coordinator's lifetime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "StoredRecord")
)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub struct Record {
    pub seq: u64,
    pub event: Event,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub struct SnapshotRegion {
    pub region: RegionId,
    pub node: String,
    /// In allocation order, oldest first.
    pub shards: Vec<ShardId>,
    /// Capacity, tags and shard cap; absent when default.
    #[serde(flatten)]
    pub offer: RegionOffer,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub draining: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub struct SnapshotProxy {
    pub proxy: RegionId,
    pub node: String,
}

/// The whole state after event `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub struct Snapshot {
    pub seq: u64,
    /// In registration (map) order.
    pub regions: Vec<SnapshotRegion>,
    pub proxies: Vec<SnapshotProxy>,
    pub unallocated: Vec<ShardId>,
    pub remembered: BTreeMap<ShardId, Vec<EntityId>>,
    pub versions: BTreeMap<ShardId, u64>,
    /// Smoothed shard loads; absent when no region has reported any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub loads: BTreeMap<ShardId, Amount>,
}

/// What a coordinator restores from: the latest snapshot, then the events after it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct StoredState {
    pub snapshot: Option<Snapshot>,
    pub events: Vec<Record>,
}

#[derive(Debug, Clone)]
struct RegionRecord {
    node: String,
    offer: RegionOffer,
    draining: bool,
}

/// Pekko's state, with the shards kept once: each shard's home and version, and each
/// region's shards in allocation order, live in the allocation map the strategies read
/// (`table`), which this state keeps in step with its events. Map order is the table's
/// region order, which is registration order, as is Pekko's.
#[derive(Debug)]
pub struct PersistentState {
    remember_entities: bool,
    /// Nodes, offers and draining flags of the registered regions.
    regions: HashMap<RegionId, RegionRecord>,
    proxies: BTreeMap<RegionId, String>,
    table: AllocationState,
    /// The load `table` gives shards without a smoothed load (see `coordinator::loads`).
    prior: Option<Amount>,
    unallocated: BTreeSet<ShardId>,
    remembered: BTreeMap<ShardId, BTreeSet<EntityId>>,
    /// Smoothed loads by shard, kept across moves (the load follows the shard).
    loads: BTreeMap<ShardId, Amount>,
    seq: u64,
}

impl PersistentState {
    /// An empty state whose table sees `cluster` (a coordinator's view of its node and the
    /// members): a region on the cluster's self address is local.
    pub fn new(remember_entities: bool, cluster: ClusterView) -> PersistentState {
        PersistentState {
            remember_entities,
            regions: HashMap::new(),
            proxies: BTreeMap::new(),
            table: AllocationState::new(cluster),
            prior: None,
            unallocated: BTreeSet::new(),
            remembered: BTreeMap::new(),
            loads: BTreeMap::new(),
            seq: 0,
        }
    }

    /// A copy that goes on independently (feature `model-check`).
    #[cfg(feature = "model-check")]
    pub fn fork(&self) -> PersistentState {
        PersistentState {
            remember_entities: self.remember_entities,
            regions: self.regions.clone(),
            proxies: self.proxies.clone(),
            table: self.table.fork(),
            prior: self.prior.clone(),
            unallocated: self.unallocated.clone(),
            remembered: self.remembered.clone(),
            loads: self.loads.clone(),
            seq: self.seq,
        }
    }

    pub fn seq(&self) -> u64 {
        self.seq
    }

    pub fn is_empty(&self) -> bool {
        self.regions.is_empty() && self.proxies.is_empty() && self.table.shard_count() == 0
    }

    /// The allocation map the strategies read: the registered regions with their shards, plus
    /// the cluster view, loads and offers.
    pub fn allocation(&self) -> &AllocationState {
        &self.table
    }

    /// The same, for what the strategies read but no event records (members, reachability,
    /// eligibility); shards and regions change only through events.
    pub(crate) fn allocation_mut(&mut self) -> &mut AllocationState {
        &mut self.table
    }

    pub fn has_region(&self, region: &str) -> bool {
        self.regions.contains_key(region)
    }

    pub fn has_proxy(&self, proxy: &str) -> bool {
        self.proxies.contains_key(proxy)
    }

    pub fn region_node(&self, region: &str) -> Option<&str> {
        self.regions.get(region).map(|r| r.node.as_str())
    }

    pub fn proxy_node(&self, proxy: &str) -> Option<&str> {
        self.proxies.get(proxy).map(String::as_str)
    }

    /// Regions in map order, with their node and shards (oldest first).
    pub fn regions(
        &self,
    ) -> impl Iterator<Item = (&RegionId, &str, impl ExactSizeIterator<Item = &Arc<str>>)> + '_
    {
        self.table.regions().map(move |r| {
            let (id, record) = self
                .regions
                .get_key_value(&**r.id())
                .expect("the table's regions are registered");
            (id, record.node.as_str(), r.shards())
        })
    }

    /// A registered region's id, shared (see [`crate::protocol::ShardHome`]).
    pub fn shared_id(&self, region: &str) -> Option<Arc<str>> {
        self.table.region(region).map(|r| r.id().clone())
    }

    /// The region's offer (default when unknown).
    pub fn region_offer(&self, region: &str) -> Option<&RegionOffer> {
        self.regions.get(region).map(|r| &r.offer)
    }

    /// Offers of every region, in map order.
    pub fn offers(&self) -> impl Iterator<Item = (&RegionId, &RegionOffer)> + '_ {
        self.regions()
            .map(|(id, _, _)| (id, &self.regions[id].offer))
    }

    pub fn is_draining(&self, region: &str) -> bool {
        self.regions.get(region).is_some_and(|r| r.draining)
    }

    /// Smoothed loads by shard id.
    pub fn loads(&self) -> &BTreeMap<ShardId, Amount> {
        &self.loads
    }

    pub fn proxies(&self) -> impl Iterator<Item = (&RegionId, &str)> + '_ {
        self.proxies.iter().map(|(p, n)| (p, n.as_str()))
    }

    pub fn home_of(&self, shard: &str) -> Option<&str> {
        self.table.home_of(shard).map(|r| &**r.id())
    }

    /// The shard's home and version, in one lookup (the coordinator's hot path). Inline, as
    /// the step hosts inline, so that they call the lookup itself rather than this wrapper.
    #[inline]
    pub fn home_and_version(&self, shard: &str) -> Option<(&Arc<str>, u64)> {
        self.table.home_and_version(shard)
    }

    pub fn shard_count(&self) -> usize {
        self.table.shard_count()
    }

    /// The region's shards, oldest first (none when it is not registered).
    pub fn shards_of(&self, region: &str) -> impl Iterator<Item = &Arc<str>> + '_ {
        self.table
            .region(region)
            .into_iter()
            .flat_map(|r| r.shards())
    }

    pub fn unallocated(&self) -> impl Iterator<Item = &ShardId> + '_ {
        self.unallocated.iter()
    }

    pub fn remembered(&self, shard: &str) -> Vec<EntityId> {
        self.remembered
            .get(shard)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub fn is_remembered(&self, shard: &str, entity: &str) -> bool {
        self.remembered
            .get(shard)
            .is_some_and(|s| s.contains(entity))
    }

    pub fn version(&self, shard: &str) -> u64 {
        self.table.shard_version(shard).unwrap_or(0)
    }

    /// Raises a shard's version without an event: hand-off starts and aborts are volatile.
    /// A successor coordinator outranks them with its larger fencing token; the same
    /// coordinator reloading under its own token keeps them with [`Self::raise_versions`].
    pub fn bump_version(&mut self, shard: &str) -> u64 {
        let v = self.table.version_mut(shard);
        *v += 1;
        *v
    }

    /// Puts every shard whose version `floor` has taken further past that version, so that
    /// stamps issued before a reload are neither undercut nor reused for another decision.
    pub fn raise_versions(&mut self, floor: &PersistentState) {
        for (shard, v) in floor.table.shard_versions() {
            let mine = self.table.version_mut(shard);
            if v > *mine {
                *mine = v + 1;
            }
        }
    }

    /// Rebuilds the table as every coordinator builds it when it restores: loads first, then
    /// the regions in map order with their shards oldest first. Each region then sums its
    /// shards' loads in the same order, so a successor's decisions match to the bit whatever
    /// events the state was replayed from.
    pub(crate) fn rebuild_allocation(&mut self) -> Result<()> {
        let cluster = self.table.cluster().clone();
        let old = std::mem::replace(&mut self.table, AllocationState::new(cluster));
        self.prior = loads::prior(&self.loads);
        for (s, l) in &self.loads {
            self.table.set_shard_load(s, l)?;
        }
        for r in old.regions() {
            let record = self.regions[&**r.id()].clone();
            self.add_region(r.id(), &record.node)?;
            self.set_offer(r.id(), &record.offer)?;
            self.table.set_region_draining(r.id(), record.draining)?;
            for s in r.shards() {
                self.place(r.id(), s, None)?;
            }
        }
        for (s, v) in old.shard_versions() {
            *self.table.version_mut(s) = v;
        }
        Ok(())
    }

    /// Checks `event`'s precondition and applies it; the state is untouched on error.
    pub fn apply(&mut self, event: &Event) -> Result<()> {
        self.apply_inner(event, false)?;
        self.seq += 1;
        Ok(())
    }

    /// Applies a stored record during recovery. Like Pekko, a termination of an unknown region
    /// or proxy is a no-op; every other precondition still holds.
    pub fn recover(&mut self, record: &Record) -> Result<()> {
        if record.seq != self.seq + 1 {
            return Err(Error::invalid_state(format!(
                "event {} follows event {}: the log has a gap or is out of order",
                record.seq, self.seq
            )));
        }
        self.apply_inner(&record.event, true)
            .map_err(|e| e.context(format!("event {}", record.seq)))?;
        self.seq = record.seq;
        Ok(())
    }

    fn apply_inner(&mut self, event: &Event, recovering: bool) -> Result<()> {
        let fail = |why: String| Err(Error::invalid_state(why));
        match event {
            Event::ShardRegionRegistered { region, node } => {
                if self.regions.contains_key(region) {
                    return fail(format!("region {region:?} is already registered"));
                }
                self.add_region(region, node)?;
                self.regions.insert(
                    region.clone(),
                    RegionRecord {
                        node: node.clone(),
                        offer: RegionOffer::default(),
                        draining: false,
                    },
                );
            }
            Event::ShardRegionProxyRegistered { proxy, node } => {
                if self.proxies.contains_key(proxy) {
                    return fail(format!("proxy {proxy:?} is already registered"));
                }
                self.proxies.insert(proxy.clone(), node.clone());
            }
            Event::ShardRegionTerminated { region } => {
                if !self.regions.contains_key(region) {
                    if recovering {
                        return Ok(());
                    }
                    return fail(format!("region {region:?} is not registered"));
                }
                let shards = self.table.remove_region(region)?;
                self.regions.remove(region);
                if self.remember_entities {
                    self.unallocated
                        .extend(shards.iter().map(|s| ShardId::from(&**s)));
                }
            }
            Event::ShardRegionProxyTerminated { proxy } => {
                if self.proxies.remove(proxy).is_none() && !recovering {
                    return fail(format!("proxy {proxy:?} is not registered"));
                }
            }
            Event::ShardHomeAllocated {
                shard,
                region,
                version,
            } => {
                if let Some(owner) = self.home_of(shard) {
                    return fail(format!("shard {shard:?} is already allocated to {owner:?}"));
                }
                if *version <= self.version(shard) {
                    return fail(format!(
                        "shard {shard:?} version {version} does not exceed {}",
                        self.version(shard)
                    ));
                }
                if !self.regions.contains_key(region) {
                    return fail(format!("region {region:?} is not registered"));
                }
                self.place(region, shard, Some(*version))?;
                self.unallocated.remove(shard);
            }
            Event::ShardHomeDeallocated { shard, version } => {
                if self.home_of(shard).is_none() {
                    return fail(format!("shard {shard:?} is not allocated"));
                }
                if *version <= self.version(shard) {
                    return fail(format!(
                        "shard {shard:?} version {version} does not exceed {}",
                        self.version(shard)
                    ));
                }
                *self.table.version_mut(shard) = *version;
                self.table.remove_shard(shard)?;
                if self.remember_entities {
                    self.unallocated.insert(shard.clone());
                }
            }
            Event::EntityRemembered { shard, entity } => {
                if !self
                    .remembered
                    .entry(shard.clone())
                    .or_default()
                    .insert(entity.clone())
                {
                    return fail(format!(
                        "entity {entity:?} is already remembered in shard {shard:?}"
                    ));
                }
            }
            Event::EntityForgotten { shard, entity } => {
                let Some(set) = self.remembered.get_mut(shard) else {
                    return fail(format!("shard {shard:?} remembers no entities"));
                };
                if !set.remove(entity) {
                    return fail(format!(
                        "entity {entity:?} is not remembered in shard {shard:?}"
                    ));
                }
                if set.is_empty() {
                    self.remembered.remove(shard);
                }
            }
            Event::ShardRegionOfferChanged { region, offer } => {
                offer
                    .check()
                    .map_err(|e| e.context(format!("offer of region {region:?}")))?;
                if !self.regions.contains_key(region) {
                    return fail(format!("region {region:?} is not registered"));
                }
                self.set_offer(region, offer)?;
                self.regions.get_mut(region).expect("registered").offer = offer.clone();
            }
            Event::ShardRegionDrainingChanged { region, draining } => {
                let Some(r) = self.regions.get_mut(region) else {
                    return fail(format!("region {region:?} is not registered"));
                };
                r.draining = *draining;
                self.table.set_region_draining(region, *draining)?;
            }
            Event::ShardLoadsSmoothed { loads } => {
                crate::protocol::check_loads(loads)?;
                for (s, l) in loads {
                    self.table.set_shard_load(s, l)?;
                    self.loads.insert(s.clone(), l.clone());
                }
                self.refresh_prior()?;
            }
        }
        Ok(())
    }

    /// Registers a region in the table, at the end of map order.
    fn add_region(&mut self, region: &str, node: &str) -> Result<()> {
        let address = Address::parse(node).map_err(|e| e.context("region node"))?;
        let local = address == *self.table.cluster().self_address();
        self.table.add_region(region, address, local)
    }

    /// Puts a region's offer where the strategies read it.
    fn set_offer(&mut self, region: &str, offer: &RegionOffer) -> Result<()> {
        let unit = Amount::Uniform(1.0);
        let t = &mut self.table;
        t.set_region_capacity(region, offer.capacity.as_ref().unwrap_or(&unit))?;
        t.set_region_tags(region, offer.tags.iter().map(String::as_str))?;
        let max = offer
            .max_shards
            .map(|m| usize::try_from(m).unwrap_or(usize::MAX));
        t.set_region_max_shards(region, max)
    }

    /// Places a shard in the table, weighing the prior unless it has a smoothed load.
    fn place(&mut self, region: &str, shard: &str, version: Option<u64>) -> Result<()> {
        if let (Some(p), false) = (&self.prior, self.loads.contains_key(shard)) {
            self.table.set_shard_load(shard, p)?;
        }
        self.table.place(region, shard, version)
    }

    /// Gives every allocated shard without a smoothed load the prior, when it has changed.
    fn refresh_prior(&mut self) -> Result<()> {
        let prior = loads::prior(&self.loads);
        if prior == self.prior {
            return Ok(());
        }
        let unit = Amount::Uniform(1.0);
        let load = prior.as_ref().unwrap_or(&unit);
        let unreported: Vec<Arc<str>> = self
            .table
            .regions()
            .flat_map(|r| r.shards())
            .filter(|s| !self.loads.contains_key(&***s))
            .cloned()
            .collect();
        for s in unreported {
            self.table.set_shard_load(&s, load)?;
        }
        self.prior = prior;
        Ok(())
    }

    pub fn snapshot(&self) -> Snapshot {
        let versions: BTreeMap<ShardId, u64> = self
            .table
            .shard_versions()
            .map(|(s, v)| (s.into(), v))
            .collect();
        Snapshot {
            seq: self.seq,
            regions: self
                .regions()
                .map(|(id, node, shards)| SnapshotRegion {
                    region: id.clone(),
                    node: node.to_owned(),
                    shards: shards.map(|s| ShardId::from(&**s)).collect(),
                    offer: self.regions[id].offer.clone(),
                    draining: self.regions[id].draining,
                })
                .collect(),
            proxies: self
                .proxies()
                .map(|(p, n)| SnapshotProxy {
                    proxy: p.clone(),
                    node: n.to_owned(),
                })
                .collect(),
            unallocated: self.unallocated.iter().cloned().collect(),
            remembered: self
                .remembered
                .iter()
                .map(|(s, e)| (s.clone(), e.iter().cloned().collect()))
                .collect(),
            versions,
            loads: self.loads.clone(),
        }
    }

    /// Rebuilds a state from a snapshot, checking it is self-consistent; its table sees
    /// `cluster` (see [`Self::new`]).
    pub fn from_snapshot(
        snapshot: &Snapshot,
        remember_entities: bool,
        cluster: ClusterView,
    ) -> Result<PersistentState> {
        let mut st = PersistentState::new(remember_entities, cluster);
        for r in &snapshot.regions {
            st.apply_inner(
                &Event::ShardRegionRegistered {
                    region: r.region.clone(),
                    node: r.node.clone(),
                },
                false,
            )?;
            st.apply_inner(
                &Event::ShardRegionOfferChanged {
                    region: r.region.clone(),
                    offer: r.offer.clone(),
                },
                false,
            )?;
            st.apply_inner(
                &Event::ShardRegionDrainingChanged {
                    region: r.region.clone(),
                    draining: r.draining,
                },
                false,
            )?;
            for s in &r.shards {
                if st.home_of(s).is_some() {
                    return Err(Error::invalid_state(format!(
                        "snapshot: shard {s:?} is allocated twice"
                    )));
                }
                st.table.place(&r.region, s, None)?;
            }
        }
        for p in &snapshot.proxies {
            st.apply_inner(
                &Event::ShardRegionProxyRegistered {
                    proxy: p.proxy.clone(),
                    node: p.node.clone(),
                },
                false,
            )?;
        }
        for s in &snapshot.unallocated {
            if st.home_of(s).is_some() {
                return Err(Error::invalid_state(format!(
                    "snapshot: shard {s:?} is both allocated and unallocated"
                )));
            }
            st.unallocated.insert(s.clone());
        }
        for (s, es) in &snapshot.remembered {
            st.remembered
                .insert(s.clone(), es.iter().cloned().collect::<BTreeSet<_>>());
        }
        for (s, v) in &snapshot.versions {
            *st.table.version_mut(s) = *v;
        }
        st.apply_inner(
            &Event::ShardLoadsSmoothed {
                loads: snapshot.loads.clone(),
            },
            false,
        )?;
        st.seq = snapshot.seq;
        Ok(st)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> ClusterView {
        ClusterView::new(Address::parse("pekko://s@c:1").unwrap())
    }
    fn state(remember: bool) -> PersistentState {
        PersistentState::new(remember, cluster())
    }

    fn reg(r: &str) -> Event {
        Event::ShardRegionRegistered {
            region: r.into(),
            node: format!("pekko://s@{r}:1"),
        }
    }
    fn alloc(s: &str, r: &str, v: u64) -> Event {
        Event::ShardHomeAllocated {
            shard: s.into(),
            region: r.into(),
            version: v,
        }
    }

    #[test]
    fn preconditions_are_enforced_and_leave_state_untouched() {
        let mut st = state(false);
        st.apply(&reg("a")).unwrap();
        assert!(st.apply(&reg("a")).is_err());
        assert!(st.apply(&alloc("1", "b", 1)).is_err(), "unknown region");
        st.apply(&alloc("1", "a", 1)).unwrap();
        assert!(st.apply(&alloc("1", "a", 2)).is_err(), "already allocated");
        let dealloc_old = Event::ShardHomeDeallocated {
            shard: "1".into(),
            version: 1,
        };
        assert!(st.apply(&dealloc_old).is_err(), "version must grow");
        assert_eq!(st.seq(), 2);
        assert_eq!(st.home_of("1"), Some("a"));
        assert!(st
            .apply(&Event::ShardRegionTerminated { region: "x".into() })
            .is_err());
        assert!(st
            .apply(&Event::EntityForgotten {
                shard: "1".into(),
                entity: "e".into()
            })
            .is_err());
    }

    #[test]
    fn termination_unallocates_into_remembered_set_only_with_remember_entities() {
        for remember in [false, true] {
            let mut st = state(remember);
            st.apply(&reg("a")).unwrap();
            st.apply(&alloc("1", "a", 1)).unwrap();
            st.apply(&alloc("2", "a", 1)).unwrap();
            st.apply(&Event::ShardRegionTerminated { region: "a".into() })
                .unwrap();
            assert_eq!(st.shard_count(), 0);
            assert_eq!(st.unallocated().count(), if remember { 2 } else { 0 });
            assert_eq!(st.version("2"), 1, "versions outlive allocations");
        }
    }

    #[test]
    fn recovery_tolerates_unknown_terminations_but_not_gaps() {
        let mut st = state(false);
        st.recover(&Record {
            seq: 1,
            event: Event::ShardRegionTerminated { region: "x".into() },
        })
        .unwrap();
        assert!(st
            .recover(&Record {
                seq: 3,
                event: reg("a")
            })
            .is_err());
    }

    #[test]
    fn snapshot_round_trips_with_order() {
        let mut st = state(true);
        for e in [
            reg("b"),
            reg("a"),
            alloc("9", "a", 1),
            alloc("1", "a", 1),
            alloc("5", "b", 3),
            Event::ShardRegionProxyRegistered {
                proxy: "p".into(),
                node: "pekko://s@p:1".into(),
            },
            Event::EntityRemembered {
                shard: "9".into(),
                entity: "e1".into(),
            },
            Event::ShardHomeDeallocated {
                shard: "1".into(),
                version: 2,
            },
        ] {
            st.apply(&e).unwrap();
        }
        let snap = st.snapshot();
        assert_eq!(snap.regions[0].region, "b");
        assert_eq!(snap.regions[1].shards, vec!["9".to_string()]);
        assert_eq!(snap.unallocated, vec!["1".to_string()]);
        let json = serde_json::to_string(&snap).unwrap();
        let back: Snapshot = serde_json::from_str(&json).unwrap();
        let st2 = PersistentState::from_snapshot(&back, true, cluster()).unwrap();
        assert_eq!(st2.snapshot(), snap);
        assert_eq!(st2.seq(), 8);
    }
}
