//! The simulated wire and its faults.
//!
//! Two kinds of traffic, with different failure models:
//! * control messages (commands and directives) may be lost, duplicated, delayed and so
//!   reordered; a copy may arrive seconds late, long after the protocol moved on;
//! * entity messages (region-to-region forwards) ride a reliable FIFO channel per pair of
//!   regions, as over one TCP connection: delayed and reordered across pairs, never lost or
//!   duplicated by the network itself. Only a crash loses them, and the checker counts those
//!   separately.
//!
//! A node cut off from the others (a flapping node) loses its control messages and has its
//! entity messages held back until the cut heals.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use super::rng::Rng;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NetFaults {
    /// Probability that a control message is lost.
    pub loss: f64,
    /// Probability that a control message arrives twice (the copy on its own delay).
    pub duplicate: f64,
    /// Upper bound of the ordinary per-message latency, which is uniform from 1 ms.
    pub jitter_ms: u64,
    /// Probability that a control message is held back for up to `slow_ms`.
    pub slow: f64,
    pub slow_ms: u64,
    /// Probability that a control message resurfaces once more, 5 s to `stale_ms` later,
    /// long after the protocol has moved on (a retransmission from a stuck buffer).
    pub stale: f64,
    pub stale_ms: u64,
}

impl NetFaults {
    pub fn none() -> NetFaults {
        NetFaults {
            loss: 0.0,
            duplicate: 0.0,
            jitter_ms: 5,
            slow: 0.0,
            slow_ms: 0,
            stale: 0.0,
            stale_ms: 0,
        }
    }

    pub fn lossy() -> NetFaults {
        NetFaults {
            loss: 0.03,
            duplicate: 0.03,
            jitter_ms: 40,
            slow: 0.02,
            slow_ms: 3_000,
            stale: 0.01,
            stale_ms: 60_000,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NetStats {
    pub dropped: u64,
    pub duplicated: u64,
    pub delayed: u64,
}

#[derive(Debug)]
pub(crate) struct Network {
    faults: NetFaults,
    clean: NetFaults,
    active: bool,
    rng: Rng,
    /// Per (from, to) region pair: when the channel's last entity message arrives.
    tails: HashMap<(String, String), u64>,
    /// node -> true time the cut heals.
    cuts: BTreeMap<usize, u64>,
    pub stats: NetStats,
}

impl Network {
    pub fn new(faults: NetFaults, rng: Rng) -> Network {
        Network {
            faults,
            clean: NetFaults::none(),
            active: false,
            rng,
            tails: HashMap::new(),
            cuts: BTreeMap::new(),
            stats: NetStats::default(),
        }
    }

    /// Faults apply only while active; otherwise the wire is quick and clean.
    pub fn set_active(&mut self, active: bool) {
        self.active = active;
    }

    fn current(&self) -> &NetFaults {
        if self.active {
            &self.faults
        } else {
            &self.clean
        }
    }

    pub fn cut(&mut self, node: usize, until: u64) {
        let e = self.cuts.entry(node).or_insert(0);
        *e = (*e).max(until);
    }

    fn cut_until(&self, node: Option<usize>, now: u64) -> Option<u64> {
        let until = *self.cuts.get(&node?)?;
        (until > now).then_some(until)
    }

    /// Delivery times for a control message: none (lost), one, or two (duplicated).
    pub fn control(&mut self, now: u64, from: Option<usize>, to: Option<usize>) -> Vec<u64> {
        if self.cut_until(from, now).is_some() || self.cut_until(to, now).is_some() {
            self.stats.dropped += 1;
            return Vec::new();
        }
        let f = self.current().clone();
        if self.rng.chance(f.loss) {
            self.stats.dropped += 1;
            return Vec::new();
        }
        let mut times = vec![now + self.latency(&f)];
        if self.rng.chance(f.duplicate) {
            self.stats.duplicated += 1;
            times.push(now + self.latency(&f));
        }
        if self.rng.chance(f.stale) {
            self.stats.duplicated += 1;
            times.push(now + self.rng.range(5_000, f.stale_ms.max(5_000)));
        }
        times
    }

    fn latency(&mut self, f: &NetFaults) -> u64 {
        let mut d = self.rng.range(1, f.jitter_ms.max(1));
        if self.rng.chance(f.slow) {
            self.stats.delayed += 1;
            d += self.rng.range(1, f.slow_ms.max(1));
        }
        d
    }

    /// Delivery time for an entity message on the `from` -> `to` channel.
    pub fn data(
        &mut self,
        now: u64,
        channel: (&str, &str),
        from: Option<usize>,
        to: Option<usize>,
    ) -> u64 {
        let jitter = self.current().jitter_ms.max(1);
        let mut at = now + self.rng.range(1, jitter);
        for cut in [self.cut_until(from, now), self.cut_until(to, now)]
            .into_iter()
            .flatten()
        {
            at = at.max(cut + self.rng.range(1, jitter));
        }
        let key = (channel.0.to_owned(), channel.1.to_owned());
        let tail = self.tails.entry(key).or_insert(0);
        at = at.max(*tail);
        *tail = at;
        at
    }
}

/// Things that happen at a time; ties run in the order they were scheduled.
#[derive(Debug)]
pub(crate) struct Agenda<E> {
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    items: HashMap<u64, E>,
    seq: u64,
}

impl<E> Default for Agenda<E> {
    fn default() -> Self {
        Agenda {
            heap: BinaryHeap::new(),
            items: HashMap::new(),
            seq: 0,
        }
    }
}

impl<E> Agenda<E> {
    pub fn push(&mut self, at: u64, e: E) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq)));
        self.items.insert(self.seq, e);
    }

    pub fn next_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        let Reverse((t, seq)) = self.heap.pop()?;
        let e = self
            .items
            .remove(&seq)
            .expect("scheduled items are kept until popped");
        Some((t, e))
    }

    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.items.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_channels_stay_fifo_and_cuts_hold_them_back() {
        let mut n = Network::new(NetFaults::lossy(), Rng::new(3));
        n.set_active(true);
        let mut last = 0;
        for t in 0..200 {
            let at = n.data(t, ("a", "b"), Some(0), Some(1));
            assert!(at >= last && at > t);
            last = at;
        }
        n.cut(1, 10_000);
        assert!(n.data(300, ("c", "b"), Some(2), Some(1)) > 10_000);
        assert!(
            n.control(300, Some(2), Some(1)).is_empty(),
            "cut drops control"
        );
        assert!(!n.control(10_000, Some(2), Some(1)).is_empty() || n.stats.dropped > 1);
    }

    #[test]
    fn control_faults_only_when_active() {
        let mut n = Network::new(
            NetFaults {
                loss: 1.0,
                ..NetFaults::lossy()
            },
            Rng::new(1),
        );
        assert_eq!(n.control(0, None, None).len(), 1);
        n.set_active(true);
        assert!(n.control(0, None, None).is_empty());
    }

    #[test]
    fn agenda_orders_by_time_then_insertion() {
        let mut a = Agenda::default();
        a.push(5, "b");
        a.push(1, "a");
        a.push(5, "c");
        assert_eq!(a.next_time(), Some(1));
        let order: Vec<&str> = std::iter::from_fn(|| a.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["a", "b", "c"]);
    }
}
