//! State-machine outputs and envelopes packed into one byte buffer, for hosts where one buffer
//! crossing costs less than an object per output or per field (the JVM reads the rows back with
//! `java.nio.ByteBuffer`: a call from native code into the JVM, or a `String` made there per
//! field, costs several times the step itself).
//!
//! Everything is big-endian. A text, document or payload is an i32 length (-1 for none) and its
//! bytes; a list an i32 count (-1 for none) and its texts.
//!
//! **Envelopes** ([`Rows::envelope`], [`read_envelope`]): the fields of [`FlatEnvelope`]: kind
//! (u8, an index into [`KINDS`](crate::flat_envelope::KINDS)); texts from and to (region ids,
//! empty for the coordinator); a u16 with one bit per other field that is not empty (a kind uses
//! a few), and those fields in this order: texts shard, entity, region, node; token and version
//! (i64); the payload; the entities (a list); the homes (JSON). A message with no flat form is
//! kind [`DOCUMENT`], its from and to, and then only its JSON.
//!
//! **Outputs** ([`Rows::coordinator`], [`Rows::region`], [`Rows::notice`], behind their total
//! length with [`Rows::framed`]): every row has the same fields, in this order: tag (u8; a
//! notice is 7 for both machines), token (i64, -1 unused), texts `a` and `b`, document `c`, a
//! text list and a payload. A send's document is its envelope; stored records and notices are
//! JSON.

use serde::Serialize;
use shardline_core::coordinator::{CoordinatorOutput, LeaseRequest};
use shardline_core::protocol::{Endpoint, Envelope, FencingToken, ShardHome};
use shardline_core::region::RegionOutput;

use crate::flat_envelope::{endpoint, endpoint_of, FlatEnvelope};
use crate::Failure;

/// The kind byte of an envelope whose message has no flat form (load reports, offers, a
/// registration with an offer).
pub const DOCUMENT: u8 = u8::MAX;

/// The tag of a notice row, in both machines' outputs.
const NOTICE: u8 = 7;

/// A buffer being written.
#[derive(Debug, Default)]
pub struct Rows(pub Vec<u8>);

impl Rows {
    fn len(&mut self, n: usize) -> &mut Self {
        self.0.extend_from_slice(&(n as i32).to_be_bytes());
        self
    }

    fn long(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    fn none(&mut self) -> &mut Self {
        self.len(u32::MAX as usize)
    }

    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.len(b.len());
        if !b.is_empty() {
            self.0.extend_from_slice(b);
        }
        self
    }

    fn text(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    fn row(&mut self, tag: u8, token: Option<FencingToken>) -> &mut Self {
        self.0.push(tag);
        self.long(token.map_or(u64::MAX, |t| t.0.min(i64::MAX as u64)))
    }

    /// What `write` writes, behind its length.
    pub fn framed(&mut self, write: impl FnOnce(&mut Self)) -> &mut Self {
        let at = self.0.len();
        self.len(0);
        write(self);
        let n = (self.0.len() - at - 4) as i32;
        self.0[at..at + 4].copy_from_slice(&n.to_be_bytes());
        self
    }

    fn json(&mut self, value: &impl Serialize) -> &mut Self {
        self.framed(|r| serde_json::to_writer(&mut r.0, value).expect("protocol types serialize"))
    }

    fn list(&mut self, items: &[impl AsRef<str>]) -> &mut Self {
        self.len(items.len());
        for s in items {
            self.text(s.as_ref());
        }
        self
    }

    /// Ends a row that has no more fields.
    fn done(&mut self, fields_left: usize) {
        for _ in 0..fields_left {
            self.none();
        }
    }

    /// `e` in its packed form (see [`pack_envelope`]).
    pub fn envelope(&mut self, e: &Envelope) -> &mut Self {
        let Some(f) = FlatEnvelope::of(e) else {
            self.0.push(DOCUMENT);
            let (from, to) = (endpoint_of(&e.from), endpoint_of(&e.to));
            return self.text(from).text(to).json(&e.message);
        };
        self.0.push(f.kind as u8);
        self.text(f.from).text(f.to);
        let texts = [f.shard, f.entity, f.region, f.node];
        let used = [
            !texts[0].is_empty(),
            !texts[1].is_empty(),
            !texts[2].is_empty(),
            !texts[3].is_empty(),
            f.token != 0,
            f.version != 0,
            !f.payload.is_empty(),
            !f.entities.is_empty(),
            !f.homes.is_empty(),
        ];
        let mask = (used.iter().enumerate()).fold(0u16, |m, (i, &u)| m | (u as u16) << i);
        self.0.extend_from_slice(&mask.to_be_bytes());
        for (text, _) in texts.iter().zip(used).filter(|(_, u)| *u) {
            self.text(text);
        }
        if used[4] {
            self.long(f.token);
        }
        if used[5] {
            self.long(f.version);
        }
        if used[6] {
            self.bytes(f.payload);
        }
        if used[7] {
            self.list(f.entities);
        }
        // ShardHomes is rare and the only kind with nested fields: JSON inside.
        if used[8] {
            self.json(&f.homes);
        }
        self
    }

    fn send(&mut self, e: &Envelope) {
        self.row(0, None).none().none();
        self.framed(|r| {
            r.envelope(e);
        })
        .done(2);
    }

    pub fn notice(&mut self, n: &impl Serialize) {
        // Notices are rare: reading the tag back from the text keeps the text as serde wrote it.
        let json = serde_json::to_string(n).expect("notices serialize");
        let kind = serde_json::from_str::<serde_json::Value>(&json)
            .ok()
            .and_then(|v| v.get("type")?.as_str().map(str::to_owned));
        self.row(NOTICE, None)
            .text(kind.as_deref().unwrap_or_default())
            .none()
            .text(&json)
            .done(2);
    }

    /// A store write: its token and document.
    fn write(&mut self, tag: u8, token: FencingToken, document: &impl Serialize) {
        self.row(tag, Some(token)).none().none().json(document);
        self.done(2);
    }

    /// Tags as `CoordinatorOutput.of` (Java) reads them.
    pub fn coordinator(&mut self, o: &CoordinatorOutput) {
        let (tag, token) = match o {
            CoordinatorOutput::Send(e) => return self.send(e),
            CoordinatorOutput::Notice(n) => return self.notice(n),
            CoordinatorOutput::Persist { token, record } => return self.write(1, *token, record),
            CoordinatorOutput::SaveSnapshot { token, snapshot } => {
                return self.write(2, *token, snapshot)
            }
            CoordinatorOutput::Lease(LeaseRequest::Acquire) => (3, None),
            CoordinatorOutput::Lease(LeaseRequest::Renew { token }) => (4, Some(*token)),
            CoordinatorOutput::Lease(LeaseRequest::Release { token }) => (5, Some(*token)),
            CoordinatorOutput::LoadState { token } => (6, Some(*token)),
        };
        self.row(tag, token).done(5);
    }

    /// Tags as `RegionOutput.of` (Java) reads them.
    pub fn region(&mut self, o: &RegionOutput) {
        match o {
            RegionOutput::Send(e) => self.send(e),
            RegionOutput::Notice(n) => self.notice(n),
            RegionOutput::StartShard { shard, entities } => {
                self.row(1, None).text(shard).done(2);
                self.list(entities).none();
            }
            RegionOutput::StartEntities { shard, entities } => {
                self.row(2, None).text(shard).done(2);
                self.list(entities).none();
            }
            RegionOutput::Deliver {
                shard,
                entity,
                payload,
            } => {
                self.row(3, None).text(shard).text(entity);
                self.none().none().bytes(payload);
            }
            RegionOutput::StopShard { shard } => self.row(4, None).text(shard).done(4),
            RegionOutput::Undeliverable {
                shard,
                entity,
                payload,
                reason,
            } => {
                self.row(5, None).text(shard).text(entity);
                self.text(reason).none().bytes(payload);
            }
            RegionOutput::Stopped => self.row(6, None).done(5),
        }
    }
}

/// `e` packed on its own; an empty region id would read back as the coordinator: refused.
pub fn pack_envelope(e: &Envelope) -> Result<Vec<u8>, Failure> {
    if [&e.from, &e.to]
        .iter()
        .any(|x| matches!(x, Endpoint::Region(r) if r.is_empty()))
    {
        return Err(Failure::invalid_argument("envelope: a region id is empty"));
    }
    let mut rows = Rows(Vec::with_capacity(64));
    rows.envelope(e);
    Ok(rows.0)
}

/// Reads what [`Rows`] wrote; `None` when the bytes end early or a text is not UTF-8.
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

    #[inline]
    fn text(&mut self) -> Option<&'a str> {
        let b = self.bytes()?;
        // Ids are ASCII: checked inline, without a call per text.
        match b.is_ascii() {
            // SAFETY: ASCII is UTF-8.
            true => Some(unsafe { std::str::from_utf8_unchecked(b) }),
            false => std::str::from_utf8(b).ok(),
        }
    }

    fn long(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take()?))
    }

    fn texts(&mut self) -> Option<Vec<shardline_core::protocol::EntityId>> {
        let n = i32::from_be_bytes(self.take()?);
        (0..n).map(|_| self.text().map(Into::into)).collect()
    }

    fn homes(&mut self) -> Option<Vec<ShardHome>> {
        serde_json::from_slice(self.bytes()?).ok()
    }

    /// Field `i` of the mask's fields, read with `read` when its bit is set, else the default.
    fn field<T: Default>(
        &mut self,
        mask: u16,
        i: u16,
        read: fn(&mut Self) -> Option<T>,
    ) -> Option<T> {
        match mask & (1 << i) {
            0 => Some(T::default()),
            _ => read(self),
        }
    }
}

/// An envelope [`Rows::envelope`] wrote. Bytes that do not read back were not written by it
/// (or were changed since): refused without details.
pub fn read_envelope(bytes: &[u8]) -> Result<Envelope, Failure> {
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
    let from = r.text().ok_or_else(malformed)?;
    let to = r.text().ok_or_else(malformed)?;
    let m = u16::from_be_bytes(r.take().ok_or_else(malformed)?);
    // Fields in the order they were written.
    let flat = FlatEnvelope {
        kind: kind as usize,
        from,
        to,
        shard: r.field(m, 0, Reader::text).ok_or_else(malformed)?,
        entity: r.field(m, 1, Reader::text).ok_or_else(malformed)?,
        region: r.field(m, 2, Reader::text).ok_or_else(malformed)?,
        node: r.field(m, 3, Reader::text).ok_or_else(malformed)?,
        token: r.field(m, 4, Reader::long).ok_or_else(malformed)?,
        version: r.field(m, 5, Reader::long).ok_or_else(malformed)?,
        payload: r.field(m, 6, Reader::bytes).ok_or_else(malformed)?,
        entities: &r.field(m, 7, Reader::texts).ok_or_else(malformed)?,
        homes: &r.field(m, 8, Reader::homes).ok_or_else(malformed)?,
    };
    match r.0.is_empty() {
        true => Ok(flat.envelope()?),
        false => Err(malformed()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_read_back_flat_or_as_documents() {
        for json in [
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"getShardHome","shard":"7"}}}"#,
            r#"{"from":"coordinator","to":{"region":"r1"},"message":{"directive":{"type":"shardHomes","token":3,"homes":[{"shard":"7","region":"r2","stamp":{"token":1,"version":2}}]}}}"#,
            r#"{"from":"coordinator","to":{"region":"r1"},"message":{"directive":{"type":"hostShard","shard":"7","stamp":{"token":1,"version":2},"entities":["a","ü"]}}}"#,
            r#"{"from":{"region":"r1"},"to":{"region":"r2"},"message":{"forward":{"shard":"7","entity":"e","payload":"AGhp/w=="}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"reportLoads","loads":{"7":1.5}}}}"#,
        ] {
            let e: Envelope = serde_json::from_str(json).unwrap();
            let bytes = pack_envelope(&e).unwrap();
            assert_eq!(read_envelope(&bytes).unwrap(), e, "{json}");
            // Every shorter prefix is refused, never misread.
            for n in 0..bytes.len() {
                assert!(read_envelope(&bytes[..n]).is_err(), "{json} cut at {n}");
            }
        }
    }

    #[test]
    fn an_empty_region_id_is_refused() {
        let e = Envelope {
            from: Endpoint::Region("".into()),
            to: Endpoint::Coordinator,
            message: serde_json::from_str(r#"{"command":{"type":"regionStopped"}}"#).unwrap(),
        };
        let err = pack_envelope(&e).unwrap_err();
        assert_eq!(err.message, "envelope: a region id is empty");
    }

    #[test]
    fn rows_have_every_field_behind_their_length() {
        let mut rows = Rows::default();
        rows.framed(|r| {
            r.coordinator(&CoordinatorOutput::LoadState {
                token: FencingToken(9),
            })
        });
        let b = &rows.0;
        assert_eq!(
            i32::from_be_bytes(b[..4].try_into().unwrap()) as usize,
            b.len() - 4
        );
        assert_eq!(b[4], 6);
        assert_eq!(u64::from_be_bytes(b[5..13].try_into().unwrap()), 9);
        // a, b, c, list, payload: all none
        assert_eq!(&b[13..], &[255u8; 20][..]);
    }
}
