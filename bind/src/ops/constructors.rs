//! Constructors by their positional arguments: what `new ManualClock(nowMs?)`,
//! `new InMemoryLease(owner, ttlMs, options?)`, `new Snowflake(worker, options?)`, ... take,
//! read and checked here once, so a binding's constructor only hands its arguments over and
//! wraps what comes back. Errors name the class and argument (`InMemoryLease.new: owner is
//! required`), as the operations' do.

use serde::Deserialize;
use shardline_core::host::{InMemoryLease, InMemoryStore, ManualClock};

use super::Args;
use crate::etcd::{self, ConnectOptions, Etcd, EtcdLease, EtcdStore, Serving};
use crate::ids::Generator;
use crate::objects::{LayoutSpec, LeaseOptions};
use crate::Failure;

/// `(nowMs?)`: a clock at `nowMs` (default 0).
pub fn manual_clock(a: Args<'_>) -> Result<ManualClock, Failure> {
    Ok(ManualClock::new(a.opt(0, "nowMs")?.unwrap_or(0)))
}

/// `(owner, ttlMs, {marginMs?, driftPpm?}?)`: a lease nobody holds, contended for as `owner`.
pub fn in_memory_lease(a: Args<'_>) -> Result<InMemoryLease, Failure> {
    let owner: String = a.get(0, "owner")?;
    let ttl = a.get(1, "ttlMs")?;
    let lease = InMemoryLease::new(&owner, ttl);
    let options: LeaseOptions = a.opt(2, "options")?.unwrap_or_default();
    Ok(match options.safety(ttl) {
        Some((margin, drift)) => lease.with_safety(margin, drift),
        None => lease,
    })
}

/// `(state?)`: an empty store, or one holding `state` (another store's contents).
pub fn in_memory_store(a: Args<'_>) -> Result<InMemoryStore, Failure> {
    Ok(match a.opt(0, "state")? {
        Some(state) => InMemoryStore::from_state(state),
        None => InMemoryStore::new(),
    })
}

/// The options of a Snowflake generator: its layout, and the timestamps a previous holder of
/// the worker id may have used (given, the generator is fenced above them).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnowflakeOptions {
    layout: Option<LayoutSpec>,
    floor_ms: Option<u64>,
}

/// `(worker, {layout?, floorMs?}?)`.
pub fn snowflake(a: Args<'_>) -> Result<Generator, Failure> {
    let worker = a.get(0, "worker")?;
    let o: SnowflakeOptions = a.opt(1, "options")?.unwrap_or_default();
    let layout = o.layout.unwrap_or_default().build()?;
    Generator::new(layout, worker, o.floor_ms.is_some(), o.floor_ms)
}

/// `(endpoints, namespace, {timeoutMs?}?)`: a connection (blocks until connected).
pub fn etcd(a: Args<'_>) -> Result<Etcd, Failure> {
    let endpoints: Vec<String> = a.get(0, "endpoints")?;
    let namespace: String = a.get(1, "namespace")?;
    let o: ConnectOptions = a.opt(2, "options")?.unwrap_or_default();
    etcd::connect(&endpoints, &namespace, o.timeout_ms)
}

/// `lease(name, owner, {ttlMs?}?)` of a connection.
pub fn etcd_lease(e: &Etcd, a: Args<'_>) -> Result<Serving<EtcdLease>, Failure> {
    let (name, owner): (String, String) = (a.get(0, "name")?, a.get(1, "owner")?);
    let o: etcd::LeaseOptions = a.opt(2, "options")?.unwrap_or_default();
    etcd::lease(e, &name, &owner, o.ttl_ms)
}

/// `store(name, {boundToLease?}?)` of a connection.
pub fn etcd_store(e: &Etcd, a: Args<'_>) -> Result<Serving<EtcdStore>, Failure> {
    let name: String = a.get(0, "name")?;
    let o: etcd::StoreOptions = a.opt(1, "options")?.unwrap_or_default();
    Ok(etcd::store(e, &name, o.bound_to_lease.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Tree;
    use crate::Status;
    use shardline_core::host::Clock;

    fn int(n: u64) -> Tree {
        Tree::Integer(n.into())
    }

    fn map(entries: &[(&str, Tree)]) -> Tree {
        Tree::Map(
            entries
                .iter()
                .map(|(k, v)| (Tree::Text((*k).into()), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn arguments_left_out_take_their_defaults() {
        let c = manual_clock(Args::new("ManualClock", "new", &[])).unwrap();
        assert_eq!(c.now_ms(), 0);
        let c = manual_clock(Args::new("ManualClock", "new", &[int(7)])).unwrap();
        assert_eq!(c.now_ms(), 7);
        let s = in_memory_store(Args::new("InMemoryStore", "new", &[Tree::Null])).unwrap();
        assert_eq!(s.highest_token().0, 0);
        let mut g = snowflake(Args::new("Snowflake", "new", &[int(3)])).unwrap();
        assert_eq!(g.snowflake.worker(), 3);
        // Unfenced: it issues at once (the default epoch is 2024-01-01).
        assert!(g.next(1_800_000_000_000).unwrap().is_some());
    }

    #[test]
    fn bad_arguments_name_the_class_and_argument() {
        let e = in_memory_lease(Args::new("InMemoryLease", "new", &[])).unwrap_err();
        assert_eq!(e.status, Status::NullPointer);
        assert_eq!(e.message, "InMemoryLease.new: owner is required");
        let args = [Tree::Text("a".into()), Tree::Text("soon".into())];
        let e = in_memory_lease(Args::new("InMemoryLease", "new", &args)).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(
            e.message.starts_with("InMemoryLease.new: ttlMs "),
            "{}",
            e.message
        );
        let layout = map(&[("layout", map(&[("workerBits", int(99))]))]);
        let e = snowflake(Args::new("Snowflake", "new", &[int(1), layout])).err();
        assert_eq!(e.map(|e| e.status), Some(Status::InvalidArgument));
    }

    #[test]
    fn lease_options_set_its_safety() {
        let args = [
            Tree::Text("a".into()),
            int(10_000),
            map(&[("marginMs", int(0))]),
        ];
        let l = in_memory_lease(Args::new("InMemoryLease", "new", &args)).unwrap();
        let mut l2 = l.clone();
        let grant = shardline_core::host::Lease::acquire(&mut l2, 0)
            .unwrap()
            .unwrap();
        // No margin: only the 1000 ppm drift shortens the deadline.
        assert_eq!(grant.valid_until_ms, 9_990);
    }
}
