//! Per-process clocks. The simulator keeps one true time; each process reads it through an
//! offset that clock-jump faults change. A backward jump does not make a process's clock go
//! back (the state machines never let time decrease): it stalls it until true time catches
//! up, which is exactly how a paused or slowed process overstays its lease.

use std::collections::BTreeMap;

/// A process that owns a clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Proc {
    Coordinator(usize),
    Node(usize),
}

#[derive(Debug, Default)]
pub(crate) struct Clocks {
    offsets: BTreeMap<Proc, i64>,
}

impl Clocks {
    /// What `p`'s clock shows at true time `now`.
    pub fn local(&self, p: Proc, now: u64) -> u64 {
        let off = self.offsets.get(&p).copied().unwrap_or(0);
        (now as i64).saturating_add(off).max(0) as u64
    }

    /// The true time at which `p`'s clock shows `local` (never before `now`).
    pub fn to_true(&self, p: Proc, local: u64, now: u64) -> u64 {
        let off = self.offsets.get(&p).copied().unwrap_or(0);
        ((local as i64).saturating_sub(off).max(0) as u64).max(now)
    }

    pub fn jump(&mut self, p: Proc, delta_ms: i64) {
        *self.offsets.entry(p).or_insert(0) += delta_ms;
    }

    /// A restarted process reads a fresh clock.
    pub fn reset(&mut self, p: Proc) {
        self.offsets.remove(&p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_translate_both_ways() {
        let mut c = Clocks::default();
        let p = Proc::Node(1);
        assert_eq!(c.local(p, 100), 100);
        c.jump(p, 50);
        assert_eq!(c.local(p, 100), 150);
        assert_eq!(c.to_true(p, 200, 100), 150);
        c.jump(p, -500);
        assert_eq!(c.local(p, 100), 0);
        assert_eq!(c.to_true(p, 10, 100), 460);
        assert_eq!(c.to_true(p, 10, 1_000), 1_000, "never in the past");
        c.reset(p);
        assert_eq!(c.local(p, 7), 7);
    }
}
