//! What a driver runs with when its host leaves a service out: the process's monotonic clock,
//! a coordinator lease of its own, its state in memory.

use std::time::Instant;

use shardline_core::host::{Clock, InMemoryLease, InMemoryStore, Lease, Store};

/// How long a lease of the driver's own lives unless renewed.
pub const LEASE_TTL_MS: u64 = 30_000;

/// Milliseconds since the clock was made, from the OS monotonic clock.
pub struct MonotonicClock(Instant);

impl Clock for MonotonicClock {
    fn now_ms(&self) -> u64 {
        self.0.elapsed().as_millis() as u64
    }
}

pub fn clock() -> Box<dyn Clock> {
    Box::new(MonotonicClock(Instant::now()))
}

/// A lease nobody else contends for, held as `owner` (the coordinator's address).
pub fn lease(owner: &str) -> Box<dyn Lease> {
    Box::new(InMemoryLease::new(owner, LEASE_TTL_MS))
}

pub fn store() -> Box<dyn Store> {
    Box::new(InMemoryStore::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_of_its_own_is_granted_at_once() {
        let mut l = lease("pekko://sys@h:1");
        let grant = l.acquire(0).unwrap().unwrap();
        assert_eq!(grant.token.0, 1);
        assert!(grant.valid_until_ms < LEASE_TTL_MS);
        let c = clock();
        assert!(c.now_ms() <= c.now_ms());
        let loaded = store()
            .load(shardline_core::protocol::FencingToken(1))
            .unwrap();
        assert!(loaded.is_some());
    }
}
