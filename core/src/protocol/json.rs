//! The step API as JSON documents: one form for every host that talks JSON (the C ABI, Node).
//!
//! Inputs are objects tagged by `type`, with the fields of their variant:
//! `{"type":"receive","envelope":{..}}`, `{"type":"member","member":{"address":..}}`,
//! `{"type":"leaseGranted","token":1,"validUntilMs":60000}`, `{"type":"stop"}`, ...
//! Outputs are the core's own serde form ([`crate::coordinator::CoordinatorOutput`],
//! [`crate::region::RegionOutput`]): a variant that wraps another struct or tagged enum nests
//! it under its own key (`envelope`, `request`, `notice`), so no `type` is written twice.
//!
//! Each machine's input form lives beside its type (`coordinator/json.rs`, `region/json.rs`);
//! this module has what they share: reading with field paths in errors, members, and the
//! field checks. Inputs are read in one pass into a flat document (every field any variant
//! has) and then checked against the variant named by `type`. That keeps the `type` key free
//! to appear anywhere, keeps field paths in errors (an internally tagged derive would buffer
//! the object and lose them), and rejects fields that belong to another variant.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::model::{Address, Member, MemberStatus, Version};
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

// serde's derived structs also accept arrays (fields by position); an input is an object.
pub(crate) fn object_text(text: &str, name: &str) -> Result<()> {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => Ok(()),
        _ => Err(Error::invalid_argument(format!(
            "{name}: expected a JSON object such as {{\"type\":\"stop\"}}"
        ))),
    }
}

pub(crate) fn object_value(value: &Value, name: &str) -> Result<()> {
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

// ---- field helpers --------------------------------------------------------------------------

/// Takes a field the variant needs.
pub(crate) fn need<T, E: serde::de::Error>(
    slot: &mut Option<T>,
    field: &str,
    kind: &str,
) -> Result<T, E> {
    slot.take()
        .ok_or_else(|| E::custom(format!("type {kind:?} needs field `{field}`")))
}

/// Fails on the first field left over after the variant took its own.
pub(crate) fn no_more<E: serde::de::Error>(present: &[(&str, bool)], kind: &str) -> Result<(), E> {
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

pub(crate) fn opt_address<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
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
pub(crate) struct MemberDoc {
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
pub(crate) struct MemberOut<'a> {
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

#[cfg(test)]
mod tests;
