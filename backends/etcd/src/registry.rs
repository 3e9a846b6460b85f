//! Worker-id registry on etcd. Per id, under `{namespace}/workerid/`:
//!
//! * `claim/{id}`: the [`Claim`], put with this session's lease, so it ends with the session;
//! * `fence/{id}`: the [`Fence`], persistent; its `mod_revision` is its version.
//!
//! Acquisition is one transaction: `create_revision(claim) == 0` and
//! `mod_revision(fence) == expected` then put both, else read both back.

use std::collections::BTreeMap;

use etcd_client::{
    Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp, TxnOpResponse, TxnResponse,
};
use shardline_core::workerid::{
    decode, encode, Claim, Created, Fence, Listing, Registry, RegistryError, RegistryResult, Slot,
    Version,
};

use crate::session::Session;
use crate::{Etcd, Failed};

pub struct EtcdRegistry {
    etcd: Etcd,
    session: Session,
}

impl std::fmt::Debug for EtcdRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdRegistry")
            .field("namespace", &self.etcd.namespace())
            .field("lease", &self.session.id())
            .finish()
    }
}

fn failure(e: Failed) -> RegistryError {
    match e {
        Failed::TimedOut => RegistryError::ambiguous("etcd request timed out"),
        // The error may have come after the server applied the request.
        Failed::Error(m) => RegistryError::ambiguous(format!("etcd: {m}")),
    }
}

impl EtcdRegistry {
    pub(crate) fn new(etcd: Etcd, ttl_ms: u64) -> EtcdRegistry {
        EtcdRegistry {
            etcd,
            session: Session::new(ttl_ms),
        }
    }

    /// The etcd lease backing this session, once granted.
    pub fn lease_id(&self) -> Option<i64> {
        self.session.id()
    }

    /// Ends the session now: etcd deletes its claims at once, so the ids are free
    /// immediately rather than after the TTL.
    pub fn close(&mut self) -> Result<(), shardline_core::Error> {
        self.session
            .revoke(&self.etcd)
            .map_err(|e| shardline_core::Error::invalid_state(e.to_string()))
    }

    /// Drops the connection to the session without ending it, as a crashed process would:
    /// its claims live on until the TTL runs out.
    pub fn abandon(mut self) {
        self.session.forget();
    }

    fn prefix(&self) -> String {
        self.etcd.key("workerid/")
    }

    fn claim_key(&self, id: u32) -> String {
        self.etcd.key(&format!("workerid/claim/{id}"))
    }

    fn fence_key(&self, id: u32) -> String {
        self.etcd.key(&format!("workerid/fence/{id}"))
    }

    fn txn(&self, txn: Txn) -> RegistryResult<TxnResponse> {
        let mut kv = self.etcd.client();
        self.etcd
            .run(async move { kv.txn(txn).await })
            .map_err(failure)
    }

    /// The slot from a transaction branch that read the claim, then the fence.
    fn slot_from(&self, id: u32, responses: &[TxnOpResponse]) -> RegistryResult<Slot> {
        let mut slot = Slot::empty(id);
        let [TxnOpResponse::Get(claim), TxnOpResponse::Get(fence)] = responses else {
            return Err(RegistryError::corrupt(
                "unexpected etcd transaction response",
            ));
        };
        if let Some(kv) = claim.kvs().first() {
            slot.claim = Some(decode(kv.value(), "claim").map_err(corrupt)?);
        }
        if let Some(kv) = fence.kvs().first() {
            let f: Fence = decode(kv.value(), "fence").map_err(corrupt)?;
            slot.fence = Some((f, Version(crate::revision(kv.mod_revision()))));
        }
        Ok(slot)
    }

    fn read_ops(&self, id: u32) -> [TxnOp; 2] {
        [
            TxnOp::get(self.claim_key(id), None),
            TxnOp::get(self.fence_key(id), None),
        ]
    }
}

fn corrupt(e: shardline_core::Error) -> RegistryError {
    RegistryError::corrupt(e.message().to_owned())
}

fn header_revision(r: &TxnResponse) -> u64 {
    r.header().map_or(0, |h| crate::revision(h.revision()))
}

impl Registry for EtcdRegistry {
    fn list(&mut self) -> RegistryResult<Listing> {
        let mut kv = self.etcd.client();
        let prefix = self.prefix();
        let resp = self
            .etcd
            .run(async move { kv.get(prefix, Some(GetOptions::new().with_prefix())).await })
            .map_err(failure)?;
        let mut slots: BTreeMap<u32, Slot> = BTreeMap::new();
        let prefix = self.prefix();
        for kv in resp.kvs() {
            let key = String::from_utf8_lossy(kv.key());
            let Some(rest) = key.strip_prefix(&prefix) else {
                continue;
            };
            let Some((kind, id)) = rest.split_once('/') else {
                continue;
            };
            let Ok(id) = id.parse::<u32>() else { continue };
            let slot = slots.entry(id).or_insert_with(|| Slot::empty(id));
            match kind {
                "claim" => slot.claim = Some(decode(kv.value(), "claim").map_err(corrupt)?),
                "fence" => {
                    let f: Fence = decode(kv.value(), "fence").map_err(corrupt)?;
                    slot.fence = Some((f, Version(crate::revision(kv.mod_revision()))));
                }
                _ => {}
            }
        }
        Ok(Listing {
            slots: slots.into_values().collect(),
        })
    }

    fn read(&mut self, id: u32) -> RegistryResult<Slot> {
        let resp = self.txn(Txn::new().and_then(self.read_ops(id)))?;
        self.slot_from(id, &resp.op_responses())
    }

    fn create_exclusive(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Created> {
        let lease = self.session.ensure(&self.etcd).map_err(failure)?;
        let (ck, fk) = (self.claim_key(id), self.fence_key(id));
        let expect_rev = i64::try_from(expect.0).unwrap_or(i64::MAX);
        let txn = Txn::new()
            .when([
                Compare::create_revision(ck.clone(), CompareOp::Equal, 0),
                Compare::mod_revision(fk.clone(), CompareOp::Equal, expect_rev),
            ])
            .and_then([
                TxnOp::put(ck, encode(claim), Some(PutOptions::new().with_lease(lease))),
                TxnOp::put(fk, encode(fence), None),
            ])
            .or_else(self.read_ops(id));
        let resp = match self.txn(txn) {
            Err(e) if e.message.contains("lease not found") => {
                // Our lease ended server-side; the put was refused. Start a new session.
                self.session.forget();
                return Err(RegistryError::unavailable(e.message));
            }
            other => other?,
        };
        if resp.succeeded() {
            return Ok(Created::Won(Version(header_revision(&resp))));
        }
        Ok(Created::Lost(self.slot_from(id, &resp.op_responses())?))
    }

    fn compare_and_set(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Option<Version>> {
        let Some(lease) = self.session.id() else {
            return Ok(None);
        };
        let (ck, fk) = (self.claim_key(id), self.fence_key(id));
        let txn = Txn::new()
            .when([
                Compare::value(ck.clone(), CompareOp::Equal, encode(claim)),
                Compare::lease(ck, CompareOp::Equal, lease),
                Compare::mod_revision(
                    fk.clone(),
                    CompareOp::Equal,
                    i64::try_from(expect.0).unwrap_or(i64::MAX),
                ),
            ])
            .and_then([TxnOp::put(fk, encode(fence), None)]);
        let resp = self.txn(txn)?;
        Ok(resp.succeeded().then(|| Version(header_revision(&resp))))
    }

    fn delete(&mut self, id: u32, claim: &Claim) -> RegistryResult<bool> {
        let ck = self.claim_key(id);
        let txn = Txn::new()
            .when([Compare::value(ck.clone(), CompareOp::Equal, encode(claim))])
            .and_then([TxnOp::delete(ck, None)]);
        Ok(self.txn(txn)?.succeeded())
    }

    fn keep_alive(&mut self) -> RegistryResult<Option<u64>> {
        self.session.keep_alive(&self.etcd).map_err(failure)
    }
}

impl Drop for EtcdRegistry {
    fn drop(&mut self) {
        // Best effort: if this fails the claims still end when the lease's TTL runs out.
        let _ = self.session.revoke(&self.etcd);
    }
}
