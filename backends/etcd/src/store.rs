//! Coordinator state on etcd, under `{namespace}/coordinator/{name}/`:
//!
//! * `highest`: the highest token seen, zero-padded so etcd's byte-wise value compare orders
//!   it numerically;
//! * `last-seq`: sequence number of the last event, zero-padded likewise;
//! * `snapshot`: the latest snapshot (JSON);
//! * `events/{seq}`: events after it (JSON), zero-padded so a prefix read is in order.
//!
//! Every write and every load is one transaction whose guard is `highest <= token` (plus,
//! when bound to a lease, the lease key's `mod_revision == token`) and which raises `highest`
//! to `token`, so a stale coordinator is refused from the moment a newer one has touched
//! the state.

use etcd_client::{
    Compare, CompareOp, DeleteOptions, GetOptions, Txn, TxnOp, TxnOpResponse, TxnResponse,
};
use shardline_core::coordinator::StoredState;
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::host::{Store, WriteOutcome};
use shardline_core::protocol::FencingToken;
use shardline_core::{Error, Result};

use crate::Etcd;

pub struct EtcdStore {
    etcd: Etcd,
    base: String,
    lease_key: Option<String>,
    initialised: bool,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("base", &self.base)
            .field("lease_key", &self.lease_key)
            .finish()
    }
}

fn padded(n: u64) -> String {
    format!("{n:020}")
}

fn parse_padded(bytes: &[u8]) -> u64 {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn rev(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// What the else-branch of a guarded transaction read: highest, last-seq, lease key.
struct Seen {
    highest: u64,
    last_seq: u64,
    lease_token: Option<u64>,
}

impl EtcdStore {
    pub(crate) fn new(etcd: Etcd, name: &str, lease_key: Option<String>) -> EtcdStore {
        EtcdStore {
            base: etcd.key(&format!("coordinator/{name}/")),
            etcd,
            lease_key,
            initialised: false,
        }
    }

    fn key(&self, rest: &str) -> String {
        format!("{}{rest}", self.base)
    }

    fn event_key(&self, seq: u64) -> String {
        self.key(&format!("events/{}", padded(seq)))
    }

    fn txn(&self, txn: Txn) -> Result<TxnResponse> {
        let mut kv = self.etcd.client();
        self.etcd
            .run(async move { kv.txn(txn).await })
            .map_err(|e| Error::invalid_state(format!("store: {e}")))
    }

    /// The counters must exist before values can be compared against them.
    fn initialise(&mut self) -> Result<()> {
        if self.initialised {
            return Ok(());
        }
        let highest = self.key("highest");
        self.txn(
            Txn::new()
                .when([Compare::create_revision(
                    highest.clone(),
                    CompareOp::Equal,
                    0,
                )])
                .and_then([
                    TxnOp::put(highest, padded(0), None),
                    TxnOp::put(self.key("last-seq"), padded(0), None),
                ]),
        )?;
        self.initialised = true;
        Ok(())
    }

    fn guards(&self, token: FencingToken) -> Vec<Compare> {
        let mut g = vec![Compare::value(
            self.key("highest"),
            CompareOp::Less,
            padded(token.0.saturating_add(1)),
        )];
        if let Some(lease) = &self.lease_key {
            g.push(Compare::mod_revision(
                lease.clone(),
                CompareOp::Equal,
                rev(token.0),
            ));
        }
        g
    }

    fn seen_ops(&self) -> Vec<TxnOp> {
        let mut ops = vec![
            TxnOp::get(self.key("highest"), None),
            TxnOp::get(self.key("last-seq"), None),
        ];
        if let Some(lease) = &self.lease_key {
            ops.push(TxnOp::get(lease.clone(), None));
        }
        ops
    }

    fn seen(&self, resp: &TxnResponse) -> Seen {
        let values: Vec<Option<(u64, u64)>> = resp
            .op_responses()
            .iter()
            .map(|r| match r {
                TxnOpResponse::Get(g) => g
                    .kvs()
                    .first()
                    .map(|kv| (parse_padded(kv.value()), crate::revision(kv.mod_revision()))),
                _ => None,
            })
            .collect();
        Seen {
            highest: values.first().copied().flatten().map_or(0, |v| v.0),
            last_seq: values.get(1).copied().flatten().map_or(0, |v| v.0),
            lease_token: values.get(2).copied().flatten().map(|v| v.1),
        }
    }

    /// Why a guarded write failed: fenced, or (`None`) something else.
    fn fenced(&self, token: FencingToken, seen: &Seen) -> Option<WriteOutcome> {
        if seen.highest > token.0 {
            return Some(WriteOutcome::Fenced {
                highest: FencingToken(seen.highest),
            });
        }
        if self.lease_key.is_some() && seen.lease_token != Some(token.0) {
            // The lease lapsed or moved on: whoever holds it next has a larger token.
            let highest = seen.lease_token.unwrap_or(0).max(token.0);
            return Some(WriteOutcome::Fenced {
                highest: FencingToken(highest),
            });
        }
        None
    }
}

impl Store for EtcdStore {
    fn append(&mut self, token: FencingToken, record: &Record) -> Result<WriteOutcome> {
        self.initialise()?;
        if record.seq == 0 {
            return Err(Error::invalid_argument(
                "store: event sequence numbers start at 1",
            ));
        }
        let body = serde_json::to_vec(record)
            .map_err(|e| Error::invalid_argument(format!("store: event: {e}")))?;
        let mut when = self.guards(token);
        when.push(Compare::value(
            self.key("last-seq"),
            CompareOp::Equal,
            padded(record.seq - 1),
        ));
        let resp = self.txn(
            Txn::new()
                .when(when)
                .and_then([
                    TxnOp::put(self.key("highest"), padded(token.0), None),
                    TxnOp::put(self.key("last-seq"), padded(record.seq), None),
                    TxnOp::put(self.event_key(record.seq), body, None),
                ])
                .or_else(self.seen_ops()),
        )?;
        if resp.succeeded() {
            return Ok(WriteOutcome::Written);
        }
        let seen = self.seen(&resp);
        self.fenced(token, &seen).ok_or_else(|| {
            Error::invalid_state(format!(
                "store: event {} does not follow event {}",
                record.seq, seen.last_seq
            ))
        })
    }

    fn save_snapshot(&mut self, token: FencingToken, snapshot: &Snapshot) -> Result<WriteOutcome> {
        self.initialise()?;
        let body = serde_json::to_vec(snapshot)
            .map_err(|e| Error::invalid_argument(format!("store: snapshot: {e}")))?;
        let mut when = self.guards(token);
        if snapshot.seq > 0 {
            when.push(Compare::value(
                self.key("last-seq"),
                CompareOp::Greater,
                padded(snapshot.seq - 1),
            ));
        }
        let resp = self.txn(
            Txn::new()
                .when(when)
                .and_then([
                    TxnOp::put(self.key("highest"), padded(token.0), None),
                    TxnOp::put(self.key("snapshot"), body, None),
                    TxnOp::delete(
                        self.event_key(0),
                        Some(DeleteOptions::new().with_range(self.event_key(snapshot.seq + 1))),
                    ),
                ])
                .or_else(self.seen_ops()),
        )?;
        if resp.succeeded() {
            return Ok(WriteOutcome::Written);
        }
        let seen = self.seen(&resp);
        self.fenced(token, &seen).ok_or_else(|| {
            Error::invalid_state(format!(
                "store: snapshot at event {} is ahead of the log ({})",
                snapshot.seq, seen.last_seq
            ))
        })
    }

    fn load(&mut self, token: FencingToken) -> Result<Option<StoredState>> {
        self.initialise()?;
        let resp = self.txn(
            Txn::new()
                .when(self.guards(token))
                .and_then([
                    TxnOp::put(self.key("highest"), padded(token.0), None),
                    TxnOp::get(self.key("snapshot"), None),
                    TxnOp::get(self.key("events/"), Some(GetOptions::new().with_prefix())),
                ])
                .or_else(self.seen_ops()),
        )?;
        if !resp.succeeded() {
            return Ok(None);
        }
        let responses = resp.op_responses();
        let [_, TxnOpResponse::Get(snap), TxnOpResponse::Get(events)] = responses.as_slice() else {
            return Err(Error::invalid_state(
                "store: unexpected etcd transaction response",
            ));
        };
        let snapshot = match snap.kvs().first() {
            Some(kv) => Some(
                serde_json::from_slice(kv.value())
                    .map_err(|e| Error::invalid_state(format!("store: snapshot: {e}")))?,
            ),
            None => None,
        };
        let events = events
            .kvs()
            .iter()
            .map(|kv| {
                serde_json::from_slice(kv.value())
                    .map_err(|e| Error::invalid_state(format!("store: event: {e}")))
            })
            .collect::<Result<Vec<Record>>>()?;
        Ok(Some(StoredState { snapshot, events }))
    }
}
