//! `shardline._native`: the Python binding of shardline-core. The public, documented API is
//! the `shardline` package, which re-exports these names; see its `_native.pyi`.
//!
//! Thread safety: every object may be shared between threads. Calls on one object run one at
//! a time (others wait with the GIL released); a callback that re-enters the object running
//! it gets `ReentrantCallError` instead of a deadlock (see `busy`).

mod backends;
mod busy;
mod coordinator;
mod driver;
mod envelope;
mod errors;
#[cfg(feature = "etcd")]
mod etcd;
mod hashing;
mod host;
mod ids;
mod ops;
mod pipeline;
mod region;
mod state;
mod strategy;
mod values;

use pyo3::prelude::*;

/// Test hook: panics inside the panic boundary, to show that a Rust panic arrives as
/// `PanicError`.
#[pyfunction]
fn _panic_for_test() -> PyResult<()> {
    errors::guard(|| panic!("deliberate panic for a test"))
}

#[pymodule(gil_used = false)]
mod _native {
    #[pymodule_export]
    use super::_panic_for_test;
    #[pymodule_export]
    use super::backends::{PyInMemoryLease, PyInMemoryStore, PyManualClock};
    #[pymodule_export]
    use super::coordinator::PyCoordinator;
    #[pymodule_export]
    use super::driver::{PyCoordinatorDriver, PyRegionDriver};
    #[pymodule_export]
    use super::hashing::{_op, ConsistentHashRing};
    #[pymodule_export]
    use super::ids::{PyLayout, PySnowflake, PyWorkerIdHolder, PyWorkerIdRegistry};
    #[pymodule_export]
    use super::pipeline::PyCoordinatorPipeline;
    #[pymodule_export]
    use super::region::PyRegion;
    #[pymodule_export]
    use super::state::PyAllocationState;
    #[pymodule_export]
    use super::strategy::PyStrategy;

    #[pymodule_export]
    const VERSION: &str = shardline_core::VERSION;

    /// Whether this build has the etcd backends (`Etcd`, `EtcdLease`, `EtcdStore`).
    #[pymodule_export]
    const HAS_ETCD: bool = cfg!(feature = "etcd");

    #[cfg(feature = "etcd")]
    #[pymodule_export]
    use super::etcd::{PyEtcd, PyEtcdLease, PyEtcdStore};
}
