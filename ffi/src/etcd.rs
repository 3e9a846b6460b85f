//! `shardline_etcd`, `shardline_etcd_lease` and `shardline_etcd_store` (cargo feature `etcd`):
//! etcd as every binding has it (`shardline_bind::etcd`): a connection, the coordinator lease
//! and fenced state store it hands out (each serves one coordinator driver), and the worker-id
//! registry. Every call blocks the calling thread on the network, for at most the connection's
//! timeout per request.

use std::ffi::c_char;

use shardline_bind::etcd::{self as bind, Etcd, EtcdLease, EtcdStore, Serving};
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::host::{Lease, Store, WriteOutcome};
use shardline_core::protocol::FencingToken;

use crate::args::{self, Out};
use crate::boundary::{guard, infallible, Result};
use crate::coordinator::shardline_coordinator;
use crate::driver::{
    new_coordinator_driver, shardline_coordinator_callbacks, shardline_coordinator_driver,
    Backends, OwnBackends,
};
use crate::status::shardline_status;
use crate::step::{json_arg, write_json, write_opt_string, write_opt_u64};
use crate::worker_id::{self, shardline_id_clock_callbacks, shardline_worker_id_holder};

/// Per-request timeout to pass to shardline_etcd_connect unless the host has its own.
pub const SHARDLINE_ETCD_DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// Time to live of a coordinator lease to pass to shardline_etcd_lease_new unless the host has
/// its own.
pub const SHARDLINE_ETCD_DEFAULT_LEASE_TTL_MS: u64 = 30_000;

// ---- the connection -------------------------------------------------------------------------

/// A connection to an etcd cluster, under one key namespace. Made by shardline_etcd_connect,
/// released by shardline_etcd_free.
pub struct shardline_etcd {
    etcd: Etcd,
}

/// Connects to an etcd cluster; every key goes under `namespace/`.
///
/// @param endpoints the endpoints, e.g. "http://127.0.0.1:2379"; may be NULL when
///        `endpoints_len` is 0.
/// @param endpoints_len number of endpoints.
/// @param namespace the key prefix; connections with the same one share leases, stores and
///        worker ids.
/// @param timeout_ms per-request timeout (SHARDLINE_ETCD_DEFAULT_TIMEOUT_MS unless the host
///        has its own); it bounds this call too.
/// @param out receives the connection.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a timeout of 0, a malformed endpoint or
///         invalid UTF-8 (the message names the parameter); SHARDLINE_STATUS_INVALID_STATE
///         when etcd cannot be reached in time.
///
/// Ownership: the caller frees `*out` with shardline_etcd_free; the strings stay the caller's.
/// Thread safety: callable from any thread; the connection may be shared between threads.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `endpoints` is NULL or points to `endpoints_len` NUL-terminated strings; `namespace` is
/// NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_connect(
    endpoints: *const *const c_char,
    endpoints_len: usize,
    namespace: *const c_char,
    timeout_ms: u64,
    out: *mut *mut shardline_etcd,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let endpoints = unsafe { args::str_array(endpoints, endpoints_len, "endpoints") }?;
        let namespace = unsafe { args::str(namespace, "namespace") }?;
        let out = Out::new(out, "out")?;
        let endpoints: Vec<String> = endpoints.into_iter().map(str::to_owned).collect();
        let etcd = bind::connect(&endpoints, namespace, Some(timeout_ms))?;
        // SAFETY: caller's contract.
        unsafe { out.write(args::into_handle(shardline_etcd { etcd })) };
        Ok(())
    })
}

/// Releases a connection. Leases, stores and holders made from it keep theirs.
///
/// @param etcd the connection, or NULL (nothing happens).
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `etcd` must not be used afterwards.
/// Thread safety: must not race with any other use of `etcd`. Leaves the last error untouched.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `etcd` is NULL or a live connection.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_free(etcd: *mut shardline_etcd) {
    // SAFETY: caller's contract.
    infallible((), || drop(unsafe { args::free(etcd) }))
}

unsafe fn etcd_of<'a>(etcd: *const shardline_etcd) -> Result<&'a Etcd> {
    // SAFETY: forwarded contract.
    Ok(&unsafe { args::handle(etcd, "etcd") }?.etcd)
}

/// The connection's key namespace.
///
/// @param etcd the connection.
/// @param out_namespace receives the namespace.
/// @return SHARDLINE_STATUS_NULL_POINTER for a NULL parameter.
///
/// Ownership: the caller frees `*out_namespace` with shardline_string_free.
/// Thread safety: any thread.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `etcd` is a live connection; `out_namespace` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_namespace(
    etcd: *const shardline_etcd,
    out_namespace: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for both.
        let e = unsafe { etcd_of(etcd) }?;
        let out = Out::new(out_namespace, "out_namespace")?;
        unsafe { write_opt_string(out, Some(bind::namespace(e))) }
    })
}

// ---- the lease ------------------------------------------------------------------------------

/// The coordinator lease `name` in etcd, contended for as one owner; its grants carry fencing
/// tokens that grow with every grant. Made by shardline_etcd_lease_new, released by
/// shardline_etcd_lease_free. It serves one coordinator driver
/// (shardline_coordinator_driver_new_etcd); until then the host may call it itself.
pub struct shardline_etcd_lease {
    lease: Serving<EtcdLease>,
}

/// The coordinator lease `name`, contended for as `owner`. Nothing is asked of etcd yet.
///
/// @param etcd the connection.
/// @param name the lease's name (every contender uses the same one).
/// @param owner who contends (shardline_etcd_lease_holder names it).
/// @param ttl_ms how long a grant lasts without renewal (SHARDLINE_ETCD_DEFAULT_LEASE_TTL_MS
///        unless the host has its own).
/// @param out receives the lease.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a `ttl_ms` of 0 or invalid UTF-8.
///
/// Ownership: the caller frees `*out` with shardline_etcd_lease_free, also after a driver
/// took it over; `etcd` stays the caller's and may be freed first.
/// Thread safety: callable from any thread; calls on one lease wait for one another.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `etcd` is a live connection; strings are NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_lease_new(
    etcd: *const shardline_etcd,
    name: *const c_char,
    owner: *const c_char,
    ttl_ms: u64,
    out: *mut *mut shardline_etcd_lease,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let e = unsafe { etcd_of(etcd) }?;
        let name = unsafe { args::str(name, "name") }?;
        let owner = unsafe { args::str(owner, "owner") }?;
        let out = Out::new(out, "out")?;
        let lease = bind::lease(e, name, owner, Some(ttl_ms))?;
        // SAFETY: caller's contract.
        unsafe { out.write(args::into_handle(shardline_etcd_lease { lease })) };
        Ok(())
    })
}

/// Releases a lease handle. A grant it holds is not released (call
/// shardline_etcd_lease_release first): it expires after its time to live.
///
/// @param lease the lease, or NULL (nothing happens).
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `lease` must not be used afterwards. A driver that took
/// it over keeps its own session.
/// Thread safety: must not race with any other use of `lease`. Leaves the last error untouched.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `lease` is NULL or a live lease.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_lease_free(lease: *mut shardline_etcd_lease) {
    // SAFETY: caller's contract.
    infallible((), || drop(unsafe { args::free(lease) }))
}

/// Runs `f` on the lease behind a handle, unless a driver has it.
unsafe fn with_lease<R>(
    lease: *const shardline_etcd_lease,
    f: impl FnOnce(&mut EtcdLease) -> Result<R>,
) -> Result<R> {
    // SAFETY: forwarded contract.
    let l = unsafe { args::handle(lease, "lease") }?;
    Ok(l.lease.with(|l| f(l).map_err(Into::into))?)
}

/// Who holds the lease, as etcd has it now.
///
/// @param lease the lease.
/// @param out_owner receives the holder's owner, or NULL when nobody holds it.
/// @param out_token receives the holder's fencing token (0 when nobody holds it).
/// @return SHARDLINE_STATUS_INVALID_STATE when etcd cannot be reached, or when a driver took
///         the lease over ("this EtcdLease serves a driver; ask etcd directly": a lease of
///         another owner with the same name answers).
///
/// Ownership: the caller frees `*out_owner` with shardline_string_free.
/// Thread safety: any thread; calls on one lease wait for one another.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `lease` is a live lease; the out-parameters are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_lease_holder(
    lease: *const shardline_etcd_lease,
    out_owner: *mut *mut c_char,
    out_token: *mut u64,
) -> shardline_status {
    guard(|| {
        let owner = Out::new(out_owner, "out_owner")?;
        let token = Out::new(out_token, "out_token")?;
        // SAFETY: caller's contract.
        let h = unsafe { with_lease(lease, |l| Ok(bind::holder(l)?)) }?;
        // SAFETY: caller's contract.
        unsafe {
            write_opt_string(owner, h.as_ref().map(|h| &*h.owner))?;
            token.write(h.map_or(0, |h| h.token));
        }
        Ok(())
    })
}

/// Tries to take the lease at `now_ms`, as a driver's `lease_acquire` callback does.
///
/// @param lease the lease.
/// @param now_ms the host's monotonic time; the grant's deadline is on the same clock.
/// @param out_granted receives false while another owner holds it.
/// @param out_token receives the grant's fencing token (larger than every earlier grant's;
///        0 when not granted).
/// @param out_valid_until_ms receives the grant's deadline (0 when not granted).
/// @return SHARDLINE_STATUS_INVALID_STATE when etcd cannot be reached or a driver took the
///         lease over.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one lease wait for one another.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `lease` is a live lease; the out-parameters are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_lease_acquire(
    lease: *const shardline_etcd_lease,
    now_ms: u64,
    out_granted: *mut bool,
    out_token: *mut u64,
    out_valid_until_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        let granted = Out::new(out_granted, "out_granted")?;
        let token = Out::new(out_token, "out_token")?;
        let until = Out::new(out_valid_until_ms, "out_valid_until_ms")?;
        // SAFETY: caller's contract.
        let grant = unsafe { with_lease(lease, |l| Ok(l.acquire(now_ms)?)) }?;
        // SAFETY: caller's contract.
        unsafe {
            write_opt_u64(granted, token, grant.map(|g| g.token.0));
            until.write(grant.map_or(0, |g| g.valid_until_ms));
        }
        Ok(())
    })
}

/// Extends grant `token`, as a driver's `lease_renew` callback does.
///
/// @param lease the lease.
/// @param token the grant's fencing token.
/// @param now_ms the host's monotonic time.
/// @param out_renewed receives false when the grant is gone (expired, released, taken over).
/// @param out_valid_until_ms receives the new deadline (0 when not renewed).
/// @return SHARDLINE_STATUS_INVALID_STATE when etcd cannot be reached or a driver took the
///         lease over.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one lease wait for one another.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `lease` is a live lease; the out-parameters are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_lease_renew(
    lease: *const shardline_etcd_lease,
    token: u64,
    now_ms: u64,
    out_renewed: *mut bool,
    out_valid_until_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        let renewed = Out::new(out_renewed, "out_renewed")?;
        let until = Out::new(out_valid_until_ms, "out_valid_until_ms")?;
        // SAFETY: caller's contract.
        let r = unsafe { with_lease(lease, |l| Ok(l.renew(FencingToken(token), now_ms)?)) }?;
        // SAFETY: caller's contract.
        unsafe { write_opt_u64(renewed, until, r) };
        Ok(())
    })
}

/// Releases grant `token` (nothing happens when it is gone already), as a driver's
/// `lease_release` callback does.
///
/// @param lease the lease.
/// @param token the grant's fencing token.
/// @return SHARDLINE_STATUS_INVALID_STATE when etcd cannot be reached or a driver took the
///         lease over.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one lease wait for one another.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `lease` is a live lease.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_lease_release(
    lease: *const shardline_etcd_lease,
    token: u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe { with_lease(lease, |l| Ok(l.release(FencingToken(token))?)) }
    })
}

// ---- the store ------------------------------------------------------------------------------

/// The coordinator state `name` in etcd (records and snapshots), fenced by lease tokens:
/// writes and loads with a token below the highest one seen are refused. Made by
/// shardline_etcd_store_new, released by shardline_etcd_store_free. It serves one coordinator
/// driver (shardline_coordinator_driver_new_etcd); until then the host may call it itself.
pub struct shardline_etcd_store {
    store: Serving<EtcdStore>,
}

/// Coordinator state `name`.
///
/// @param etcd the connection.
/// @param name the state's name (a successor uses the same one).
/// @param bound_to_lease nullable: a lease name; writes then also require that lease to still
///        carry the writer's token, so a coordinator whose lease expired cannot write.
/// @param out receives the store.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for invalid UTF-8.
///
/// Ownership: the caller frees `*out` with shardline_etcd_store_free, also after a driver took
/// it over; `etcd` stays the caller's and may be freed first.
/// Thread safety: callable from any thread; calls on one store wait for one another.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `etcd` is a live connection; `name` is NUL-terminated; `bound_to_lease` is NULL or
/// NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_store_new(
    etcd: *const shardline_etcd,
    name: *const c_char,
    bound_to_lease: *const c_char,
    out: *mut *mut shardline_etcd_store,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let e = unsafe { etcd_of(etcd) }?;
        let name = unsafe { args::str(name, "name") }?;
        let bound = unsafe { args::opt_str(bound_to_lease, "bound_to_lease") }?;
        let out = Out::new(out, "out")?;
        let store = bind::store(e, name, bound);
        // SAFETY: caller's contract.
        unsafe { out.write(args::into_handle(shardline_etcd_store { store })) };
        Ok(())
    })
}

/// Releases a store handle.
///
/// @param store the store, or NULL (nothing happens).
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `store` must not be used afterwards. A driver that took it
/// over keeps its own.
/// Thread safety: must not race with any other use of `store`. Leaves the last error untouched.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `store` is NULL or a live store.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_store_free(store: *mut shardline_etcd_store) {
    // SAFETY: caller's contract.
    infallible((), || drop(unsafe { args::free(store) }))
}

unsafe fn with_store<R>(
    store: *const shardline_etcd_store,
    f: impl FnOnce(&mut EtcdStore) -> Result<R>,
) -> Result<R> {
    // SAFETY: forwarded contract.
    let s = unsafe { args::handle(store, "store") }?;
    Ok(s.store.with(|s| f(s).map_err(Into::into))?)
}

/// Writes a fenced document and reports the outcome.
///
/// # Safety
/// As for [`with_store`]; the out-parameters are valid for writes.
unsafe fn write(
    store: *const shardline_etcd_store,
    out_fenced: *mut bool,
    out_highest: *mut u64,
    write: impl FnOnce(&mut EtcdStore) -> shardline_core::Result<WriteOutcome>,
) -> Result<()> {
    let fenced = Out::new(out_fenced, "out_fenced")?;
    let highest = Out::new(out_highest, "out_highest")?;
    // SAFETY: caller's contract.
    let outcome = unsafe { with_store(store, |s| Ok(write(s)?)) }?;
    let h = match outcome {
        WriteOutcome::Written => None,
        WriteOutcome::Fenced { highest } => Some(highest.0),
    };
    // SAFETY: caller's contract.
    unsafe { write_opt_u64(fenced, highest, h) };
    Ok(())
}

/// Appends a record with `token`, as a driver's `store_append` callback does.
///
/// @param store the store.
/// @param token the writer's fencing token.
/// @param record_json the record, e.g. `{"seq":1,"event":{"type":"shardRegionRegistered",..}}`.
/// @param out_fenced receives true when the store has seen a larger token (nothing written).
/// @param out_highest receives that token (0 when written).
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a record that does not parse (the message
///         names the field); SHARDLINE_STATUS_INVALID_STATE when etcd cannot be reached or a
///         driver took the store over.
///
/// Ownership: `record_json` stays the caller's.
/// Thread safety: any thread; calls on one store wait for one another.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `store` is a live store; `record_json` is NUL-terminated; the out-parameters are valid for
/// writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_store_append(
    store: *const shardline_etcd_store,
    token: u64,
    record_json: *const c_char,
    out_fenced: *mut bool,
    out_highest: *mut u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let record: Record = unsafe { json_arg(record_json, "record_json") }?;
        unsafe {
            write(store, out_fenced, out_highest, |s| {
                s.append(FencingToken(token), &record)
            })
        }
    })
}

/// Saves a snapshot with `token` (the records it covers are dropped), as a driver's
/// `store_save_snapshot` callback does.
///
/// @param store the store.
/// @param token the writer's fencing token.
/// @param snapshot_json the snapshot.
/// @param out_fenced receives true when the store has seen a larger token (nothing written).
/// @param out_highest receives that token (0 when written).
/// @return as shardline_etcd_store_append.
///
/// Ownership: `snapshot_json` stays the caller's.
/// Thread safety: any thread; calls on one store wait for one another.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `store` is a live store; `snapshot_json` is NUL-terminated; the out-parameters are valid for
/// writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_store_save_snapshot(
    store: *const shardline_etcd_store,
    token: u64,
    snapshot_json: *const c_char,
    out_fenced: *mut bool,
    out_highest: *mut u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let snapshot: Snapshot = unsafe { json_arg(snapshot_json, "snapshot_json") }?;
        unsafe {
            write(store, out_fenced, out_highest, |s| {
                s.save_snapshot(FencingToken(token), &snapshot)
            })
        }
    })
}

/// Reads the stored state and fences every token below `token`, as a driver's `store_load`
/// callback does.
///
/// @param store the store.
/// @param token the reader's fencing token.
/// @param out_fenced receives true when the store has seen a larger token.
/// @param out_state_json receives the state, `{"snapshot":..,"events":[..]}`, or NULL when
///        fenced.
/// @return SHARDLINE_STATUS_INVALID_STATE when etcd cannot be reached or a driver took the
///         store over.
///
/// Ownership: the caller frees `*out_state_json` with shardline_string_free.
/// Thread safety: any thread; calls on one store wait for one another.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `store` is a live store; the out-parameters are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_etcd_store_load(
    store: *const shardline_etcd_store,
    token: u64,
    out_fenced: *mut bool,
    out_state_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let fenced = Out::new(out_fenced, "out_fenced")?;
        let state = Out::new(out_state_json, "out_state_json")?;
        // SAFETY: caller's contract.
        let loaded = unsafe { with_store(store, |s| Ok(s.load(FencingToken(token))?)) }?;
        // SAFETY: caller's contract.
        unsafe {
            let was_fenced = loaded.is_none();
            match loaded {
                Some(st) => write_json(state, &st)?,
                None => state.write(std::ptr::null_mut()),
            }
            fenced.write(was_fenced);
        }
        Ok(())
    })
}

// ---- a coordinator driver on etcd -----------------------------------------------------------

/// Makes a driver of a coordinator whose lease and store are etcd's: as
/// shardline_coordinator_driver_new, but the driver takes `lease` and `store` over instead of
/// calling the `lease_*` and `store_*` callbacks (which may then be NULL). Blocking etcd calls
/// run on the thread that calls the driver.
///
/// @param coordinator as for shardline_coordinator_driver_new.
/// @param callbacks as for shardline_coordinator_driver_new; `now_ms` and `send` are required.
/// @param lease the coordinator lease; from now on it serves this driver only.
/// @param store the coordinator state; from now on it serves this driver only (typically made
///        with `bound_to_lease` naming the lease).
/// @param out receives the new driver.
/// @return as shardline_coordinator_driver_new, and SHARDLINE_STATUS_INVALID_STATE when the
///         lease or the store already serves a driver ("this EtcdLease already serves a
///         driver"). On failure nothing was taken over.
///
/// Ownership: as for shardline_coordinator_driver_new. `lease` and `store` stay the caller's
/// to free (after the driver, or before: the driver keeps what it took over); calls on them
/// then give SHARDLINE_STATUS_INVALID_STATE ("this EtcdLease serves a driver; ask etcd
/// directly").
/// Thread safety: as for shardline_coordinator_driver_new.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// As for shardline_coordinator_driver_new; `lease` and `store` are live.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_driver_new_etcd(
    coordinator: *mut shardline_coordinator,
    callbacks: *const shardline_coordinator_callbacks,
    lease: *const shardline_etcd_lease,
    store: *const shardline_etcd_store,
    out: *mut *mut shardline_coordinator_driver,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let lease = unsafe { args::handle(lease, "lease") }?;
        let store = unsafe { args::handle(store, "store") }?;
        let take = || -> Result<Option<OwnBackends>> {
            let l = lease.lease.take()?;
            let s = match store.store.take() {
                Ok(s) => s,
                Err(f) => {
                    lease.lease.give_back(l);
                    return Err(f.into());
                }
            };
            Ok(Some((bind::as_lease(l), bind::as_store(s))))
        };
        let backends = Backends {
            served: &["lease_", "store_"],
            take,
        };
        // SAFETY: caller's contract.
        unsafe { new_coordinator_driver(coordinator, callbacks, out, backends) }
    })
}

// ---- worker ids on etcd ---------------------------------------------------------------------

/// Reserves a worker id in etcd: as shardline_worker_id_holder_acquire, with the registry in
/// `etcd`'s namespace (holders of every process using the namespace compete for the ids).
///
/// @param etcd the connection.
/// @param clock as for shardline_worker_id_holder_acquire.
/// @param options_json as for shardline_worker_id_holder_acquire; `ttlMs` is also the time to
///        live of the holder's etcd session.
/// @param out receives the holder.
/// @return as shardline_worker_id_holder_acquire; SHARDLINE_STATUS_INVALID_STATE also when etcd
///         cannot be reached.
///
/// Ownership: as for shardline_worker_id_holder_acquire; `etcd` stays the caller's and may be
/// freed before the holder.
/// Thread safety: as for shardline_worker_id_holder_acquire.
/// Needs the `etcd` feature (SHARDLINE_FEATURE_ETCD).
///
/// # Safety
/// `etcd` is a live connection; the rest as for shardline_worker_id_holder_acquire.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_acquire_etcd(
    etcd: *const shardline_etcd,
    clock: *const shardline_id_clock_callbacks,
    options_json: *const c_char,
    out: *mut *mut shardline_worker_id_holder,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let e = unsafe { etcd_of(etcd) }?;
        unsafe { worker_id::acquire(|ttl| bind::registry(e, ttl), clock, options_json, out) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_shared_ones() {
        assert_eq!(SHARDLINE_ETCD_DEFAULT_TIMEOUT_MS, bind::DEFAULT_TIMEOUT_MS);
        assert_eq!(
            SHARDLINE_ETCD_DEFAULT_LEASE_TTL_MS,
            bind::DEFAULT_LEASE_TTL_MS
        );
    }
}
