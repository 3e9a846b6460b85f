//! Messages waiting for a shard's home, per shard in arrival order, with one bound for the
//! whole region so a stuck hand-off cannot exhaust memory.

use std::collections::{HashMap, VecDeque};

use crate::protocol::{EntityId, Payload, ShardId};

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub struct Buffered {
    pub entity: EntityId,
    pub payload: Payload,
}

#[derive(Debug, Clone)]
pub(crate) struct Buffer {
    queues: HashMap<ShardId, VecDeque<Buffered>>,
    total: usize,
    capacity: usize,
}

impl Buffer {
    pub fn new(capacity: usize) -> Buffer {
        Buffer {
            queues: HashMap::new(),
            total: 0,
            capacity,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn has(&self, shard: &str) -> bool {
        self.queues.contains_key(shard)
    }

    pub fn shard_len(&self, shard: &str) -> usize {
        self.queues.get(shard).map_or(0, VecDeque::len)
    }

    /// Appends, or hands the message back when the region's buffer is full.
    pub fn push(&mut self, shard: &str, msg: Buffered) -> Result<(), Buffered> {
        if self.total >= self.capacity {
            return Err(msg);
        }
        self.queues.entry(shard.into()).or_default().push_back(msg);
        self.total += 1;
        Ok(())
    }

    /// Removes a shard's queue, oldest first.
    pub fn take(&mut self, shard: &str) -> VecDeque<Buffered> {
        let q = self.queues.remove(shard).unwrap_or_default();
        self.total -= q.len();
        q
    }

    /// Shards with waiting messages, sorted (for reproducible retries).
    pub fn shards(&self) -> Vec<ShardId> {
        let mut v: Vec<ShardId> = self.queues.keys().cloned().collect();
        v.sort();
        v
    }
}

/// `total` is the sum of the queues.
#[cfg(feature = "model-check")]
impl std::hash::Hash for Buffer {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        crate::model::hash_sorted(self.queues.iter(), h);
        self.capacity.hash(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(e: &str) -> Buffered {
        Buffered {
            entity: e.into(),
            payload: e.as_bytes().to_vec(),
        }
    }

    #[test]
    fn bounded_across_shards_and_fifo_per_shard() {
        let mut b = Buffer::new(3);
        b.push("1", m("a")).unwrap();
        b.push("2", m("b")).unwrap();
        b.push("1", m("c")).unwrap();
        assert_eq!(b.push("3", m("d")), Err(m("d")));
        assert_eq!(b.shards(), vec!["1".to_string(), "2".into()]);
        let q: Vec<_> = b.take("1").into_iter().map(|x| x.entity).collect();
        assert_eq!(q, vec!["a", "c"]);
        assert_eq!(b.len(), 1);
        assert!(!b.has("1"));
        b.push("3", m("d")).unwrap();
        assert_eq!(b.shard_len("3"), 1);
    }
}
