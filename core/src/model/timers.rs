//! Deadlines keyed by what they are for, so a state machine can re-arm or cancel one by name
//! and tell its host the earliest. Ties fire in key order, which keeps runs reproducible.

use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;

#[derive(Debug, Clone)]
pub(crate) struct Timers<K: Ord + Hash + Clone> {
    by_time: BTreeSet<(u64, K)>,
    /// Never iterated in an order that matters, so the faster hasher (as `IdMap`).
    by_key: HashMap<K, u64, foldhash::fast::RandomState>,
}

impl<K: Ord + Hash + Clone> Default for Timers<K> {
    fn default() -> Self {
        Timers {
            by_time: BTreeSet::new(),
            by_key: HashMap::default(),
        }
    }
}

impl<K: Ord + Hash + Clone> Timers<K> {
    /// Arms `key` at `at`, replacing any earlier arming of the same key.
    pub fn set(&mut self, key: K, at: u64) {
        let entry = self.index(key, at);
        self.by_time.insert(entry);
    }

    /// Arms every key of `keys` at `at`, as [`set`](Self::set) on each would, merged in one
    /// sorted batch: inserting a million keys one by one walks the tree a million times.
    pub fn set_all(&mut self, keys: impl IntoIterator<Item = K>, at: u64) {
        let mut batch: BTreeSet<(u64, K)> =
            keys.into_iter().map(|key| self.index(key, at)).collect();
        self.by_time.append(&mut batch);
    }

    /// Indexes `key` at `at`, dropping any earlier arming of it, and gives the `by_time`
    /// entry to insert.
    fn index(&mut self, key: K, at: u64) -> (u64, K) {
        if let Some(old) = self.by_key.insert(key.clone(), at) {
            self.by_time.remove(&(old, key.clone()));
        }
        (at, key)
    }

    pub fn cancel(&mut self, key: &K) {
        if let Some(at) = self.by_key.remove(key) {
            self.by_time.remove(&(at, key.clone()));
        }
    }

    pub fn next_deadline(&self) -> Option<u64> {
        self.by_time.first().map(|(t, _)| *t)
    }

    /// Removes and returns the earliest key due at `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<K> {
        let (at, _) = self.by_time.first()?;
        if *at > now {
            return None;
        }
        let (_, key) = self.by_time.pop_first()?;
        self.by_key.remove(&key);
        Some(key)
    }

    pub fn clear(&mut self) {
        self.by_time.clear();
        self.by_key.clear();
    }

    /// Cancels every key for which `f` is true.
    pub fn retain(&mut self, mut f: impl FnMut(&K) -> bool) {
        self.by_time.retain(|(_, k)| f(k));
        self.by_key.retain(|k, _| f(k));
    }
}

/// Only the deadlines: `by_key` indexes the same entries.
#[cfg(feature = "model-check")]
impl<K: Ord + Hash + Clone> Hash for Timers<K> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.by_time.hash(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rearming_replaces_and_ties_fire_in_key_order() {
        let mut t = Timers::default();
        t.set("b", 10);
        t.set("a", 10);
        t.set("c", 5);
        t.set("c", 20);
        assert_eq!(t.next_deadline(), Some(10));
        assert_eq!(t.pop_due(9), None);
        assert_eq!(t.pop_due(10), Some("a"));
        assert_eq!(t.pop_due(10), Some("b"));
        assert_eq!(t.pop_due(10), None);
        t.cancel(&"c");
        assert_eq!(t.next_deadline(), None);
    }

    #[test]
    fn arming_a_batch_is_arming_each() {
        let (mut one, mut all) = (Timers::default(), Timers::default());
        for t in [&mut one, &mut all] {
            t.set("b", 7);
            t.set("z", 1);
        }
        for k in ["d", "b", "a", "c", "a"] {
            one.set(k, 5);
        }
        all.set_all(["d", "b", "a", "c", "a"], 5);
        fn fired(t: &mut Timers<&'static str>) -> Vec<&'static str> {
            std::iter::from_fn(|| t.pop_due(10)).collect()
        }
        assert_eq!(fired(&mut all), ["z", "a", "b", "c", "d"]);
        assert_eq!(fired(&mut one), ["z", "a", "b", "c", "d"]);
        assert_eq!((all.next_deadline(), all.by_key.len()), (None, 0));
    }
}
