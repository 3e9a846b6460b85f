//! The typed step form at the C boundary: text and bytes as pointer plus length, and the
//! protocol envelope as one tagged struct that serves both directions (the host reads it in a
//! "send" output or a transport callback, and fills it in to feed a "receive").

use std::ffi::c_char;
use std::ptr;

use shardline_core::protocol::{
    check_loads, json, Command, Directive, Endpoint, EntityId, Envelope, FencingToken, Forward,
    Message, RegionOffer, ShardHome, Stamp,
};

use crate::boundary::{Failure, Result};

/// UTF-8 text as pointer plus length; not NUL-terminated (print it with `%.*s`).
///
/// From shardline: `data` is never NULL, also when `len` is 0. From the host: `data` may be
/// NULL when `len` is 0; the text must be valid UTF-8.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct shardline_str {
    pub data: *const c_char,
    pub len: usize,
}

/// Bytes as pointer plus length. From shardline: `data` is never NULL. From the host: `data`
/// may be NULL when `len` is 0.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct shardline_bytes {
    pub data: *const u8,
    pub len: usize,
}

/// What a C caller passes as a message kind: any `uint32_t`, so that an unknown value is an
/// error and not undefined behaviour. The header calls it `shardline_message_kind`.
pub type shardline_message_kind_code = u32;

/// The kind of message an envelope carries. Commands go from a region (or proxy) to the
/// coordinator, directives from the coordinator to a region, forwards from region to region.
/// 0 is no kind, so that a zeroed struct is refused rather than read as a command.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum shardline_message_kind {
    /// Command; `node`, and `payload`: the region's offer as a JSON object (`capacity`,
    /// `tags`, `maxShards`), empty for the default offer.
    Register = 1,
    /// Command; `node`.
    RegisterProxy = 2,
    /// Command; `shard`.
    GetShardHome = 3,
    /// Command; `shard`, stamp (`token`, `version`).
    ShardStarted = 4,
    /// Command; `shard`, stamp.
    BeginHandOffAck = 5,
    /// Command; `shard`, stamp.
    ShardStopped = 6,
    /// Command; no fields.
    GracefulShutdownReq = 7,
    /// Command; no fields.
    RegionStopped = 8,
    /// Command; `shard`, `entity`.
    EntityStarted = 9,
    /// Command; `shard`, `entity`.
    EntityPassivated = 10,
    /// Directive; `token`.
    RegisterAck = 11,
    /// Directive; `shard`, `region` (its home), stamp.
    ShardHome = 12,
    /// Directive; `token`, `homes`.
    ShardHomes = 13,
    /// Directive; `shard`, stamp, `entities` (remembered ones; none unless remember-entities).
    HostShard = 14,
    /// Directive; `shard`, stamp.
    BeginHandOff = 15,
    /// Directive; `shard`, stamp.
    HandOff = 16,
    /// Region to region; `shard`, `entity`, `payload`.
    Forward = 17,
    /// Command; `payload`: the loads as a JSON object, shard id to a number or to a number
    /// per dimension.
    ReportLoads = 18,
    /// Command; `payload`: the new offer as a JSON object, as for REGISTER.
    UpdateOffer = 19,
}

/// The kind a host named by `code`. Kind enums number their values 1, 2, ... in `all` order
/// (a test checks it), so the lookup is an index.
pub fn kind_of<K: Copy>(
    all: &[K],
    code: u32,
    name: impl FnOnce() -> String,
    c_name: &str,
) -> Result<K> {
    (code as usize)
        .checked_sub(1)
        .and_then(|i| all.get(i))
        .copied()
        .ok_or_else(|| {
            Failure::invalid_argument(format!(
                "{} is {code}, which is no {c_name} (1 to {})",
                name(),
                all.len()
            ))
        })
}

impl shardline_message_kind {
    const ALL: [shardline_message_kind; 19] = [
        Self::Register,
        Self::RegisterProxy,
        Self::GetShardHome,
        Self::ShardStarted,
        Self::BeginHandOffAck,
        Self::ShardStopped,
        Self::GracefulShutdownReq,
        Self::RegionStopped,
        Self::EntityStarted,
        Self::EntityPassivated,
        Self::RegisterAck,
        Self::ShardHome,
        Self::ShardHomes,
        Self::HostShard,
        Self::BeginHandOff,
        Self::HandOff,
        Self::Forward,
        Self::ReportLoads,
        Self::UpdateOffer,
    ];

    /// Every kind, in value order (values are 1, 2, ...); cbindgen does not export functions
    /// that are not `extern "C"`, unlike public constants.
    pub fn all() -> &'static [Self] {
        &Self::ALL
    }
}

/// One entry of a ShardHomes directive.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct shardline_shard_home {
    pub shard: shardline_str,
    pub region: shardline_str,
    pub token: u64,
    pub version: u64,
}

/// A protocol message with its sender and addressee: the typed form of the JSON `envelope`.
/// Each kind uses the fields its shardline_message_kind lists; the others are ignored on input
/// and zero (empty text, NULL lists) on output.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct shardline_envelope {
    /// The sender's region id; empty text means the coordinator.
    pub from: shardline_str,
    /// The addressee's region id; empty text means the coordinator.
    pub to: shardline_str,
    /// A shardline_message_kind.
    pub kind: shardline_message_kind_code,
    pub shard: shardline_str,
    pub entity: shardline_str,
    /// ShardHome: the region the shard lives in.
    pub region: shardline_str,
    /// Register, RegisterProxy: the sender's cluster address.
    pub node: shardline_str,
    /// The coordinator's fencing token (RegisterAck, ShardHomes) or the token of the stamp.
    pub token: u64,
    /// The shard version of the stamp.
    pub version: u64,
    /// Forward: the entity message.
    pub payload: shardline_bytes,
    /// HostShard: `entities_len` entity ids (NULL when there are none).
    pub entities: *const shardline_str,
    pub entities_len: usize,
    /// ShardHomes: `homes_len` homes (NULL when there are none).
    pub homes: *const shardline_shard_home,
    pub homes_len: usize,
}

impl shardline_str {
    /// A view of `s` for the host; never NULL, so that even an empty one may go to memcpy.
    pub fn of(s: &str) -> shardline_str {
        shardline_str {
            data: if s.is_empty() {
                c"".as_ptr()
            } else {
                s.as_ptr().cast()
            },
            len: s.len(),
        }
    }

    pub fn empty() -> shardline_str {
        Self::of("")
    }

    /// The host's text; errors call it `name()` (built only on failure: this is the hot path).
    ///
    /// # Safety
    /// `data` is NULL or valid for reads of `len` bytes that outlive `'a`.
    pub unsafe fn text<'a>(&self, name: impl Fn() -> String) -> Result<&'a str> {
        // SAFETY: forwarded contract.
        let bytes = unsafe { array(self.data.cast::<u8>(), self.len, || name() + ".data") }?;
        std::str::from_utf8(bytes).map_err(|e| {
            Failure::invalid_argument(format!(
                "{} is not valid UTF-8 (invalid byte at offset {})",
                name(),
                e.valid_up_to()
            ))
        })
    }

    /// Like [`shardline_str::text`], copied.
    ///
    /// # Safety
    /// As for [`shardline_str::text`].
    pub unsafe fn string(&self, name: impl Fn() -> String) -> Result<String> {
        // SAFETY: forwarded contract.
        unsafe { self.text(name) }.map(str::to_owned)
    }
}

impl shardline_bytes {
    pub fn of(b: &[u8]) -> shardline_bytes {
        shardline_bytes {
            data: if b.is_empty() {
                c"".as_ptr().cast()
            } else {
                b.as_ptr()
            },
            len: b.len(),
        }
    }
}

/// A host-supplied array of `len` items; NULL is accepted for an empty one. Errors call it
/// `name()`.
///
/// # Safety
/// `p` is NULL or valid for reads of `len` items that outlive `'a`.
pub unsafe fn array<'a, T>(
    p: *const T,
    len: usize,
    name: impl FnOnce() -> String,
) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::null(&name()));
    }
    // SAFETY: caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// What an envelope view points into besides the envelope itself: the lists, laid out as the
/// header's structs. Kept next to the envelope for as long as the view is lent out.
#[derive(Default)]
pub struct Lists {
    strs: Vec<shardline_str>,
    homes: Vec<shardline_shard_home>,
    doc: Vec<u8>,
}

impl Lists {
    /// `value` as JSON bytes, valid until the next call.
    fn doc(&mut self, value: &impl serde::Serialize) -> shardline_bytes {
        self.doc.clear();
        serde_json::to_writer(&mut self.doc, value).expect("protocol types serialize");
        shardline_bytes::of(&self.doc)
    }

    /// `items` as an array of views, valid until the next call (and while `items` lives).
    pub fn strs<'a, S: AsRef<str> + 'a>(
        &mut self,
        items: impl IntoIterator<Item = &'a S>,
    ) -> (*const shardline_str, usize) {
        self.strs.clear();
        self.strs
            .extend(items.into_iter().map(|s| shardline_str::of(s.as_ref())));
        if self.strs.is_empty() {
            (ptr::null(), 0)
        } else {
            (self.strs.as_ptr(), self.strs.len())
        }
    }

    fn homes(&mut self, homes: &[ShardHome]) -> (*const shardline_shard_home, usize) {
        self.homes.clear();
        self.homes
            .extend(homes.iter().map(|h| shardline_shard_home {
                shard: shardline_str::of(&h.shard),
                region: shardline_str::of(&h.region),
                token: h.stamp.token.0,
                version: h.stamp.version.0,
            }));
        if self.homes.is_empty() {
            (ptr::null(), 0)
        } else {
            (self.homes.as_ptr(), self.homes.len())
        }
    }
}

fn endpoint_view(e: &Endpoint) -> shardline_str {
    match e {
        Endpoint::Coordinator => shardline_str::empty(),
        Endpoint::Region(r) => shardline_str::of(r),
    }
}

impl shardline_envelope {
    /// What an output that is not a send carries in its `envelope` field.
    pub fn none() -> shardline_envelope {
        shardline_envelope {
            from: shardline_str::empty(),
            to: shardline_str::empty(),
            kind: 0,
            shard: shardline_str::empty(),
            entity: shardline_str::empty(),
            region: shardline_str::empty(),
            node: shardline_str::empty(),
            token: 0,
            version: 0,
            payload: shardline_bytes::of(&[]),
            entities: ptr::null(),
            entities_len: 0,
            homes: ptr::null(),
            homes_len: 0,
        }
    }

    fn blank(e: &Envelope, kind: shardline_message_kind) -> shardline_envelope {
        shardline_envelope {
            from: endpoint_view(&e.from),
            to: endpoint_view(&e.to),
            kind: kind as u32,
            ..Self::none()
        }
    }

    /// A view of `e`, valid while `e` and `lists` are neither changed nor dropped.
    pub fn view(e: &Envelope, lists: &mut Lists) -> shardline_envelope {
        use shardline_message_kind as K;
        let with_shard = |kind, shard: &str, stamp: Option<&Stamp>| {
            let mut v = Self::blank(e, kind);
            v.shard = shardline_str::of(shard);
            if let Some(s) = stamp {
                v.token = s.token.0;
                v.version = s.version.0;
            }
            v
        };
        match &e.message {
            Message::Command(c) => match c {
                Command::Register { node, offer } => {
                    let mut v = Self::blank(e, K::Register);
                    v.node = shardline_str::of(node);
                    if !offer.is_default() {
                        v.payload = lists.doc(offer);
                    }
                    v
                }
                Command::RegisterProxy { node } => {
                    let mut v = Self::blank(e, K::RegisterProxy);
                    v.node = shardline_str::of(node);
                    v
                }
                Command::ReportLoads { loads } => {
                    let mut v = Self::blank(e, K::ReportLoads);
                    v.payload = lists.doc(loads);
                    v
                }
                Command::UpdateOffer { offer } => {
                    let mut v = Self::blank(e, K::UpdateOffer);
                    v.payload = lists.doc(offer);
                    v
                }
                Command::GetShardHome { shard } => with_shard(K::GetShardHome, shard, None),
                Command::ShardStarted { shard, stamp } => {
                    with_shard(K::ShardStarted, shard, Some(stamp))
                }
                Command::BeginHandOffAck { shard, stamp } => {
                    with_shard(K::BeginHandOffAck, shard, Some(stamp))
                }
                Command::ShardStopped { shard, stamp } => {
                    with_shard(K::ShardStopped, shard, Some(stamp))
                }
                Command::GracefulShutdownReq => Self::blank(e, K::GracefulShutdownReq),
                Command::RegionStopped => Self::blank(e, K::RegionStopped),
                Command::EntityStarted { shard, entity }
                | Command::EntityPassivated { shard, entity } => {
                    let kind = if matches!(c, Command::EntityStarted { .. }) {
                        K::EntityStarted
                    } else {
                        K::EntityPassivated
                    };
                    let mut v = with_shard(kind, shard, None);
                    v.entity = shardline_str::of(entity);
                    v
                }
            },
            Message::Directive(d) => match d {
                Directive::RegisterAck { token } => {
                    let mut v = Self::blank(e, K::RegisterAck);
                    v.token = token.0;
                    v
                }
                Directive::ShardHome(h) => {
                    let mut v = with_shard(K::ShardHome, &h.shard, Some(&h.stamp));
                    v.region = shardline_str::of(&h.region);
                    v
                }
                Directive::ShardHomes { token, homes } => {
                    let mut v = Self::blank(e, K::ShardHomes);
                    v.token = token.0;
                    (v.homes, v.homes_len) = lists.homes(homes);
                    v
                }
                Directive::HostShard {
                    shard,
                    stamp,
                    entities,
                } => {
                    let mut v = with_shard(K::HostShard, shard, Some(stamp));
                    (v.entities, v.entities_len) = lists.strs(entities);
                    v
                }
                Directive::BeginHandOff { shard, stamp } => {
                    with_shard(K::BeginHandOff, shard, Some(stamp))
                }
                Directive::HandOff { shard, stamp } => with_shard(K::HandOff, shard, Some(stamp)),
            },
            Message::Forward(f) => {
                let mut v = with_shard(K::Forward, &f.shard, None);
                v.entity = shardline_str::of(&f.entity);
                v.payload = shardline_bytes::of(&f.payload);
                v
            }
        }
    }

    /// The envelope the host filled in; errors name the offending field under `param`.
    ///
    /// # Safety
    /// Every text, byte and list field is NULL or valid for reads of its length.
    pub unsafe fn read(&self, param: &str) -> Result<Envelope> {
        use shardline_message_kind as K;
        let kind = kind_of(
            shardline_message_kind::all(),
            self.kind,
            || format!("{param}.kind"),
            "shardline_message_kind",
        )?;
        // SAFETY (every closure and block below): the caller's contract for these fields.
        let text =
            |s: &shardline_str, field: &str| unsafe { s.string(|| format!("{param}.{field}")) };
        let endpoint = |s: &shardline_str, field: &str| {
            Ok::<_, Failure>(if s.len == 0 {
                Endpoint::Coordinator
            } else {
                Endpoint::Region(unsafe { s.text(|| format!("{param}.{field}")) }?.into())
            })
        };
        let shard = || {
            unsafe { self.shard.text(|| format!("{param}.shard")) }
                .map(shardline_core::protocol::ShardId::from)
        };
        let entity =
            || unsafe { self.entity.text(|| format!("{param}.entity")) }.map(EntityId::from);
        let stamp = Stamp::new(self.token, self.version);
        let token = FencingToken(self.token);
        // The payload of the kinds that carry a JSON document in it.
        let doc = || {
            let bytes = unsafe {
                array(self.payload.data, self.payload.len, || {
                    format!("{param}.payload.data")
                })
            }?;
            std::str::from_utf8(bytes).map_err(|e| {
                Failure::invalid_argument(format!("{param}.payload is not UTF-8 text: {e}"))
            })
        };
        let offer = || -> Result<RegionOffer> {
            let offer: RegionOffer = json::from_str(doc()?, &format!("{param}.payload"))?;
            offer
                .check()
                .map_err(|e| e.context(format!("{param}.payload")))?;
            Ok(offer)
        };
        let message = match kind {
            K::Register => Message::Command(Command::Register {
                node: text(&self.node, "node")?,
                offer: Box::new(if self.payload.len == 0 {
                    RegionOffer::default()
                } else {
                    offer()?
                }),
            }),
            K::ReportLoads => {
                let loads = json::from_str(doc()?, &format!("{param}.payload"))?;
                check_loads(&loads).map_err(|e| e.context(format!("{param}.payload")))?;
                Message::Command(Command::ReportLoads { loads })
            }
            K::UpdateOffer => Message::Command(Command::UpdateOffer {
                offer: Box::new(offer()?),
            }),
            K::RegisterProxy => Message::Command(Command::RegisterProxy {
                node: text(&self.node, "node")?,
            }),
            K::GetShardHome => Message::Command(Command::GetShardHome { shard: shard()? }),
            K::ShardStarted => Message::Command(Command::ShardStarted {
                shard: shard()?,
                stamp,
            }),
            K::BeginHandOffAck => Message::Command(Command::BeginHandOffAck {
                shard: shard()?,
                stamp,
            }),
            K::ShardStopped => Message::Command(Command::ShardStopped {
                shard: shard()?,
                stamp,
            }),
            K::GracefulShutdownReq => Message::Command(Command::GracefulShutdownReq),
            K::RegionStopped => Message::Command(Command::RegionStopped),
            K::EntityStarted => Message::Command(Command::EntityStarted {
                shard: shard()?,
                entity: entity()?,
            }),
            K::EntityPassivated => Message::Command(Command::EntityPassivated {
                shard: shard()?,
                entity: entity()?,
            }),
            K::RegisterAck => Message::Directive(Directive::RegisterAck { token }),
            K::ShardHome => Message::Directive(Directive::ShardHome(ShardHome {
                shard: shard()?,
                region: text(&self.region, "region")?.into(),
                stamp,
            })),
            K::ShardHomes => {
                let homes =
                    unsafe { array(self.homes, self.homes_len, || format!("{param}.homes")) }?
                        .iter()
                        .enumerate()
                        .map(|(i, h)| {
                            Ok(ShardHome {
                                shard: unsafe {
                                    h.shard.text(|| format!("{param}.homes[{i}].shard"))
                                }?
                                .into(),
                                region: unsafe {
                                    h.region.string(|| format!("{param}.homes[{i}].region"))
                                }?
                                .into(),
                                stamp: Stamp::new(h.token, h.version),
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                Message::Directive(Directive::ShardHomes { token, homes })
            }
            K::HostShard => {
                let entities = unsafe {
                    array(self.entities, self.entities_len, || {
                        format!("{param}.entities")
                    })
                }?
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    unsafe { s.text(|| format!("{param}.entities[{i}]")) }.map(EntityId::from)
                })
                .collect::<Result<Vec<_>>>()?;
                Message::Directive(Directive::HostShard {
                    shard: shard()?,
                    stamp,
                    entities,
                })
            }
            K::BeginHandOff => Message::Directive(Directive::BeginHandOff {
                shard: shard()?,
                stamp,
            }),
            K::HandOff => Message::Directive(Directive::HandOff {
                shard: shard()?,
                stamp,
            }),
            K::Forward => {
                let payload = unsafe {
                    array(self.payload.data, self.payload.len, || {
                        format!("{param}.payload.data")
                    })
                }?;
                Message::Forward(Forward {
                    shard: shard()?,
                    entity: entity()?,
                    payload: payload.to_vec(),
                })
            }
        };
        Ok(Envelope {
            from: endpoint(&self.from, "from")?,
            to: endpoint(&self.to, "to")?,
            message,
        })
    }
}
