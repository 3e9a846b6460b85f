//! Which free worker ids a contender tries, in what order, and how long it backs off.

use std::collections::VecDeque;

/// Order in which a contender tries the free ids it listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Ascending: the smallest free id first. Keeps ids dense; every simultaneous starter
    /// races for the same id first, so contention grows with the number of starters.
    #[default]
    Lowest,
    /// The lowest `window` free ids in a random order, then the rest ascending. Simultaneous
    /// starters mostly try different ids, at the price of a lone starter not always getting
    /// the lowest free id (ids stay within the lowest `window` free ones).
    Spread { window: u32 },
}

impl Policy {
    /// `free` must be ascending.
    pub(crate) fn order(&self, free: Vec<u32>, rng: &mut Jitter) -> VecDeque<u32> {
        let mut order = free;
        if let Policy::Spread { window } = *self {
            let w = (window as usize).min(order.len());
            for i in (1..w).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                order.swap(i, j);
            }
        }
        order.into()
    }
}

/// Deterministic randomness from a host-supplied seed (SplitMix64), so that a simulation with
/// fixed seeds replays exactly. Not for anything secret.
#[derive(Debug, Clone)]
pub(crate) struct Jitter(u64);

impl Jitter {
    pub fn new(seed: u64) -> Jitter {
        Jitter(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// Exponential backoff with jitter: attempt `n` (from 1) waits a random time in
/// `[d/2, d]` where `d = min(base * 2^(n-1), max)`, so contenders that failed together
/// do not retry together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base_ms: u64,
    pub max_ms: u64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base_ms: 20,
            max_ms: 2_000,
        }
    }
}

impl Backoff {
    pub(crate) fn delay(&self, attempt: u32, rng: &mut Jitter) -> u64 {
        let doubling = 1u64 << attempt.saturating_sub(1).min(32);
        let d = self
            .base_ms
            .saturating_mul(doubling)
            .min(self.max_ms)
            .max(1);
        d / 2 + rng.below(d - d / 2 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_keeps_ascending_order_and_spread_permutes_only_the_window() {
        let free: Vec<u32> = (0..100).collect();
        let mut rng = Jitter::new(7);
        let lowest: Vec<u32> = Policy::Lowest.order(free.clone(), &mut rng).into();
        assert_eq!(lowest, free);
        let spread: Vec<u32> = Policy::Spread { window: 10 }
            .order(free.clone(), &mut rng)
            .into();
        assert_ne!(spread[..10], free[..10], "the window is shuffled");
        let mut head = spread[..10].to_vec();
        head.sort_unstable();
        assert_eq!(head, free[..10], "only ids from the window come first");
        assert_eq!(spread[10..], free[10..]);
    }

    #[test]
    fn backoff_grows_caps_and_stays_in_its_jitter_band() {
        let b = Backoff {
            base_ms: 10,
            max_ms: 100,
        };
        let mut rng = Jitter::new(1);
        for attempt in 1..20 {
            let d = (10u64 << (attempt - 1).min(20)).min(100);
            for _ in 0..50 {
                let x = b.delay(attempt, &mut rng);
                assert!(
                    x >= d / 2 && x <= d,
                    "attempt {attempt}: {x} outside [{}, {d}]",
                    d / 2
                );
            }
        }
    }
}
