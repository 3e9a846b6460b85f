//! `shardline_coordinator_driver` and `shardline_region_driver`: the core's callback drivers
//! (`shardline_core::driver`) with the host's C callbacks behind their traits, for hosts that
//! prefer "call me" to "poll me".

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use shardline_core::coordinator::LeaseGrant;
use shardline_core::coordinator::StoredState;
use shardline_core::coordinator::{CoordinatorInput, CoordinatorNotice, Record, Snapshot};
use shardline_core::host::Lease;
use shardline_core::host::{Clock, CoordinatorDriver, EntityHost, RegionDriver, Transport};
use shardline_core::host::{Store, WriteOutcome};
use shardline_core::protocol::json;
use shardline_core::protocol::{EntityId, Envelope, FencingToken, Payload};
use shardline_core::region::{RegionInput, RegionNotice};
use shardline_core::Error;

use crate::args::{self, Out};
use crate::boundary::{guard, infallible, Failure, Result};
use crate::coordinator::{self, shardline_coordinator, shardline_coordinator_input};
use crate::custom::shardline_userdata_free_callback;
use crate::envelope::{shardline_bytes, shardline_envelope, shardline_str, Lists};
use crate::region::{self, shardline_region, shardline_region_input, NO_EXTRACTOR};
use crate::status::{code_name, shardline_status, shardline_status_code};
use crate::step::{bytes, versioned, write_opt_string, write_opt_u64, Machine};

/// The host's monotonic clock, in milliseconds. It cannot fail; it must never go backwards.
pub type shardline_now_callback = Option<unsafe extern "C" fn(userdata: *mut c_void) -> u64>;

/// Carries `envelope` to its `to` (a region id, or the coordinator when empty). Delivery may be
/// lossy and reordered; the protocol copes. `envelope` and everything it points to are valid
/// only until the callback returns: copy or encode what must live longer.
pub type shardline_send_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        envelope: *const shardline_envelope,
    ) -> shardline_status_code,
>;

/// Something worth logging, as JSON text valid until the callback returns, e.g.
/// `{"type":"active","token":1}`.
pub type shardline_notice_callback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, notice_json: shardline_str)>;

/// Tries to take the lease at `now_ms`: on success write `*out_granted` (false: someone else
/// holds it) and, when granted, `*out_token` (strictly greater than every token granted
/// before) and `*out_valid_until_ms` (a deadline on the host's clock).
pub type shardline_lease_acquire_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        now_ms: u64,
        out_granted: *mut bool,
        out_token: *mut u64,
        out_valid_until_ms: *mut u64,
    ) -> shardline_status_code,
>;

/// Extends grant `token`: write `*out_renewed` (false: the grant is gone) and, when renewed,
/// `*out_valid_until_ms`. A failed status means the backend could not be reached.
pub type shardline_lease_renew_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        token: u64,
        now_ms: u64,
        out_renewed: *mut bool,
        out_valid_until_ms: *mut u64,
    ) -> shardline_status_code,
>;

/// Releases grant `token`.
pub type shardline_lease_release_callback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, token: u64) -> shardline_status_code>;

/// Writes `document_json` (a record to append, or a snapshot to save) with `token`: set
/// `*out_fenced` when the store has seen a larger token (then `*out_highest` is that token).
/// The text is valid until the callback returns. A failed status means the store could not
/// be reached.
pub type shardline_store_write_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        token: u64,
        document_json: shardline_str,
        out_fenced: *mut bool,
        out_highest: *mut u64,
    ) -> shardline_status_code,
>;

/// Reads the stored state and fences every token below `token`: set `*out_fenced` when a
/// larger token was seen, otherwise `*out_state_json` to the state as JSON
/// (`{"snapshot":..,"events":[..]}`). The text stays the host's; it must stay valid until the
/// call into shardline that ran this callback returns (shardline reads it right after the
/// callback).
pub type shardline_store_load_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        token: u64,
        out_fenced: *mut bool,
        out_state_json: *mut shardline_str,
    ) -> shardline_status_code,
>;

/// Start hosting `shard`; `entities` (`entities_len` ids, NULL when none) are remembered ones
/// to start right away. Pointers are valid until the callback returns.
pub type shardline_start_shard_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        shard: shardline_str,
        entities: *const shardline_str,
        entities_len: usize,
    ) -> shardline_status_code,
>;

/// Hand `payload` to `entity` of `shard`. Pointers are valid until the callback returns.
pub type shardline_deliver_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        shard: shardline_str,
        entity: shardline_str,
        payload: shardline_bytes,
    ) -> shardline_status_code,
>;

/// Stop every entity of `shard`: set `*out_stopped` when they are already stopped; otherwise
/// feed SHARDLINE_REGION_INPUT_KIND_SHARD_STOPPED (shardline_region_driver_feed) once they are.
pub type shardline_stop_shard_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        shard: shardline_str,
        out_stopped: *mut bool,
    ) -> shardline_status_code,
>;

/// A message forwarded here by another region that could not be kept, and why.
pub type shardline_undeliverable_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        shard: shardline_str,
        entity: shardline_str,
        payload: shardline_bytes,
        reason: shardline_str,
    ) -> shardline_status_code,
>;

/// Graceful shutdown finished: nothing hosted, nothing buffered.
pub type shardline_stopped_callback =
    Option<unsafe extern "C" fn(userdata: *mut c_void) -> shardline_status_code>;

/// What a coordinator driver does its I/O with. shardline copies the struct, so it may live on
/// the stack. Fields are only ever appended: set `struct_size` to
/// `sizeof(struct shardline_coordinator_callbacks)`.
///
/// Every callback gets `userdata` first and runs synchronously on the thread that called into
/// the driver, during that call. A status other than SHARDLINE_STATUS_OK fails the callback:
/// the driver still carries out the rest (as the protocol requires) and the call then returns
/// SHARDLINE_STATUS_CALLBACK_FAILED naming the first callback that failed.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct shardline_coordinator_callbacks {
    /// sizeof(struct shardline_coordinator_callbacks) as the host was compiled with.
    pub struct_size: u32,
    /// Passed to every callback; shardline never reads it.
    pub userdata: *mut c_void,
    /// Required.
    pub now_ms: shardline_now_callback,
    /// Required.
    pub send: shardline_send_callback,
    /// Required.
    pub lease_acquire: shardline_lease_acquire_callback,
    /// Required.
    pub lease_renew: shardline_lease_renew_callback,
    /// Required.
    pub lease_release: shardline_lease_release_callback,
    /// Required: appends a record (write-ahead: durable before the callback returns).
    pub store_append: shardline_store_write_callback,
    /// Required: saves a snapshot.
    pub store_save_snapshot: shardline_store_write_callback,
    /// Required.
    pub store_load: shardline_store_load_callback,
    /// Optional: NULL drops notices.
    pub notice: shardline_notice_callback,
    /// Optional: called once with `userdata` when the driver is freed.
    pub userdata_free: shardline_userdata_free_callback,
}

/// What a region driver does its I/O with, and where its entities live. shardline copies the
/// struct, so it may live on the stack. Fields are only ever appended: set `struct_size` to
/// `sizeof(struct shardline_region_callbacks)`. Callbacks run as for
/// shardline_coordinator_callbacks.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct shardline_region_callbacks {
    /// sizeof(struct shardline_region_callbacks) as the host was compiled with.
    pub struct_size: u32,
    /// Passed to every callback; shardline never reads it.
    pub userdata: *mut c_void,
    /// Required.
    pub now_ms: shardline_now_callback,
    /// Required.
    pub send: shardline_send_callback,
    /// Required.
    pub start_shard: shardline_start_shard_callback,
    /// Optional: NULL calls `start_shard` instead.
    pub start_entities: shardline_start_shard_callback,
    /// Required.
    pub deliver: shardline_deliver_callback,
    /// Required.
    pub stop_shard: shardline_stop_shard_callback,
    /// Optional: NULL drops such messages.
    pub undeliverable: shardline_undeliverable_callback,
    /// Optional.
    pub stopped: shardline_stopped_callback,
    /// Optional: NULL drops notices.
    pub notice: shardline_notice_callback,
    /// Optional: called once with `userdata` when the driver is freed.
    pub userdata_free: shardline_userdata_free_callback,
}

/// What both callback structs have in common.
trait Callbacks: Copy {
    const C_NAME: &'static str;
    /// Which driver, in messages.
    const WHAT: &'static str;
    fn userdata(&self) -> *mut c_void;
    fn now_ms(&self) -> shardline_now_callback;
    fn send(&self) -> shardline_send_callback;
    fn notice(&self) -> shardline_notice_callback;
    fn userdata_free(&self) -> shardline_userdata_free_callback;
    /// The required callbacks, by field name.
    fn required(&self) -> Vec<(&'static str, bool)>;
}

impl Callbacks for shardline_coordinator_callbacks {
    const C_NAME: &'static str = "shardline_coordinator_callbacks";
    const WHAT: &'static str = "coordinator driver";
    fn userdata(&self) -> *mut c_void {
        self.userdata
    }
    fn now_ms(&self) -> shardline_now_callback {
        self.now_ms
    }
    fn send(&self) -> shardline_send_callback {
        self.send
    }
    fn notice(&self) -> shardline_notice_callback {
        self.notice
    }
    fn userdata_free(&self) -> shardline_userdata_free_callback {
        self.userdata_free
    }
    fn required(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("now_ms", self.now_ms.is_some()),
            ("send", self.send.is_some()),
            ("lease_acquire", self.lease_acquire.is_some()),
            ("lease_renew", self.lease_renew.is_some()),
            ("lease_release", self.lease_release.is_some()),
            ("store_append", self.store_append.is_some()),
            ("store_save_snapshot", self.store_save_snapshot.is_some()),
            ("store_load", self.store_load.is_some()),
        ]
    }
}

impl Callbacks for shardline_region_callbacks {
    const C_NAME: &'static str = "shardline_region_callbacks";
    const WHAT: &'static str = "region driver";
    fn userdata(&self) -> *mut c_void {
        self.userdata
    }
    fn now_ms(&self) -> shardline_now_callback {
        self.now_ms
    }
    fn send(&self) -> shardline_send_callback {
        self.send
    }
    fn notice(&self) -> shardline_notice_callback {
        self.notice
    }
    fn userdata_free(&self) -> shardline_userdata_free_callback {
        self.userdata_free
    }
    fn required(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("now_ms", self.now_ms.is_some()),
            ("send", self.send.is_some()),
            ("start_shard", self.start_shard.is_some()),
            ("deliver", self.deliver.is_some()),
            ("stop_shard", self.stop_shard.is_some()),
        ]
    }
}

/// The host's callbacks behind the core's traits. Every trait object of one driver holds a
/// copy; they share the record of the first callback that failed, which turns the core error
/// the driver returns back into CALLBACK_FAILED.
#[derive(Clone)]
struct Host<C> {
    cb: C,
    failed: Arc<Mutex<Option<Failure>>>,
}

// SAFETY: the header makes the host promise that userdata and callbacks may be used from
// whichever thread uses the driver; shardline calls them only on the calling thread, during a
// call, one call at a time (the driver is not Sync).
unsafe impl<C> Send for Host<C> {}

/// A callback the constructor found present; reaching the error means a bug.
fn present<F>(f: Option<F>, name: &str) -> shardline_core::Result<F> {
    f.ok_or_else(|| Error::invalid_state(format!("the {name} callback is NULL")))
}

impl<C: Callbacks> Host<C> {
    /// Reads the callbacks struct, checking its size and the required callbacks but those
    /// whose names start with one of `served` (roles shardline's own backends play).
    ///
    /// # Safety
    /// As for [`versioned`].
    unsafe fn new(callbacks: *const C, served: &[&str]) -> Result<Host<C>> {
        // SAFETY: forwarded contract.
        let cb = *unsafe { versioned(callbacks, "callbacks", C::C_NAME) }?;
        let needed = |name: &str| !served.iter().any(|p| name.starts_with(p));
        if let Some((name, _)) = cb
            .required()
            .into_iter()
            .find(|(name, here)| !here && needed(name))
        {
            return Err(Failure::invalid_argument(format!(
                "callbacks->{name} is NULL (it is required)"
            )));
        }
        Ok(Host {
            cb,
            failed: Arc::default(),
        })
    }

    /// Turns a callback's status into a core error, recording the first failure.
    fn check(&self, name: &str, code: shardline_status_code) -> shardline_core::Result<()> {
        if code == shardline_status::Ok as u32 {
            return Ok(());
        }
        let f = Failure::new(
            shardline_status::CallbackFailed,
            format!(
                "the {name} callback of the {} returned {}",
                C::WHAT,
                code_name(code)
            ),
        );
        let e = Error::invalid_state(f.message.clone());
        self.failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(f);
        Err(e)
    }

    /// What a driver call's error becomes: the callback failure it stems from, if it does.
    fn failure(&self, e: Error) -> Failure {
        match self
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            Some(f) if f.message == e.message() => f,
            _ => e.into(),
        }
    }

    fn forget_failures(&self) {
        self.failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }

    fn notices<N: Serialize>(&self, notices: Vec<N>) -> Result<()> {
        if let Some(f) = self.cb.notice() {
            for n in notices {
                let json = json::to_string(&n)?;
                // SAFETY: the host vouched for the callback; the text lives across the call.
                unsafe { f(self.cb.userdata(), shardline_str::of(&json)) };
            }
        }
        Ok(())
    }
}

impl<C: Callbacks> Transport for Host<C> {
    fn send(&mut self, envelope: Envelope) -> shardline_core::Result<()> {
        let f = present(self.cb.send(), "send")?;
        let mut lists = Lists::default();
        let view = shardline_envelope::view(&envelope, &mut lists);
        // SAFETY: the view and what it points to live across the call.
        let code = unsafe { f(self.cb.userdata(), &view) };
        self.check("send", code)
    }
}

impl<C: Callbacks> Clock for Host<C> {
    fn now_ms(&self) -> u64 {
        // Present (checked at construction); a clock cannot fail, so time would stand still.
        self.cb
            .now_ms()
            // SAFETY: the host vouched for the callback.
            .map_or(0, |f| unsafe { f(self.cb.userdata()) })
    }
}

impl Host<shardline_coordinator_callbacks> {
    fn write(
        &mut self,
        name: &str,
        f: shardline_store_write_callback,
        token: FencingToken,
        document: &impl Serialize,
    ) -> shardline_core::Result<WriteOutcome> {
        let f = present(f, name)?;
        let json = json::to_string(document)?;
        let (mut fenced, mut highest) = (false, 0);
        // SAFETY: the host vouched for the callback; every pointer lives across the call.
        let code = unsafe {
            f(
                self.cb.userdata,
                token.0,
                shardline_str::of(&json),
                &mut fenced,
                &mut highest,
            )
        };
        self.check(name, code)?;
        Ok(if fenced {
            WriteOutcome::Fenced {
                highest: FencingToken(highest),
            }
        } else {
            WriteOutcome::Written
        })
    }
}

impl Lease for Host<shardline_coordinator_callbacks> {
    fn acquire(&mut self, now_ms: u64) -> shardline_core::Result<Option<LeaseGrant>> {
        let f = present(self.cb.lease_acquire, "lease_acquire")?;
        let (mut granted, mut token, mut until) = (false, 0, 0);
        // SAFETY: the host vouched for the callback; every pointer lives across the call.
        let code = unsafe {
            f(
                self.cb.userdata,
                now_ms,
                &mut granted,
                &mut token,
                &mut until,
            )
        };
        self.check("lease_acquire", code)?;
        Ok(granted.then_some(LeaseGrant {
            token: FencingToken(token),
            valid_until_ms: until,
        }))
    }

    fn renew(&mut self, token: FencingToken, now_ms: u64) -> shardline_core::Result<Option<u64>> {
        let f = present(self.cb.lease_renew, "lease_renew")?;
        let (mut renewed, mut until) = (false, 0);
        // SAFETY: as above.
        let code = unsafe { f(self.cb.userdata, token.0, now_ms, &mut renewed, &mut until) };
        self.check("lease_renew", code)?;
        Ok(renewed.then_some(until))
    }

    fn release(&mut self, token: FencingToken) -> shardline_core::Result<()> {
        let f = present(self.cb.lease_release, "lease_release")?;
        // SAFETY: the host vouched for the callback.
        let code = unsafe { f(self.cb.userdata, token.0) };
        self.check("lease_release", code)
    }
}

impl Store for Host<shardline_coordinator_callbacks> {
    fn append(
        &mut self,
        token: FencingToken,
        record: &Record,
    ) -> shardline_core::Result<WriteOutcome> {
        self.write("store_append", self.cb.store_append, token, record)
    }

    fn save_snapshot(
        &mut self,
        token: FencingToken,
        snapshot: &Snapshot,
    ) -> shardline_core::Result<WriteOutcome> {
        self.write(
            "store_save_snapshot",
            self.cb.store_save_snapshot,
            token,
            snapshot,
        )
    }

    fn load(&mut self, token: FencingToken) -> shardline_core::Result<Option<StoredState>> {
        let f = present(self.cb.store_load, "store_load")?;
        let mut fenced = false;
        let mut text = shardline_str {
            data: ptr::null(),
            len: 0,
        };
        // SAFETY: the host vouched for the callback; every pointer lives across the call.
        let code = unsafe { f(self.cb.userdata, token.0, &mut fenced, &mut text) };
        self.check("store_load", code)?;
        if fenced {
            return Ok(None);
        }
        const NAME: &str = "the state_json of the store_load callback";
        // SAFETY: the host keeps the text valid until this call returns.
        let json = unsafe { text.text(|| NAME.to_owned()) }
            .map_err(|f| Error::invalid_argument(f.message))?;
        json::from_str(json, NAME).map(Some)
    }
}

impl Host<shardline_region_callbacks> {
    fn start(
        &mut self,
        name: &str,
        f: shardline_start_shard_callback,
        shard: &str,
        entities: &[EntityId],
    ) -> shardline_core::Result<()> {
        let f = present(f, name)?;
        let mut lists = Lists::default();
        let (list, len) = lists.strs(entities);
        // SAFETY: the host vouched for the callback; every pointer lives across the call.
        let code = unsafe { f(self.cb.userdata, shardline_str::of(shard), list, len) };
        self.check(name, code)
    }
}

impl EntityHost for Host<shardline_region_callbacks> {
    fn start_shard(&mut self, shard: &str, entities: &[EntityId]) -> shardline_core::Result<()> {
        self.start("start_shard", self.cb.start_shard, shard, entities)
    }

    fn start_entities(&mut self, shard: &str, entities: &[EntityId]) -> shardline_core::Result<()> {
        match self.cb.start_entities {
            Some(_) => self.start("start_entities", self.cb.start_entities, shard, entities),
            None => self.start_shard(shard, entities),
        }
    }

    fn deliver(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
    ) -> shardline_core::Result<()> {
        let f = present(self.cb.deliver, "deliver")?;
        // SAFETY: the host vouched for the callback; every pointer lives across the call.
        let code = unsafe {
            f(
                self.cb.userdata,
                shardline_str::of(shard),
                shardline_str::of(entity),
                shardline_bytes::of(&payload),
            )
        };
        self.check("deliver", code)
    }

    fn stop_shard(&mut self, shard: &str) -> shardline_core::Result<bool> {
        let f = present(self.cb.stop_shard, "stop_shard")?;
        let mut stopped = false;
        // SAFETY: as above.
        let code = unsafe { f(self.cb.userdata, shardline_str::of(shard), &mut stopped) };
        self.check("stop_shard", code)?;
        Ok(stopped)
    }

    fn undeliverable(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
        reason: &str,
    ) -> shardline_core::Result<()> {
        let Some(f) = self.cb.undeliverable else {
            return Ok(());
        };
        // SAFETY: as above.
        let code = unsafe {
            f(
                self.cb.userdata,
                shardline_str::of(shard),
                shardline_str::of(entity),
                shardline_bytes::of(&payload),
                shardline_str::of(reason),
            )
        };
        self.check("undeliverable", code)
    }

    fn stopped(&mut self) -> shardline_core::Result<()> {
        let Some(f) = self.cb.stopped else {
            return Ok(());
        };
        // SAFETY: the host vouched for the callback.
        let code = unsafe { f(self.cb.userdata) };
        self.check("stopped", code)
    }
}

/// Calls `userdata_free` once, when the driver handle goes.
struct Userdata<C: Callbacks>(C);

impl<C: Callbacks> Drop for Userdata<C> {
    fn drop(&mut self) {
        if let Some(free) = self.0.userdata_free() {
            // SAFETY: the host supplied this callback for exactly this userdata.
            unsafe { free(self.0.userdata()) }
        }
    }
}

/// A core driver whose notices can be taken.
trait Driven {
    type Notice: Serialize;
    fn take_notices(&mut self) -> Vec<Self::Notice>;
}

impl Driven for CoordinatorDriver {
    type Notice = CoordinatorNotice;
    fn take_notices(&mut self) -> Vec<CoordinatorNotice> {
        CoordinatorDriver::take_notices(self)
    }
}

impl Driven for RegionDriver {
    type Notice = RegionNotice;
    fn take_notices(&mut self) -> Vec<RegionNotice> {
        RegionDriver::take_notices(self)
    }
}

/// A driver with the host that runs its callbacks. Fields drop in order, so `userdata_free`
/// runs after the driver (and every copy of the callbacks) is gone.
struct Driving<D, C: Callbacks> {
    driver: D,
    host: Host<C>,
    extracts: bool,
    _userdata: Userdata<C>,
}

impl<D: Driven, C: Callbacks> Driving<D, C> {
    fn new(driver: D, host: Host<C>, extracts: bool) -> Driving<D, C> {
        Driving {
            driver,
            _userdata: Userdata(host.cb),
            host,
            extracts,
        }
    }

    /// Runs one driver call, then hands its notices to the host; the error names the callback
    /// that failed first, when one did.
    fn call<R>(&mut self, f: impl FnOnce(&mut D) -> shardline_core::Result<R>) -> Result<R> {
        self.host.forget_failures();
        let r = f(&mut self.driver);
        let notices = self.host.notices(self.driver.take_notices());
        let r = r.map_err(|e| self.host.failure(e))?;
        notices?;
        Ok(r)
    }
}

/// What a driver is made with besides the host's callbacks: the roles shardline's own backends
/// play (their callbacks are then not required), and those backends, taken last (`take` is
/// the final step that may fail).
pub(crate) struct Backends<B> {
    pub served: &'static [&'static str],
    pub take: B,
}

/// No backends of shardline's own: the host's callbacks play every role.
fn callbacks_only<B>() -> Backends<impl FnOnce() -> Result<Option<B>>> {
    Backends {
        served: &[],
        take: || Ok(None),
    }
}

/// Takes over a step machine handle for a new driver handle: on success the handle and the
/// host's userdata belong to the driver; on failure nothing changes.
///
/// # Safety
/// `machine` is NULL or a live handle; `callbacks` as for [`versioned`]; `out` is valid for a
/// write.
unsafe fn take_over<M, H, C: Callbacks, B>(
    machine: *mut M,
    callbacks: *const C,
    out: *mut *mut H,
    what: &'static str,
    in_use: impl FnOnce(&M) -> bool,
    backends: Backends<impl FnOnce() -> Result<B>>,
    build: impl FnOnce(M, Host<C>, B) -> H,
) -> Result<()> {
    // SAFETY: caller's contract, for every parameter.
    let m = unsafe { args::handle(machine, what) }?;
    let host = unsafe { Host::new(callbacks, backends.served) }?;
    let out = Out::new(out, "out")?;
    if in_use(m) {
        return Err(Failure::reentrant(format!(
            "the {what} is in use by a call in progress (a callback cannot hand it to a driver)"
        )));
    }
    let b = (backends.take)()?;
    // SAFETY: live per the contract; ownership moves only now that nothing can fail.
    let m = unsafe { args::free(machine) }.ok_or_else(|| Failure::null(what))?;
    // SAFETY: caller's contract.
    unsafe { out.write(args::into_handle(build(*m, host, b))) };
    Ok(())
}

/// Releases a driver handle unless one of its calls is under way.
///
/// # Safety
/// `p` is NULL or a live handle made by [`args::into_handle`].
unsafe fn release<H>(p: *mut H, in_use: impl FnOnce(&H) -> bool) {
    // SAFETY: NULL or live per the contract.
    if unsafe { p.as_ref() }.is_some_and(|h| !in_use(h)) {
        // SAFETY: ownership returns once, per the contract.
        drop(unsafe { args::free(p) });
    }
}

/// Writes whether a driver has a timer set, and when it is due.
///
/// # Safety
/// `out_has` and `out_ms` are valid for writes when not NULL.
unsafe fn poll_into(
    out_has: *mut bool,
    out_ms: *mut u64,
    poll: impl FnOnce() -> Result<Option<u64>>,
) -> Result<()> {
    let has = Out::new(out_has, "out_has")?;
    let ms = Out::new(out_ms, "out_ms")?;
    let deadline = poll()?;
    // SAFETY: caller's contract.
    unsafe { write_opt_u64(has, ms, deadline) };
    Ok(())
}

// ---- the coordinator driver -----------------------------------------------------------------

/// A coordinator (shardline_coordinator) run by shardline: it carries out every output itself
/// through the host's callbacks (transport, clock, lease, store) and feeds their results back.
/// Made by shardline_coordinator_driver_new, released by shardline_coordinator_driver_free.
/// The host feeds what happens outside (messages, membership) and calls
/// shardline_coordinator_driver_poll at the deadline it reports.
pub struct shardline_coordinator_driver {
    machine: Machine<Driving<CoordinatorDriver, shardline_coordinator_callbacks>>,
}

/// Makes a driver of a coordinator: the coordinator's outputs are carried out through the
/// callbacks from now on. Call shardline_coordinator_driver_start next.
///
/// @param coordinator a coordinator, typically fresh from shardline_coordinator_new. On success
///        the driver takes it over (with its strategy): do not use or free it afterwards. On
///        failure it stays the caller's.
/// @param callbacks the callbacks; copied, so the struct itself need not outlive this call.
/// @param out receives the new driver.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a too small `struct_size` or a NULL required
///         callback (the message names it); SHARDLINE_STATUS_REENTRANT_CALL when called from a
///         callback of the coordinator's own strategy.
///
/// Ownership: the caller frees `*out` with shardline_coordinator_driver_free, which calls
/// `callbacks->userdata_free(callbacks->userdata)` once. On failure `userdata` stays the
/// caller's and `userdata_free` is not called.
/// Thread safety: callable from any thread. The callbacks run on whichever thread uses the
/// driver, so `userdata` must be usable there.
///
/// # Safety
/// `coordinator` is a live coordinator; `callbacks` points to a readable struct of at least
/// `callbacks->struct_size` bytes; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_driver_new(
    coordinator: *mut shardline_coordinator,
    callbacks: *const shardline_coordinator_callbacks,
    out: *mut *mut shardline_coordinator_driver,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe { new_coordinator_driver(coordinator, callbacks, out, callbacks_only()) }
    })
}

/// A lease and a store of shardline's own, for a coordinator driver.
pub(crate) type OwnBackends = (Box<dyn Lease>, Box<dyn Store>);

/// Makes a coordinator driver whose lease and store are the host's callbacks, or shardline's
/// own backends when `backends` gives them.
///
/// # Safety
/// As for [`shardline_coordinator_driver_new`].
pub(crate) unsafe fn new_coordinator_driver(
    coordinator: *mut shardline_coordinator,
    callbacks: *const shardline_coordinator_callbacks,
    out: *mut *mut shardline_coordinator_driver,
    backends: Backends<impl FnOnce() -> Result<Option<OwnBackends>>>,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        take_over(
            coordinator,
            callbacks,
            out,
            "coordinator",
            shardline_coordinator::in_use,
            backends,
            |c, host, own| {
                let (lease, store): OwnBackends = match own {
                    Some(own) => own,
                    None => (Box::new(host.clone()), Box::new(host.clone())),
                };
                let driver = CoordinatorDriver::new(
                    c.into_coordinator(),
                    Box::new(host.clone()),
                    Box::new(host.clone()),
                    lease,
                    store,
                );
                shardline_coordinator_driver {
                    machine: Machine::new(
                        shardline_coordinator_callbacks::WHAT,
                        Driving::new(driver, host, false),
                    ),
                }
            },
        )
    }
}

/// Releases a driver, the coordinator it took over, and the host's userdata (through
/// `userdata_free`).
///
/// @param driver the driver, or NULL (nothing happens). A driver whose call is under way (freed
///        from one of its callbacks) is not released.
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `driver` must not be used afterwards.
/// Thread safety: must not race with any other use of `driver`. Leaves the last error
/// untouched.
///
/// # Safety
/// `driver` is NULL or a live coordinator driver.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_driver_free(
    driver: *mut shardline_coordinator_driver,
) {
    infallible((), || {
        // SAFETY: caller's contract.
        unsafe { release(driver, |d| d.machine.in_use()) }
    })
}

/// Runs `f` on the driver behind a handle parameter.
unsafe fn with_coordinator<R>(
    driver: *const shardline_coordinator_driver,
    f: impl FnOnce(&mut Driving<CoordinatorDriver, shardline_coordinator_callbacks>) -> Result<R>,
) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { args::handle(driver, "driver") }?.machine.with(f)
}

/// Starts contending for the lease (through `lease_acquire`; when granted, the state is loaded
/// through `store_load`) at the callback clock's time. Does nothing more after the first call.
///
/// @param driver the driver.
/// @return SHARDLINE_STATUS_CALLBACK_FAILED naming the first callback that failed (the rest was
///         carried out); SHARDLINE_STATUS_INVALID_ARGUMENT when `store_load` gave a state that
///         is not valid JSON of the stored state; SHARDLINE_STATUS_INVALID_STATE for an answer
///         the coordinator refuses (a lease token that does not grow);
///         SHARDLINE_STATUS_REENTRANT_CALL from one of its own callbacks.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live coordinator driver.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_driver_start(
    driver: *mut shardline_coordinator_driver,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe { with_coordinator(driver, |d| d.call(CoordinatorDriver::start)) }
    })
}

/// Feeds what happens outside the driver: RECEIVE, MEMBER, MEMBER_REMOVED, REACHABILITY,
/// REGION_TERMINATED, LEASE_LOST (the backend reports the grant it holds lost; `token` is not
/// read), PREPARING_FOR_SHUTDOWN or STOP; then carries out every output through the callbacks.
///
/// @param driver the driver.
/// @param input the input, as for shardline_coordinator_feed. Lease and store results are not
///        fed: the driver obtains them through its callbacks.
/// @return as shardline_coordinator_feed, and SHARDLINE_STATUS_INVALID_ARGUMENT for the lease
///         and store result kinds; SHARDLINE_STATUS_CALLBACK_FAILED naming the first callback
///         that failed (the rest was carried out); SHARDLINE_STATUS_REENTRANT_CALL from one of
///         its own callbacks.
///
/// Ownership: `input` stays the caller's.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live coordinator driver; `input` as for shardline_coordinator_feed.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_driver_feed(
    driver: *mut shardline_coordinator_driver,
    input: *const shardline_coordinator_input,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let input = unsafe { coordinator::read_input(input) }?;
        // SAFETY: caller's contract.
        unsafe {
            with_coordinator(driver, |d| match input {
                CoordinatorInput::Receive(e) => d.call(|c| c.receive(e)),
                CoordinatorInput::Member(m) => d.call(|c| c.member(*m)),
                CoordinatorInput::MemberRemoved { address } => {
                    d.call(|c| c.member_removed(&address))
                }
                CoordinatorInput::Reachability { address, reachable } => {
                    d.call(|c| c.reachability(&address, reachable))
                }
                CoordinatorInput::RegionTerminated { region } => {
                    d.call(|c| c.region_terminated(&region))
                }
                CoordinatorInput::LeaseLost { .. } => d.call(CoordinatorDriver::lease_lost),
                CoordinatorInput::PreparingForShutdown => {
                    d.call(CoordinatorDriver::preparing_for_shutdown)
                }
                CoordinatorInput::Stop => d.call(CoordinatorDriver::stop),
                CoordinatorInput::Drain { region } => d.call(|c| c.drain(&region)),
                CoordinatorInput::Undrain { region } => d.call(|c| c.undrain(&region)),
                CoordinatorInput::LeaseGranted(_)
                | CoordinatorInput::LeaseDenied
                | CoordinatorInput::LeaseRenewed { .. }
                | CoordinatorInput::LeaseRenewFailed { .. }
                | CoordinatorInput::StateLoaded(_)
                | CoordinatorInput::StateLoadFailed { .. }
                | CoordinatorInput::StoreFailed { .. } => Err(Failure::invalid_argument(
                    "input->kind is a lease or store result: a driver obtains those through \
                     its callbacks (feed them to a shardline_coordinator instead)",
                )),
            })
        }
    })
}

/// Runs every timer due at the callback clock's time (lease renewal and expiry, rebalancing,
/// hand-off timeouts) and carries out the outputs; reports when to call again.
///
/// @param driver the driver.
/// @param out_has receives false when no timer is set.
/// @param out_deadline_ms receives the next deadline on the host's clock (0 when none).
/// @return SHARDLINE_STATUS_CALLBACK_FAILED naming the first callback that failed;
///         SHARDLINE_STATUS_INVALID_STATE when a timer finds the stored state broken;
///         SHARDLINE_STATUS_REENTRANT_CALL from one of its own callbacks. The out-parameters
///         are written only on success.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live coordinator driver; `out_has` and `out_deadline_ms` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_driver_poll(
    driver: *mut shardline_coordinator_driver,
    out_has: *mut bool,
    out_deadline_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            poll_into(out_has, out_deadline_ms, || {
                with_coordinator(driver, |d| d.call(CoordinatorDriver::poll))
            })
        }
    })
}

/// Whether the coordinator holds the lease and has restored its state.
///
/// @param driver the driver.
/// @param out receives the flag.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from one of its own callbacks.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live coordinator driver; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_driver_is_active(
    driver: *const shardline_coordinator_driver,
    out: *mut bool,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let active =
            unsafe { with_coordinator(driver, |d| Ok(d.driver.coordinator().is_active())) }?;
        // SAFETY: caller's contract.
        unsafe { out.write(active) };
        Ok(())
    })
}

/// The fencing token of the lease grant the driver's coordinator holds.
///
/// @param driver the driver.
/// @param out_has receives false when it holds no grant.
/// @param out_token receives the token (0 when none).
/// @return SHARDLINE_STATUS_REENTRANT_CALL from one of its own callbacks.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live coordinator driver; `out_has` and `out_token` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_driver_token(
    driver: *const shardline_coordinator_driver,
    out_has: *mut bool,
    out_token: *mut u64,
) -> shardline_status {
    guard(|| {
        let has = Out::new(out_has, "out_has")?;
        let token = Out::new(out_token, "out_token")?;
        // SAFETY: caller's contract.
        let t = unsafe {
            with_coordinator(driver, |d| Ok(d.driver.coordinator().token().map(|t| t.0)))
        }?;
        // SAFETY: caller's contract.
        unsafe { write_opt_u64(has, token, t) };
        Ok(())
    })
}

/// The region a shard is allocated to in the coordinator's stored state.
///
/// @param driver the driver.
/// @param shard the shard id.
/// @param out_region receives the region id, or NULL when the shard is not allocated.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from one of its own callbacks.
///
/// Ownership: the caller frees `*out_region` with shardline_string_free.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live coordinator driver; `shard` is NUL-terminated; `out_region` is valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_driver_home_of(
    driver: *const shardline_coordinator_driver,
    shard: *const c_char,
    out_region: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let shard = unsafe { args::str(shard, "shard") }?;
        let out = Out::new(out_region, "out_region")?;
        // SAFETY: caller's contract.
        unsafe {
            with_coordinator(driver, |d| {
                write_opt_string(out, d.driver.coordinator().state().home_of(shard))
            })
        }
    })
}

// ---- the region driver ----------------------------------------------------------------------

/// A region (shardline_region) run by shardline: it carries out every output itself through the
/// host's callbacks (transport, clock, entity host). Made by shardline_region_driver_new,
/// released by shardline_region_driver_free. The host routes messages, feeds what arrives from
/// outside and calls shardline_region_driver_poll at the deadline it reports.
pub struct shardline_region_driver {
    machine: Machine<Driving<RegionDriver, shardline_region_callbacks>>,
}

/// Makes a driver of a region: the region's outputs are carried out through the callbacks from
/// now on. Call shardline_region_driver_start next.
///
/// @param region a region, typically fresh from shardline_region_new. On success the driver
///        takes it over: do not use or free it afterwards. On failure it stays the caller's.
/// @param callbacks the callbacks; copied, so the struct itself need not outlive this call.
/// @param out receives the new driver.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a too small `struct_size` or a NULL required
///         callback (the message names it).
///
/// Ownership: the caller frees `*out` with shardline_region_driver_free, which calls
/// `callbacks->userdata_free(callbacks->userdata)` once. On failure `userdata` stays the
/// caller's and `userdata_free` is not called.
/// Thread safety: callable from any thread. The callbacks run on whichever thread uses the
/// driver, so `userdata` must be usable there.
///
/// # Safety
/// `region` is a live region; `callbacks` points to a readable struct of at least
/// `callbacks->struct_size` bytes; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_driver_new(
    region: *mut shardline_region,
    callbacks: *const shardline_region_callbacks,
    out: *mut *mut shardline_region_driver,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            take_over(
                region,
                callbacks,
                out,
                "region",
                shardline_region::in_use,
                callbacks_only::<()>(),
                |r, host, _| {
                    let (region, extracts) = r.into_region();
                    let driver = RegionDriver::new(
                        region,
                        Box::new(host.clone()),
                        Box::new(host.clone()),
                        Box::new(host.clone()),
                    );
                    shardline_region_driver {
                        machine: Machine::new(
                            shardline_region_callbacks::WHAT,
                            Driving::new(driver, host, extracts),
                        ),
                    }
                },
            )
        }
    })
}

/// Releases a driver, the region it took over (buffered messages are dropped), and the host's
/// userdata (through `userdata_free`).
///
/// @param driver the driver, or NULL (nothing happens). A driver whose call is under way (freed
///        from one of its callbacks) is not released.
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `driver` must not be used afterwards.
/// Thread safety: must not race with any other use of `driver`. Leaves the last error
/// untouched.
///
/// # Safety
/// `driver` is NULL or a live region driver.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_driver_free(driver: *mut shardline_region_driver) {
    infallible((), || {
        // SAFETY: caller's contract.
        unsafe { release(driver, |d| d.machine.in_use()) }
    })
}

unsafe fn with_region<R>(
    driver: *const shardline_region_driver,
    f: impl FnOnce(&mut Driving<RegionDriver, shardline_region_callbacks>) -> Result<R>,
) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { args::handle(driver, "driver") }?.machine.with(f)
}

/// Registers with the coordinator (a "register" goes out through `send`) and arms the retry
/// timer.
///
/// @param driver the driver.
/// @return SHARDLINE_STATUS_CALLBACK_FAILED naming the first callback that failed;
///         SHARDLINE_STATUS_REENTRANT_CALL from one of its own callbacks.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live region driver.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_driver_start(
    driver: *mut shardline_region_driver,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe { with_region(driver, |d| d.call(RegionDriver::start)) }
    })
}

/// Feeds one input (as for shardline_region_feed) and carries out every output through the
/// callbacks.
///
/// @param driver the driver.
/// @param input the input, as for shardline_region_feed.
/// @return as shardline_region_feed, and SHARDLINE_STATUS_CALLBACK_FAILED naming the first
///         callback that failed (the rest was carried out); SHARDLINE_STATUS_REENTRANT_CALL from
///         one of its own callbacks.
///
/// Ownership: `input` stays the caller's.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live region driver; `input` as for shardline_region_feed.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_driver_feed(
    driver: *mut shardline_region_driver,
    input: *const shardline_region_input,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let input = unsafe { region::read_input(input) }?;
        // SAFETY: caller's contract.
        unsafe {
            with_region(driver, |d| match input {
                RegionInput::Receive(e) => d.call(|r| r.receive(e)),
                RegionInput::CoordinatorChanged => d.call(RegionDriver::coordinator_changed),
                RegionInput::RegionTerminated { region } => {
                    d.call(|r| r.region_terminated(&region))
                }
                RegionInput::ShardStopped { shard } => d.call(|r| r.shard_stopped(&shard)),
                RegionInput::EntityPassivated { shard, entity } => {
                    d.call(|r| r.entity_passivated(&shard, &entity))
                }
                RegionInput::GracefulShutdown => d.call(RegionDriver::graceful_shutdown),
                RegionInput::ReportLoads { loads } => d.call(|r| r.report_loads(loads)),
                RegionInput::UpdateOffer { offer } => d.call(|r| r.update_offer(offer)),
            })
        }
    })
}

/// Routes a message from a local sender, finding its shard with the region's extractor: it is
/// delivered through `deliver` (shard hosted here), forwarded through `send` (remote home), or
/// waits in the buffer while the home is unknown (the region asks the coordinator).
///
/// @param driver the driver, of a region made with an extractor.
/// @param entity the entity id.
/// @param payload the message bytes; may be NULL when `payload_len` is 0.
/// @param payload_len number of bytes at `payload`.
/// @return SHARDLINE_STATUS_INVALID_STATE when the region was made without an extractor, or
///         cannot take the message (buffer full, shut down; nothing was queued then);
///         SHARDLINE_STATUS_CALLBACK_FAILED naming the first callback that failed;
///         SHARDLINE_STATUS_REENTRANT_CALL from one of its own callbacks.
///
/// Ownership: the payload is copied; the caller keeps its buffers.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live region driver; `entity` is NUL-terminated; `payload` is valid for reads
/// of `payload_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_driver_route(
    driver: *mut shardline_region_driver,
    entity: *const c_char,
    payload: *const u8,
    payload_len: usize,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let entity = unsafe { args::str(entity, "entity") }?;
        let payload = unsafe { bytes(payload, payload_len, "payload") }?;
        unsafe {
            with_region(driver, |d| {
                if !d.extracts {
                    return Err(Failure::invalid_state(NO_EXTRACTOR));
                }
                d.call(|r| r.route(entity, payload))
            })
        }
    })
}

/// Routes a message whose shard the host already knows (see shardline_region_driver_route).
///
/// @param driver the driver.
/// @param shard the shard id.
/// @param entity the entity id.
/// @param payload the message bytes; may be NULL when `payload_len` is 0.
/// @param payload_len number of bytes at `payload`.
/// @return SHARDLINE_STATUS_INVALID_STATE when the region cannot take the message (buffer full,
///         shut down; nothing was queued then); SHARDLINE_STATUS_CALLBACK_FAILED naming the
///         first callback that failed; SHARDLINE_STATUS_REENTRANT_CALL from one of its own
///         callbacks.
///
/// Ownership: the payload is copied; the caller keeps its buffers.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live region driver; strings are NUL-terminated; `payload` is valid for reads
/// of `payload_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_driver_route_to_shard(
    driver: *mut shardline_region_driver,
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
            with_region(driver, |d| {
                d.call(|r| r.route_to_shard(shard, entity, payload))
            })
        }
    })
}

/// Runs every timer due at the callback clock's time (registration retries, asking again for
/// the homes of buffered shards) and carries out the outputs; reports when to call again.
///
/// @param driver the driver.
/// @param out_has receives false when no timer is set.
/// @param out_deadline_ms receives the next deadline on the host's clock (0 when none).
/// @return SHARDLINE_STATUS_CALLBACK_FAILED naming the first callback that failed;
///         SHARDLINE_STATUS_REENTRANT_CALL from one of its own callbacks. The out-parameters
///         are written only on success.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live region driver; `out_has` and `out_deadline_ms` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_driver_poll(
    driver: *mut shardline_region_driver,
    out_has: *mut bool,
    out_deadline_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            poll_into(out_has, out_deadline_ms, || {
                with_region(driver, |d| d.call(RegionDriver::poll))
            })
        }
    })
}

/// Whether the coordinator has acknowledged the region's registration.
///
/// @param driver the driver.
/// @param out receives the flag.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from one of its own callbacks.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one driver are serialised (see the overview).
///
/// # Safety
/// `driver` is a live region driver; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_region_driver_is_registered(
    driver: *const shardline_region_driver,
    out: *mut bool,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let registered = unsafe { with_region(driver, |d| Ok(d.driver.region().is_registered())) }?;
        // SAFETY: caller's contract.
        unsafe { out.write(registered) };
        Ok(())
    })
}
