//! State-machine outputs (`CoordinatorOutput`, `RegionOutput`, `Notice`) as rows of one `byte[]`
//! per drain behind their total length (i32), which `org.shardline.Rows` reads back into
//! records; the array is one each Java thread reuses when they fit.
//!
//! One array per drain rather than one Java object made from Rust per output: a call from Rust
//! into Java and a `String` per field cost several times the step itself, while Java decodes
//! short UTF-8 fields faster than JNI can make strings. Every row has the same fields, in this
//! order (big-endian, as `java.nio.ByteBuffer` reads them): tag (u8), token (i64, -1 unused),
//! texts `a` and `b`, document `c`, a text list and a payload; a text, document or payload is
//! an i32 length (-1 for none) and its bytes, a list an i32 count (-1 for none) and its texts.
//! A send's document is its envelope (`crate::envelope`); stored records and notices are JSON
//! that Java keeps as UTF-8 until asked: the host stores them without looking inside.

use std::cell::Cell;

use jni::objects::JByteArray;
use jni::sys::{jbyteArray, jlong};
use jni::JNIEnv;
use serde::Serialize;

use shardline_core::coordinator::{CoordinatorOutput, LeaseRequest};
use shardline_core::protocol::{Envelope, FencingToken};

use shardline_core::region::RegionOutput;

use crate::boundary::Result;
use crate::convert::fill;

/// Tags shared with `CoordinatorOutput.of` and `RegionOutput.of`; a notice is 7 in both.
const NOTICE: u8 = 7;

pub struct Rows(pub Vec<u8>);

impl Rows {
    pub fn len(&mut self, n: usize) {
        self.0.extend((n as i32).to_be_bytes());
    }

    pub fn long(&mut self, v: u64) -> &mut Self {
        self.0.extend(v.to_be_bytes());
        self
    }

    pub fn none(&mut self) -> &mut Self {
        self.0.extend((-1i32).to_be_bytes());
        self
    }

    fn row(&mut self, tag: u8, token: Option<FencingToken>) -> &mut Self {
        self.0.push(tag);
        self.long(token.map_or(-1, |t| t.0.min(i64::MAX as u64) as jlong) as u64)
    }

    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.len(b.len());
        self.0.extend_from_slice(b);
        self
    }

    fn text(&mut self, s: Option<&str>) -> &mut Self {
        match s {
            Some(s) => self.bytes(s.as_bytes()),
            None => self.none(),
        }
    }

    /// What `write` writes, in place behind its length.
    pub fn framed(&mut self, write: impl FnOnce(&mut Self)) -> &mut Self {
        let at = self.0.len();
        self.len(0);
        write(self);
        let n = (self.0.len() - at - 4) as i32;
        self.0[at..at + 4].copy_from_slice(&n.to_be_bytes());
        self
    }

    pub fn json(&mut self, value: &impl Serialize) -> &mut Self {
        self.framed(|r| serde_json::to_writer(&mut r.0, value).expect("protocol types serialize"))
    }

    pub fn list(&mut self, items: &[String]) -> &mut Self {
        self.len(items.len());
        for s in items {
            self.bytes(s.as_bytes());
        }
        self
    }

    /// Ends a row that has no more fields.
    fn done(&mut self, fields_left: usize) {
        for _ in 0..fields_left {
            self.none();
        }
    }

    fn send(&mut self, e: &Envelope) {
        self.row(0, None)
            .none()
            .none()
            .framed(|r| {
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
            .text(Some(kind.as_deref().unwrap_or_default()))
            .none()
            .bytes(json.as_bytes())
            .done(2);
    }

    /// A store write: its token and document.
    fn write(&mut self, tag: u8, token: FencingToken, document: &impl Serialize) {
        self.row(tag, Some(token))
            .none()
            .none()
            .json(document)
            .done(2);
    }

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

    pub fn region(&mut self, o: &RegionOutput) {
        match o {
            RegionOutput::Send(e) => self.send(e),
            RegionOutput::Notice(n) => self.notice(n),
            RegionOutput::StartShard { shard, entities } => {
                self.row(1, None).text(Some(shard)).done(2);
                self.list(entities).none();
            }
            RegionOutput::StartEntities { shard, entities } => {
                self.row(2, None).text(Some(shard)).done(2);
                self.list(entities).none();
            }
            RegionOutput::Deliver {
                shard,
                entity,
                payload,
            } => {
                self.row(3, None).text(Some(shard)).text(Some(entity));
                self.none().none().bytes(payload);
            }
            RegionOutput::StopShard { shard } => self.row(4, None).text(Some(shard)).done(4),
            RegionOutput::Undeliverable {
                shard,
                entity,
                payload,
                reason,
            } => {
                self.row(5, None).text(Some(shard)).text(Some(entity));
                self.bytes(reason.as_bytes()).none().bytes(payload);
            }
            RegionOutput::Stopped => self.row(6, None).done(5),
        }
    }
}

/// `items` written as rows by `write` (`Rows::coordinator`, `Rows::region`, `Rows::notice`)
/// behind their length, into `buffer` (answered back) when they fit, else into a new array.
pub fn rows<'l, T>(
    env: &mut JNIEnv<'l>,
    buffer: &JByteArray<'l>,
    items: &[T],
    write: fn(&mut Rows, &T),
) -> Result<jbyteArray> {
    let mut rows = Rows(SCRATCH.take());
    rows.0.clear();
    rows.framed(|r| items.iter().for_each(|o| write(r, o)));
    let answer = match fill(env, buffer, &rows.0) {
        true => buffer.as_raw(),
        false => env.byte_array_from_slice(&rows.0)?.into_raw(),
    };
    // Kept for the thread's next drain, unless a rare huge one grew it.
    if rows.0.capacity() <= 1 << 16 {
        SCRATCH.set(rows.0);
    }
    Ok(answer)
}

thread_local! {
    /// Where a drain writes its rows before the copy to Java, so a step allocates none here.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}
