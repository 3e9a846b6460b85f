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

/// Decides conformance vectors: one (a dict, or JSON text) gives one result dict in the
/// vector's `expect` shape; a list gives a list.
#[pyfunction]
#[pyo3(signature = (vector, explain = false))]
fn decide<'py>(
    py: Python<'py>,
    vector: &Bound<'py, PyAny>,
    explain: bool,
) -> PyResult<Bound<'py, PyAny>> {
    errors::guard(|| {
        let doc = values::document(vector)?;
        let out = shardline_core::decide::decide(&doc, explain).map_err(errors::core_err)?;
        values::to_py(py, &out)
    })
}

/// Replays a state-machine trace (tests/traces/README.md) on fresh machines:
/// `{"steps": N, "mismatches": M, "first": None | {...}}`.
#[pyfunction]
fn replay<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    errors::guard(|| {
        let out = shardline_core::replay::replay(text).map_err(errors::core_err)?;
        values::to_py(py, &out)
    })
}

/// An envelope (dict) as JSON text for the wire; payloads travel as base64 text.
#[pyfunction]
fn encode_envelope(envelope: &Bound<'_, PyAny>) -> PyResult<String> {
    let env: shardline_core::protocol::Envelope = values::from_py(envelope, "envelope")?;
    serde_json::to_string(&env).map_err(|e| errors::InternalError::new_err(e.to_string()))
}

/// The inverse of `encode_envelope` (also accepts bytes).
#[pyfunction]
fn decode_envelope<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let text: String = match data.extract::<&[u8]>() {
        Ok(b) => String::from_utf8(b.to_vec())
            .map_err(|e| errors::invalid_argument(format!("envelope is not UTF-8: {e}")))?,
        Err(_) => data.extract()?,
    };
    let env: shardline_core::protocol::Envelope = serde_json::from_str(&text)
        .map_err(|e| errors::invalid_argument(format!("envelope: {e}")))?;
    values::to_py(py, &env)
}

/// Test hook: panics inside the panic boundary, to show that a Rust panic arrives as
/// `PanicError`.
#[pyfunction]
fn _panic_for_test() -> PyResult<()> {
    errors::guard(|| panic!("deliberate panic for a test"))
}

#[pymodule(gil_used = false)]
mod _native {
    #[pymodule_export]
    use super::backends::{PyInMemoryLease, PyInMemoryStore, PyManualClock};
    #[pymodule_export]
    use super::coordinator::PyCoordinator;
    #[pymodule_export]
    use super::driver::{PyCoordinatorDriver, PyRegionDriver};
    #[pymodule_export]
    use super::hashing::{
        actor_ts_shard_id, java_string_hash, murmur_string_hash, murmur_vnode_hash, pekko_shard_id,
        ConsistentHashRing,
    };
    #[pymodule_export]
    use super::ids::{PyLayout, PySnowflake, PyWorkerIdHolder, PyWorkerIdRegistry};
    #[pymodule_export]
    use super::pipeline::PyCoordinatorPipeline;
    #[pymodule_export]
    use super::region::PyRegion;
    #[pymodule_export]
    use super::state::{PyAllocationState, RegionInfo};
    #[pymodule_export]
    use super::strategy::PyStrategy;
    #[pymodule_export]
    use super::{_panic_for_test, decide, decode_envelope, encode_envelope, replay};

    #[pymodule_export]
    const VERSION: &str = shardline_core::VERSION;

    /// Whether this build has the etcd backends (`Etcd`, `EtcdLease`, `EtcdStore`).
    #[pymodule_export]
    const HAS_ETCD: bool = cfg!(feature = "etcd");

    #[cfg(feature = "etcd")]
    #[pymodule_export]
    use super::etcd::{PyEtcd, PyEtcdLease, PyEtcdStore};
}
