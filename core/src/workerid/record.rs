//! What a registry stores per worker id: a live claim (ephemeral, bound to the holder's
//! session) and a fence (persistent). Both are written in one atomic operation on
//! acquisition, so no reader ever sees one without the other (workerid-lease.md §1.11).

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Who is asking: a stable owner name (host, pod) and an incarnation that is new on every
/// process start, so a restarted process never mistakes its predecessor's claim for its own.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub owner: String,
    pub incarnation: u64,
}

/// The reservation record of one worker id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    pub owner: String,
    pub incarnation: u64,
    /// Grows on every acquisition of this worker id, by anyone.
    pub epoch: u64,
}

impl Claim {
    pub fn is_from(&self, who: &Identity) -> bool {
        self.owner == who.owner && self.incarnation == who.incarnation
    }
}

/// The persistent time fence of one worker id (§4.3). Survives the claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fence {
    /// Epoch of the latest acquisition.
    pub epoch: u64,
    /// The highest timestamp any holder before that acquisition could have used: the current
    /// holder stamps only above it.
    pub floor_ms: u64,
    /// The highest timestamp the current holder may use (its acknowledged budget).
    pub hwm_ms: u64,
}

/// Backend version of a fence, compared on every fence write. `Version::ABSENT` stands for
/// "no fence yet".
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Version(pub u64);

impl Version {
    pub const ABSENT: Version = Version(0);
}

/// One worker id as read from the registry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Slot {
    pub id: u32,
    /// The live claim, if any.
    pub claim: Option<Claim>,
    pub fence: Option<(Fence, Version)>,
}

impl Slot {
    pub fn empty(id: u32) -> Slot {
        Slot {
            id,
            ..Slot::default()
        }
    }

    pub fn fence_version(&self) -> Version {
        self.fence.map_or(Version::ABSENT, |(_, v)| v)
    }
}

/// Every worker id that has a live claim or a fence, by ascending id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listing {
    pub slots: Vec<Slot>,
}

impl Listing {
    pub fn slot(&self, id: u32) -> Option<&Slot> {
        self.slots
            .binary_search_by_key(&id, |s| s.id)
            .ok()
            .map(|i| &self.slots[i])
    }

    pub fn live(&self) -> impl Iterator<Item = (u32, &Claim)> {
        self.slots
            .iter()
            .filter_map(|s| s.claim.as_ref().map(|c| (s.id, c)))
    }
}

/// Backends store records as JSON so operators can read them with the backend's own tools.
pub fn encode<T: Serialize>(record: &T) -> Vec<u8> {
    serde_json::to_vec(record).expect("claims and fences always serialize")
}

pub fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8], what: &str) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| Error::invalid_state(format!("unreadable {what} record: {e}")))
}
