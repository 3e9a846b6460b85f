//! Cluster membership over etcd, standing in for Pekko's cluster membership and downing:
//! a node is a member while its key lives, and its key lives on its own etcd session.
//!
//! * joining puts `<namespace>/members/<region>` under a fresh lease of `ttl_ms`;
//! * the key's `create_revision` orders members by age (Pekko's `upNumber`);
//! * a node that stops renewing (killed, paused, cut off) is removed when etcd expires the
//!   lease; every node sees the removal at its next poll and treats it as Pekko treats a
//!   downed member: `MemberRemoved`, death watch for its region, quarantine;
//! * a node must stop acting before the others can see it removed: [`Membership::valid_until`]
//!   is a deadline on this process's monotonic clock, from when the last successful renewal
//!   was *sent*, shortened by a margin and a clock-rate allowance. Past it the node fences
//!   itself (it exits before touching an entity again), so by the time etcd expires the key
//!   the old incarnation is already gone, the way Pekko's split-brain resolver downs itself.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use etcd_client::{Client, ConnectOptions, GetOptions, PutOptions};
use serde::{Deserialize, Serialize};

/// Milliseconds on this process's monotonic clock (which runs on while the process is
/// stopped, so a paused process sees the pause when it wakes).
pub fn mono_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberInfo {
    pub node: String,
    pub region: String,
    /// The cluster address (`pekko://system@host:port`), unique per incarnation.
    pub address: String,
    /// Where the node's TCP listener is.
    pub listen: String,
}

#[derive(Debug, Clone, Default)]
pub struct View {
    /// Bumped by every successful poll, so a reader can wait for a view newer than an event.
    pub gen: u64,
    /// By region id: the member and its key's create revision.
    pub members: BTreeMap<String, (MemberInfo, i64)>,
}

pub struct Membership {
    view: Arc<Mutex<View>>,
    valid_until: Arc<AtomicU64>,
}

const POLL: Duration = Duration::from_millis(250);
const OP_TIMEOUT: Duration = Duration::from_millis(1_500);

pub fn connect(rt: &tokio::runtime::Runtime, endpoints: &[String]) -> Result<Client, String> {
    let options = ConnectOptions::new()
        .with_connect_timeout(OP_TIMEOUT)
        .with_timeout(OP_TIMEOUT);
    rt.block_on(Client::connect(endpoints, Some(options)))
        .map_err(|e| format!("etcd at {endpoints:?}: {e}"))
}

pub fn members_prefix(namespace: &str) -> String {
    format!("{}/members/", namespace.trim_end_matches('/'))
}

/// The members as etcd has them now.
pub async fn read_members(
    client: &mut Client,
    prefix: &str,
) -> Result<BTreeMap<String, (MemberInfo, i64)>, String> {
    let got = tokio::time::timeout(
        OP_TIMEOUT,
        client.get(prefix, Some(GetOptions::new().with_prefix())),
    )
    .await
    .map_err(|_| "membership read timed out".to_string())?
    .map_err(|e| e.to_string())?;
    let mut members = BTreeMap::new();
    for kv in got.kvs() {
        match serde_json::from_slice::<MemberInfo>(kv.value()) {
            Ok(m) => {
                members.insert(m.region.clone(), (m, kv.create_revision()));
            }
            Err(e) => eprintln!("membership: ignoring a malformed member record: {e}"),
        }
    }
    Ok(members)
}

impl Membership {
    /// Registers `me` and keeps it registered on a thread of its own (so a slow store or lease
    /// call on the node's main thread never delays a renewal). Returns once the key is in etcd.
    pub fn join(
        endpoints: Vec<String>,
        namespace: &str,
        me: MemberInfo,
        ttl_ms: u64,
    ) -> Result<Membership, String> {
        let view = Arc::new(Mutex::new(View::default()));
        let valid_until = Arc::new(AtomicU64::new(0));
        let (ready_tx, ready_rx) = mpsc::channel();
        let prefix = members_prefix(namespace);
        let (v, until) = (view.clone(), valid_until.clone());
        std::thread::Builder::new()
            .name("membership".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("cannot start a runtime: {e}")));
                        return;
                    }
                };
                let client = match connect(&rt, &endpoints) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let rotation = Rotation {
                    endpoints,
                    clients: Vec::new(),
                    at: 0,
                };
                rt.block_on(keep(
                    client, rotation, prefix, me, ttl_ms, v, until, ready_tx,
                ));
            })
            .map_err(|e| format!("cannot start the membership thread: {e}"))?;
        ready_rx
            .recv_timeout(Duration::from_secs(15))
            .map_err(|_| "could not join through etcd within 15 s".to_string())??;
        Ok(Membership { view, valid_until })
    }

    pub fn view(&self) -> View {
        self.view.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn gen(&self) -> u64 {
        self.view.lock().unwrap_or_else(|p| p.into_inner()).gen
    }

    /// The monotonic deadline after which this node may already be removed.
    pub fn valid_until(&self) -> u64 {
        self.valid_until.load(Ordering::SeqCst)
    }
}

/// The local deadline for a renewal sent at `sent` that etcd granted `ttl_s` seconds.
fn deadline(sent: u64, ttl_s: i64) -> u64 {
    let ttl = (ttl_s.max(0) as u64) * 1_000;
    let margin = (ttl / 10).clamp(500, 1_000);
    let drift = ttl / 100;
    sent + ttl.saturating_sub(margin + drift)
}

/// One client per etcd endpoint, used one at a time, moving on to the next after a failure. A
/// client over all endpoints keeps sending to a member that is cut off (its connection still
/// looks open) until the request times out, again and again; renewals must not wait on that.
struct Rotation {
    endpoints: Vec<String>,
    clients: Vec<Option<Client>>,
    at: usize,
}

impl Rotation {
    async fn client(&mut self) -> Option<Client> {
        if self.clients.len() != self.endpoints.len() {
            self.clients = vec![None; self.endpoints.len()];
        }
        if self.clients[self.at].is_none() {
            let options = ConnectOptions::new()
                .with_connect_timeout(OP_TIMEOUT)
                .with_timeout(OP_TIMEOUT);
            let ep = [self.endpoints[self.at].clone()];
            let connected = tokio::time::timeout(OP_TIMEOUT, Client::connect(ep, Some(options)));
            self.clients[self.at] = connected.await.ok().and_then(Result::ok);
            if self.clients[self.at].is_none() {
                self.next();
                return None;
            }
        }
        self.clients[self.at].clone()
    }

    fn next(&mut self) {
        self.at = (self.at + 1) % self.endpoints.len().max(1);
    }
}

#[allow(clippy::too_many_arguments)]
async fn keep(
    mut client: Client,
    mut rotation: Rotation,
    prefix: String,
    me: MemberInfo,
    ttl_ms: u64,
    view: Arc<Mutex<View>>,
    valid_until: Arc<AtomicU64>,
    ready: mpsc::Sender<Result<(), String>>,
) {
    let key = format!("{prefix}{}", me.region);
    let value = serde_json::to_vec(&me).expect("member info serializes");
    let ttl_s = ttl_ms.div_ceil(1_000).max(1) as i64;
    let sent = mono_ms();
    let registered = async {
        let lease = client
            .lease_grant(ttl_s, None)
            .await
            .map_err(|e| e.to_string())?;
        client
            .put(
                key.as_str(),
                value,
                Some(PutOptions::new().with_lease(lease.id())),
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(lease)
    };
    let lease = match tokio::time::timeout(OP_TIMEOUT * 2, registered).await {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => {
            let _ = ready.send(Err(format!("cannot register in etcd: {e}")));
            return;
        }
        Err(_) => {
            let _ = ready.send(Err("registering in etcd timed out".into()));
            return;
        }
    };
    valid_until.store(deadline(sent, lease.ttl()), Ordering::SeqCst);
    let id = lease.id();
    let renew_every = (ttl_ms / 5).max(200);
    let mut next_renew = mono_ms() + renew_every;
    let mut stream = None;
    let mut announced = false;
    let mut lost = false;
    loop {
        if !lost && mono_ms() >= next_renew {
            let sent = mono_ms();
            next_renew = sent + renew_every;
            if stream.is_none() {
                if let Some(mut c) = rotation.client().await {
                    stream = tokio::time::timeout(OP_TIMEOUT, c.lease_keep_alive(id))
                        .await
                        .ok()
                        .and_then(Result::ok);
                    if stream.is_none() {
                        rotation.next();
                    }
                }
            }
            if let Some((keeper, replies)) = stream.as_mut() {
                let reply = tokio::time::timeout(OP_TIMEOUT, async {
                    keeper.keep_alive().await?;
                    replies.message().await
                })
                .await;
                match reply {
                    Ok(Ok(Some(r))) if r.ttl() > 0 => {
                        valid_until.store(deadline(sent, r.ttl()), Ordering::SeqCst);
                    }
                    // The lease is gone: this incarnation is over; the deadline runs out.
                    Ok(Ok(_)) => lost = true,
                    _ => {
                        stream = None;
                        rotation.next();
                        // Try the next member at once rather than a renewal period later.
                        next_renew = mono_ms();
                    }
                }
            }
        }
        let read = match rotation.client().await {
            Some(mut c) => read_members(&mut c, &prefix).await,
            None => Err("no etcd member reachable".into()),
        };
        match read {
            Ok(members) => {
                let mut v = view.lock().unwrap_or_else(|p| p.into_inner());
                v.gen += 1;
                v.members = members;
                drop(v);
                if !announced {
                    announced = true;
                    let _ = ready.send(Ok(()));
                }
            }
            Err(_) => {
                rotation.next();
                stream = None;
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_deadline_ends_before_etcd_can_expire_the_key() {
        // 5 s granted: 500 ms margin and 50 ms for clock rate.
        assert_eq!(deadline(1_000, 5), 1_000 + 5_000 - 550);
        assert_eq!(deadline(1_000, 0), 1_000, "an ended lease gives no time");
    }
}
