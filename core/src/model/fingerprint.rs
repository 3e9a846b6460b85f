//! Canonical hashing for the model checker (feature `model-check`): the state machines keep
//! hash maps, whose iteration order depends on how they were filled, so two machines in the
//! same state must hash their entries in one order to be recognised as the same state.

use std::hash::{Hash, Hasher};

/// Hashes `entries` sorted by key (keys are unique, as in the maps this is for).
pub(crate) fn hash_sorted<K: Ord + Hash, V: Hash, H: Hasher>(
    entries: impl Iterator<Item = (K, V)>,
    h: &mut H,
) {
    let mut v: Vec<(K, V)> = entries.collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v.len().hash(h);
    for e in v {
        e.hash(h);
    }
}
