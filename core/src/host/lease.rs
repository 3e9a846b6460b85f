//! The coordinator lease contract (workerid-lease.md §4.2-4.3) and an in-memory lease.
//!
//! Contract, for any backend:
//! * `acquire` returns a [`LeaseGrant`] whose fencing token is strictly greater than every
//!   token granted before under the same lease name, to any holder, including this one;
//! * `valid_until_ms` is a deadline on the holder's own monotonic clock, computed from when
//!   the request was *sent*, shortened for clock-rate error and a safety margin, so that the
//!   holder stops acting before any contender can be granted the lease;
//! * renewals only ever move that deadline using the time the renewal was sent; a failed
//!   renewal never extends it;
//! * loss is reported at most once per grant, and only after the grant (the coordinator
//!   enforces this itself, whatever the backend does).

use std::sync::{Arc, Mutex, MutexGuard};

use crate::coordinator::LeaseGrant;
use crate::protocol::FencingToken;
use crate::Result;

/// A lease backend as the host provides it. Object safe, so bindings can implement it.
pub trait Lease: Send {
    /// Tries to take the lease. `Ok(None)`: someone else holds it.
    fn acquire(&mut self, now_ms: u64) -> Result<Option<LeaseGrant>>;
    /// Extends the grant `token`; `Ok(None)`: the grant is gone.
    fn renew(&mut self, token: FencingToken, now_ms: u64) -> Result<Option<u64>>;
    fn release(&mut self, token: FencingToken) -> Result<()>;
}

#[derive(Debug, Default)]
struct Backend {
    holder: Option<(String, FencingToken, u64)>,
    last_token: u64,
}

/// The embedded default: a lease shared by the handles cloned from one
/// [`InMemoryLease::new`], each handle a contender with its own owner name. Time is whatever
/// the callers pass, so it runs under simulated time.
#[derive(Debug, Clone)]
pub struct InMemoryLease {
    backend: Arc<Mutex<Backend>>,
    owner: String,
    ttl_ms: u64,
    margin_ms: u64,
    drift_ppm: u64,
}

impl InMemoryLease {
    /// A new lease with time-to-live `ttl_ms`, held by nobody; this handle contends as `owner`.
    pub fn new(owner: &str, ttl_ms: u64) -> InMemoryLease {
        InMemoryLease {
            backend: Arc::default(),
            owner: owner.to_owned(),
            ttl_ms,
            margin_ms: (ttl_ms / 10).min(1_000),
            drift_ppm: 1_000,
        }
    }

    /// Another contender for the same lease.
    pub fn contender(&self, owner: &str) -> InMemoryLease {
        InMemoryLease {
            owner: owner.to_owned(),
            ..self.clone()
        }
    }

    /// Safety margin and assumed clock-rate error (parts per million) used for deadlines.
    pub fn with_safety(mut self, margin_ms: u64, drift_ppm: u64) -> InMemoryLease {
        self.margin_ms = margin_ms;
        self.drift_ppm = drift_ppm;
        self
    }

    /// The current holder and token as the backend sees it at `now_ms`.
    pub fn holder(&self, now_ms: u64) -> Option<(String, FencingToken)> {
        let b = self.lock();
        b.holder
            .as_ref()
            .filter(|(_, _, exp)| now_ms < *exp)
            .map(|(o, t, _)| (o.clone(), *t))
    }

    /// Test and simulation hook: the backend forgets the holder, as when its session expires
    /// server-side before the holder notices.
    pub fn expire_now(&self) {
        self.lock().holder = None;
    }

    fn lock(&self) -> MutexGuard<'_, Backend> {
        // A panic while holding this lock cannot leave the backend half-updated (every update
        // is a single assignment), so a poisoned lock is still usable.
        self.backend.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn local_deadline(&self, sent_ms: u64) -> u64 {
        let drift = self.ttl_ms.saturating_mul(self.drift_ppm) / 1_000_000;
        sent_ms + self.ttl_ms.saturating_sub(drift + self.margin_ms)
    }
}

impl Lease for InMemoryLease {
    fn acquire(&mut self, now_ms: u64) -> Result<Option<LeaseGrant>> {
        let valid_until_ms = self.local_deadline(now_ms);
        let mut b = self.lock();
        let free = match &b.holder {
            None => true,
            Some((owner, _, exp)) => now_ms >= *exp || *owner == self.owner,
        };
        if !free {
            return Ok(None);
        }
        b.last_token += 1;
        let token = FencingToken(b.last_token);
        b.holder = Some((self.owner.clone(), token, now_ms + self.ttl_ms));
        Ok(Some(LeaseGrant {
            token,
            valid_until_ms,
        }))
    }

    fn renew(&mut self, token: FencingToken, now_ms: u64) -> Result<Option<u64>> {
        let deadline = self.local_deadline(now_ms);
        let mut b = self.lock();
        match &mut b.holder {
            Some((owner, t, exp)) if *owner == self.owner && *t == token && now_ms < *exp => {
                *exp = now_ms + self.ttl_ms;
                Ok(Some(deadline))
            }
            _ => Ok(None),
        }
    }

    fn release(&mut self, token: FencingToken) -> Result<()> {
        let mut b = self.lock();
        if matches!(&b.holder, Some((o, t, _)) if *o == self.owner && *t == token) {
            b.holder = None;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_grow_across_holders_and_reacquisition() {
        let mut a = InMemoryLease::new("a", 10_000);
        let mut b = a.contender("b");
        let g1 = a.acquire(0).unwrap().unwrap();
        assert_eq!(b.acquire(1).unwrap(), None, "held by a");
        let g2 = a.acquire(2).unwrap().unwrap();
        assert!(
            g2.token > g1.token,
            "same holder re-acquiring gets a new token"
        );
        assert_eq!(b.acquire(10_001).unwrap(), None, "a renewed the ttl at 2");
        let g3 = b.acquire(10_002).unwrap().unwrap();
        assert!(g3.token > g2.token);
        assert_eq!(
            a.renew(g2.token, 10_003).unwrap(),
            None,
            "a's grant is gone"
        );
    }

    #[test]
    fn local_deadline_is_before_server_expiry() {
        let mut a = InMemoryLease::new("a", 10_000);
        let g = a.acquire(100).unwrap().unwrap();
        // 10 s ttl, 0.1% drift (10 ms) and a 1 s margin.
        assert_eq!(g.valid_until_ms, 100 + 10_000 - 10 - 1_000);
        let renewed = a.renew(g.token, 5_000).unwrap().unwrap();
        assert_eq!(renewed, 5_000 + 8_990);
        let mut b = a.contender("b");
        assert_eq!(b.acquire(renewed).unwrap(), None, "server still has a");
    }

    #[test]
    fn release_frees_immediately_only_for_the_holder() {
        let mut a = InMemoryLease::new("a", 10_000);
        let mut b = a.contender("b");
        let g = a.acquire(0).unwrap().unwrap();
        b.release(g.token).unwrap();
        assert_eq!(a.holder(1).map(|h| h.0), Some("a".into()));
        a.release(g.token).unwrap();
        assert!(b.acquire(2).unwrap().is_some());
    }
}
