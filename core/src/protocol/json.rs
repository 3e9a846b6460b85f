//! The step API as JSON documents: one form for every host that talks JSON (the C ABI, Node).
//!
//! Inputs are objects tagged by `type`, with the fields of their variant:
//! `{"type":"receive","envelope":{..}}`, `{"type":"member","member":{"address":..}}`,
//! `{"type":"leaseGranted","token":1,"validUntilMs":60000}`, `{"type":"stop"}`, ...
//! Outputs are the core's own serde form ([`Output`], [`RegionOutput`]): a variant that wraps
//! another struct or tagged enum nests it under its own key (`envelope`, `request`, `notice`),
//! so no `type` is written twice.
//!
//! Inputs are read in one pass into a flat document (every field any variant has) and then
//! checked against the variant named by `type`. That keeps the `type` key free to appear
//! anywhere, keeps field paths in errors (an internally tagged derive would buffer the object
//! and lose them), and rejects fields that belong to another variant.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::coordinator::{Input, Phase};
use crate::host::LeaseGrant;
use crate::host::StoredState;
use crate::model::Address;
use crate::model::Version;
use crate::model::{Member, MemberStatus};
use crate::protocol::{EntityId, Envelope, FencingToken, RegionId, ShardId};
use crate::region::RegionInput;
use crate::{Error, Result};

// ---- entry points ---------------------------------------------------------------------------

/// Reads a step document (an input, or anything else with serde support) from JSON text.
/// Errors are InvalidArgument and start with `name`, followed by the path of the offending
/// field: `input_json.envelope.message: unknown variant ...`.
pub fn from_str<T: DeserializeOwned>(text: &str, name: &str) -> Result<T> {
    // The fast path tracks no path; a failing document is read again to find where it broke.
    serde_json::from_str(text).map_err(|e| {
        let mut de = serde_json::Deserializer::from_str(text);
        match serde_path_to_error::deserialize::<_, T>(&mut de) {
            Err(located_e) => located(name, located_e),
            // The document itself was fine: what failed comes after it (trailing characters).
            Ok(_) => Error::invalid_argument(format!("{name}: {e}")),
        }
    })
}

/// Like [`from_str`], for a document that is already a JSON value (what a JavaScript object
/// converts to).
pub fn from_value<T: DeserializeOwned>(value: &Value, name: &str) -> Result<T> {
    T::deserialize(value).map_err(|_| match serde_path_to_error::deserialize::<_, T>(value) {
        Err(e) => located(name, e),
        Ok(_) => Error::invalid_argument(format!("{name}: not a valid document")),
    })
}

/// A coordinator input from JSON text (see [`from_str`] for the errors).
pub fn coordinator_input(text: &str, name: &str) -> Result<Input> {
    object_text(text, name)?;
    from_str(text, name)
}

/// A region input from JSON text (see [`from_str`] for the errors).
pub fn region_input(text: &str, name: &str) -> Result<RegionInput> {
    object_text(text, name)?;
    from_str(text, name)
}

/// A coordinator input from a JSON value.
pub fn coordinator_input_value(value: &Value, name: &str) -> Result<Input> {
    object_value(value, name)?;
    from_value(value, name)
}

/// A region input from a JSON value.
pub fn region_input_value(value: &Value, name: &str) -> Result<RegionInput> {
    object_value(value, name)?;
    from_value(value, name)
}

// serde's derived structs also accept arrays (fields by position); an input is an object.
fn object_text(text: &str, name: &str) -> Result<()> {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => Ok(()),
        _ => Err(Error::invalid_argument(format!(
            "{name}: expected a JSON object such as {{\"type\":\"stop\"}}"
        ))),
    }
}

fn object_value(value: &Value, name: &str) -> Result<()> {
    if value.is_object() {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "{name}: expected an object, got {}",
            match value {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Object(_) => "an object",
            }
        )))
    }
}

/// Writes an output, a list of outputs, or an input as JSON text.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::invalid_state(format!("serializing: {e}")))
}

fn located(name: &str, e: serde_path_to_error::Error<serde_json::Error>) -> Error {
    let path = e.path().to_string();
    let at = if path == "." {
        name.to_owned()
    } else {
        format!("{name}.{path}")
    };
    Error::invalid_argument(format!("{at}: {}", e.into_inner()))
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

// ---- field helpers --------------------------------------------------------------------------

/// Takes a field the variant needs.
fn need<T, E: serde::de::Error>(slot: &mut Option<T>, field: &str, kind: &str) -> Result<T, E> {
    slot.take()
        .ok_or_else(|| E::custom(format!("type {kind:?} needs field `{field}`")))
}

/// Fails on the first field left over after the variant took its own.
fn no_more<E: serde::de::Error>(present: &[(&str, bool)], kind: &str) -> Result<(), E> {
    match present.iter().find(|(_, here)| *here) {
        Some((field, _)) => Err(E::custom(format!(
            "field `{field}` does not belong to type {kind:?}"
        ))),
        None => Ok(()),
    }
}

/// A node address, checked and written in canonical form (`02552` becomes `2552`).
fn address<'de, D: Deserializer<'de>>(d: D) -> Result<Address, D::Error> {
    let text = String::deserialize(d)?;
    Address::parse(&text).map_err(|e| D::Error::custom(e.message()))
}

fn opt_address<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Some(address(d)?.as_str().to_owned()))
}

fn opt_status<'de, D: Deserializer<'de>>(d: D) -> Result<Option<MemberStatus>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|s| s.parse().map_err(|e: Error| D::Error::custom(e.message())))
        .transpose()
}

fn opt_version<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Version>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|s| Version::parse(&s).map_err(|e| D::Error::custom(e.message())))
        .transpose()
}

// ---- members --------------------------------------------------------------------------------

/// A cluster member: `{address, status?, appVersion?, dataCenter?, upNumber?}`; omitted (or
/// null) fields take [`Member::new`]'s defaults (Up, 0.0.0, "default", i32::MAX).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MemberDoc {
    #[serde(deserialize_with = "address")]
    address: Address,
    #[serde(default, deserialize_with = "opt_status")]
    status: Option<MemberStatus>,
    #[serde(default, deserialize_with = "opt_version")]
    app_version: Option<Version>,
    data_center: Option<String>,
    up_number: Option<i32>,
}

impl From<MemberDoc> for Member {
    fn from(d: MemberDoc) -> Member {
        let mut m = Member::new(d.address);
        if let Some(s) = d.status {
            m.status = s;
        }
        if let Some(v) = d.app_version {
            m.app_version = v;
        }
        if let Some(dc) = d.data_center {
            m.data_center = dc;
        }
        if let Some(n) = d.up_number {
            m.up_number = n;
        }
        m
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MemberOut<'a> {
    address: &'a str,
    status: &'a str,
    app_version: &'a str,
    data_center: &'a str,
    up_number: i32,
}

impl<'a> From<&'a Member> for MemberOut<'a> {
    fn from(m: &'a Member) -> Self {
        MemberOut {
            address: m.address.as_str(),
            status: m.status.as_str(),
            app_version: m.app_version.as_str(),
            data_center: &m.data_center,
            up_number: m.up_number,
        }
    }
}

/// Reads a member document on its own (the shape `{"type":"member"}` carries).
pub fn member_from_value(value: &Value, name: &str) -> Result<Member> {
    from_value::<MemberDoc>(value, name).map(Member::from)
}

// ---- coordinator inputs ---------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
enum InputKind {
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
    fn into_input<E: serde::de::Error>(mut self) -> Result<Input, E> {
        use InputKind as K;
        let k = COORDINATOR_KINDS[self.kind as usize];
        let input = match self.kind {
            K::Receive => Input::Receive(need(&mut self.envelope, "envelope", k)?),
            K::Member => Input::Member((*need(&mut self.member, "member", k)?).into()),
            K::MemberRemoved => Input::MemberRemoved {
                address: need(&mut self.address, "address", k)?,
            },
            K::Reachability => Input::Reachability {
                address: need(&mut self.address, "address", k)?,
                reachable: need(&mut self.reachable, "reachable", k)?,
            },
            K::RegionTerminated => Input::RegionTerminated {
                region: need(&mut self.region, "region", k)?,
            },
            K::LeaseGranted => Input::LeaseGranted(LeaseGrant {
                token: need(&mut self.token, "token", k)?,
                valid_until_ms: need(&mut self.valid_until_ms, "validUntilMs", k)?,
            }),
            K::LeaseDenied => Input::LeaseDenied,
            K::LeaseRenewed => Input::LeaseRenewed {
                token: need(&mut self.token, "token", k)?,
                valid_until_ms: need(&mut self.valid_until_ms, "validUntilMs", k)?,
            },
            K::LeaseRenewFailed => Input::LeaseRenewFailed {
                token: need(&mut self.token, "token", k)?,
            },
            K::LeaseLost => Input::LeaseLost {
                token: need(&mut self.token, "token", k)?,
            },
            K::StateLoaded => Input::StateLoaded(*need(&mut self.state, "state", k)?),
            K::StateLoadFailed => Input::StateLoadFailed {
                fenced: need(&mut self.fenced, "fenced", k)?,
            },
            K::StoreFailed => Input::StoreFailed {
                fenced: need(&mut self.fenced, "fenced", k)?,
            },
            K::PreparingForShutdown => Input::PreparingForShutdown,
            K::Stop => Input::Stop,
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
const COORDINATOR_KINDS: &[&str] = &[
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
];

const REGION_KINDS: &[&str] = &[
    "receive",
    "coordinatorChanged",
    "regionTerminated",
    "shardStopped",
    "entityPassivated",
    "gracefulShutdown",
];

impl<'de> Deserialize<'de> for Input {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Input, D::Error> {
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

impl Serialize for Input {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kind = |k: InputKind| COORDINATOR_KINDS[k as usize];
        let o = match self {
            Input::Receive(e) => InputOut {
                kind: kind(InputKind::Receive),
                envelope: Some(e),
                ..InputOut::default()
            },
            Input::Member(m) => InputOut {
                kind: kind(InputKind::Member),
                member: Some(m.into()),
                ..InputOut::default()
            },
            Input::MemberRemoved { address } => InputOut {
                kind: kind(InputKind::MemberRemoved),
                address: Some(address),
                ..InputOut::default()
            },
            Input::Reachability { address, reachable } => InputOut {
                kind: kind(InputKind::Reachability),
                address: Some(address),
                reachable: Some(*reachable),
                ..InputOut::default()
            },
            Input::RegionTerminated { region } => InputOut {
                kind: kind(InputKind::RegionTerminated),
                region: Some(region),
                ..InputOut::default()
            },
            Input::LeaseGranted(g) => InputOut {
                kind: kind(InputKind::LeaseGranted),
                token: Some(g.token),
                valid_until_ms: Some(g.valid_until_ms),
                ..InputOut::default()
            },
            Input::LeaseDenied => InputOut {
                kind: kind(InputKind::LeaseDenied),
                ..InputOut::default()
            },
            Input::LeaseRenewed {
                token,
                valid_until_ms,
            } => InputOut {
                kind: kind(InputKind::LeaseRenewed),
                token: Some(*token),
                valid_until_ms: Some(*valid_until_ms),
                ..InputOut::default()
            },
            Input::LeaseRenewFailed { token } => InputOut {
                kind: kind(InputKind::LeaseRenewFailed),
                token: Some(*token),
                ..InputOut::default()
            },
            Input::LeaseLost { token } => InputOut {
                kind: kind(InputKind::LeaseLost),
                token: Some(*token),
                ..InputOut::default()
            },
            Input::StateLoaded(state) => InputOut {
                kind: kind(InputKind::StateLoaded),
                state: Some(state),
                ..InputOut::default()
            },
            Input::StateLoadFailed { fenced } => InputOut {
                kind: kind(InputKind::StateLoadFailed),
                fenced: Some(*fenced),
                ..InputOut::default()
            },
            Input::StoreFailed { fenced } => InputOut {
                kind: kind(InputKind::StoreFailed),
                fenced: Some(*fenced),
                ..InputOut::default()
            },
            Input::PreparingForShutdown => InputOut {
                kind: kind(InputKind::PreparingForShutdown),
                ..InputOut::default()
            },
            Input::Stop => InputOut {
                kind: kind(InputKind::Stop),
                ..InputOut::default()
            },
        };
        o.serialize(s)
    }
}

// ---- region inputs --------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
enum RegionKind {
    Receive,
    CoordinatorChanged,
    RegionTerminated,
    ShardStopped,
    EntityPassivated,
    GracefulShutdown,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RegionInputDoc {
    #[serde(rename = "type")]
    kind: RegionKind,
    envelope: Option<Envelope>,
    region: Option<RegionId>,
    shard: Option<ShardId>,
    entity: Option<EntityId>,
}

impl RegionInputDoc {
    fn into_input<E: serde::de::Error>(mut self) -> Result<RegionInput, E> {
        use RegionKind as K;
        let k = REGION_KINDS[self.kind as usize];
        let input = match self.kind {
            K::Receive => RegionInput::Receive(need(&mut self.envelope, "envelope", k)?),
            K::CoordinatorChanged => RegionInput::CoordinatorChanged,
            K::RegionTerminated => RegionInput::RegionTerminated {
                region: need(&mut self.region, "region", k)?,
            },
            K::ShardStopped => RegionInput::ShardStopped {
                shard: need(&mut self.shard, "shard", k)?,
            },
            K::EntityPassivated => RegionInput::EntityPassivated {
                shard: need(&mut self.shard, "shard", k)?,
                entity: need(&mut self.entity, "entity", k)?,
            },
            K::GracefulShutdown => RegionInput::GracefulShutdown,
        };
        no_more(
            &[
                ("envelope", self.envelope.is_some()),
                ("region", self.region.is_some()),
                ("shard", self.shard.is_some()),
                ("entity", self.entity.is_some()),
            ],
            k,
        )?;
        Ok(input)
    }
}

impl<'de> Deserialize<'de> for RegionInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RegionInput, D::Error> {
        RegionInputDoc::deserialize(d)?.into_input()
    }
}

#[derive(Serialize, Default)]
struct RegionInputOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    envelope: Option<&'a Envelope>,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entity: Option<&'a str>,
}

impl Serialize for RegionInput {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kind = |k: RegionKind| REGION_KINDS[k as usize];
        let o = match self {
            RegionInput::Receive(e) => RegionInputOut {
                kind: kind(RegionKind::Receive),
                envelope: Some(e),
                ..RegionInputOut::default()
            },
            RegionInput::CoordinatorChanged => RegionInputOut {
                kind: kind(RegionKind::CoordinatorChanged),
                ..RegionInputOut::default()
            },
            RegionInput::RegionTerminated { region } => RegionInputOut {
                kind: kind(RegionKind::RegionTerminated),
                region: Some(region),
                ..RegionInputOut::default()
            },
            RegionInput::ShardStopped { shard } => RegionInputOut {
                kind: kind(RegionKind::ShardStopped),
                shard: Some(shard),
                ..RegionInputOut::default()
            },
            RegionInput::EntityPassivated { shard, entity } => RegionInputOut {
                kind: kind(RegionKind::EntityPassivated),
                shard: Some(shard),
                entity: Some(entity),
                ..RegionInputOut::default()
            },
            RegionInput::GracefulShutdown => RegionInputOut {
                kind: kind(RegionKind::GracefulShutdown),
                ..RegionInputOut::default()
            },
        };
        o.serialize(s)
    }
}

#[cfg(test)]
mod tests;
