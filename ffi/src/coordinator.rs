//! `shardline_coordinator`: the shard coordinator's sans-IO step machine, driven with typed
//! inputs and outputs (`shardline_coordinator_input` / `_output`) or with JSON ones (the step
//! form of `shardline_core::protocol::json`).

use std::ffi::{c_char, CStr};

use shardline_core::coordinator::LeaseGrant;
use shardline_core::coordinator::StoredState;
use shardline_core::coordinator::{
    Coordinator, CoordinatorConfig, CoordinatorInput, CoordinatorOutput, LeaseRequest, Phase,
};
use shardline_core::model::Address;
use shardline_core::model::Version;
use shardline_core::model::{Member, MemberStatus};
use shardline_core::protocol::json;
use shardline_core::protocol::FencingToken;

use crate::args::{self, Out};
use crate::boundary::{guard, infallible, Failure, Result};
use crate::envelope::{kind_of, shardline_envelope, shardline_str};
use crate::status::shardline_status;
use crate::step::{
    json_arg, versioned, write_json, write_opt_string, write_opt_u64, Lent, Machine,
};
use crate::strategy::shardline_strategy;

/// A shard coordinator (Pekko's ShardCoordinator) gated by a fenced lease. Made by
/// shardline_coordinator_new, released by shardline_coordinator_free.
///
/// The host feeds inputs with its monotonic time in milliseconds, calls
/// shardline_coordinator_on_timeout at shardline_coordinator_next_deadline, and carries out
/// the outputs in order: a "persist" or "saveSnapshot" output must be durable before any later
/// output is carried out; when a write fails, drop the rest of the queue and feed
/// `{"type":"storeFailed","fenced":...}`.
///
/// Inputs are JSON objects tagged by "type":
/// `{"type":"receive","envelope":{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"getShardHome","shard":"7"}}}}`,
/// `{"type":"member","member":{"address":"pekko://sys@host:2552","status":"Up","appVersion":"1.0.0","dataCenter":"default","upNumber":1}}`
/// (all but address optional), `{"type":"memberRemoved","address":..}`,
/// `{"type":"reachability","address":..,"reachable":false}`, `{"type":"regionTerminated","region":..}`,
/// `{"type":"leaseGranted","token":1,"validUntilMs":..}`, `{"type":"leaseDenied"}`,
/// `{"type":"leaseRenewed","token":..,"validUntilMs":..}`, `{"type":"leaseRenewFailed","token":..}`,
/// `{"type":"leaseLost","token":..}`, `{"type":"stateLoaded","state":{"snapshot":null,"events":[]}}`,
/// `{"type":"stateLoadFailed","fenced":..}`, `{"type":"storeFailed","fenced":..}`,
/// `{"type":"preparingForShutdown"}`, `{"type":"stop"}`.
///
/// Outputs are JSON objects tagged by "type": `{"type":"send","envelope":{..}}`,
/// `{"type":"persist","token":..,"record":{..}}`, `{"type":"saveSnapshot","token":..,"snapshot":{..}}`,
/// `{"type":"lease","request":{"type":"acquire"|"renew"|"release",..}}`, `{"type":"loadState","token":..}`,
/// `{"type":"notice","notice":{"type":"active"|"steppedDown"|..,..}}`.
pub struct shardline_coordinator {
    machine: Machine<Stepping>,
}

struct Stepping {
    coordinator: Coordinator,
    lent: Lent<CoordinatorOutput, shardline_coordinator_output>,
}

impl shardline_coordinator {
    /// The coordinator itself, for a driver that takes the handle over.
    pub(crate) fn into_coordinator(self) -> Coordinator {
        self.machine.into_inner().coordinator
    }

    pub(crate) fn in_use(&self) -> bool {
        self.machine.in_use()
    }
}

/// Creates a coordinator in the idle phase; shardline_coordinator_start begins contending for
/// the lease.
///
/// @param strategy the placement policy, built-in or custom. On success the coordinator takes
///        it over: do not use or free `strategy` afterwards (shardline_coordinator_free releases
///        it, calling a custom strategy's `userdata_free`). On failure it stays the caller's.
///        A custom strategy's callbacks then run during the coordinator's calls, with the
///        coordinator's allocation state as their view; an allocation they fail is reported as
///        an "allocationFailed" notice.
/// @param self_address the node the coordinator runs on, e.g. "pekko://app@10.0.0.1:2552" (a
///        region there may register without being an Up member, and counts as local).
/// @param config_json nullable (Pekko's defaults): settings such as
///        `{"rebalanceIntervalMs":10000,"handoffTimeoutMs":60000,"rememberEntities":false}`.
/// @param out receives the new coordinator.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a malformed address, invalid JSON or an
///         unknown or out-of-range setting (the message names the field);
///         SHARDLINE_STATUS_REENTRANT_CALL when `strategy` is running a decision (called from
///         one of its callbacks).
///
/// Ownership: the caller frees `*out` with shardline_coordinator_free.
/// Thread safety: callable from any thread.
///
/// # Safety
/// `strategy` is a live strategy; strings are NUL-terminated (or NULL where nullable); `out`
/// is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_new(
    strategy: *mut shardline_strategy,
    self_address: *const c_char,
    config_json: *const c_char,
    out: *mut *mut shardline_coordinator,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let s = unsafe { args::handle(strategy, "strategy") }?;
        let self_address = unsafe { args::str(self_address, "self_address") }?;
        let self_address =
            Address::parse(self_address).map_err(|e| Failure::from(e.context("self_address")))?;
        let config = if config_json.is_null() {
            CoordinatorConfig::default()
        } else {
            let c: CoordinatorConfig = unsafe { json_arg(config_json, "config_json") }?;
            c.validate()?;
            c
        };
        let out = Out::new(out, "out")?;
        if s.in_use() {
            return Err(Failure::reentrant(
                "strategy is running a decision (a callback cannot hand its own strategy to a \
                 coordinator)",
            ));
        }
        // Validated above (Coordinator::new only re-checks the config), so ownership moves
        // only on success.
        // SAFETY: a live strategy handle per the contract; the caller gives it up here.
        let policy = unsafe { args::free(strategy) }
            .ok_or_else(|| Failure::null("strategy"))?
            .into_strategy();
        let coordinator = Coordinator::new(config, policy, self_address)?;
        // SAFETY: caller's contract.
        unsafe {
            out.write(args::into_handle(shardline_coordinator {
                machine: Machine::new(
                    "coordinator",
                    Stepping {
                        coordinator,
                        lent: Lent::default(),
                    },
                ),
            }))
        };
        Ok(())
    })
}

/// Releases a coordinator and the strategy it took over.
///
/// @param coordinator the coordinator, or NULL (nothing happens). A coordinator whose call is
///        under way (freed from a strategy callback) is not released.
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `coordinator` must not be used afterwards. Outputs not
/// polled yet are dropped.
/// Thread safety: must not race with any other use of `coordinator`. Leaves the last error
/// untouched.
///
/// # Safety
/// `coordinator` is NULL or a live coordinator.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_free(coordinator: *mut shardline_coordinator) {
    infallible((), || {
        // SAFETY: NULL or live per the contract.
        if unsafe { coordinator.as_ref() }.is_some_and(|c| !c.machine.in_use()) {
            // SAFETY: ownership returns once, per the contract.
            drop(unsafe { args::free(coordinator) });
        }
    })
}

/// Runs `f` on the coordinator behind a handle parameter.
unsafe fn with<R>(
    coordinator: *const shardline_coordinator,
    f: impl FnOnce(&mut Coordinator) -> Result<R>,
) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { args::handle(coordinator, "coordinator") }?
        .machine
        .with(|s| f(&mut s.coordinator))
}

/// Starts contending for the lease: queues a lease "acquire" request (nothing else happens
/// before it is granted). Does nothing after the first call.
///
/// @param coordinator the coordinator.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_start(
    coordinator: *mut shardline_coordinator,
    now_ms: u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            with(coordinator, |c| {
                c.start(now_ms);
                Ok(())
            })
        }
    })
}

/// Feeds one input (see shardline_coordinator for the JSON forms); outputs it causes are
/// queued for shardline_coordinator_poll_output / _drain_outputs.
///
/// @param coordinator the coordinator.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @param input_json the input, e.g. `{"type":"leaseGranted","token":1,"validUntilMs":60000}`.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for invalid JSON, an unknown "type", a missing,
///         extra or mistyped field (the message names it, e.g.
///         "input_json.envelope.message: unknown variant ..."), or a malformed address;
///         SHARDLINE_STATUS_INVALID_STATE for a host mistake the coordinator refuses (a lease
///         token that does not exceed every token seen before, a stored state that breaks its
///         own rules); SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///         Protocol anomalies (late acks, unknown regions) are ignored, not errors. An input
///         refused as INVALID_ARGUMENT changes nothing.
///
/// Ownership: `input_json` stays the caller's.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `input_json` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_handle(
    coordinator: *mut shardline_coordinator,
    now_ms: u64,
    input_json: *const c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let text = unsafe { args::str(input_json, "input_json") }?;
        let input: CoordinatorInput = CoordinatorInput::from_json(text, "input_json")?;
        // SAFETY: caller's contract.
        unsafe { with(coordinator, |c| Ok(c.handle(now_ms, input)?)) }
    })
}

/// Runs every timer due at `now_ms` (lease expiry and renewal, rebalancing, hand-off
/// timeouts, re-sends). Call it at shardline_coordinator_next_deadline; calling early or often
/// is harmless.
///
/// @param coordinator the coordinator.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @return SHARDLINE_STATUS_INVALID_STATE when a timer finds the stored state broken;
///         SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_on_timeout(
    coordinator: *mut shardline_coordinator,
    now_ms: u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe { with(coordinator, |c| Ok(c.on_timeout(now_ms)?)) }
    })
}

/// When shardline_coordinator_on_timeout should run next.
///
/// @param coordinator the coordinator.
/// @param out_has receives false when no timer is set.
/// @param out_ms receives the deadline on the host's monotonic clock (0 when none).
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `out_has` and `out_ms` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_next_deadline(
    coordinator: *const shardline_coordinator,
    out_has: *mut bool,
    out_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        let has = Out::new(out_has, "out_has")?;
        let ms = Out::new(out_ms, "out_ms")?;
        // SAFETY: caller's contract.
        let deadline = unsafe { with(coordinator, |c| Ok(c.next_deadline())) }?;
        // SAFETY: caller's contract.
        unsafe { write_opt_u64(has, ms, deadline) };
        Ok(())
    })
}

/// Takes the next queued output (see shardline_coordinator for the JSON forms).
///
/// @param coordinator the coordinator.
/// @param out_json receives the output as a JSON object, or NULL when the queue is empty.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: the caller frees `*out_json` with shardline_string_free.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `out_json` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_poll_output(
    coordinator: *mut shardline_coordinator,
    out_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json, "out_json")?;
        // SAFETY: caller's contract.
        unsafe {
            with(coordinator, |c| match c.poll_output() {
                Some(o) => write_json(out, &o),
                None => {
                    out.write(std::ptr::null_mut());
                    Ok(())
                }
            })
        }
    })
}

/// Takes every queued output at once, in the order they must be carried out.
///
/// @param coordinator the coordinator.
/// @param out_json_array receives a JSON array of outputs (`[]` when the queue is empty).
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: the caller frees `*out_json_array` with shardline_string_free.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `out_json_array` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_drain_outputs(
    coordinator: *mut shardline_coordinator,
    out_json_array: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json_array, "out_json_array")?;
        // SAFETY: caller's contract.
        unsafe { with(coordinator, |c| write_json(out, &c.drain_outputs())) }
    })
}

/// What a C caller passes as a coordinator input kind (any `uint32_t`; unknown values are
/// refused). The header calls it `shardline_coordinator_input_kind`.
pub type shardline_coordinator_input_kind_code = u32;

/// The kind of a typed coordinator input: which fields of shardline_coordinator_input it uses.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum shardline_coordinator_input_kind {
    /// A message from a region or proxy: `envelope`.
    Receive = 1,
    /// A cluster member joined or changed: `address`, `status`, `app_version`, `data_center`,
    /// `up_number`.
    Member = 2,
    /// A member left the cluster: `address`.
    MemberRemoved = 3,
    /// `address`, `reachable`.
    Reachability = 4,
    /// A region or proxy stopped while its node stays: `region`.
    RegionTerminated = 5,
    /// The lease was granted: `token`, `valid_until_ms`.
    LeaseGranted = 6,
    /// Someone else holds the lease.
    LeaseDenied = 7,
    /// `token`, `valid_until_ms`.
    LeaseRenewed = 8,
    /// The renewal could not reach the backend: `token`.
    LeaseRenewFailed = 9,
    /// `token`.
    LeaseLost = 10,
    /// The stored state was read: `state_json`.
    StateLoaded = 11,
    /// `fenced`.
    StateLoadFailed = 12,
    /// A persist or snapshot write failed: `fenced`.
    StoreFailed = 13,
    /// Full-cluster shutdown is coming: no more rebalancing.
    PreparingForShutdown = 14,
    /// Stop coordinating and release the lease.
    Stop = 15,
}

impl shardline_coordinator_input_kind {
    const ALL: [shardline_coordinator_input_kind; 15] = [
        Self::Receive,
        Self::Member,
        Self::MemberRemoved,
        Self::Reachability,
        Self::RegionTerminated,
        Self::LeaseGranted,
        Self::LeaseDenied,
        Self::LeaseRenewed,
        Self::LeaseRenewFailed,
        Self::LeaseLost,
        Self::StateLoaded,
        Self::StateLoadFailed,
        Self::StoreFailed,
        Self::PreparingForShutdown,
        Self::Stop,
    ];

    /// Every kind, in value order (values are 1, 2, ...); cbindgen does not export functions
    /// that are not `extern "C"`, unlike public constants.
    pub fn all() -> &'static [Self] {
        &Self::ALL
    }
}

/// One coordinator input in typed form: `kind` says which fields are read; the others are
/// ignored. The struct may live on the stack; shardline copies what it keeps. Zero it, set
/// `struct_size` to `sizeof(struct shardline_coordinator_input)`, then fill in the kind's
/// fields (fields are only ever appended).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct shardline_coordinator_input {
    /// sizeof(struct shardline_coordinator_input) as the host was compiled with.
    pub struct_size: u32,
    /// A shardline_coordinator_input_kind.
    pub kind: shardline_coordinator_input_kind_code,
    pub envelope: shardline_envelope,
    /// A node address such as "pekko://sys@host:2552".
    pub address: shardline_str,
    /// A member status name ("Up", "Leaving", ...); empty for Up.
    pub status: shardline_str,
    /// The member's application version; empty for 0.0.0.
    pub app_version: shardline_str,
    /// The member's data center; empty for "default".
    pub data_center: shardline_str,
    /// Pekko's upNumber (lower is older); INT32_MAX when unknown.
    pub up_number: i32,
    pub reachable: bool,
    /// A region or proxy id.
    pub region: shardline_str,
    /// A lease fencing token.
    pub token: u64,
    /// The lease's deadline on the host's monotonic clock.
    pub valid_until_ms: u64,
    /// The store has seen a larger token: another coordinator has taken over.
    pub fenced: bool,
    /// The stored state as JSON: `{"snapshot":null,"events":[]}` (the "stateLoaded" form).
    pub state_json: shardline_str,
}

/// The core input the host described; errors name the field (`input->envelope.shard ...`).
///
/// # Safety
/// `input` is NULL or a complete struct whose text, byte and list fields are valid for reads
/// of their lengths.
pub(crate) unsafe fn read_input(
    input: *const shardline_coordinator_input,
) -> Result<CoordinatorInput> {
    use shardline_coordinator_input_kind as K;
    // SAFETY: caller's contract, here and for every field read below.
    let i = unsafe { versioned(input, "input", "shardline_coordinator_input") }?;
    let kind = kind_of(
        &K::ALL,
        i.kind,
        || "input->kind".to_owned(),
        "shardline_coordinator_input_kind",
    )?;
    let text = |s: &shardline_str, field: &str| unsafe { s.text(|| format!("input->{field}")) };
    let address = || {
        Address::parse(text(&i.address, "address")?)
            .map_err(|e| Failure::from(e.context("input->address")))
    };
    let token = FencingToken(i.token);
    Ok(match kind {
        K::Receive => CoordinatorInput::Receive(unsafe { i.envelope.read("input->envelope") }?),
        K::Member => {
            let mut m = Member::new(address()?);
            if i.status.len > 0 {
                m.status = text(&i.status, "status")?
                    .parse::<MemberStatus>()
                    .map_err(|e| Failure::from(e.context("input->status")))?;
            }
            if i.app_version.len > 0 {
                m.app_version = Version::parse(text(&i.app_version, "app_version")?)
                    .map_err(|e| Failure::from(e.context("input->app_version")))?;
            }
            if i.data_center.len > 0 {
                m.data_center = text(&i.data_center, "data_center")?.to_owned();
            }
            m.up_number = i.up_number;
            CoordinatorInput::Member(Box::new(m))
        }
        K::MemberRemoved => CoordinatorInput::MemberRemoved {
            address: address()?.as_str().to_owned(),
        },
        K::Reachability => CoordinatorInput::Reachability {
            address: address()?.as_str().to_owned(),
            reachable: i.reachable,
        },
        K::RegionTerminated => CoordinatorInput::RegionTerminated {
            region: text(&i.region, "region")?.to_owned(),
        },
        K::LeaseGranted => CoordinatorInput::LeaseGranted(LeaseGrant {
            token,
            valid_until_ms: i.valid_until_ms,
        }),
        K::LeaseDenied => CoordinatorInput::LeaseDenied,
        K::LeaseRenewed => CoordinatorInput::LeaseRenewed {
            token,
            valid_until_ms: i.valid_until_ms,
        },
        K::LeaseRenewFailed => CoordinatorInput::LeaseRenewFailed { token },
        K::LeaseLost => CoordinatorInput::LeaseLost { token },
        K::StateLoaded => CoordinatorInput::StateLoaded(Box::new(json::from_str::<StoredState>(
            text(&i.state_json, "state_json")?,
            "input->state_json",
        )?)),
        K::StateLoadFailed => CoordinatorInput::StateLoadFailed { fenced: i.fenced },
        K::StoreFailed => CoordinatorInput::StoreFailed { fenced: i.fenced },
        K::PreparingForShutdown => CoordinatorInput::PreparingForShutdown,
        K::Stop => CoordinatorInput::Stop,
    })
}

/// The kind of a typed coordinator output: which fields of shardline_coordinator_output it
/// uses.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum shardline_coordinator_output_kind {
    /// Send `envelope` to its `to`.
    Send = 1,
    /// Append `document` (a record, JSON) to the store with `token`; durable before any later
    /// output is carried out.
    Persist = 2,
    /// Save `document` (a snapshot, JSON) with `token`; durable before any later output.
    SaveSnapshot = 3,
    /// Ask the lease backend for the lease; feed LEASE_GRANTED or LEASE_DENIED.
    LeaseAcquire = 4,
    /// Renew grant `token`; feed LEASE_RENEWED, LEASE_LOST or LEASE_RENEW_FAILED.
    LeaseRenew = 5,
    /// Release grant `token`.
    LeaseRelease = 6,
    /// Load the stored state with `token` (fencing older writers); feed STATE_LOADED or
    /// STATE_LOAD_FAILED.
    LoadState = 7,
    /// Worth logging; carrying it out is optional. `document` is the notice as JSON, e.g.
    /// `{"type":"handOffStarted","shard":"7","from":"r1","rebalance":true}`.
    Notice = 8,
}

/// One coordinator output in typed form, lent by shardline_coordinator_next_output: `kind`
/// says which fields are set; the others are zero (empty text, NULL lists). Only shardline
/// allocates it, so fields may be appended without breaking hosts.
#[repr(C)]
pub struct shardline_coordinator_output {
    pub kind: shardline_coordinator_output_kind,
    /// SEND: the message.
    pub envelope: shardline_envelope,
    /// PERSIST, SAVE_SNAPSHOT, LEASE_RENEW, LEASE_RELEASE, LOAD_STATE: the fencing token.
    pub token: u64,
    /// PERSIST, SAVE_SNAPSHOT, NOTICE: the document, as JSON text.
    pub document: shardline_str,
}

/// The typed view of `o`, pointing into `o`, `lists` and `document`.
fn output_view(
    o: &CoordinatorOutput,
    lists: &mut crate::envelope::Lists,
    document: &mut String,
) -> Result<shardline_coordinator_output> {
    use shardline_coordinator_output_kind as K;
    let mut v = shardline_coordinator_output {
        kind: K::Send,
        envelope: shardline_envelope::none(),
        token: 0,
        document: shardline_str::empty(),
    };
    let mut doc = |kind, text: String| {
        *document = text;
        v.kind = kind;
        v.document = shardline_str::of(document);
    };
    match o {
        CoordinatorOutput::Send(e) => v.envelope = shardline_envelope::view(e, lists),
        CoordinatorOutput::Persist { token, record } => {
            doc(K::Persist, json::to_string(record)?);
            v.token = token.0;
        }
        CoordinatorOutput::SaveSnapshot { token, snapshot } => {
            doc(K::SaveSnapshot, json::to_string(snapshot)?);
            v.token = token.0;
        }
        CoordinatorOutput::Notice(n) => doc(K::Notice, json::to_string(n)?),
        CoordinatorOutput::Lease(LeaseRequest::Acquire) => v.kind = K::LeaseAcquire,
        CoordinatorOutput::Lease(LeaseRequest::Renew { token }) => {
            v.kind = K::LeaseRenew;
            v.token = token.0;
        }
        CoordinatorOutput::Lease(LeaseRequest::Release { token }) => {
            v.kind = K::LeaseRelease;
            v.token = token.0;
        }
        CoordinatorOutput::LoadState { token } => {
            v.kind = K::LoadState;
            v.token = token.0;
        }
    }
    Ok(v)
}

/// Feeds one input in typed form: the step loop without JSON (the same inputs as
/// shardline_coordinator_handle takes as JSON, with the same effects).
///
/// @param coordinator the coordinator.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @param input the input; `input->kind` says which fields are read.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a too small `struct_size`, an unknown kind
///         (of the input or of its envelope), text that is not UTF-8, a malformed address,
///         member status or version, or an invalid `state_json` (the message names the field,
///         e.g. "input->envelope.shard is not valid UTF-8 ...");
///         SHARDLINE_STATUS_NULL_POINTER for a NULL `input`, or a NULL `data` with a non-zero
///         length; SHARDLINE_STATUS_INVALID_STATE for a host mistake the coordinator refuses
///         (a lease token that does not exceed every token seen before, a stored state that
///         breaks its own rules); SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own
///         strategy. An input refused as INVALID_ARGUMENT or NULL_POINTER changes nothing.
///
/// Ownership: `input` and everything it points to stay the caller's; shardline copies what it
///            keeps before returning.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `input` is NULL or points to a readable struct of at
/// least `input->struct_size` bytes whose text, byte and list fields are NULL or valid for
/// reads of their lengths.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_feed(
    coordinator: *mut shardline_coordinator,
    now_ms: u64,
    input: *const shardline_coordinator_input,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let input = unsafe { read_input(input) }?;
        // SAFETY: caller's contract.
        unsafe { with(coordinator, |c| Ok(c.handle(now_ms, input)?)) }
    })
}

/// Takes the next queued output in typed form, lent out until the next call of this function
/// (the hot path needs no JSON: a "send" is a typed envelope).
///
/// @param coordinator the coordinator.
/// @param out receives the output, or NULL when the queue is empty.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: `*out` and everything it points to (text, lists, payload) belong to the
///            coordinator and stay valid until the next shardline_coordinator_next_output on
///            this coordinator, shardline_coordinator_free or shardline_coordinator_driver_new,
///            whichever comes first; other calls (feeding inputs, polling JSON outputs) leave
///            it alone. Copy what must live longer.
/// Thread safety: any thread; a host sharing the coordinator between threads keeps its own
/// exclusion until it has read `*out` (the next call on the coordinator replaces it).
///
/// # Safety
/// `coordinator` is a live coordinator; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_next_output(
    coordinator: *mut shardline_coordinator,
    out: *mut *const shardline_coordinator_output,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let view = unsafe { args::handle(coordinator, "coordinator") }?
            .machine
            .with(|s| {
                let next = s.coordinator.poll_output();
                s.lent.lend(next, output_view)
            })?;
        // SAFETY: caller's contract.
        unsafe { out.write(view) };
        Ok(())
    })
}

fn phase_cstr(p: Phase) -> &'static CStr {
    match p {
        Phase::Idle => c"idle",
        Phase::AcquiringLease => c"acquiringLease",
        Phase::Loading => c"loading",
        Phase::Active => c"active",
        Phase::Stopped => c"stopped",
    }
}

/// The coordinator's phase: "idle", "acquiringLease", "loading", "active" or "stopped".
///
/// @param coordinator the coordinator.
/// @param out receives a static string.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: static; never freed.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_phase(
    coordinator: *const shardline_coordinator,
    out: *mut *const c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let phase = unsafe { with(coordinator, |c| Ok(c.phase())) }?;
        debug_assert_eq!(
            phase_cstr(phase).to_str().ok(),
            Some(shardline_core::coordinator::phase_name(phase))
        );
        // SAFETY: caller's contract.
        unsafe { out.write(phase_cstr(phase).as_ptr()) };
        Ok(())
    })
}

/// Whether the coordinator holds the lease and has restored its state (it answers regions
/// only then).
///
/// @param coordinator the coordinator.
/// @param out receives the flag.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_is_active(
    coordinator: *const shardline_coordinator,
    out: *mut bool,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let active = unsafe { with(coordinator, |c| Ok(c.is_active())) }?;
        // SAFETY: caller's contract.
        unsafe { out.write(active) };
        Ok(())
    })
}

/// The fencing token of the lease grant the coordinator holds.
///
/// @param coordinator the coordinator.
/// @param out_has receives false when it holds no grant.
/// @param out_token receives the token (0 when none).
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `out_has` and `out_token` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_token(
    coordinator: *const shardline_coordinator,
    out_has: *mut bool,
    out_token: *mut u64,
) -> shardline_status {
    guard(|| {
        let has = Out::new(out_has, "out_has")?;
        let token = Out::new(out_token, "out_token")?;
        // SAFETY: caller's contract.
        let t = unsafe { with(coordinator, |c| Ok(c.token().map(|t| t.0))) }?;
        // SAFETY: caller's contract.
        unsafe { write_opt_u64(has, token, t) };
        Ok(())
    })
}

/// The region a shard is allocated to in the coordinator's stored state.
///
/// @param coordinator the coordinator.
/// @param shard the shard id.
/// @param out_region receives the region id, or NULL when the shard is not allocated.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: the caller frees `*out_region` with shardline_string_free.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `shard` is NUL-terminated; `out_region` is valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_home_of(
    coordinator: *const shardline_coordinator,
    shard: *const c_char,
    out_region: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let shard = unsafe { args::str(shard, "shard") }?;
        let out = Out::new(out_region, "out_region")?;
        // SAFETY: caller's contract.
        unsafe {
            with(coordinator, |c| {
                write_opt_string(out, c.state().home_of(shard))
            })
        }
    })
}

/// The coordinator's gauges and counters under OpenTelemetry-style names: a JSON array of
/// `{"name", "kind": "gauge"|"counter", "value", "description", "attributes"?}`
/// (`shardline.coordinator.shards` per region, `.handoffs.in_progress`, `.rebalance.moves`, ...).
///
/// @param coordinator the coordinator.
/// @param out_json_array receives the JSON array.
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER for a NULL argument.
///
/// Ownership: the caller frees `*out_json_array` with shardline_string_free.
/// Thread safety: any thread; calls on one coordinator are serialised (see the overview).
///
/// # Safety
/// `coordinator` is a live coordinator; `out_json_array` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_metrics(
    coordinator: *const shardline_coordinator,
    out_json_array: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json_array, "out_json_array")?;
        // SAFETY: caller's contract.
        unsafe { with(coordinator, |c| write_json(out, &c.metrics())) }
    })
}
