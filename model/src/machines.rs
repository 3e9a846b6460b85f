//! The real coordinator and region machines as values a model checker can hold: forked
//! (core feature `model-check`) and hashed by their canonical fingerprint.
//!
//! A step changes one or two machines of a state, so states share the machines they did not
//! change: each is an `Arc`, forked only when a step writes to a shared one, and its
//! fingerprint is computed once. This keeps a state to a few kilobytes; copying every
//! machine into every state took tens.
//!
//! The machines hold host code (a strategy, a shard extractor) that is `Send` but not `Sync`;
//! the checker shares states between threads, so each machine sits behind a mutex that is
//! only ever taken by the one step that owns the state.

use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use shardline_core::coordinator::Coordinator;
use shardline_core::region::{Region, ShardExtractor};
use shardline_core::strategy::{AllocationStrategy, StrategyConfig};

/// The strategy every coordinator of the model runs. Least-shard keeps no state between
/// calls, so a forked coordinator given a fresh one is an exact copy.
pub fn strategy() -> Box<dyn AllocationStrategy> {
    StrategyConfig::from_json(&serde_json::json!({"kind": "least-shard"}))
        .and_then(|c| c.build())
        .expect("least-shard with its defaults is valid")
}

/// The regions' extractor (the model routes by shard, so it only has to be equal in forks).
pub fn extractor() -> ShardExtractor {
    ShardExtractor::pekko(2).expect("2 shards is valid")
}

/// A machine the model can copy.
pub trait Fork: Hash {
    fn fork(&self) -> Self;
}

impl Fork for Coordinator {
    fn fork(&self) -> Coordinator {
        Coordinator::fork(self, strategy())
    }
}

impl Fork for Region {
    fn fork(&self) -> Region {
        Region::fork(self, extractor())
    }
}

struct Slot<T> {
    machine: Mutex<T>,
    fingerprint: OnceLock<u64>,
}

impl<T: Fork> Clone for Slot<T> {
    fn clone(&self) -> Slot<T> {
        Slot::new(lock(&self.machine).fork())
    }
}

impl<T> Slot<T> {
    fn new(machine: T) -> Slot<T> {
        Slot {
            machine: Mutex::new(machine),
            fingerprint: OnceLock::new(),
        }
    }
}

/// One machine of a state, shared with the states it was copied from until a step changes it.
pub struct Machine<T>(Arc<Slot<T>>);

impl<T> Clone for Machine<T> {
    fn clone(&self) -> Machine<T> {
        Machine(self.0.clone())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A step that panicked is reported by the checker; the machine it left is still whole.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<T: Fork> Machine<T> {
    pub fn new(machine: T) -> Machine<T> {
        Machine(Arc::new(Slot::new(machine)))
    }

    /// The machine to change: this state's own copy.
    pub fn get(&mut self) -> &mut T {
        let slot = Arc::make_mut(&mut self.0);
        slot.fingerprint = OnceLock::new();
        slot.machine.get_mut().unwrap_or_else(|p| p.into_inner())
    }

    pub fn read(&self) -> MutexGuard<'_, T> {
        lock(&self.0.machine)
    }
}

impl<T: Fork> Hash for Machine<T> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let fp = self.0.fingerprint.get_or_init(|| {
            // SipHash with fixed keys: the same machine state always gives the same number.
            let mut d = DefaultHasher::new();
            self.read().hash(&mut d);
            d.finish()
        });
        fp.hash(h);
    }
}

pub type Coord = Machine<Coordinator>;
pub type Reg = Machine<Region>;

impl fmt::Debug for Machine<Coordinator> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.read();
        write!(
            f,
            "{:?} token {:?} handoffs {:?}",
            c.phase(),
            c.token().map(|t| t.0),
            c.handoffs_in_progress()
        )
    }
}

impl fmt::Debug for Machine<Region> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.read();
        write!(
            f,
            "{} running {:?} buffered {}",
            r.id(),
            r.running_shards(),
            r.buffered()
        )
    }
}
