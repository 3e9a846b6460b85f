//! Envelopes as `Envelope.java` holds them between the state machines: packed into one `byte[]`
//! (`shardline_bind::rows`), so a step reads or writes an envelope without JSON and with one
//! copy. The message's JSON is made from these bytes only when Java asks for it, and an envelope
//! built from JSON is packed once, on its first crossing. `Envelope.java` reads the kind byte and
//! the two region ids (from, to) itself.

use jni::objects::{JByteArray, JString};
use jni::sys::{jbyteArray, jstring};

use shardline_bind::rows::{pack_envelope, read_envelope};
use shardline_core::protocol::{Endpoint, Envelope};

use crate::boundary::Result;
use crate::convert::{from_json, new_string, opt_string, to_json, with_bytes};
use crate::native::native;

/// An envelope argument (`Envelope.flat()`), with [`crate::convert::with_bytes`].
pub fn read(bytes: &[u8]) -> Result<Envelope> {
    Ok(read_envelope(bytes)?)
}

/// `e` as a Java `byte[]`.
pub fn to_java(env: &mut jni::JNIEnv, e: &Envelope) -> Result<jbyteArray> {
    Ok(env.byte_array_from_slice(&pack_envelope(e)?)?.into_raw())
}

native! {
/// `Envelope.flat()` of an envelope made from its message's JSON: region ids (null for the
/// coordinator) and the message.
fn Java_org_shardline_Shardline_nFlatten(
    env, from: JString<'l>, to: JString<'l>, message: JString<'l>,
) -> jbyteArray {
    let id = |id: Option<String>| id.map_or(Endpoint::Coordinator, |r| Endpoint::Region(r.into()));
    let (from, to) = (id(opt_string(env, &from)?), id(opt_string(env, &to)?));
    let message = from_json(env, &message, "message")?;
    to_java(env, &Envelope { from, to, message })
}}

native! { fn Java_org_shardline_Shardline_nMessageJson(env, flat: JByteArray<'l>) -> jstring {
    let e = with_bytes(env, &flat, 0, "envelope", read)?;
    new_string(env, &to_json(&e.message))
}}

native! {
/// `Envelope.fromJson`.
fn Java_org_shardline_Shardline_nParseEnvelope(env, json: JString<'l>) -> jbyteArray {
    let e: Envelope = from_json(env, &json, "envelope")?;
    to_java(env, &e)
}}
