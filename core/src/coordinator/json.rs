//! The coordinator's inputs as JSON documents (`crate::protocol::json` describes the form),
//! and the names hosts see for its phases.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{CoordinatorInput, LeaseGrant, Phase, StoredState};
use crate::protocol::json::{
    from_str, from_value, need, no_more, object_text, object_value, opt_address, MemberDoc,
    MemberOut,
};
use crate::protocol::{Envelope, FencingToken, RegionId};
use crate::Result;

/// Serde adapters for the outputs that carry another tagged value (see
/// `crate::protocol::nested_field`).
pub(crate) mod nested {
    crate::protocol::nested_field!(lease_request, "request", crate::coordinator::LeaseRequest);
    crate::protocol::nested_field!(notice, "notice", crate::coordinator::CoordinatorNotice);
}

impl CoordinatorInput {
    /// A coordinator input from JSON text (see [`from_str`] for the errors).
    pub fn from_json(text: &str, name: &str) -> Result<CoordinatorInput> {
        object_text(text, name)?;
        from_str(text, name)
    }

    /// A coordinator input from a JSON value.
    pub fn from_json_value(value: &Value, name: &str) -> Result<CoordinatorInput> {
        object_value(value, name)?;
        from_value(value, name)
    }
}

/// The name hosts see for a coordinator phase.
pub fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Idle => "idle",
        Phase::AcquiringLease => "acquiringLease",
        Phase::Loading => "loading",
        Phase::Active => "active",
        Phase::Stopped => "stopped",
    }
}

// ---- coordinator inputs ---------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum InputKind {
    Receive,
    Member,
    MemberRemoved,
    Reachability,
    RegionTerminated,
    LeaseGranted,
    LeaseDenied,
    LeaseRenewed,
    LeaseRenewFailed,
    LeaseLost,
    StateLoaded,
    StateLoadFailed,
    StoreFailed,
    PreparingForShutdown,
    Stop,
    Drain,
    Undrain,
}

/// Every field of every coordinator input; `type` says which belong. The big, rare ones are
/// boxed: serde builds the document on the stack and moves it, and keeping it small is most of
/// the cost of reading a `receive`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct InputDoc {
    #[serde(rename = "type")]
    kind: InputKind,
    envelope: Option<Envelope>,
    member: Option<Box<MemberDoc>>,
    #[serde(default, deserialize_with = "opt_address")]
    address: Option<String>,
    reachable: Option<bool>,
    region: Option<RegionId>,
    token: Option<FencingToken>,
    valid_until_ms: Option<u64>,
    state: Option<Box<StoredState>>,
    fenced: Option<bool>,
}

impl InputDoc {
    fn into_input<E: serde::de::Error>(mut self) -> Result<CoordinatorInput, E> {
        use InputKind as K;
        let k = COORDINATOR_KINDS[self.kind as usize];
        let input = match self.kind {
            K::Receive => CoordinatorInput::Receive(need(&mut self.envelope, "envelope", k)?),
            K::Member => {
                CoordinatorInput::Member(Box::new((*need(&mut self.member, "member", k)?).into()))
            }
            K::MemberRemoved => CoordinatorInput::MemberRemoved {
                address: need(&mut self.address, "address", k)?,
            },
            K::Reachability => CoordinatorInput::Reachability {
                address: need(&mut self.address, "address", k)?,
                reachable: need(&mut self.reachable, "reachable", k)?,
            },
            K::RegionTerminated => CoordinatorInput::RegionTerminated {
                region: need(&mut self.region, "region", k)?,
            },
            K::LeaseGranted => CoordinatorInput::LeaseGranted(LeaseGrant {
                token: need(&mut self.token, "token", k)?,
                valid_until_ms: need(&mut self.valid_until_ms, "validUntilMs", k)?,
            }),
            K::LeaseDenied => CoordinatorInput::LeaseDenied,
            K::LeaseRenewed => CoordinatorInput::LeaseRenewed {
                token: need(&mut self.token, "token", k)?,
                valid_until_ms: need(&mut self.valid_until_ms, "validUntilMs", k)?,
            },
            K::LeaseRenewFailed => CoordinatorInput::LeaseRenewFailed {
                token: need(&mut self.token, "token", k)?,
            },
            K::LeaseLost => CoordinatorInput::LeaseLost {
                token: need(&mut self.token, "token", k)?,
            },
            K::StateLoaded => CoordinatorInput::StateLoaded(need(&mut self.state, "state", k)?),
            K::StateLoadFailed => CoordinatorInput::StateLoadFailed {
                fenced: need(&mut self.fenced, "fenced", k)?,
            },
            K::StoreFailed => CoordinatorInput::StoreFailed {
                fenced: need(&mut self.fenced, "fenced", k)?,
            },
            K::PreparingForShutdown => CoordinatorInput::PreparingForShutdown,
            K::Stop => CoordinatorInput::Stop,
            K::Drain => CoordinatorInput::Drain {
                region: need(&mut self.region, "region", k)?,
            },
            K::Undrain => CoordinatorInput::Undrain {
                region: need(&mut self.region, "region", k)?,
            },
        };
        no_more(
            &[
                ("envelope", self.envelope.is_some()),
                ("member", self.member.is_some()),
                ("address", self.address.is_some()),
                ("reachable", self.reachable.is_some()),
                ("region", self.region.is_some()),
                ("token", self.token.is_some()),
                ("validUntilMs", self.valid_until_ms.is_some()),
                ("state", self.state.is_some()),
                ("fenced", self.fenced.is_some()),
            ],
            k,
        )?;
        Ok(input)
    }
}

/// The `type` names in [`InputKind`] order (a test keeps them in step with serde's).
pub(crate) const COORDINATOR_KINDS: &[&str] = &[
    "receive",
    "member",
    "memberRemoved",
    "reachability",
    "regionTerminated",
    "leaseGranted",
    "leaseDenied",
    "leaseRenewed",
    "leaseRenewFailed",
    "leaseLost",
    "stateLoaded",
    "stateLoadFailed",
    "storeFailed",
    "preparingForShutdown",
    "stop",
    "drain",
    "undrain",
];

impl<'de> Deserialize<'de> for CoordinatorInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CoordinatorInput, D::Error> {
        InputDoc::deserialize(d)?.into_input()
    }
}

/// What an input serializes to: its `type` and only the fields its variant has.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct InputOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    envelope: Option<&'a Envelope>,
    #[serde(skip_serializing_if = "Option::is_none")]
    member: Option<MemberOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reachable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<FencingToken>,
    #[serde(skip_serializing_if = "Option::is_none")]
    valid_until_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'a StoredState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fenced: Option<bool>,
}

impl Serialize for CoordinatorInput {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kind = |k: InputKind| COORDINATOR_KINDS[k as usize];
        let o = match self {
            CoordinatorInput::Receive(e) => InputOut {
                kind: kind(InputKind::Receive),
                envelope: Some(e),
                ..InputOut::default()
            },
            CoordinatorInput::Member(m) => InputOut {
                kind: kind(InputKind::Member),
                member: Some((&**m).into()),
                ..InputOut::default()
            },
            CoordinatorInput::MemberRemoved { address } => InputOut {
                kind: kind(InputKind::MemberRemoved),
                address: Some(address),
                ..InputOut::default()
            },
            CoordinatorInput::Reachability { address, reachable } => InputOut {
                kind: kind(InputKind::Reachability),
                address: Some(address),
                reachable: Some(*reachable),
                ..InputOut::default()
            },
            CoordinatorInput::RegionTerminated { region } => InputOut {
                kind: kind(InputKind::RegionTerminated),
                region: Some(region),
                ..InputOut::default()
            },
            CoordinatorInput::LeaseGranted(g) => InputOut {
                kind: kind(InputKind::LeaseGranted),
                token: Some(g.token),
                valid_until_ms: Some(g.valid_until_ms),
                ..InputOut::default()
            },
            CoordinatorInput::LeaseDenied => InputOut {
                kind: kind(InputKind::LeaseDenied),
                ..InputOut::default()
            },
            CoordinatorInput::LeaseRenewed {
                token,
                valid_until_ms,
            } => InputOut {
                kind: kind(InputKind::LeaseRenewed),
                token: Some(*token),
                valid_until_ms: Some(*valid_until_ms),
                ..InputOut::default()
            },
            CoordinatorInput::LeaseRenewFailed { token } => InputOut {
                kind: kind(InputKind::LeaseRenewFailed),
                token: Some(*token),
                ..InputOut::default()
            },
            CoordinatorInput::LeaseLost { token } => InputOut {
                kind: kind(InputKind::LeaseLost),
                token: Some(*token),
                ..InputOut::default()
            },
            CoordinatorInput::StateLoaded(state) => InputOut {
                kind: kind(InputKind::StateLoaded),
                state: Some(state),
                ..InputOut::default()
            },
            CoordinatorInput::StateLoadFailed { fenced } => InputOut {
                kind: kind(InputKind::StateLoadFailed),
                fenced: Some(*fenced),
                ..InputOut::default()
            },
            CoordinatorInput::StoreFailed { fenced } => InputOut {
                kind: kind(InputKind::StoreFailed),
                fenced: Some(*fenced),
                ..InputOut::default()
            },
            CoordinatorInput::PreparingForShutdown => InputOut {
                kind: kind(InputKind::PreparingForShutdown),
                ..InputOut::default()
            },
            CoordinatorInput::Stop => InputOut {
                kind: kind(InputKind::Stop),
                ..InputOut::default()
            },
            CoordinatorInput::Drain { region } => InputOut {
                kind: kind(InputKind::Drain),
                region: Some(region),
                ..InputOut::default()
            },
            CoordinatorInput::Undrain { region } => InputOut {
                kind: kind(InputKind::Undrain),
                region: Some(region),
                ..InputOut::default()
            },
        };
        o.serialize(s)
    }
}
