//! The region ids a strategy answers, kept as the host language's strings, so a repeated
//! answer costs a reference to the same string instead of a new one (decoded and allocated on
//! every call). The JVM and Python bindings each keep one per strategy handle.
//!
//! A region id is one `Arc<str>` in the core's `AllocationState`, and an allocation answers a
//! clone of it, so the cache is keyed by the `Arc`'s address and keeps a clone: while the entry
//! lives the address cannot be reused for another id, so an address match is an id match.
//! Answers nobody else holds (a custom strategy's fresh id) are not kept. Nothing is ever
//! evicted: at most [`CAP`] ids (of regions since removed included), and answers beyond them
//! are made as before, a new string per call.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// At most this many ids are kept (a host string and an `Arc` each, for the handle's life).
pub const CAP: usize = 1024;

/// An address hashes to itself, spread: the keys are distinct heap addresses.
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64 >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Host strings `S` of answered region ids.
pub struct AnswerCache<S> {
    ids: HashMap<usize, (Arc<str>, S), BuildHasherDefault<AddressHasher>>,
}

impl<S> Default for AnswerCache<S> {
    fn default() -> AnswerCache<S> {
        AnswerCache {
            ids: HashMap::default(),
        }
    }
}

impl<S> AnswerCache<S> {
    /// `id`'s key: the address of its shared text.
    pub fn key(id: &Arc<str>) -> usize {
        Arc::as_ptr(id) as *const u8 as usize
    }

    /// The string kept for the id whose [`key`](Self::key) is `key`.
    pub fn get(&self, key: usize) -> Option<&S> {
        self.ids.get(&key).map(|(_, s)| s)
    }

    /// Whether a string made for `id` would be kept: another holder (the state that
    /// answered it) shares it, and there is room.
    pub fn worth_keeping(&self, id: &Arc<str>) -> bool {
        Arc::strong_count(id) > 1 && self.ids.len() < CAP
    }

    /// Keeps `s` as `id`'s string (callers check [`worth_keeping`](Self::worth_keeping)).
    pub fn keep(&mut self, id: &Arc<str>, s: S) {
        self.ids.insert(Self::key(id), (Arc::clone(id), s));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_shared_ids_by_address_and_stops_at_the_cap() {
        let mut cache = AnswerCache::<String>::default();
        let held: Vec<Arc<str>> = (0..CAP + 1).map(|i| Arc::from(format!("r{i}"))).collect();
        for id in &held {
            let answer = Arc::clone(id);
            if cache.worth_keeping(&answer) {
                cache.keep(&answer, answer.to_string());
            }
        }
        // The same text at another address is another key: only the state's own `Arc` hits.
        assert_eq!(
            cache.get(AnswerCache::<String>::key(&Arc::from("r0"))),
            None
        );
        assert_eq!(
            cache.get(AnswerCache::<String>::key(&held[7])),
            Some(&"r7".to_string())
        );
        assert_eq!(cache.get(AnswerCache::<String>::key(&held[CAP])), None);
        // An answer nobody else holds is not kept.
        let fresh: Arc<str> = Arc::from("fresh");
        assert!(!AnswerCache::<String>::default().worth_keeping(&fresh));
    }
}
