//! The coordinator's persistent state: Pekko's `State` plus per-shard versions and
//! remembered entities, changed only through [`Event`]s whose preconditions are checked.
//!
//! Unlike Pekko's ddata encoding, the order of regions and of each region's shards is part of
//! the state, so a coordinator restored from it sees the same map order and the strategies
//! break ties the same way.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{Amount, IdKey, IdMap};
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
    pos: u64,
    slot: usize,
    shards: Vec<ShardId>,
    offer: RegionOffer,
    draining: bool,
}

/// What the state knows of one shard. Home and version share one entry so that answering
/// `GetShardHome` takes one probe, and the home is the region's slot rather than a copy of
/// its id: a shard costs one key and 16 bytes. Versions outlive allocations.
#[derive(Debug, Clone, Copy, Default)]
struct ShardEntry {
    /// Meaningful when `versioned`.
    version: u64,
    /// The home region's slot plus one; 0 when it has none.
    home: u32,
    versioned: bool,
}

impl ShardEntry {
    fn version(&self) -> Option<u64> {
        self.versioned.then_some(self.version)
    }

    fn set_version(&mut self, version: u64) {
        self.version = version;
        self.versioned = true;
    }

    /// The version, 0 if it had none.
    fn version_mut(&mut self) -> &mut u64 {
        if !self.versioned {
            self.set_version(0);
        }
        &mut self.version
    }

    fn home(&self) -> Option<usize> {
        (self.home > 0).then(|| self.home as usize - 1)
    }

    /// Sets or clears the home; whether it had one.
    fn set_home(&mut self, slot: Option<usize>) -> bool {
        let had = self.home > 0;
        self.home = slot.map_or(0, |s| {
            u32::try_from(s + 1).expect("fewer than 2^32 regions")
        });
        had
    }
}

#[derive(Debug, Clone, Default)]
pub struct PersistentState {
    remember_entities: bool,
    regions: HashMap<RegionId, RegionRecord>,
    /// Region slots by map position.
    order: BTreeMap<u64, usize>,
    /// Region ids by slot (a freed region's successor reuses it), shared: a `ShardHome` answer
    /// names its region with a reference count rather than a copy.
    slots: Vec<Option<Arc<str>>>,
    free_slots: Vec<usize>,
    next_pos: u64,
    proxies: BTreeMap<RegionId, String>,
    shards: IdMap<ShardEntry>,
    /// Entries with a home.
    allocated: usize,
    unallocated: BTreeSet<ShardId>,
    remembered: BTreeMap<ShardId, BTreeSet<EntityId>>,
    /// Smoothed loads by shard, kept across moves (the load follows the shard).
    loads: BTreeMap<ShardId, Amount>,
    seq: u64,
}

impl PersistentState {
    pub fn new(remember_entities: bool) -> PersistentState {
        PersistentState {
            remember_entities,
            ..Default::default()
        }
    }

    pub fn seq(&self) -> u64 {
        self.seq
    }

    pub fn is_empty(&self) -> bool {
        self.regions.is_empty() && self.proxies.is_empty() && self.allocated == 0
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
    pub fn regions(&self) -> impl Iterator<Item = (&RegionId, &str, &[ShardId])> + '_ {
        self.order.values().map(move |&slot| {
            let (id, r) = self.region_entry(slot);
            (id, r.node.as_str(), r.shards.as_slice())
        })
    }

    /// A registered region's id, shared (see [`crate::protocol::ShardHome`]).
    pub fn shared_id(&self, region: &str) -> Option<Arc<str>> {
        let r = self.regions.get(region)?;
        self.slots[r.slot].clone()
    }

    /// A registered region's id as the region map holds it, and its record.
    fn region_entry(&self, slot: usize) -> (&RegionId, &RegionRecord) {
        let id = self.slots[slot]
            .as_deref()
            .expect("a region's slot is live");
        self.regions
            .get_key_value(id)
            .expect("slotted regions are registered")
    }

    /// The region's offer (default when unknown).
    pub fn region_offer(&self, region: &str) -> Option<&RegionOffer> {
        self.regions.get(region).map(|r| &r.offer)
    }

    /// Offers of every region, in map order.
    pub fn offers(&self) -> impl Iterator<Item = (&RegionId, &RegionOffer)> + '_ {
        self.order.values().map(move |&slot| {
            let (id, r) = self.region_entry(slot);
            (id, &r.offer)
        })
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

    pub fn home_of(&self, shard: &str) -> Option<&RegionId> {
        let slot = self.shards.get(shard)?.home()?;
        Some(self.region_entry(slot).0)
    }

    /// The shard's home and version, in one lookup (the coordinator's hot path).
    pub fn home_and_version(&self, shard: &str) -> Option<(&Arc<str>, u64)> {
        let e = self.shards.get(shard)?;
        let home = self.slots[e.home()?]
            .as_ref()
            .expect("a home's slot is live");
        Some((home, e.version().unwrap_or(0)))
    }

    pub fn shard_count(&self) -> usize {
        self.allocated
    }

    pub fn shards_of(&self, region: &str) -> &[ShardId] {
        self.regions
            .get(region)
            .map(|r| r.shards.as_slice())
            .unwrap_or(&[])
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
        self.shards
            .get(shard)
            .and_then(|e| e.version())
            .unwrap_or(0)
    }

    /// The shard's entry, created empty if needed (without allocating a key if it exists).
    fn entry_mut(&mut self, shard: &str) -> &mut ShardEntry {
        if !self.shards.contains_key(shard) {
            self.shards.insert(IdKey::new(shard), ShardEntry::default());
        }
        self.shards.get_mut(shard).expect("just ensured")
    }

    /// Raises a shard's version without an event: hand-off starts and aborts are volatile.
    /// A successor coordinator outranks them with its larger fencing token; the same
    /// coordinator reloading under its own token keeps them with [`Self::raise_versions`].
    pub fn bump_version(&mut self, shard: &str) -> u64 {
        let v = self.entry_mut(shard).version_mut();
        *v += 1;
        *v
    }

    /// Puts every shard whose version `floor` has taken further past that version, so that
    /// stamps issued before a reload are neither undercut nor reused for another decision.
    pub fn raise_versions(&mut self, floor: &PersistentState) {
        for (shard, v) in floor
            .shards
            .iter()
            .filter_map(|(s, e)| Some((s, e.version()?)))
        {
            let mine = self.entry_mut(shard.as_str()).version_mut();
            if v > *mine {
                *mine = v + 1;
            }
        }
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
                let id: Arc<str> = Arc::from(region.as_str());
                let slot = match self.free_slots.pop() {
                    Some(slot) => {
                        self.slots[slot] = Some(id.clone());
                        slot
                    }
                    None => {
                        self.slots.push(Some(id.clone()));
                        self.slots.len() - 1
                    }
                };
                self.regions.insert(
                    region.clone(),
                    RegionRecord {
                        node: node.clone(),
                        pos: self.next_pos,
                        slot,
                        shards: Vec::new(),
                        offer: RegionOffer::default(),
                        draining: false,
                    },
                );
                self.order.insert(self.next_pos, slot);
                self.next_pos += 1;
            }
            Event::ShardRegionProxyRegistered { proxy, node } => {
                if self.proxies.contains_key(proxy) {
                    return fail(format!("proxy {proxy:?} is already registered"));
                }
                self.proxies.insert(proxy.clone(), node.clone());
            }
            Event::ShardRegionTerminated { region } => {
                let Some(r) = self.regions.remove(region) else {
                    if recovering {
                        return Ok(());
                    }
                    return fail(format!("region {region:?} is not registered"));
                };
                self.order.remove(&r.pos);
                // no shard's home once the loop below has run
                self.slots[r.slot] = None;
                self.free_slots.push(r.slot);
                for s in r.shards {
                    self.unhome(&s);
                    if self.remember_entities {
                        self.unallocated.insert(s);
                    }
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
                let Some(r) = self.regions.get_mut(region) else {
                    return fail(format!("region {region:?} is not registered"));
                };
                r.shards.push(shard.clone());
                let slot = r.slot;
                let e = self.entry_mut(shard);
                e.set_home(Some(slot));
                e.set_version(*version);
                self.allocated += 1;
                self.unallocated.remove(shard);
            }
            Event::ShardHomeDeallocated { shard, version } => {
                let Some(region) = self.home_of(shard).cloned() else {
                    return fail(format!("shard {shard:?} is not allocated"));
                };
                if *version <= self.version(shard) {
                    return fail(format!(
                        "shard {shard:?} version {version} does not exceed {}",
                        self.version(shard)
                    ));
                }
                let r = self
                    .regions
                    .get_mut(&region)
                    .expect("shard homes are regions");
                r.shards.retain(|s| s != shard);
                self.entry_mut(shard).set_version(*version);
                self.unhome(shard);
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
                let Some(r) = self.regions.get_mut(region) else {
                    return fail(format!("region {region:?} is not registered"));
                };
                r.offer = offer.clone();
            }
            Event::ShardRegionDrainingChanged { region, draining } => {
                let Some(r) = self.regions.get_mut(region) else {
                    return fail(format!("region {region:?} is not registered"));
                };
                r.draining = *draining;
            }
            Event::ShardLoadsSmoothed { loads } => {
                crate::protocol::check_loads(loads)?;
                for (s, l) in loads {
                    self.loads.insert(s.clone(), l.clone());
                }
            }
        }
        Ok(())
    }

    /// Takes the shard off its region in the index (the region's own list is the caller's);
    /// the entry stays while it holds a version.
    fn unhome(&mut self, shard: &str) {
        if let Some(e) = self.shards.get_mut(shard) {
            if e.set_home(None) {
                self.allocated -= 1;
            }
            if e.version().is_none() {
                self.shards.remove(shard);
            }
        }
    }

    pub fn snapshot(&self) -> Snapshot {
        let versions: BTreeMap<ShardId, u64> = self
            .shards
            .iter()
            .filter_map(|(k, e)| Some((k.as_str().to_owned(), e.version()?)))
            .collect();
        Snapshot {
            seq: self.seq,
            regions: self
                .regions()
                .map(|(id, node, shards)| SnapshotRegion {
                    region: id.clone(),
                    node: node.to_owned(),
                    shards: shards.to_vec(),
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

    /// Rebuilds a state from a snapshot, checking it is self-consistent.
    pub fn from_snapshot(snapshot: &Snapshot, remember_entities: bool) -> Result<PersistentState> {
        let mut st = PersistentState::new(remember_entities);
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
            st.regions.get_mut(&r.region).expect("just added").draining = r.draining;
            for s in &r.shards {
                if st.home_of(s).is_some() {
                    return Err(Error::invalid_state(format!(
                        "snapshot: shard {s:?} is allocated twice"
                    )));
                }
                let record = st.regions.get_mut(&r.region).expect("just added");
                record.shards.push(s.clone());
                let slot = record.slot;
                st.entry_mut(s).set_home(Some(slot));
                st.allocated += 1;
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
            st.entry_mut(s).set_version(*v);
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
        let mut st = PersistentState::new(false);
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
        assert_eq!(st.home_of("1").map(String::as_str), Some("a"));
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
            let mut st = PersistentState::new(remember);
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
        let mut st = PersistentState::new(false);
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
        let mut st = PersistentState::new(true);
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
        let st2 = PersistentState::from_snapshot(&back, true).unwrap();
        assert_eq!(st2.snapshot(), snap);
        assert_eq!(st2.seq(), 8);
    }
}
