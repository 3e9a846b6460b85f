//! etcd backends for shardline, behind the core's host traits:
//!
//! * [`EtcdRegistry`]: worker-id [`Registry`](shardline_core::workerid::Registry), one etcd
//!   lease per session; exclusive create is a transaction on `create_revision == 0` that also
//!   writes the id's fence, so claim and fence never disagree;
//! * [`EtcdLease`]: the coordinator [`Lease`](shardline_core::host::Lease); the fencing token
//!   is the lease key's `mod_revision`, which grows with every acquisition, including a
//!   re-acquisition by the same owner;
//! * [`EtcdStore`]: the coordinator [`Store`](shardline_core::host::Store); every write and
//!   every load is one transaction guarded by the token (and, when bound to a lease, by the
//!   lease key still carrying that token).
//!
//! The traits are synchronous; each [`Etcd`] owns a single-threaded tokio runtime and blocks
//! on it, with a timeout on every request. A timeout is reported as ambiguous: the request
//! may have been applied.

mod lease;
mod registry;
mod session;
mod store;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Client, ConnectOptions};
use shardline_core::Error;

pub use lease::EtcdLease;
pub use registry::EtcdRegistry;
pub use store::EtcdStore;

/// Per-request timeout unless configured otherwise.
pub const DEFAULT_OPERATION_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection to an etcd cluster under one key namespace. Cheap to clone; clones share the
/// connection and the runtime.
#[derive(Clone)]
pub struct Etcd {
    runtime: Arc<tokio::runtime::Runtime>,
    client: Client,
    namespace: String,
    timeout: Duration,
}

impl std::fmt::Debug for Etcd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Etcd")
            .field("namespace", &self.namespace)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Why an etcd request did not give an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failed {
    /// No answer in time: the request may have been applied.
    TimedOut,
    /// The client or server reported an error.
    Error(String),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::TimedOut => f.write_str("etcd request timed out"),
            Failed::Error(m) => write!(f, "etcd: {m}"),
        }
    }
}

impl Etcd {
    /// Connects to `endpoints` (e.g. `http://127.0.0.1:2379`); keys go under `namespace/`.
    pub fn connect(endpoints: &[String], namespace: &str) -> Result<Etcd, Error> {
        Etcd::connect_with_timeout(endpoints, namespace, DEFAULT_OPERATION_TIMEOUT)
    }

    pub fn connect_with_timeout(
        endpoints: &[String],
        namespace: &str,
        timeout: Duration,
    ) -> Result<Etcd, Error> {
        if endpoints.is_empty() {
            return Err(Error::invalid_argument("no etcd endpoints given"));
        }
        let namespace = namespace.trim_end_matches('/');
        if namespace.is_empty() {
            return Err(Error::invalid_argument(
                "the etcd namespace must not be empty",
            ));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::invalid_state(format!("cannot start the etcd runtime: {e}")))?;
        let options = ConnectOptions::new()
            .with_connect_timeout(timeout)
            .with_timeout(timeout);
        let client = runtime
            .block_on(async {
                tokio::time::timeout(timeout, Client::connect(endpoints, Some(options))).await
            })
            .map_err(|_| Error::invalid_state(format!("etcd at {endpoints:?}: connect timed out")))?
            .map_err(|e| Error::invalid_state(format!("etcd at {endpoints:?}: {e}")))?;
        Ok(Etcd {
            runtime: Arc::new(runtime),
            client,
            namespace: namespace.to_owned(),
            timeout,
        })
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// A worker-id registry session whose claims live `ttl_ms` (rounded up to whole seconds,
    /// etcd's lease granularity) unless kept alive.
    pub fn registry(&self, ttl_ms: u64) -> EtcdRegistry {
        EtcdRegistry::new(self.clone(), ttl_ms)
    }

    /// The coordinator lease `name`, contended for as `owner`.
    pub fn lease(&self, name: &str, owner: &str, ttl_ms: u64) -> EtcdLease {
        EtcdLease::new(self.clone(), name, owner, ttl_ms)
    }

    /// Coordinator state `name`, guarded by tokens only.
    pub fn store(&self, name: &str) -> EtcdStore {
        EtcdStore::new(self.clone(), name, None)
    }

    /// Coordinator state `name`, whose writes also require the lease `lease_name` to still
    /// carry the writer's token: a coordinator whose lease lapsed is refused even before a
    /// successor has loaded.
    pub fn store_bound_to_lease(&self, name: &str, lease_name: &str) -> EtcdStore {
        EtcdStore::new(self.clone(), name, Some(self.lease_key(lease_name)))
    }

    pub(crate) fn key(&self, rest: &str) -> String {
        format!("{}/{rest}", self.namespace)
    }

    pub(crate) fn lease_key(&self, name: &str) -> String {
        self.key(&format!("lease/{name}"))
    }

    pub(crate) fn client(&self) -> Client {
        self.client.clone()
    }

    /// Runs one request to completion or timeout.
    pub(crate) fn run<T, F>(&self, request: F) -> Result<T, Failed>
    where
        F: Future<Output = Result<T, etcd_client::Error>>,
    {
        self.runtime
            .block_on(async { tokio::time::timeout(self.timeout, request).await })
            .map_err(|_| Failed::TimedOut)?
            .map_err(|e| Failed::Error(e.to_string()))
    }
}

/// etcd revisions are positive `i64`s; the core's versions and tokens are `u64`.
pub(crate) fn revision(r: i64) -> u64 {
    u64::try_from(r).unwrap_or(0)
}
