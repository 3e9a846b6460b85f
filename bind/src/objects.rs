//! The records a binding's objects take and give as plain data: a cluster member, a region of
//! the allocation state, a coordinator's region assignment, a Snowflake layout and an id's
//! parts, a lease's holder.
//!
//! Their field names, defaults and checks live here once, as serde types, so every language
//! reads and shows them the same way through its one generic converter (a dict, a plain
//! object, a map) instead of walking each record by hand.

use serde::{Deserialize, Serialize};
use shardline_core::coordinator::PersistentState;
use shardline_core::model::Address;
use shardline_core::model::Version;
use shardline_core::model::{AllocationState, Region, ShardId};
use shardline_core::model::{Member, MemberStatus};
use shardline_core::strategy::{Allocation, Explanation};
use shardline_core::workerid::snowflake::{Layout, Parts};
use shardline_core::workerid::Claim;
use shardline_core::Result;

/// An address argument; `name` says which one in the error.
pub fn address(text: &str, name: &str) -> Result<Address> {
    Address::parse(text).map_err(|e| e.context(name))
}

/// `{address, status?, appVersion?, dataCenter?, upNumber?}`; left out: Up, version zero,
/// data center "default", the youngest up number.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberInit {
    pub address: String,
    pub status: Option<String>,
    pub app_version: Option<String>,
    pub data_center: Option<String>,
    pub up_number: Option<i32>,
}

impl MemberInit {
    /// The member; `name` prefixes the field an error is about ("members[2]").
    pub fn build(self, name: &str) -> Result<Member> {
        let mut m = Member::new(address(&self.address, &format!("{name}.address"))?);
        if let Some(s) = self.status {
            m.status = s
                .parse::<MemberStatus>()
                .map_err(|e| e.context(format!("{name}.status")))?;
        }
        if let Some(v) = self.app_version {
            m.app_version =
                Version::parse(&v).map_err(|e| e.context(format!("{name}.appVersion")))?;
        }
        if let Some(dc) = self.data_center {
            m.data_center = dc;
        }
        if let Some(n) = self.up_number {
            m.up_number = n;
        }
        Ok(m)
    }
}

/// A member as the host sees it (every field present).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberInfo<'a> {
    pub address: &'a str,
    pub status: &'static str,
    pub app_version: &'a str,
    pub data_center: &'a str,
    pub up_number: i32,
}

impl<'a> From<&'a Member> for MemberInfo<'a> {
    fn from(m: &'a Member) -> Self {
        MemberInfo {
            address: m.address.as_str(),
            status: m.status.as_str(),
            app_version: m.app_version.as_str(),
            data_center: &m.data_center,
            up_number: m.up_number,
        }
    }
}

/// The members of a state, sorted by address (the state keeps them unordered).
pub fn members(state: &AllocationState) -> Vec<MemberInfo<'_>> {
    let mut ms: Vec<MemberInfo<'_>> = state.cluster().members().map(MemberInfo::from).collect();
    ms.sort_by(|a, b| a.address.cmp(b.address));
    ms
}

/// A shard id argument: text, or a non-negative integer (JavaScript hosts number shards).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard(pub String);

impl<'de> Deserialize<'de> for Shard {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "a shard id (text or a non-negative integer)")]
        enum Either {
            Text(String),
            Number(u64),
        }
        Ok(Shard(match Either::deserialize(d)? {
            Either::Text(s) => s,
            Either::Number(n) => n.to_string(),
        }))
    }
}

impl std::ops::Deref for Shard {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// A region of the allocation state: its shards oldest first, the node it runs on, and the
/// status and version of the member on that node when the cluster view knows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegionInfo<'a> {
    pub id: &'a str,
    pub address: &'a str,
    pub node: &'a str,
    pub local: bool,
    pub eligible: bool,
    pub shards: Vec<&'a str>,
    pub status: Option<&'static str>,
    pub app_version: Option<&'a str>,
}

impl<'a> RegionInfo<'a> {
    pub fn of(state: &'a AllocationState, r: &'a Region) -> RegionInfo<'a> {
        let member = state.member_of(r);
        RegionInfo {
            id: r.id(),
            address: r.address().as_str(),
            node: state.node_of(r).as_str(),
            local: r.is_local(),
            eligible: r.is_eligible(),
            shards: r.shards().map(|s| &**s).collect(),
            status: member.map(|m| m.status.as_str()),
            app_version: member.map(|m| m.app_version.as_str()),
        }
    }

    /// Every region in map order (the order ties are broken by).
    pub fn all(state: &'a AllocationState) -> Vec<RegionInfo<'a>> {
        state.regions().map(|r| RegionInfo::of(state, r)).collect()
    }
}

/// A region as a coordinator has it registered: `{region, node, shards}`.
#[derive(Debug, Serialize)]
pub struct RegionAssignment<'a> {
    pub region: &'a str,
    pub node: &'a str,
    pub shards: Vec<&'a str>,
}

impl RegionAssignment<'_> {
    /// Every registered region, in registration order.
    pub fn all(state: &PersistentState) -> Vec<RegionAssignment<'_>> {
        state
            .regions()
            .map(|(region, node, shards)| RegionAssignment {
                region,
                node,
                shards: shards.map(|s| &**s).collect(),
            })
            .collect()
    }
}

/// An allocation with its explanation: `{region, explanation}`, the region null when the
/// strategy decides later.
#[derive(Debug, Serialize)]
pub struct ExplainedAllocation<'a> {
    pub region: Option<&'a str>,
    pub explanation: &'a Explanation,
}

impl<'a> ExplainedAllocation<'a> {
    pub fn new(a: &'a Allocation, explanation: &'a Explanation) -> Self {
        let region = match a {
            Allocation::Region(r) => Some(&**r),
            Allocation::Pending => None,
        };
        ExplainedAllocation {
            region,
            explanation,
        }
    }
}

/// A rebalance with its explanation: `{shards, explanation}`, shards in decision order.
#[derive(Debug, Serialize)]
pub struct ExplainedRebalance<'a> {
    pub shards: Vec<&'a str>,
    pub explanation: &'a Explanation,
}

impl<'a> ExplainedRebalance<'a> {
    pub fn new(shards: &'a [ShardId], explanation: &'a Explanation) -> Self {
        ExplainedRebalance {
            shards: shards.iter().map(|s| &**s).collect(),
            explanation,
        }
    }
}

/// A Snowflake layout: `{timestampBits = 41, workerBits = 10, sequenceBits = 12,
/// epochMs = 2024-01-01}`, checked when built.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LayoutSpec {
    pub timestamp_bits: u8,
    pub worker_bits: u8,
    pub sequence_bits: u8,
    pub epoch_ms: u64,
}

impl Default for LayoutSpec {
    fn default() -> Self {
        LayoutSpec::from(&Layout::default())
    }
}

impl From<&Layout> for LayoutSpec {
    fn from(l: &Layout) -> Self {
        LayoutSpec {
            timestamp_bits: l.timestamp_bits(),
            worker_bits: l.worker_bits(),
            sequence_bits: l.sequence_bits(),
            epoch_ms: l.epoch_ms(),
        }
    }
}

impl LayoutSpec {
    pub fn build(self) -> Result<Layout> {
        Layout::new(
            self.timestamp_bits,
            self.worker_bits,
            self.sequence_bits,
            self.epoch_ms,
        )
    }
}

/// An id taken apart: `{unixMs, worker, sequence}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnowflakeParts {
    pub unix_ms: u64,
    pub worker: u64,
    pub sequence: u64,
}

impl From<Parts> for SnowflakeParts {
    fn from(p: Parts) -> Self {
        SnowflakeParts {
            unix_ms: p.unix_ms,
            worker: p.worker,
            sequence: p.sequence,
        }
    }
}

/// A live worker-id claim: `{workerId, owner, incarnation, epoch}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerClaim {
    pub worker_id: u32,
    #[serde(flatten)]
    pub claim: Claim,
}

impl WorkerClaim {
    pub fn all(claims: Vec<(u32, Claim)>) -> Vec<WorkerClaim> {
        claims
            .into_iter()
            .map(|(worker_id, claim)| WorkerClaim { worker_id, claim })
            .collect()
    }
}

/// Who holds a lease, as its backend sees it.
#[derive(Debug, Serialize)]
pub struct LeaseHolder {
    pub owner: String,
    pub token: u64,
}

/// Options of an in-memory lease: both left out keeps the lease's own safety defaults; one
/// given takes the documented default for the other (ttl/10 capped at 1 s, 1000 ppm).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseOptions {
    pub margin_ms: Option<u64>,
    pub drift_ppm: Option<u64>,
}

impl LeaseOptions {
    /// The margin and drift to apply, or `None` to keep the lease's defaults.
    pub fn safety(&self, ttl_ms: u64) -> Option<(u64, u64)> {
        if self.margin_ms.is_none() && self.drift_ppm.is_none() {
            return None;
        }
        Some((
            self.margin_ms.unwrap_or((ttl_ms / 10).min(1_000)),
            self.drift_ppm.unwrap_or(1_000),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shardline_core::model::ClusterView;

    #[test]
    fn a_member_init_fills_defaults_and_names_the_bad_field() {
        let init = |status: Option<&str>| MemberInit {
            address: "pekko://s@h:1".into(),
            status: status.map(String::from),
            app_version: None,
            data_center: None,
            up_number: None,
        };
        let m = init(None).build("member").unwrap();
        assert_eq!(m.status, MemberStatus::Up);
        assert_eq!(m.data_center, "default");
        let e = init(Some("Sleepy")).build("members[3]").unwrap_err();
        assert!(e.to_string().contains("members[3].status"), "{e}");
    }

    #[test]
    fn layouts_default_per_field_and_are_checked() {
        let l = LayoutSpec {
            worker_bits: 8,
            ..LayoutSpec::default()
        };
        let built = l.build().unwrap();
        assert_eq!(built.worker_bits(), 8);
        assert_eq!(built.timestamp_bits(), 41);
        let too_wide = LayoutSpec {
            worker_bits: 60,
            ..l
        };
        assert!(too_wide.build().is_err());
    }

    #[test]
    fn regions_and_members_show_in_their_orders() {
        let mut s = AllocationState::new(ClusterView::new(address("pekko://s@h:1", "a").unwrap()));
        s.add_region("b", address("pekko://s@h:2", "a").unwrap(), false)
            .unwrap();
        s.add_region("a", address("pekko://s@h:1", "a").unwrap(), true)
            .unwrap();
        s.add_shard("b", "7").unwrap();
        let ids: Vec<_> = RegionInfo::all(&s).iter().map(|r| r.id).collect();
        assert_eq!(ids, ["b", "a"]);
        assert_eq!(RegionInfo::all(&s)[0].shards, ["7"]);
        let addrs: Vec<_> = members(&s).iter().map(|m| m.address).collect();
        assert!(addrs.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn lease_options_default_only_when_one_is_given() {
        assert_eq!(LeaseOptions::default().safety(30_000), None);
        let o = LeaseOptions {
            margin_ms: None,
            drift_ppm: Some(5),
        };
        assert_eq!(o.safety(5_000), Some((500, 5)));
    }
}
