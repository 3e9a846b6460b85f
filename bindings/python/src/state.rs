//! `AllocationState`: the allocation map plus cluster view the strategies read. Either owned
//! by Python, or a read-only view lent to a custom strategy's callback for its duration.

use pyo3::prelude::*;
use shardline_core::model::Address;
use shardline_core::model::Version;
use shardline_core::model::{AllocationState, Region};
use shardline_core::model::{ClusterView, Member, MemberStatus};
use shardline_core::strategy::{rank, AkkaOptions};

use crate::busy::park;
use crate::errors::{failure_err, invalid_state, OrRaise};
use shardline_bind::host_state::HostState;

/// The allocation map (regions in map order, each with its shards oldest first) and the
/// cluster membership that strategies decide on.
#[pyclass(name = "AllocationState", module = "shardline._native", frozen)]
pub struct PyAllocationState {
    state: HostState,
}

impl PyAllocationState {
    pub fn owned(state: AllocationState) -> PyAllocationState {
        PyAllocationState {
            state: HostState::owned("AllocationState", state),
        }
    }

    /// A view of `state` for a callback.
    ///
    /// # Safety
    /// As `HostState::lend`: `end_view` before the borrow of `state` ends.
    pub unsafe fn lend(state: &AllocationState) -> PyAllocationState {
        PyAllocationState {
            // SAFETY: passed on to our caller.
            state: unsafe { HostState::lend(state) },
        }
    }

    pub fn end_view(&self) {
        self.state.end_view()
    }

    /// Runs `f` on the state; strategies (which may call Python) can run here.
    pub fn read<R>(&self, py: Python<'_>, f: impl FnOnce(&AllocationState) -> R) -> PyResult<R> {
        self.state.read(park(py), f).map_err(failure_err)
    }

    fn write<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut AllocationState) -> shardline_core::Result<R>,
    ) -> PyResult<R> {
        self.state.write(park(py), f).map_err(failure_err)
    }
}

pub fn parse_address(s: &str) -> PyResult<Address> {
    Address::parse(s).or_raise()
}

pub fn member(
    address: &str,
    status: &str,
    app_version: &str,
    data_center: &str,
    up_number: Option<i32>,
) -> PyResult<Member> {
    let mut m = Member::new(parse_address(address)?);
    m.status = status.parse::<MemberStatus>().or_raise()?;
    m.app_version = Version::parse(app_version).or_raise()?;
    m.data_center = data_center.to_owned();
    if let Some(n) = up_number {
        m.up_number = n;
    }
    Ok(m)
}

/// One region as the strategies see it.
#[pyclass(name = "RegionInfo", module = "shardline._native", frozen, get_all)]
#[derive(Clone)]
pub struct RegionInfo {
    id: String,
    /// The region's own address.
    address: String,
    /// The node it runs on (the self address for a local region).
    node: String,
    local: bool,
    eligible: bool,
    /// Oldest first.
    shards: Vec<String>,
    /// Of the member on `node`, when the cluster view knows it.
    status: Option<String>,
    app_version: Option<String>,
}

#[pymethods]
impl RegionInfo {
    #[getter]
    fn shard_count(&self) -> usize {
        self.shards.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "RegionInfo(id={:?}, node={:?}, shards={}, eligible={})",
            self.id,
            self.node,
            self.shards.len(),
            if self.eligible { "True" } else { "False" }
        )
    }
}

fn info(state: &AllocationState, r: &Region) -> RegionInfo {
    let m = state.member_of(r);
    RegionInfo {
        id: r.id().to_string(),
        address: r.address().to_string(),
        node: state.node_of(r).to_string(),
        local: r.is_local(),
        eligible: r.is_eligible(),
        shards: r.shards().map(|s| s.to_string()).collect(),
        status: m.map(|m| m.status.to_string()),
        app_version: m.map(|m| m.app_version.to_string()),
    }
}

#[pymethods]
impl PyAllocationState {
    /// `self_address`: the node deciding (Pekko's self address; local regions resolve to it).
    #[new]
    #[pyo3(signature = (self_address = "shardline://self"))]
    fn new(self_address: &str) -> PyResult<Self> {
        Ok(Self::owned(AllocationState::new(ClusterView::new(
            parse_address(self_address)?,
        ))))
    }

    #[getter]
    fn is_view(&self) -> bool {
        self.state.is_view()
    }

    #[pyo3(signature = (address, status = "Up", app_version = "0.0.0", data_center = "default", up_number = None))]
    fn add_member(
        &self,
        py: Python<'_>,
        address: &str,
        status: &str,
        app_version: &str,
        data_center: &str,
        up_number: Option<i32>,
    ) -> PyResult<()> {
        let m = member(address, status, app_version, data_center, up_number)?;
        self.write(py, |s| {
            s.upsert_member(m);
            Ok(())
        })
    }

    /// True if the member was known.
    fn remove_member(&self, py: Python<'_>, address: &str) -> PyResult<bool> {
        self.write(py, |s| Ok(s.remove_member(address).is_some()))
    }

    fn set_reachable(&self, py: Python<'_>, address: &str, reachable: bool) -> PyResult<()> {
        self.write(py, |s| {
            s.set_reachable(address, reachable);
            Ok(())
        })
    }

    /// Registers a region at the end of map order (the order ties are broken by).
    #[pyo3(signature = (region, address, local = false))]
    fn add_region(&self, py: Python<'_>, region: &str, address: &str, local: bool) -> PyResult<()> {
        let a = parse_address(address)?;
        self.write(py, |s| s.add_region(region, a, local))
    }

    /// Removes a region; returns its shards (now unallocated), oldest first.
    fn remove_region(&self, py: Python<'_>, region: &str) -> PyResult<Vec<String>> {
        self.write(py, |s| {
            Ok(s.remove_region(region)?
                .iter()
                .map(|x| x.to_string())
                .collect())
        })
    }

    fn set_eligible(&self, py: Python<'_>, region: &str, eligible: bool) -> PyResult<()> {
        self.write(py, |s| s.set_eligible(region, eligible))
    }

    fn add_shard(&self, py: Python<'_>, region: &str, shard: &str) -> PyResult<()> {
        self.write(py, |s| s.add_shard(region, shard))
    }

    /// Deallocates a shard; returns the region that held it.
    fn remove_shard(&self, py: Python<'_>, shard: &str) -> PyResult<String> {
        self.write(py, |s| s.remove_shard(shard).map(|r| r.to_string()))
    }

    #[getter]
    fn self_address(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, |s| s.cluster().self_address().to_string())
    }

    /// Regions in map order.
    fn regions(&self, py: Python<'_>) -> PyResult<Vec<RegionInfo>> {
        self.read(py, |s| s.regions().map(|r| info(s, r)).collect())
    }

    fn region(&self, py: Python<'_>, region: &str) -> PyResult<Option<RegionInfo>> {
        self.read(py, |s| s.region(region).map(|r| info(s, r)))
    }

    fn home_of(&self, py: Python<'_>, shard: &str) -> PyResult<Option<String>> {
        self.read(py, |s| s.home_of(shard).map(|r| r.id().to_string()))
    }

    #[getter]
    fn region_count(&self, py: Python<'_>) -> PyResult<usize> {
        self.read(py, |s| s.region_count())
    }

    #[getter]
    fn shard_count(&self, py: Python<'_>) -> PyResult<usize> {
        self.read(py, |s| s.shard_count())
    }

    /// `(status, app_version, data_center, up_number)` of a member, or None.
    fn member(
        &self,
        py: Python<'_>,
        address: &str,
    ) -> PyResult<Option<(String, String, String, i32)>> {
        self.read(py, |s| {
            s.cluster().member(address).map(|m| {
                (
                    m.status.to_string(),
                    m.app_version.to_string(),
                    m.data_center.clone(),
                    m.up_number,
                )
            })
        })
    }

    fn is_unreachable(&self, py: Python<'_>, address: &str) -> PyResult<bool> {
        self.read(py, |s| s.cluster().is_unreachable(address))
    }

    /// Region ids in Pekko's `ShardSuitabilityOrdering` (best home first); raises
    /// InvalidStateError where Pekko's sort would throw.
    #[pyo3(signature = (tie_break_by_age = false))]
    fn rank(&self, py: Python<'_>, tie_break_by_age: bool) -> PyResult<Vec<String>> {
        let akka = AkkaOptions {
            tie_break_by_age,
            ..Default::default()
        };
        self.read(py, |s| rank(s, akka))?
            .map(|v| v.iter().map(|r| r.to_string()).collect())
            .ok_or_else(|| {
                invalid_state("the region ordering is inconsistent (Pekko's sort would throw)")
            })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let view = self.is_view();
        match self.read(py, |s| (s.region_count(), s.shard_count())) {
            Ok((r, n)) => Ok(format!(
                "AllocationState(regions={r}, shards={n}{})",
                if view { ", view" } else { "" }
            )),
            Err(_) => Ok("AllocationState(<unavailable>)".into()),
        }
    }
}
