//! Exact copies and canonical fingerprints of a coordinator (feature `model-check`), so a model
//! checker can branch the real machine at every step and recognise a state it has seen.
//!
//! Both destructure the coordinator without `..`: a field added later fails to compile here
//! until it is copied and either fingerprinted or named as not deciding anything.

use std::hash::{Hash, Hasher};

use super::{Coordinator, Counters};
use crate::model::hash_sorted;
use crate::strategy::AllocationStrategy;

impl Coordinator {
    /// A copy in the same state that goes on independently. A strategy is opaque (custom ones
    /// are host code), so the caller passes a fresh one; the copy is exact when the strategy
    /// keeps no state between calls, as least-shard, the hashing strategies and `external` do.
    pub fn fork(&self, strategy: Box<dyn AllocationStrategy>) -> Coordinator {
        let Coordinator {
            config,
            strategy: _,
            self_address,
            phase,
            lease,
            state,
            alive,
            all_regions_registered,
            handoffs,
            graceful,
            terminating,
            unacked,
            preparing_for_shutdown,
            terminated_while_inactive,
            timers,
            out,
            now,
            counters,
        } = self;
        Coordinator {
            config: config.clone(),
            strategy,
            self_address: self_address.clone(),
            phase: *phase,
            lease: lease.clone(),
            state: state.fork(),
            alive: alive.clone(),
            all_regions_registered: *all_regions_registered,
            handoffs: handoffs.clone(),
            graceful: graceful.clone(),
            terminating: terminating.clone(),
            unacked: unacked.clone(),
            preparing_for_shutdown: *preparing_for_shutdown,
            terminated_while_inactive: terminated_while_inactive.clone(),
            timers: timers.clone(),
            out: out.clone(),
            now: *now,
            counters: counters.clone(),
        }
    }
}

/// Everything that decides what the coordinator does next. Left out: the configuration and
/// the strategy (fixed for a coordinator's life) and the counters (never read by decisions).
/// The allocation map is rebuilt from the persistent state, the membership and the graceful
/// and terminating sets, so only what the strategy reads of it per region is added.
impl Hash for Coordinator {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let Coordinator {
            config: _,
            strategy: _,
            self_address,
            phase,
            lease,
            state,
            alive,
            all_regions_registered,
            handoffs,
            graceful,
            terminating,
            unacked,
            preparing_for_shutdown,
            terminated_while_inactive,
            timers,
            out,
            now,
            counters: Counters { .. },
        } = self;
        self_address.as_str().hash(h);
        phase.hash(h);
        lease.hash(h);
        for r in state.allocation().regions() {
            (r.id(), r.is_eligible()).hash(h);
            r.shards().for_each(|s| s.hash(h));
        }
        state.snapshot().hash(h);
        hash_sorted(alive.iter().map(|r| (r, ())), h);
        all_regions_registered.hash(h);
        hash_sorted(handoffs.iter(), h);
        graceful.hash(h);
        terminating.hash(h);
        hash_sorted(unacked.iter(), h);
        preparing_for_shutdown.hash(h);
        terminated_while_inactive.hash(h);
        timers.hash(h);
        // Outputs not yet carried out: a checker drains them after every step.
        out.len().hash(h);
        now.hash(h);
    }
}
