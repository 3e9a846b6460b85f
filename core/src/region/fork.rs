//! Exact copies and canonical fingerprints of a region (feature `model-check`), so a model
//! checker can branch the real machine at every step and recognise a state it has seen.
//!
//! Both destructure the region without `..`: a field added later fails to compile here until
//! it is copied and either fingerprinted or named as not deciding anything.

use std::hash::{Hash, Hasher};

use super::{Counters, Region, ShardExtractor};
use crate::model::hash_sorted;

impl Region {
    /// A copy in the same state that goes on independently. The extractor is opaque (a custom
    /// one is host code), so the caller passes an equal one.
    pub fn fork(&self, extractor: ShardExtractor) -> Region {
        let Region {
            config,
            id,
            node,
            extractor: _,
            seen_token,
            registered,
            register_delay,
            homes,
            names,
            names_limit,
            local,
            latest,
            asked,
            dead,
            dead_order,
            buffer,
            shutdown,
            timers,
            out,
            now,
            counters,
        } = self;
        Region {
            config: config.clone(),
            id: id.clone(),
            node: node.clone(),
            extractor,
            seen_token: *seen_token,
            registered: *registered,
            register_delay: *register_delay,
            homes: homes.clone(),
            names: names.clone(),
            names_limit: *names_limit,
            local: local.clone(),
            latest: latest.clone(),
            asked: asked.clone(),
            dead: dead.clone(),
            dead_order: dead_order.clone(),
            buffer: buffer.clone(),
            shutdown: *shutdown,
            timers: timers.clone(),
            out: out.clone(),
            now: *now,
            counters: counters.clone(),
        }
    }
}

/// Everything that decides what the region does next. Left out: the configuration, id, node
/// and extractor (fixed for a region's life), the interned ids (memory only: `homes` holds
/// the same names), `dead` (the set of `dead_order`) and the counters (never read by routing).
impl Hash for Region {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let Region {
            config: _,
            id: _,
            node: _,
            extractor: _,
            seen_token,
            registered,
            register_delay,
            homes,
            names: _,
            names_limit: _,
            local,
            latest,
            asked,
            dead: _,
            dead_order,
            buffer,
            shutdown,
            timers,
            out,
            now,
            counters: Counters { .. },
        } = self;
        seen_token.hash(h);
        registered.hash(h);
        register_delay.hash(h);
        hash_sorted(homes.iter().map(|(s, r)| (s.as_str(), &**r)), h);
        hash_sorted(local.iter().map(|(s, l)| (s.as_str(), l)), h);
        hash_sorted(latest.iter(), h);
        hash_sorted(asked.iter().map(|s| (s, ())), h);
        dead_order.hash(h);
        buffer.hash(h);
        shutdown.hash(h);
        timers.hash(h);
        // Outputs not yet carried out: a checker drains them after every step.
        out.len().hash(h);
        now.hash(h);
    }
}
