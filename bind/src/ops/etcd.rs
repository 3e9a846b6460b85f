//! The operations of the etcd backends (`crate::etcd`): the connection's `namespace`, a
//! lease's `holder` and a driver's lease and store calls, so a host that drives its own
//! coordinator (Node's event-loop driver) calls etcd as the embedded drivers do.

use super::backends::{lease_calls, store_calls};
use super::{reply, Args, Reply};
use crate::etcd::{self, Etcd, EtcdLease, EtcdStore};

/// `namespace`.
pub fn connection(e: &Etcd, a: Args<'_>) -> Reply {
    match a.op() {
        "namespace" => reply(etcd::namespace(e)),
        _ => Err(a.unknown()),
    }
}

/// `holder` (`{owner, token}` as etcd has them now, or null), and
/// [`lease_calls`](super::backends::lease_calls).
pub fn lease(l: &mut EtcdLease, a: Args<'_>) -> Reply {
    match a.op() {
        "holder" => reply(&etcd::holder(l)?),
        _ => lease_calls(etcd::lease_mut(l), a),
    }
}

/// [`store_calls`](super::backends::store_calls).
pub fn store(s: &mut EtcdStore, a: Args<'_>) -> Reply {
    store_calls(etcd::store_mut(s), a)
}
