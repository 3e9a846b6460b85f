//! `shardline_region`: a shard region's (or proxy's) sans-IO step machine, driven with typed
//! inputs and outputs (`shardline_region_input` / `_output`) or with JSON ones (the step form
//! of `shardline_core::protocol::json`).

use std::ffi::c_char;

use shardline_core::model::Address;
use shardline_core::protocol::json;
use shardline_core::region::{
    ExtractorDoc, Region, RegionConfig, RegionInput, RegionOutput, ShardExtractor,
};

use crate::args::{self, Out};
use crate::boundary::{guard, infallible, Failure, Result};
use crate::envelope::{kind_of, shardline_bytes, shardline_envelope, shardline_str, Lists};
use crate::status::shardline_status;
use crate::step::{
    bytes, json_arg, versioned, write_json, write_opt_string, write_opt_u64, Lent, Machine,
};

/// A shard region: routes entity messages to the local shard, to the shard's remote home, or
/// into a bounded buffer while the home is unknown, and takes part in the coordinator's
/// hand-off protocol. Made by shardline_region_new, released by shardline_region_free.
///
/// Inputs are JSON objects tagged by "type": `{"type":"receive","envelope":{..}}` (a message
/// from the coordinator or another region), `{"type":"coordinatorChanged"}`,
/// `{"type":"regionTerminated","region":..}`, `{"type":"shardStopped","shard":..}` (after a
/// "stopShard" output was carried out), `{"type":"entityPassivated","shard":..,"entity":..}`,
/// `{"type":"gracefulShutdown"}`.
///
/// Outputs are JSON objects tagged by "type": `{"type":"send","envelope":{..}}`,
/// `{"type":"startShard","shard":..,"entities":[..]}`, `{"type":"startEntities","shard":..,"entities":[..]}`,
/// `{"type":"deliver","shard":..,"entity":..,"payload":"<base64>"}` (payloads are standard base64 text),
/// `{"type":"stopShard","shard":..}`,
/// `{"type":"undeliverable","shard":..,"entity":..,"payload":"<base64>","reason":..}`,
/// `{"type":"stopped"}`, `{"type":"notice","notice":{"type":"registered"|"directiveRefused",..}}`.
pub struct shardline_region {
    machine: Machine<Routing>,
}

struct Routing {
    region: Region,
    /// False when made without an extractor: only shardline_region_route_to_shard routes.
    extracts: bool,
    lent: Lent<RegionOutput, shardline_region_output>,
}

impl shardline_region {
    /// The region itself and whether it has an extractor, for a driver that takes the handle
    /// over.
    pub(crate) fn into_region(self) -> (Region, bool) {
        let r = self.machine.into_inner();
        (r.region, r.extracts)
    }

    pub(crate) fn in_use(&self) -> bool {
        self.machine.in_use()
    }
}

/// The message for routing without an extractor (shared with the driver).
pub(crate) const NO_EXTRACTOR: &str =
    "this region was made without an extractor: route with shardline_region_route_to_shard";

/// Creates a region; shardline_region_start makes it register with the coordinator.
///
/// @param id names this incarnation of the region (a restarted process picks a new one, e.g.
///        with a uid suffix).
/// @param node the region's cluster address, as the coordinator's membership knows it.
/// @param extractor_json nullable: how entity ids map to shard ids for shardline_region_route:
///        `{"kind":"pekko","numberOfShards":100}` (Pekko's HashCodeMessageExtractor) or
///        `{"kind":"actor-ts","numShards":100}`. NULL: the host computes shard ids itself and
///        routes with shardline_region_route_to_shard only.
/// @param config_json nullable (defaults): `{"bufferCapacity":100000,"retryIntervalMs":2000,
///        "proxy":false,"rememberEntities":false}`, any subset.
/// @param out receives the new region.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for an empty id, a malformed node address,
///         invalid JSON, an unknown kind or setting, or a value out of range (the message names
///         the field).
///
/// Ownership: the caller frees `*out` with shardline_region_free.
/// Thread safety: callable from any thread.
///
/// # Safety
/// Strings are NUL-terminated (or NULL where nullable); `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_new(
    id: *const c_char,
    node: *const c_char,
    extractor_json: *const c_char,
    config_json: *const c_char,
    out: *mut *mut shardline_region,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let id = unsafe { args::str(id, "id") }?;
        let node = unsafe { args::str(node, "node") }?;
        let node = Address::parse(node).map_err(|e| Failure::from(e.context("node")))?;
        let extractor = if extractor_json.is_null() {
            None
        } else {
            let doc: ExtractorDoc = unsafe { json_arg(extractor_json, "extractor_json") }?;
            Some(
                doc.build()
                    .map_err(|e| Failure::from(e.context("extractor_json")))?,
            )
        };
        let config = if config_json.is_null() {
            RegionConfig::default()
        } else {
            let c: RegionConfig = unsafe { json_arg(config_json, "config_json") }?;
            c.validate()?;
            c
        };
        let out = Out::new(out, "out")?;
        let extracts = extractor.is_some();
        // Without an extractor nothing calls it: route refuses before reaching the core.
        let extractor = extractor.unwrap_or_else(|| ShardExtractor::custom(|e| e.into()));
        let region = Region::new(config, id, node.as_str(), extractor)?;
        // SAFETY: caller's contract.
        unsafe {
            out.write(args::into_handle(shardline_region {
                machine: Machine::new(
                    "region",
                    Routing {
                        region,
                        extracts,
                        lent: Lent::default(),
                    },
                ),
            }))
        };
        Ok(())
    })
}

/// Releases a region.
///
/// @param region the region, or NULL (nothing happens).
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `region` must not be used afterwards. Outputs not polled
/// and messages still buffered are dropped.
/// Thread safety: must not race with any other use of `region`. Leaves the last error
/// untouched.
///
/// # Safety
/// `region` is NULL or a live region.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_free(region: *mut shardline_region) {
    infallible((), || {
        // SAFETY: NULL or live per the contract.
        if unsafe { region.as_ref() }.is_some_and(|r| !r.machine.in_use()) {
            // SAFETY: ownership returns once, per the contract.
            drop(unsafe { args::free(region) });
        }
    })
}

unsafe fn with<R>(
    region: *const shardline_region,
    f: impl FnOnce(&mut Routing) -> Result<R>,
) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { args::handle(region, "region") }?.machine.with(f)
}

/// Registers with the coordinator (queues a "register" send) and arms the retry timer.
///
/// @param region the region.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL handle.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_start(
    region: *mut shardline_region,
    now_ms: u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            with(region, |r| {
                r.region.start(now_ms);
                Ok(())
            })
        }
    })
}

/// Feeds one input (see shardline_region for the JSON forms). Directives older than what the
/// region has seen are refused with a "directiveRefused" notice, not an error.
///
/// @param region the region.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @param input_json the input, e.g. `{"type":"shardStopped","shard":"7"}`.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for invalid JSON, an unknown "type", or a missing,
///         extra or mistyped field (the message names it); the region is unchanged then.
///
/// Ownership: `input_json` stays the caller's.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `input_json` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_handle(
    region: *mut shardline_region,
    now_ms: u64,
    input_json: *const c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let text = unsafe { args::str(input_json, "input_json") }?;
        let input: RegionInput = RegionInput::from_json(text, "input_json")?;
        // SAFETY: caller's contract.
        unsafe {
            with(region, |r| {
                r.region.handle(now_ms, input);
                Ok(())
            })
        }
    })
}

/// Runs every timer due at `now_ms` (registration retries, asking again for the homes of
/// buffered shards).
///
/// @param region the region.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL handle.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_on_timeout(
    region: *mut shardline_region,
    now_ms: u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            with(region, |r| {
                r.region.on_timeout(now_ms);
                Ok(())
            })
        }
    })
}

/// When shardline_region_on_timeout should run next.
///
/// @param region the region.
/// @param out_has receives false when no timer is set.
/// @param out_ms receives the deadline on the host's monotonic clock (0 when none).
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL argument.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `out_has` and `out_ms` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_next_deadline(
    region: *const shardline_region,
    out_has: *mut bool,
    out_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        let has = Out::new(out_has, "out_has")?;
        let ms = Out::new(out_ms, "out_ms")?;
        // SAFETY: caller's contract.
        let deadline = unsafe { with(region, |r| Ok(r.region.next_deadline())) }?;
        // SAFETY: caller's contract.
        unsafe { write_opt_u64(has, ms, deadline) };
        Ok(())
    })
}

/// Takes the next queued output (see shardline_region for the JSON forms).
///
/// @param region the region.
/// @param out_json receives the output as a JSON object, or NULL when the queue is empty.
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL argument.
///
/// Ownership: the caller frees `*out_json` with shardline_string_free.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `out_json` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_poll_output(
    region: *mut shardline_region,
    out_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json, "out_json")?;
        // SAFETY: caller's contract.
        unsafe {
            with(region, |r| match r.region.poll_output() {
                Some(o) => write_json(out, &o),
                None => {
                    out.write(std::ptr::null_mut());
                    Ok(())
                }
            })
        }
    })
}

/// Takes every queued output at once, in order.
///
/// @param region the region.
/// @param out_json_array receives a JSON array of outputs (`[]` when the queue is empty).
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL argument.
///
/// Ownership: the caller frees `*out_json_array` with shardline_string_free.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `out_json_array` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_drain_outputs(
    region: *mut shardline_region,
    out_json_array: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json_array, "out_json_array")?;
        // SAFETY: caller's contract.
        unsafe { with(region, |r| write_json(out, &r.region.drain_outputs())) }
    })
}

/// What a C caller passes as a region input kind (any `uint32_t`; unknown values are
/// refused). The header calls it `shardline_region_input_kind`.
pub type shardline_region_input_kind_code = u32;

/// The kind of a typed region input: which fields of shardline_region_input it uses.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum shardline_region_input_kind {
    /// A message from the coordinator or another region: `envelope`.
    Receive = 1,
    /// The coordinator moved (or may have): register again.
    CoordinatorChanged = 2,
    /// Another region died: forget the homes it had. `region`.
    RegionTerminated = 3,
    /// The host finished stopping a shard after a STOP_SHARD output: `shard`.
    ShardStopped = 4,
    /// An entity was passivated on purpose: `shard`, `entity`.
    EntityPassivated = 5,
    /// Hand every shard off, then stop.
    GracefulShutdown = 6,
}

impl shardline_region_input_kind {
    const ALL: [shardline_region_input_kind; 6] = [
        Self::Receive,
        Self::CoordinatorChanged,
        Self::RegionTerminated,
        Self::ShardStopped,
        Self::EntityPassivated,
        Self::GracefulShutdown,
    ];

    /// Every kind, in value order (values are 1, 2, ...); cbindgen does not export functions
    /// that are not `extern "C"`, unlike public constants.
    pub fn all() -> &'static [Self] {
        &Self::ALL
    }
}

/// One region input in typed form: `kind` says which fields are read; the others are
/// ignored. Zero it, set `struct_size` to `sizeof(struct shardline_region_input)`, then fill
/// in the kind's fields (fields are only ever appended).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct shardline_region_input {
    /// sizeof(struct shardline_region_input) as the host was compiled with.
    pub struct_size: u32,
    /// A shardline_region_input_kind.
    pub kind: shardline_region_input_kind_code,
    pub envelope: shardline_envelope,
    pub region: shardline_str,
    pub shard: shardline_str,
    pub entity: shardline_str,
}

/// The core input the host described; errors name the field.
///
/// # Safety
/// `input` is NULL or a complete struct whose text, byte and list fields are valid for reads
/// of their lengths.
pub(crate) unsafe fn read_input(input: *const shardline_region_input) -> Result<RegionInput> {
    use shardline_region_input_kind as K;
    // SAFETY: caller's contract, here and for every field read below.
    let i = unsafe { versioned(input, "input", "shardline_region_input") }?;
    let kind = kind_of(
        &K::ALL,
        i.kind,
        || "input->kind".to_owned(),
        "shardline_region_input_kind",
    )?;
    let text = |s: &shardline_str, field: &str| unsafe { s.string(|| format!("input->{field}")) };
    Ok(match kind {
        K::Receive => RegionInput::Receive(unsafe { i.envelope.read("input->envelope") }?),
        K::CoordinatorChanged => RegionInput::CoordinatorChanged,
        K::RegionTerminated => RegionInput::RegionTerminated {
            region: text(&i.region, "region")?,
        },
        K::ShardStopped => RegionInput::ShardStopped {
            shard: text(&i.shard, "shard")?.into(),
        },
        K::EntityPassivated => RegionInput::EntityPassivated {
            shard: text(&i.shard, "shard")?.into(),
            entity: text(&i.entity, "entity")?.into(),
        },
        K::GracefulShutdown => RegionInput::GracefulShutdown,
    })
}

/// The kind of a typed region output: which fields of shardline_region_output it uses.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum shardline_region_output_kind {
    /// Send `envelope` to its `to`.
    Send = 1,
    /// Start hosting `shard`, with `entities` to start right away (remember-entities).
    StartShard = 2,
    /// More remembered `entities` for `shard`, already running.
    StartEntities = 3,
    /// Hand `payload` to `entity` of `shard`, hosted here.
    Deliver = 4,
    /// Stop every entity of `shard`, then feed SHARD_STOPPED.
    StopShard = 5,
    /// A message for `entity` of `shard` forwarded here that could not be kept: `payload`,
    /// `reason`.
    Undeliverable = 6,
    /// Graceful shutdown finished: nothing hosted, nothing buffered.
    Stopped = 7,
    /// Worth logging: `document` is the notice as JSON, e.g. `{"type":"registered","token":1}`.
    Notice = 8,
}

/// One region output in typed form, lent by shardline_region_next_output: `kind` says which
/// fields are set; the others are zero (empty text, NULL lists). Only shardline allocates it,
/// so fields may be appended without breaking hosts.
#[repr(C)]
pub struct shardline_region_output {
    pub kind: shardline_region_output_kind,
    /// SEND: the message.
    pub envelope: shardline_envelope,
    pub shard: shardline_str,
    pub entity: shardline_str,
    pub payload: shardline_bytes,
    /// START_SHARD, START_ENTITIES: `entities_len` entity ids (NULL when there are none).
    pub entities: *const shardline_str,
    pub entities_len: usize,
    /// UNDELIVERABLE: why.
    pub reason: shardline_str,
    /// NOTICE: the notice as JSON text.
    pub document: shardline_str,
}

fn output_view(
    o: &RegionOutput,
    lists: &mut Lists,
    document: &mut String,
) -> Result<shardline_region_output> {
    use shardline_region_output_kind as K;
    let mut v = shardline_region_output {
        kind: K::Send,
        envelope: shardline_envelope::none(),
        shard: shardline_str::empty(),
        entity: shardline_str::empty(),
        payload: shardline_bytes::of(&[]),
        entities: std::ptr::null(),
        entities_len: 0,
        reason: shardline_str::empty(),
        document: shardline_str::empty(),
    };
    match o {
        RegionOutput::Send(e) => v.envelope = shardline_envelope::view(e, lists),
        RegionOutput::StartShard { shard, entities }
        | RegionOutput::StartEntities { shard, entities } => {
            v.kind = if matches!(o, RegionOutput::StartShard { .. }) {
                K::StartShard
            } else {
                K::StartEntities
            };
            v.shard = shardline_str::of(shard);
            (v.entities, v.entities_len) = lists.strs(entities);
        }
        RegionOutput::Deliver {
            shard,
            entity,
            payload,
        } => {
            v.kind = K::Deliver;
            v.shard = shardline_str::of(shard);
            v.entity = shardline_str::of(entity);
            v.payload = shardline_bytes::of(payload);
        }
        RegionOutput::StopShard { shard } => {
            v.kind = K::StopShard;
            v.shard = shardline_str::of(shard);
        }
        RegionOutput::Undeliverable {
            shard,
            entity,
            payload,
            reason,
        } => {
            v.kind = K::Undeliverable;
            v.shard = shardline_str::of(shard);
            v.entity = shardline_str::of(entity);
            v.payload = shardline_bytes::of(payload);
            v.reason = shardline_str::of(reason);
        }
        RegionOutput::Stopped => v.kind = K::Stopped,
        RegionOutput::Notice(n) => {
            *document = json::to_string(n)?;
            v.kind = K::Notice;
            v.document = shardline_str::of(document);
        }
    }
    Ok(v)
}

/// Feeds one input in typed form: the step loop without JSON (the same inputs as
/// shardline_region_handle takes as JSON, with the same effects). Directives older than what
/// the region has seen are refused with a notice, not an error.
///
/// @param region the region.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @param input the input; `input->kind` says which fields are read.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a too small `struct_size`, an unknown kind
///         (of the input or of its envelope) or text that is not UTF-8 (the message names the
///         field); SHARDLINE_STATUS_NULL_POINTER for a NULL `input`, or a NULL `data` with a
///         non-zero length. The region is unchanged then.
///
/// Ownership: `input` and everything it points to stay the caller's; shardline copies what it
///            keeps before returning.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `input` is NULL or points to a readable struct of at least
/// `input->struct_size` bytes whose text, byte and list fields are NULL or valid for reads of
/// their lengths.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_feed(
    region: *mut shardline_region,
    now_ms: u64,
    input: *const shardline_region_input,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let input = unsafe { read_input(input) }?;
        // SAFETY: caller's contract.
        unsafe {
            with(region, |r| {
                r.region.handle(now_ms, input);
                Ok(())
            })
        }
    })
}

/// Takes the next queued output in typed form, lent out until the next call of this function
/// (routing needs no JSON: a "deliver" carries the payload as pointer and length, a "send" a
/// typed envelope).
///
/// @param region the region.
/// @param out receives the output, or NULL when the queue is empty.
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL argument.
///
/// Ownership: `*out` and everything it points to (text, lists, payload) belong to the region
///            and stay valid until the next shardline_region_next_output on this region,
///            shardline_region_free or shardline_region_driver_new, whichever comes first;
///            other calls (feeding inputs, routing, polling JSON outputs) leave it alone. Copy
///            what must live longer.
/// Thread safety: any thread; a host sharing the region between threads keeps its own
/// exclusion until it has read `*out` (the next call on the region replaces it).
///
/// # Safety
/// `region` is a live region; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_next_output(
    region: *mut shardline_region,
    out: *mut *const shardline_region_output,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let view = unsafe {
            with(region, |r| {
                let next = r.region.poll_output();
                r.lent.lend(next, output_view)
            })
        }?;
        // SAFETY: caller's contract.
        unsafe { out.write(view) };
        Ok(())
    })
}

/// Routes a message from a local sender, finding its shard with the region's extractor. It
/// leaves as a "deliver" output (shard hosted here), a "send" of a forward (remote home), or
/// waits in the buffer while the home is unknown (the region asks the coordinator).
///
/// @param region the region, made with an extractor.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @param entity the entity id.
/// @param payload the message bytes; may be NULL when `payload_len` is 0.
/// @param payload_len number of bytes at `payload`.
/// @return SHARDLINE_STATUS_INVALID_STATE when the region was made without an extractor, or
///         cannot take the message (buffer full, shut down; nothing was queued then).
///
/// Ownership: the payload is copied; the caller keeps its buffers.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `entity` is NUL-terminated; `payload` is valid for reads of
/// `payload_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_route(
    region: *mut shardline_region,
    now_ms: u64,
    entity: *const c_char,
    payload: *const u8,
    payload_len: usize,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let entity = unsafe { args::str(entity, "entity") }?;
        let payload = unsafe { bytes(payload, payload_len, "payload") }?;
        unsafe {
            with(region, |r| {
                if !r.extracts {
                    return Err(Failure::invalid_state(NO_EXTRACTOR));
                }
                let shard = r.region.shard_of(entity)?;
                r.region
                    .route_to_shard(now_ms, &shard, entity, payload)
                    .map_err(|e| Failure::invalid_state(e.to_string()))
            })
        }
    })
}

/// Routes a message whose shard the host already knows (see shardline_region_route).
///
/// @param region the region.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @param shard the shard id.
/// @param entity the entity id.
/// @param payload the message bytes; may be NULL when `payload_len` is 0.
/// @param payload_len number of bytes at `payload`.
/// @return SHARDLINE_STATUS_INVALID_STATE when the region cannot take the message (buffer
///         full, shut down; nothing was queued then).
///
/// Ownership: the payload is copied; the caller keeps its buffers.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; strings are NUL-terminated; `payload` is valid for reads of
/// `payload_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_route_to_shard(
    region: *mut shardline_region,
    now_ms: u64,
    shard: *const c_char,
    entity: *const c_char,
    payload: *const u8,
    payload_len: usize,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let shard = unsafe { args::str(shard, "shard") }?;
        let entity = unsafe { args::str(entity, "entity") }?;
        let payload = unsafe { bytes(payload, payload_len, "payload") }?;
        unsafe {
            with(region, |r| {
                r.region
                    .route_to_shard(now_ms, shard, entity, payload)
                    .map_err(|e| Failure::invalid_state(e.to_string()))
            })
        }
    })
}

/// Whether the coordinator has acknowledged the region's registration.
///
/// @param region the region.
/// @param out receives the flag.
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL argument.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_is_registered(
    region: *const shardline_region,
    out: *mut bool,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let registered = unsafe { with(region, |r| Ok(r.region.is_registered())) }?;
        // SAFETY: caller's contract.
        unsafe { out.write(registered) };
        Ok(())
    })
}

/// Where the region would deliver a shard's messages now: its own id for a shard it runs, the
/// remote home it knows, or nothing.
///
/// @param region the region.
/// @param shard the shard id.
/// @param out_region receives the region id, or NULL when the home is unknown (or the shard is
///        being handed off).
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL argument.
///
/// Ownership: the caller frees `*out_region` with shardline_string_free.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `shard` is NUL-terminated; `out_region` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_home_of(
    region: *const shardline_region,
    shard: *const c_char,
    out_region: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let shard = unsafe { args::str(shard, "shard") }?;
        let out = Out::new(out_region, "out_region")?;
        // SAFETY: caller's contract.
        unsafe { with(region, |r| write_opt_string(out, r.region.home_of(shard))) }
    })
}

/// How many messages wait in the buffer for shard homes (all shards together).
///
/// @param region the region.
/// @param out receives the count.
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL argument.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_buffered(
    region: *const shardline_region,
    out: *mut usize,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let n = unsafe { with(region, |r| Ok(r.region.buffered())) }?;
        // SAFETY: caller's contract.
        unsafe { out.write(n) };
        Ok(())
    })
}

/// The region's gauges and counters under OpenTelemetry-style names: a JSON array of
/// `{"name", "kind": "gauge"|"counter", "value", "description", "attributes"?}`
/// (`shardline.region.buffered`, `.rejected` by reason, `.directives_refused`, ...).
///
/// @param region the region.
/// @param out_json_array receives the JSON array.
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL argument.
///
/// Ownership: the caller frees `*out_json_array` with shardline_string_free.
/// Thread safety: any thread; calls on one region are serialised (see the overview).
///
/// # Safety
/// `region` is a live region; `out_json_array` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_metrics(
    region: *const shardline_region,
    out_json_array: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json_array, "out_json_array")?;
        // SAFETY: caller's contract.
        unsafe { with(region, |r| write_json(out, &r.region.metrics())) }
    })
}
