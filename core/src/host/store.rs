//! The coordinator state store contract and an in-memory store.
//!
//! Every write carries the writer's fencing token. A store must refuse a write whose token is
//! below the highest token it has seen, and a load must raise that mark to the loader's token:
//! from the moment a new coordinator reads the state, an older one can no longer change it.

use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::coordinator::{Record, Snapshot, StoredState};
use crate::protocol::FencingToken;
use crate::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum WriteOutcome {
    Written,
    /// A writer with a larger token exists; this writer must stop.
    Fenced {
        highest: FencingToken,
    },
}

/// State storage as the host provides it. An `Err` means the store could not be reached;
/// the coordinator then reloads and carries on.
pub trait Store: Send {
    fn append(&mut self, token: FencingToken, record: &Record) -> Result<WriteOutcome>;
    fn save_snapshot(&mut self, token: FencingToken, snapshot: &Snapshot) -> Result<WriteOutcome>;
    /// Reads the state and fences every token below `token`. `Ok(None)`: fenced.
    fn load(&mut self, token: FencingToken) -> Result<Option<StoredState>>;
}

#[derive(Debug, Default)]
struct Inner {
    highest: FencingToken,
    state: StoredState,
    last_seq: u64,
}

/// The embedded default; clones share one store, so a failover can be played in-process.
#[derive(Debug, Clone, Default)]
pub struct InMemoryStore {
    inner: Arc<Mutex<Inner>>,
}

impl InMemoryStore {
    pub fn new() -> InMemoryStore {
        InMemoryStore::default()
    }

    /// A store holding `state` (e.g. a copy of another store's contents), fencing no one yet.
    pub fn from_state(state: StoredState) -> InMemoryStore {
        let last_seq = state
            .events
            .last()
            .map(|r| r.seq)
            .or(state.snapshot.as_ref().map(|s| s.seq))
            .unwrap_or(0);
        InMemoryStore {
            inner: Arc::new(Mutex::new(Inner {
                highest: FencingToken(0),
                state,
                last_seq,
            })),
        }
    }

    /// What a load would return now, without fencing anyone.
    pub fn contents(&self) -> StoredState {
        self.lock().state.clone()
    }

    pub fn highest_token(&self) -> FencingToken {
        self.lock().highest
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Each update below finishes before anything can panic, so a poisoned lock is intact.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn admit(inner: &mut Inner, token: FencingToken) -> Option<WriteOutcome> {
        if token < inner.highest {
            return Some(WriteOutcome::Fenced {
                highest: inner.highest,
            });
        }
        inner.highest = token;
        None
    }
}

impl Store for InMemoryStore {
    fn append(&mut self, token: FencingToken, record: &Record) -> Result<WriteOutcome> {
        let mut inner = self.lock();
        if let Some(fenced) = Self::admit(&mut inner, token) {
            return Ok(fenced);
        }
        if record.seq != inner.last_seq + 1 {
            return Err(Error::invalid_state(format!(
                "store: event {} does not follow event {}",
                record.seq, inner.last_seq
            )));
        }
        inner.last_seq = record.seq;
        inner.state.events.push(record.clone());
        Ok(WriteOutcome::Written)
    }

    fn save_snapshot(&mut self, token: FencingToken, snapshot: &Snapshot) -> Result<WriteOutcome> {
        let mut inner = self.lock();
        if let Some(fenced) = Self::admit(&mut inner, token) {
            return Ok(fenced);
        }
        if snapshot.seq > inner.last_seq {
            return Err(Error::invalid_state(format!(
                "store: snapshot at event {} is ahead of the log ({})",
                snapshot.seq, inner.last_seq
            )));
        }
        inner.state.events.retain(|r| r.seq > snapshot.seq);
        inner.state.snapshot = Some(snapshot.clone());
        Ok(WriteOutcome::Written)
    }

    fn load(&mut self, token: FencingToken) -> Result<Option<StoredState>> {
        let mut inner = self.lock();
        if Self::admit(&mut inner, token).is_some() {
            return Ok(None);
        }
        Ok(Some(inner.state.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::Event;

    fn rec(seq: u64) -> Record {
        Record {
            seq,
            event: Event::ShardRegionRegistered {
                region: format!("r{seq}"),
                node: "pekko://s@h:1".into(),
            },
        }
    }

    #[test]
    fn lower_tokens_are_fenced_and_loading_raises_the_fence() {
        let mut s = InMemoryStore::new();
        assert_eq!(
            s.append(FencingToken(2), &rec(1)).unwrap(),
            WriteOutcome::Written
        );
        assert_eq!(
            s.append(FencingToken(1), &rec(2)).unwrap(),
            WriteOutcome::Fenced {
                highest: FencingToken(2)
            }
        );
        let loaded = s.load(FencingToken(3)).unwrap().unwrap();
        assert_eq!(loaded.events.len(), 1);
        assert!(
            matches!(
                s.append(FencingToken(2), &rec(2)).unwrap(),
                WriteOutcome::Fenced { .. }
            ),
            "the old writer is fenced as soon as the new one has read"
        );
        assert_eq!(s.load(FencingToken(2)).unwrap(), None);
        assert!(
            s.append(FencingToken(3), &rec(3)).is_err(),
            "gap in the log"
        );
    }

    #[test]
    fn snapshots_truncate_the_log() {
        let mut s = InMemoryStore::new();
        for i in 1..=3 {
            s.append(FencingToken(1), &rec(i)).unwrap();
        }
        let snap = Snapshot {
            seq: 2,
            ..Default::default()
        };
        s.save_snapshot(FencingToken(1), &snap).unwrap();
        let c = s.contents();
        assert_eq!(c.snapshot.unwrap().seq, 2);
        assert_eq!(c.events, vec![rec(3)]);
    }
}
