//! The coordinator lease on etcd: key `{namespace}/lease/{name}`, value the owner, put with
//! the contender's own etcd lease so it vanishes when that lapses. The fencing token is the
//! key's `mod_revision`: any acquisition writes the key, so the token grows on every grant,
//! also when the same owner re-acquires; renewals only touch the etcd lease and keep it.

use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp, TxnOpResponse};
use shardline_core::coordinator::LeaseGrant;
use shardline_core::host::Lease;
use shardline_core::protocol::FencingToken;
use shardline_core::{Error, Result};

use crate::session::Session;
use crate::{Etcd, Failed};

pub struct EtcdLease {
    etcd: Etcd,
    key: String,
    owner: String,
    ttl_ms: u64,
    margin_ms: u64,
    drift_ppm: u64,
    session: Session,
}

impl std::fmt::Debug for EtcdLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdLease")
            .field("key", &self.key)
            .field("owner", &self.owner)
            .finish()
    }
}

fn error(e: Failed) -> Error {
    Error::invalid_state(format!("lease: {e}"))
}

impl EtcdLease {
    pub(crate) fn new(etcd: Etcd, name: &str, owner: &str, ttl_ms: u64) -> EtcdLease {
        EtcdLease {
            key: etcd.lease_key(name),
            etcd,
            owner: owner.to_owned(),
            ttl_ms,
            margin_ms: (ttl_ms / 10).min(1_000),
            drift_ppm: 10_000,
            session: Session::new(ttl_ms),
        }
    }

    /// Safety margin and assumed clock-rate error (parts per million) for local deadlines.
    pub fn with_safety(mut self, margin_ms: u64, drift_ppm: u64) -> EtcdLease {
        self.margin_ms = margin_ms;
        self.drift_ppm = drift_ppm;
        self
    }

    /// The current holder and token as etcd has them.
    pub fn holder(&self) -> Result<Option<(String, FencingToken)>> {
        let mut kv = self.etcd.client();
        let key = self.key.clone();
        let resp = self
            .etcd
            .run(async move { kv.get(key, None).await })
            .map_err(error)?;
        Ok(resp.kvs().first().map(|kv| {
            (
                String::from_utf8_lossy(kv.value()).into_owned(),
                FencingToken(crate::revision(kv.mod_revision())),
            )
        }))
    }

    /// Stops renewing without releasing, as a partitioned or crashed holder would: the grant
    /// ends when the etcd lease's TTL runs out.
    pub fn abandon(&mut self) {
        self.session.forget();
    }

    /// Deadline on the caller's clock for a keep-alive sent at `sent_ms` and granted `ttl_ms`.
    fn deadline(&self, sent_ms: u64, ttl_ms: u64) -> u64 {
        let ttl = ttl_ms.min(self.ttl_ms);
        sent_ms
            + ttl.saturating_sub(ttl.saturating_mul(self.drift_ppm) / 1_000_000 + self.margin_ms)
    }

    /// Keeps our etcd lease alive (granting one if needed); its TTL in ms.
    fn refresh(&mut self) -> Result<u64> {
        for _ in 0..2 {
            self.session.ensure(&self.etcd).map_err(error)?;
            if let Some(ttl) = self.session.keep_alive(&self.etcd).map_err(error)? {
                return Ok(ttl);
            }
        }
        Err(Error::invalid_state("lease: etcd keeps ending new leases"))
    }
}

impl Lease for EtcdLease {
    fn acquire(&mut self, now_ms: u64) -> Result<Option<LeaseGrant>> {
        let ttl = self.refresh()?;
        let lease = self.session.id().expect("refreshed");
        let put = || {
            TxnOp::put(
                self.key.clone(),
                self.owner.clone(),
                Some(PutOptions::new().with_lease(lease)),
            )
        };
        let txn = Txn::new()
            .when([Compare::create_revision(
                self.key.clone(),
                CompareOp::Equal,
                0,
            )])
            .and_then([put()])
            .or_else([TxnOp::get(self.key.clone(), None)]);
        let mut kv = self.etcd.client();
        let resp = self
            .etcd
            .run(async move { kv.txn(txn).await })
            .map_err(error)?;
        let valid_until_ms = self.deadline(now_ms, ttl);
        let grant = |rev: i64| LeaseGrant {
            token: FencingToken(crate::revision(rev)),
            valid_until_ms,
        };
        if resp.succeeded() {
            return Ok(resp.header().map(|h| grant(h.revision())));
        }
        let current = match resp.op_responses().first() {
            Some(TxnOpResponse::Get(g)) => g.kvs().first().cloned(),
            _ => None,
        };
        let Some(current) = current else {
            // Deleted between the compare and now; the caller retries.
            return Ok(None);
        };
        if current.lease() != lease || current.value() != self.owner.as_bytes() {
            return Ok(None);
        }
        // Ours already (an earlier grant): rewrite it so the new grant gets a new token and
        // the old one is fenced.
        let txn = Txn::new()
            .when([
                Compare::mod_revision(self.key.clone(), CompareOp::Equal, current.mod_revision()),
                Compare::lease(self.key.clone(), CompareOp::Equal, lease),
            ])
            .and_then([put()]);
        let mut kv = self.etcd.client();
        let resp = self
            .etcd
            .run(async move { kv.txn(txn).await })
            .map_err(error)?;
        if !resp.succeeded() {
            return Ok(None);
        }
        Ok(resp.header().map(|h| grant(h.revision())))
    }

    fn renew(&mut self, token: FencingToken, now_ms: u64) -> Result<Option<u64>> {
        let Some(lease) = self.session.id() else {
            return Ok(None);
        };
        let Some(ttl) = self.session.keep_alive(&self.etcd).map_err(error)? else {
            return Ok(None);
        };
        let mut kv = self.etcd.client();
        let key = self.key.clone();
        let resp = self
            .etcd
            .run(async move { kv.get(key, None).await })
            .map_err(error)?;
        let ours = resp
            .kvs()
            .first()
            .is_some_and(|kv| crate::revision(kv.mod_revision()) == token.0 && kv.lease() == lease);
        Ok(ours.then(|| self.deadline(now_ms, ttl)))
    }

    fn release(&mut self, token: FencingToken) -> Result<()> {
        let txn = Txn::new()
            .when([Compare::mod_revision(
                self.key.clone(),
                CompareOp::Equal,
                i64::try_from(token.0).unwrap_or(i64::MAX),
            )])
            .and_then([TxnOp::delete(self.key.clone(), None)]);
        let mut kv = self.etcd.client();
        self.etcd
            .run(async move { kv.txn(txn).await })
            .map_err(error)?;
        Ok(())
    }
}

impl Drop for EtcdLease {
    fn drop(&mut self) {
        let _ = self.session.revoke(&self.etcd);
    }
}
