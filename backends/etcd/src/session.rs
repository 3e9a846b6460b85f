//! One etcd lease used as a session: granted on first use, kept alive on demand over one
//! keep-alive stream, revoked on close. Keys put with it vanish when it ends.

use etcd_client::{LeaseKeepAliveStream, LeaseKeeper};

use crate::{Etcd, Failed};

pub(crate) struct Session {
    ttl_s: i64,
    lease: Option<i64>,
    stream: Option<(LeaseKeeper, LeaseKeepAliveStream)>,
}

impl Session {
    pub fn new(ttl_ms: u64) -> Session {
        Session {
            ttl_s: i64::try_from(ttl_ms.div_ceil(1_000).max(1)).unwrap_or(i64::MAX),
            lease: None,
            stream: None,
        }
    }

    pub fn id(&self) -> Option<i64> {
        self.lease
    }

    /// The current lease, granting a new one if there is none.
    pub fn ensure(&mut self, etcd: &Etcd) -> Result<i64, Failed> {
        if let Some(id) = self.lease {
            return Ok(id);
        }
        let mut client = etcd.client();
        let ttl = self.ttl_s;
        let granted = etcd.run(async move { client.lease_grant(ttl, None).await })?;
        self.lease = Some(granted.id());
        self.stream = None;
        Ok(granted.id())
    }

    /// Keeps the lease alive. `Ok(Some(ttl_ms))`: extended; `Ok(None)`: it had already ended
    /// (the next `ensure` grants a new one).
    pub fn keep_alive(&mut self, etcd: &Etcd) -> Result<Option<u64>, Failed> {
        let Some(id) = self.lease else {
            return Ok(None);
        };
        if self.stream.is_none() {
            let mut client = etcd.client();
            self.stream = Some(etcd.run(async move { client.lease_keep_alive(id).await })?);
        }
        let (keeper, stream) = self.stream.as_mut().expect("opened above");
        let reply = etcd.run(async {
            keeper.keep_alive().await?;
            stream.message().await
        });
        match reply {
            Ok(Some(r)) if r.ttl() > 0 => Ok(Some(crate::revision(r.ttl()) * 1_000)),
            Ok(_) => {
                self.lease = None;
                self.stream = None;
                Ok(None)
            }
            Err(e) => {
                // The stream may be broken; open a new one next time.
                self.stream = None;
                Err(e)
            }
        }
    }

    /// Forgets a lease the server no longer knows.
    pub fn forget(&mut self) {
        self.lease = None;
        self.stream = None;
    }

    pub fn revoke(&mut self, etcd: &Etcd) -> Result<(), Failed> {
        self.stream = None;
        if let Some(id) = self.lease.take() {
            let mut client = etcd.client();
            etcd.run(async move { client.lease_revoke(id).await })?;
        }
        Ok(())
    }
}
