//! etcd as every binding exposes it: a connection (`Etcd(endpoints, namespace, timeout)`), the
//! coordinator lease and state store it hands out, and the worker-id registry a worker-id
//! holder reserves in.
//!
//! A lease or store object serves one driver: a driver that is given one takes its backend
//! (a [`Serving`]), so no second driver contends with the same etcd session and owner, and the
//! object then says so instead of answering.
//!
//! Without the cargo feature `etcd` the module keeps its shape, with types nothing can build:
//! a binding's classes and generated API are the same either way, and [`connect`] fails with
//! an error saying this build has no etcd. Building with it needs `protoc`.

use std::sync::{Mutex, PoisonError};

use serde::Deserialize;
use shardline_core::host::{Lease, Store};
use shardline_core::workerid::Registry;

use crate::objects::LeaseHolder;
use crate::Failure;

#[cfg(feature = "etcd")]
pub use shardline_etcd::{Etcd, EtcdLease, EtcdStore};

#[cfg(not(feature = "etcd"))]
pub use absent::{Etcd, EtcdLease, EtcdStore};

#[cfg(not(feature = "etcd"))]
mod absent {
    /// A build without etcd has no connection, so no lease or store either.
    #[derive(Debug)]
    pub enum Etcd {}
    #[derive(Debug)]
    pub enum EtcdLease {}
    #[derive(Debug)]
    pub enum EtcdStore {}
}

/// Per-request timeout unless given.
pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// The coordinator lease's time to live unless given.
pub const DEFAULT_LEASE_TTL_MS: u64 = 30_000;

/// Options of a connection (`{timeoutMs?}`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConnectOptions {
    pub timeout_ms: Option<u64>,
}

/// Options of a lease (`{ttlMs?}`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaseOptions {
    pub ttl_ms: Option<u64>,
}

/// Options of a store (`{boundToLease?}`): with a lease name, writes also require that lease
/// to still carry the writer's token.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StoreOptions {
    pub bound_to_lease: Option<String>,
}

fn positive(ms: u64, what: &str) -> Result<u64, Failure> {
    if ms == 0 {
        return Err(Failure::invalid_argument(format!(
            "{what} must be positive"
        )));
    }
    Ok(ms)
}

/// Connects to `endpoints` (e.g. `http://127.0.0.1:2379`); keys go under `namespace/`.
/// Blocks until connected or `timeout_ms` (default [`DEFAULT_TIMEOUT_MS`]) has passed.
pub fn connect(
    endpoints: &[String],
    namespace: &str,
    timeout_ms: Option<u64>,
) -> Result<Etcd, Failure> {
    let timeout = positive(timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS), "the etcd timeout")?;
    #[cfg(feature = "etcd")]
    {
        let timeout = std::time::Duration::from_millis(timeout);
        Ok(Etcd::connect_with_timeout(endpoints, namespace, timeout)?)
    }
    #[cfg(not(feature = "etcd"))]
    {
        let _ = (endpoints, namespace, timeout);
        Err(Failure::invalid_state(
            "this build of shardline has no etcd support (cargo feature `etcd`)",
        ))
    }
}

pub fn namespace(etcd: &Etcd) -> &str {
    #[cfg(feature = "etcd")]
    return etcd.namespace();
    #[cfg(not(feature = "etcd"))]
    match *etcd {}
}

/// The coordinator lease `name`, contended for as `owner`, for one driver.
pub fn lease(
    etcd: &Etcd,
    name: &str,
    owner: &str,
    ttl_ms: Option<u64>,
) -> Result<Serving<EtcdLease>, Failure> {
    let ttl = positive(ttl_ms.unwrap_or(DEFAULT_LEASE_TTL_MS), "the lease ttl")?;
    #[cfg(feature = "etcd")]
    return Ok(Serving::new("EtcdLease", etcd.lease(name, owner, ttl)));
    #[cfg(not(feature = "etcd"))]
    {
        let _ = (name, owner, ttl);
        match *etcd {}
    }
}

/// Coordinator state `name` for one driver; see [`StoreOptions`].
pub fn store(etcd: &Etcd, name: &str, bound_to_lease: Option<&str>) -> Serving<EtcdStore> {
    #[cfg(feature = "etcd")]
    return Serving::new(
        "EtcdStore",
        match bound_to_lease {
            Some(l) => etcd.store_bound_to_lease(name, l),
            None => etcd.store(name),
        },
    );
    #[cfg(not(feature = "etcd"))]
    {
        let _ = (name, bound_to_lease);
        match *etcd {}
    }
}

/// A worker-id registry session whose claims live `ttl_ms` unless kept alive.
pub fn registry(etcd: &Etcd, ttl_ms: u64) -> Box<dyn Registry + Send> {
    #[cfg(feature = "etcd")]
    return Box::new(etcd.registry(ttl_ms));
    #[cfg(not(feature = "etcd"))]
    {
        let _ = ttl_ms;
        match *etcd {}
    }
}

/// The lease's holder and token as etcd has them now.
pub fn holder(lease: &EtcdLease) -> Result<Option<LeaseHolder>, Failure> {
    #[cfg(feature = "etcd")]
    return Ok(lease
        .holder()?
        .map(|(owner, t)| LeaseHolder { owner, token: t.0 }));
    #[cfg(not(feature = "etcd"))]
    match *lease {}
}

/// The lease as a driver's.
pub fn as_lease(lease: EtcdLease) -> Box<dyn Lease + Send> {
    #[cfg(feature = "etcd")]
    return Box::new(lease);
    #[cfg(not(feature = "etcd"))]
    match lease {}
}

/// The lease behind `lease`, as [`as_lease`] gives it (for operations by name).
pub fn lease_mut(lease: &mut EtcdLease) -> &mut (dyn Lease + Send) {
    #[cfg(feature = "etcd")]
    return lease;
    #[cfg(not(feature = "etcd"))]
    match *lease {}
}

pub fn as_store(store: EtcdStore) -> Box<dyn Store + Send> {
    #[cfg(feature = "etcd")]
    return Box::new(store);
    #[cfg(not(feature = "etcd"))]
    match store {}
}

pub fn store_mut(store: &mut EtcdStore) -> &mut (dyn Store + Send) {
    #[cfg(feature = "etcd")]
    return store;
    #[cfg(not(feature = "etcd"))]
    match *store {}
}

/// A lease or store that serves at most one driver: the driver takes it, and the object
/// answers no more calls after that.
pub struct Serving<T> {
    kind: &'static str,
    slot: Mutex<Option<T>>,
}

impl<T> Serving<T> {
    /// `kind` is the class name the host sees, for errors.
    pub fn new(kind: &'static str, value: T) -> Serving<T> {
        Serving {
            kind,
            slot: Mutex::new(Some(value)),
        }
    }

    /// The backend, for a driver; a second driver is refused.
    pub fn take(&self) -> Result<T, Failure> {
        self.slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or_else(|| {
                Failure::invalid_state(format!("this {} already serves a driver", self.kind))
            })
    }

    /// Puts back a backend [`take`](Self::take) gave, for a driver that was not made after
    /// all (another of its arguments was refused), so the object serves the next one.
    pub fn give_back(&self, value: T) {
        self.slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(value);
    }

    /// Runs `f` on the backend while no driver has it. Calls wait for one another: the backend
    /// is one etcd session.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> Result<R, Failure>) -> Result<R, Failure> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        let backend = slot.as_mut().ok_or_else(|| {
            Failure::invalid_state(format!(
                "this {} serves a driver; ask etcd directly",
                self.kind
            ))
        })?;
        f(backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;

    #[test]
    fn a_backend_serves_one_driver() {
        let s = Serving::new("EtcdLease", 7);
        assert_eq!(s.with(|v| Ok(*v + 1)).unwrap(), 8);
        assert_eq!(s.take().unwrap(), 7);
        s.give_back(7);
        assert_eq!(s.take().unwrap(), 7);
        let e = s.take().unwrap_err();
        assert_eq!(e.status, Status::InvalidState);
        assert_eq!(e.message, "this EtcdLease already serves a driver");
        let e = s.with(|v| Ok(*v)).unwrap_err();
        assert_eq!(e.status, Status::InvalidState);
        assert_eq!(
            e.message,
            "this EtcdLease serves a driver; ask etcd directly"
        );
    }

    #[test]
    fn timeouts_and_ttls_are_positive() {
        let e = connect(&["http://127.0.0.1:1".into()], "ns", Some(0)).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert_eq!(e.message, "the etcd timeout must be positive");
    }

    #[cfg(not(feature = "etcd"))]
    #[test]
    fn without_the_feature_connecting_says_so() {
        let e = connect(&["http://127.0.0.1:1".into()], "ns", None).unwrap_err();
        assert_eq!(e.status, Status::InvalidState);
        assert!(e.message.contains("no etcd support"), "{}", e.message);
    }
}
