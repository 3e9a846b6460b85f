//! Pekko/Akka `ConsistentHashingShardAllocationStrategy(rebalanceLimit)`: shards follow Pekko's
//! hash ring over node addresses, bit for bit.

use std::collections::HashMap;

use super::least_shard::{good_time, sort_failed, sorted_entries, AkkaOptions};
use super::{note, Allocation, AllocationStrategy, Explanation, InProgress};
use crate::hashing::Ring;
use crate::model::{AllocationState, Region, ShardId};
use crate::{Error, Result};

/// Pekko hard-codes 10; the bound keeps a ring of 10 000 nodes under ~80 MB.
pub const MAX_VIRTUAL_NODES: u32 = 1000;

#[derive(Debug, Clone)]
pub struct ConsistentHashing {
    rebalance_limit: i32,
    virtual_nodes: u32,
    eligible_ring: Option<CachedRing>,
    full_ring: Option<CachedRing>,
    /// Every shard off its ring position, in Pekko's order, under the state's placement stamp:
    /// a round on an unchanged map (every round once placement has settled) walks this list
    /// instead of hashing every shard again. `None` inside: not a time to rebalance.
    misplaced: Option<Misplaced>,
}

#[derive(Debug, Clone)]
struct Misplaced {
    stamp: (u64, u64),
    shards: Option<Vec<ShardId>>,
}

/// A ring over the sorted node addresses of one state at one topology stamp.
#[derive(Debug, Clone)]
pub(super) struct CachedRing {
    stamp: (u64, u64),
    pub(super) nodes: Vec<String>,
    pub(super) ring: Ring,
}

impl ConsistentHashing {
    /// `rebalance_limit` <= 0 means unlimited (as in Pekko); `virtual_nodes` >= 1 (Pekko: 10).
    pub fn new(rebalance_limit: i32, virtual_nodes: u32) -> Result<ConsistentHashing> {
        if !(1..=MAX_VIRTUAL_NODES).contains(&virtual_nodes) {
            return Err(Error::invalid_argument(format!(
                "virtualNodesFactor must be in 1..={MAX_VIRTUAL_NODES}, got {virtual_nodes}"
            )));
        }
        Ok(ConsistentHashing {
            rebalance_limit,
            virtual_nodes,
            eligible_ring: None,
            full_ring: None,
            misplaced: None,
        })
    }

    pub(super) fn cached_ring<'a>(
        cache: &'a mut Option<CachedRing>,
        state: &AllocationState,
        vnodes: u32,
        eligible_only: bool,
    ) -> &'a CachedRing {
        let stamp = state.topology_stamp();
        if cache.as_ref().map(|c| c.stamp) != Some(stamp) {
            let mut nodes: Vec<&crate::model::Address> = state
                .regions()
                .filter(|r| !eligible_only || r.is_eligible())
                .map(|r| state.node_of(r))
                .collect();
            nodes.sort_by(|a, b| a.pekko_cmp(b));
            nodes.dedup_by(|a, b| a.as_str() == b.as_str());
            let nodes: Vec<String> = nodes.into_iter().map(|a| a.as_str().to_owned()).collect();
            let reuse = cache.as_ref().is_some_and(|c| c.nodes == nodes);
            if reuse {
                cache.as_mut().expect("checked").stamp = stamp;
            } else {
                let ring = cache
                    .as_ref()
                    .and_then(|c| c.ring.with_one_more(&c.nodes, &nodes, vnodes))
                    .unwrap_or_else(|| Ring::new(&nodes, vnodes));
                *cache = Some(CachedRing { stamp, nodes, ring });
            }
        }
        cache.as_ref().expect("just filled")
    }
}

impl AllocationStrategy for ConsistentHashing {
    fn name(&self) -> &str {
        "consistent-hashing"
    }

    fn allocate(
        &mut self,
        state: &AllocationState,
        _requester: Option<&str>,
        shard: &str,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Allocation> {
        note(&mut explain, |e| {
            *e = Explanation::new("consistent-hashing", "allocate")
        });
        let ring = Self::cached_ring(&mut self.eligible_ring, state, self.virtual_nodes, true);
        let Some(i) = ring.ring.node_for(shard) else {
            note(&mut explain, |e| {
                e.summary = "no eligible region; retry later".into()
            });
            return Ok(Allocation::Pending);
        };
        let node = &ring.nodes[i];
        let region = state
            .regions_on(node)
            .find(|r| r.is_eligible())
            .ok_or_else(|| {
                Error::invalid_state(format!("ring node {node} has no eligible region"))
            })?;
        note(&mut explain, |e| {
            e.summary = format!(
                "shard {shard:?} hashes to node {node}, served by region {}",
                region.id()
            );
        });
        Ok(Allocation::Region(region.id().clone()))
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Vec<ShardId>> {
        note(&mut explain, |e| {
            *e = Explanation::new("consistent-hashing", "rebalance")
        });
        let limit = usize::try_from(self.rebalance_limit)
            .ok()
            .filter(|&l| l > 0);
        let stamp = state.placement_stamp();
        // An explained round is worked out afresh, so its explanation is complete.
        let cached = self
            .misplaced
            .as_ref()
            .filter(|m| m.stamp == stamp && explain.is_none());
        let misplaced = match cached {
            Some(m) => &m.shards,
            None => {
                let shards = self.misplaced_shards(state, &mut explain);
                &self.misplaced.insert(Misplaced { stamp, shards }).shards
            }
        };
        let Some(misplaced) = misplaced else {
            return Ok(Vec::new());
        };
        let picked: Vec<ShardId> = misplaced
            .iter()
            .filter(|s| !in_progress.contains(*s))
            .take(limit.unwrap_or(usize::MAX))
            .cloned()
            .collect();
        note(&mut explain, |e| {
            e.limit = limit;
            e.summary = format!(
                "{} shard(s) are not on the region their ring position names",
                picked.len()
            );
        });
        Ok(picked)
    }
}

impl ConsistentHashing {
    /// Pekko's scan without its limit: every shard whose ring position names another region,
    /// regions in address order, each region's shards in allocation order; `None` when Pekko
    /// would not rebalance now.
    fn misplaced_shards(
        &mut self,
        state: &AllocationState,
        explain: &mut Option<&mut Explanation>,
    ) -> Option<Vec<ShardId>> {
        let Some(sorted) = sorted_entries(state, AkkaOptions::default(), false) else {
            let _ = sort_failed(explain);
            return None;
        };
        if !good_time(state, &sorted, explain) {
            return None;
        }
        let ring = Self::cached_ring(&mut self.full_ring, state, self.virtual_nodes, false);
        // Later regions win when several share a node (Pekko builds a Map from the keys).
        let mut region_by_node: HashMap<&str, &Region> = HashMap::new();
        for r in state.regions() {
            region_by_node.insert(state.node_of(r).as_str(), r);
        }
        // Per ring node once, rather than a string-keyed lookup per shard.
        let target_of: Vec<&Region> = ring
            .nodes
            .iter()
            .map(|n| region_by_node[n.as_str()])
            .collect();
        let mut by_address: Vec<&Region> = state.regions().collect();
        by_address.sort_by(|a, b| state.node_of(a).pekko_cmp(state.node_of(b)));
        let mut misplaced = Vec::new();
        for r in by_address {
            for (seq, hash) in r.ring_positions() {
                let Some(i) = ring.ring.node_for_hash(hash) else {
                    continue;
                };
                // The same region is the same reference: no id comparison per shard.
                if !std::ptr::eq(target_of[i], r) {
                    misplaced.push(r.shard_at(seq).expect("a listed position").clone());
                }
            }
        }
        Some(misplaced)
    }
}
