//! The cluster view the Pekko-family strategies consult: members with status, app version,
//! data center and reachability, plus the coordinator's own (self) address.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use crate::model::Address;
use crate::model::Version;
use crate::{Error, Result};

/// Pekko `MemberStatus` (Removed members are simply absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum MemberStatus {
    Joining,
    WeaklyUp,
    Up,
    Leaving,
    Exiting,
    Down,
}

impl MemberStatus {
    pub const ALL: [MemberStatus; 6] = [
        MemberStatus::Joining,
        MemberStatus::WeaklyUp,
        MemberStatus::Up,
        MemberStatus::Leaving,
        MemberStatus::Exiting,
        MemberStatus::Down,
    ];
    /// Leaving, Exiting or Down: such regions sort last.
    pub fn is_leaving(self) -> bool {
        matches!(
            self,
            MemberStatus::Leaving | MemberStatus::Exiting | MemberStatus::Down
        )
    }
    pub fn as_str(self) -> &'static str {
        match self {
            MemberStatus::Joining => "Joining",
            MemberStatus::WeaklyUp => "WeaklyUp",
            MemberStatus::Up => "Up",
            MemberStatus::Leaving => "Leaving",
            MemberStatus::Exiting => "Exiting",
            MemberStatus::Down => "Down",
        }
    }
}

impl FromStr for MemberStatus {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        MemberStatus::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                "member status {s:?}: expected one of Joining, WeaklyUp, Up, Leaving, Exiting, Down"
            ))
            })
    }
}

impl fmt::Display for MemberStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub address: Address,
    pub status: MemberStatus,
    pub app_version: Version,
    pub data_center: String,
    /// Pekko `upNumber`: lower is older. Used by newer Akka's tie-break.
    pub up_number: i32,
}

impl Member {
    pub fn new(address: Address) -> Member {
        Member {
            address,
            status: MemberStatus::Up,
            app_version: Version::zero(),
            data_center: "default".into(),
            up_number: i32::MAX,
        }
    }
}

/// Members keyed by canonical address, the unreachable set, and the self address.
///
/// Keeps the counts `isAGoodTimeToRebalance` needs so that the check is O(1).
#[derive(Debug, Clone)]
pub struct ClusterView {
    self_address: Address,
    members: HashMap<String, Member>,
    unreachable: HashSet<String>,
    /// Self-DC members that are Joining or WeaklyUp.
    self_dc_joining: BTreeMap<String, ()>,
    /// Self-DC members that are unreachable.
    self_dc_unreachable: BTreeMap<String, ()>,
    self_dc: String,
}

impl ClusterView {
    pub fn new(self_address: Address) -> ClusterView {
        ClusterView {
            self_address,
            members: HashMap::new(),
            unreachable: HashSet::new(),
            self_dc_joining: BTreeMap::new(),
            self_dc_unreachable: BTreeMap::new(),
            self_dc: "default".into(),
        }
    }

    pub fn self_address(&self) -> &Address {
        &self.self_address
    }
    pub fn self_data_center(&self) -> &str {
        &self.self_dc
    }
    pub fn member(&self, address: &str) -> Option<&Member> {
        self.members.get(address)
    }
    pub fn members(&self) -> impl Iterator<Item = &Member> {
        self.members.values()
    }
    pub fn is_unreachable(&self, address: &str) -> bool {
        self.unreachable.contains(address)
    }

    /// Adds or replaces a member (matched by address).
    pub fn upsert_member(&mut self, member: Member) {
        let key = member.address.as_str().to_owned();
        self.members.insert(key.clone(), member);
        self.recount(&key);
    }

    pub fn remove_member(&mut self, address: &str) -> Option<Member> {
        let m = self.members.remove(address);
        self.unreachable.remove(address);
        self.recount(address);
        m
    }

    pub fn set_reachable(&mut self, address: &str, reachable: bool) {
        if reachable {
            self.unreachable.remove(address);
        } else {
            self.unreachable.insert(address.to_owned());
        }
        self.recount(address);
    }

    /// The self member's data center decides which members gate rebalancing.
    fn self_dc_of_members(&self) -> String {
        self.members
            .get(self.self_address.as_str())
            .map(|m| m.data_center.clone())
            .unwrap_or_else(|| "default".into())
    }

    fn recount(&mut self, address: &str) {
        let dc = self.self_dc_of_members();
        if dc != self.self_dc {
            self.self_dc = dc;
            self.self_dc_joining.clear();
            self.self_dc_unreachable.clear();
            let keys: Vec<String> = self.members.keys().cloned().collect();
            for k in keys {
                self.recount_one(&k);
            }
        } else {
            self.recount_one(address);
        }
    }

    fn recount_one(&mut self, address: &str) {
        self.self_dc_joining.remove(address);
        self.self_dc_unreachable.remove(address);
        if let Some(m) = self.members.get(address) {
            if m.data_center == self.self_dc {
                if matches!(m.status, MemberStatus::Joining | MemberStatus::WeaklyUp) {
                    self.self_dc_joining.insert(address.to_owned(), ());
                }
                if self.unreachable.contains(address) {
                    self.self_dc_unreachable.insert(address.to_owned(), ());
                }
            }
        }
    }

    /// Self-DC members that are unreachable, in address order (for explanations).
    pub fn unreachable_in_self_dc(&self) -> impl Iterator<Item = &str> {
        self.self_dc_unreachable.keys().map(String::as_str)
    }
    /// Self-DC members that are Joining or WeaklyUp, in address order.
    pub fn joining_in_self_dc(&self) -> impl Iterator<Item = &str> {
        self.self_dc_joining.keys().map(String::as_str)
    }
    pub fn has_unreachable_in_self_dc(&self) -> bool {
        !self.self_dc_unreachable.is_empty()
    }
    pub fn has_joining_in_self_dc(&self) -> bool {
        !self.self_dc_joining.is_empty()
    }
}
