//! Envelopes as `Envelope.java` holds them between the state machines: the fields of
//! [`FlatEnvelope`] in one `byte[]`, so a step reads or writes an envelope without JSON and with
//! one array copy. The message's JSON is made from these bytes only when Java asks for it, and
//! an envelope built from JSON is read into them once, on its first crossing.
//!
//! Layout (big-endian, as `java.nio.ByteBuffer` reads it): kind (u8, an index into
//! [`KINDS`](shardline_bind::flat_envelope::KINDS)); texts from, to (empty for the coordinator;
//! `Envelope.java` reads these two), shard, entity, region, node; token and version (i64); the
//! payload; the entities (an i32 count and its texts); the homes as JSON. A text, payload or
//! JSON document is an i32 length and its bytes. A message with no flat form has kind 255, its
//! from and to, and then only its JSON.

use jni::objects::{JByteArray, JString};
use jni::sys::{jbyteArray, jstring};

use shardline_bind::flat_envelope::FlatEnvelope;
use shardline_core::protocol::{Endpoint, Envelope, ShardHome};

use crate::boundary::{Failure, Result};
use crate::convert::{from_json, new_string, opt_string, to_json, with_bytes};
use crate::native::native;
use crate::outputs::Rows;

/// The kind byte of an envelope whose message has no flat form (load reports, offers, a
/// registration with an offer): from and to as usual, then the message as JSON.
const DOCUMENT: u8 = u8::MAX;

fn region_id(e: &Endpoint) -> &str {
    match e {
        Endpoint::Coordinator => "",
        Endpoint::Region(r) => r,
    }
}

fn endpoint(id: &str) -> Endpoint {
    match id {
        "" => Endpoint::Coordinator,
        r => Endpoint::Region(r.to_owned()),
    }
}

impl Rows {
    pub fn envelope(&mut self, e: &Envelope) -> &mut Self {
        let Some(f) = FlatEnvelope::of(e) else {
            self.0.push(DOCUMENT);
            self.bytes(region_id(&e.from).as_bytes());
            self.bytes(region_id(&e.to).as_bytes());
            return self.json(&e.message);
        };
        self.0.push(f.kind as u8);
        for text in [f.from, f.to, f.shard, f.entity, f.region, f.node] {
            self.bytes(text.as_bytes());
        }
        self.long(f.token).long(f.version).bytes(f.payload);
        // ShardHomes is rare and the only kind with nested fields: JSON inside.
        match f.homes {
            [] => self.list(f.entities).none(),
            homes => self.list(f.entities).json(&homes),
        }
    }
}

/// `e`'s fields as `Envelope.java` holds them. An empty region id would read back as the
/// coordinator: refused.
pub fn flat(e: &Envelope) -> Result<Vec<u8>> {
    if [&e.from, &e.to].contains(&&Endpoint::Region(String::new())) {
        return Err(Failure::invalid_argument("envelope: a region id is empty"));
    }
    let mut rows = Rows(Vec::with_capacity(64));
    rows.envelope(e);
    Ok(rows.0)
}

/// `e` as a Java `byte[]` (see [`flat`]).
pub fn to_java(env: &mut jni::JNIEnv, e: &Envelope) -> Result<jbyteArray> {
    Ok(env.byte_array_from_slice(&flat(e)?)?.into_raw())
}

/// Reads the fields [`Rows::envelope`] wrote. The bytes are Java's copy of them, so one that
/// does not read back means the array was tampered with; it is refused without details.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(i32::from_be_bytes(self.take()?)).ok()?;
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn text(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }

    fn long(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take()?))
    }

    fn texts(&mut self) -> Option<Vec<String>> {
        match i32::from_be_bytes(self.take()?) {
            0 => Some(Vec::new()),
            n => (0..n).map(|_| self.text().map(str::to_owned)).collect(),
        }
    }

    fn homes(&mut self) -> Option<Vec<ShardHome>> {
        match self.0 {
            [255, 255, 255, 255] => Some(Vec::new()),
            _ => serde_json::from_slice(self.bytes()?).ok(),
        }
    }
}

/// An envelope argument (`Envelope.flat()`), with [`crate::convert::with_bytes`].
pub fn read(bytes: &[u8]) -> Result<Envelope> {
    let mut r = Reader(bytes);
    let malformed = || Failure::invalid_argument("envelope: malformed");
    let kind = r.take::<1>().ok_or_else(malformed)?[0];
    if kind == DOCUMENT {
        let from = endpoint(r.text().ok_or_else(malformed)?);
        let to = endpoint(r.text().ok_or_else(malformed)?);
        let message = serde_json::from_slice(r.bytes().ok_or_else(malformed)?)
            .map_err(|e| Failure::invalid_argument(format!("envelope: {e}")))?;
        return Ok(Envelope { from, to, message });
    }
    // Fields in the order they were written.
    let flat = FlatEnvelope {
        kind: kind as usize,
        from: r.text().ok_or_else(malformed)?,
        to: r.text().ok_or_else(malformed)?,
        shard: r.text().ok_or_else(malformed)?,
        entity: r.text().ok_or_else(malformed)?,
        region: r.text().ok_or_else(malformed)?,
        node: r.text().ok_or_else(malformed)?,
        token: r.long().ok_or_else(malformed)?,
        version: r.long().ok_or_else(malformed)?,
        payload: r.bytes().ok_or_else(malformed)?,
        entities: &r.texts().ok_or_else(malformed)?,
        homes: &r.homes().ok_or_else(malformed)?,
    };
    Ok(flat.envelope()?)
}

native! {
/// `Envelope.flat()` of an envelope made from its message's JSON: region ids (null for the
/// coordinator) and the message.
fn Java_org_shardline_Shardline_nFlatten(
    env, from: JString<'l>, to: JString<'l>, message: JString<'l>,
) -> jbyteArray {
    let id = |id: Option<String>| id.map_or(Endpoint::Coordinator, Endpoint::Region);
    let (from, to) = (id(opt_string(env, &from)?), id(opt_string(env, &to)?));
    let message = from_json(env, &message, "message")?;
    to_java(env, &Envelope { from, to, message })
}}

native! { fn Java_org_shardline_Shardline_nMessageJson(env, flat: JByteArray<'l>) -> jstring {
    let e = with_bytes(env, &flat, "envelope", read)?;
    new_string(env, &to_json(&e.message))
}}

native! {
/// `Envelope.fromJson`.
fn Java_org_shardline_Shardline_nParseEnvelope(env, json: JString<'l>) -> jbyteArray {
    let e: Envelope = from_json(env, &json, "envelope")?;
    to_java(env, &e)
}}
