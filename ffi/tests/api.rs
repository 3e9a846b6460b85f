//! Calls the C exports from Rust the way a C host would: valid use, and every way of misusing
//! them that must end in a status code rather than a crash.

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;

use shardline::allocate::{shardline_allocate, shardline_rebalance};
use shardline::boundary::{guard, shardline_last_error_message, Failure};
use shardline::custom::{shardline_custom_strategy, shardline_strategy_new_custom};
use shardline::decide::shardline_decide;
use shardline::decision::{
    shardline_decision, shardline_decision_add_shard, shardline_decision_set_pending,
    shardline_decision_set_region,
};
use shardline::hashing::{shardline_actor_ts_shard_id, shardline_pekko_shard_id};
use shardline::shard_list::{
    shardline_shard_list, shardline_shard_list_free, shardline_shard_list_get,
    shardline_shard_list_len,
};
use shardline::state::*;
use shardline::status::{shardline_status, shardline_status_code, shardline_status_str};
use shardline::strategy::{shardline_strategy, shardline_strategy_free, shardline_strategy_new};
use shardline::string::shardline_string_free;
use shardline::version::{shardline_abi_version, shardline_version};

use shardline_status as S;

fn last_error() -> String {
    let mut buf = [0 as c_char; 512];
    let mut n = 0usize;
    let rc = unsafe { shardline_last_error_message(buf.as_mut_ptr(), buf.len(), &mut n) };
    assert_eq!(rc, S::Ok);
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_str()
        .unwrap()
        .to_owned()
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// Takes an owned string from the library, frees it, returns it.
fn take(p: *mut c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let s = unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned();
    unsafe { shardline_string_free(p) };
    Some(s)
}

fn take_list(l: *mut shardline_shard_list) -> Vec<String> {
    let n = unsafe { shardline_shard_list_len(l) };
    let v = (0..n)
        .map(|i| {
            unsafe { CStr::from_ptr(shardline_shard_list_get(l, i)) }
                .to_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(unsafe { shardline_shard_list_get(l, n) }.is_null());
    unsafe { shardline_shard_list_free(l) };
    v
}

const BAD_UTF8: &[u8] = b"region\xff\0";

fn bad() -> *const c_char {
    BAD_UTF8.as_ptr().cast()
}

fn strategy(json: &str) -> *mut shardline_strategy {
    let mut out = ptr::null_mut();
    assert_eq!(
        unsafe { shardline_strategy_new(c(json).as_ptr(), &mut out) },
        S::Ok,
        "{}",
        last_error()
    );
    out
}

/// Three regions on three Up members; regionA holds a and b, regionB holds c.
fn state() -> *mut shardline_state {
    let mut st = ptr::null_mut();
    let self_addr = c("pekko://app@10.0.0.1:2552");
    assert_eq!(
        unsafe { shardline_state_new(self_addr.as_ptr(), &mut st) },
        S::Ok
    );
    for (i, (region, host)) in [
        ("regionA", "10.0.0.1"),
        ("regionB", "10.0.0.2"),
        ("regionC", "10.0.0.3"),
    ]
    .into_iter()
    .enumerate()
    {
        let addr = c(&format!("pekko://app@{host}:2552"));
        unsafe {
            assert_eq!(
                shardline_state_upsert_member(
                    st,
                    addr.as_ptr(),
                    ptr::null(),
                    c("1.0.0").as_ptr(),
                    ptr::null(),
                    i as i32 + 1
                ),
                S::Ok
            );
            assert_eq!(
                shardline_state_add_region(st, c(region).as_ptr(), addr.as_ptr(), false),
                S::Ok
            );
        }
    }
    for (region, shard) in [("regionA", "a"), ("regionA", "b"), ("regionB", "c")] {
        assert_eq!(
            unsafe { shardline_state_add_shard(st, c(region).as_ptr(), c(shard).as_ptr()) },
            S::Ok
        );
    }
    st
}

fn allocate(
    s: *mut shardline_strategy,
    st: *const shardline_state,
    shard: &str,
) -> Result<Option<String>, S> {
    let mut region = ptr::null_mut();
    let mut pending = false;
    let rc = unsafe {
        shardline_allocate(
            s,
            st,
            ptr::null(),
            c(shard).as_ptr(),
            &mut region,
            &mut pending,
            ptr::null_mut(),
        )
    };
    if rc != S::Ok {
        return Err(rc);
    }
    assert_eq!(pending, region.is_null());
    Ok(take(region))
}

#[test]
fn versions() {
    let v = unsafe { CStr::from_ptr(shardline_version()) }
        .to_str()
        .unwrap();
    assert_eq!(v, concat!("shardline/", env!("CARGO_PKG_VERSION")));
    assert_eq!(shardline_abi_version(), 1);
}

#[test]
fn status_names() {
    let names: Vec<&str> = (0..10)
        .map(|code: shardline_status_code| {
            unsafe { CStr::from_ptr(shardline_status_str(code)) }
                .to_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        names,
        [
            "SHARDLINE_STATUS_OK",
            "SHARDLINE_STATUS_INVALID_ARGUMENT",
            "SHARDLINE_STATUS_NULL_POINTER",
            "SHARDLINE_STATUS_INVALID_STATE",
            "SHARDLINE_STATUS_NO_CANDIDATES",
            "SHARDLINE_STATUS_CALLBACK_FAILED",
            "SHARDLINE_STATUS_REENTRANT_CALL",
            "SHARDLINE_STATUS_PANIC",
            "SHARDLINE_STATUS_INTERNAL",
            "SHARDLINE_STATUS_UNKNOWN",
        ]
    );
}

#[test]
fn last_error_is_cleared_set_and_truncated() {
    let mut out = ptr::null_mut();
    let rc = unsafe { shardline_strategy_new(ptr::null(), &mut out) };
    assert_eq!(rc, S::NullPointer);
    assert!(out.is_null(), "outputs are untouched on failure");
    assert_eq!(last_error(), "config_json is NULL");

    // Length query, then truncation at a UTF-8 boundary: "ü" is two bytes.
    let rc = unsafe { shardline_strategy_new(c("{\"kind\": \"über\"}").as_ptr(), &mut out) };
    assert_eq!(rc, S::InvalidArgument);
    let full = last_error();
    let mut n = 0usize;
    assert_eq!(
        unsafe { shardline_last_error_message(ptr::null_mut(), 0, &mut n) },
        S::Ok
    );
    assert_eq!(n, full.len());
    let cut = full.find('ü').unwrap() + 1;
    let mut buf = vec![b'x' as c_char; cut + 1];
    assert_eq!(
        unsafe { shardline_last_error_message(buf.as_mut_ptr(), buf.len(), &mut n) },
        S::Ok
    );
    let got = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
    assert_eq!(got, &full[..cut - 1], "never splits a character");
    let mut one = [b'x' as c_char; 1];
    assert_eq!(
        unsafe { shardline_last_error_message(one.as_mut_ptr(), 1, ptr::null_mut()) },
        S::Ok
    );
    assert_eq!(one[0], 0);
    assert_eq!(
        unsafe { shardline_last_error_message(ptr::null_mut(), 4, &mut n) },
        S::NullPointer
    );
    assert_eq!(last_error(), full, "reading never clears it");

    // The next successful call clears it.
    let mut shard = 0u32;
    assert_eq!(
        unsafe { shardline_actor_ts_shard_id(c("x").as_ptr(), 10, &mut shard) },
        S::Ok
    );
    assert_eq!(last_error(), "");
}

#[test]
fn panics_become_a_status() {
    let rc = guard(|| panic!("boom"));
    assert_eq!(rc, S::Panic);
    assert_eq!(last_error(), "shardline panicked (a bug): boom");
    let rc = guard(|| Err(Failure::internal("x")));
    assert_eq!(rc, S::Internal);
}

#[test]
fn strategy_construction_errors() {
    let mut out = ptr::null_mut();
    unsafe {
        assert_eq!(
            shardline_strategy_new(c("{}").as_ptr(), ptr::null_mut()),
            S::NullPointer
        );
        assert_eq!(shardline_strategy_new(bad(), &mut out), S::InvalidArgument);
        assert!(
            last_error().contains("config_json is not valid UTF-8"),
            "{}",
            last_error()
        );
        assert_eq!(
            shardline_strategy_new(c("{").as_ptr(), &mut out),
            S::InvalidArgument
        );
        assert!(last_error().contains("not valid JSON"));
        let rc = shardline_strategy_new(
            c(r#"{"kind":"least-shard","relativeLimit":1.5}"#).as_ptr(),
            &mut out,
        );
        assert_eq!(rc, S::InvalidArgument);
        assert!(last_error().contains("relativeLimit"), "{}", last_error());
        assert!(out.is_null());
        shardline_strategy_free(ptr::null_mut());
    }
}

#[test]
fn state_errors_name_the_problem() {
    let st = state();
    unsafe {
        assert_eq!(
            shardline_state_add_shard(st, c("nowhere").as_ptr(), c("z").as_ptr()),
            S::InvalidState
        );
        assert!(last_error().contains("\"nowhere\" is not registered"));
        assert_eq!(
            shardline_state_add_shard(st, c("regionB").as_ptr(), c("a").as_ptr()),
            S::InvalidState
        );
        assert!(last_error().contains("already allocated"));
        assert_eq!(
            shardline_state_add_shard(st, bad(), c("z").as_ptr()),
            S::InvalidArgument
        );
        assert!(last_error().starts_with("region is not valid UTF-8"));
        assert_eq!(
            shardline_state_add_shard(ptr::null_mut(), c("r").as_ptr(), c("z").as_ptr()),
            S::NullPointer
        );
        assert_eq!(last_error(), "state is NULL");
        let addr = c("pekko://app@10.0.0.9:2552");
        assert_eq!(
            shardline_state_upsert_member(
                st,
                addr.as_ptr(),
                c("Sleeping").as_ptr(),
                ptr::null(),
                ptr::null(),
                1
            ),
            S::InvalidArgument
        );
        assert!(last_error().starts_with("status_name"), "{}", last_error());
        assert_eq!(
            shardline_state_add_region(st, c("regionA").as_ptr(), addr.as_ptr(), false),
            S::InvalidState
        );
        assert_eq!(
            shardline_state_add_region(st, c("r").as_ptr(), c("not an address").as_ptr(), false),
            S::InvalidArgument
        );
        assert_eq!(
            shardline_state_remove_member(st, addr.as_ptr()),
            S::InvalidState
        );

        let mut home = ptr::null_mut();
        assert_eq!(
            shardline_state_home_of(st, c("a").as_ptr(), &mut home),
            S::Ok
        );
        assert_eq!(take(home).as_deref(), Some("regionA"));
        assert_eq!(
            shardline_state_home_of(st, c("zz").as_ptr(), &mut home),
            S::Ok
        );
        assert!(home.is_null());

        let mut n = 0usize;
        assert_eq!(shardline_state_region_count(st, &mut n), S::Ok);
        assert_eq!(n, 3);
        let mut id = ptr::null_mut();
        assert_eq!(
            shardline_state_region_id(st, 3, &mut id),
            S::InvalidArgument
        );
        assert!(id.is_null());
        assert_eq!(shardline_state_region_id(st, 1, &mut id), S::Ok);
        assert_eq!(take(id).as_deref(), Some("regionB"));
        let mut list = ptr::null_mut();
        assert_eq!(shardline_state_region_shards(st, 0, &mut list), S::Ok);
        assert_eq!(take_list(list), ["a", "b"]);

        let mut removed = ptr::null_mut();
        assert_eq!(
            shardline_state_remove_region(st, c("regionA").as_ptr(), &mut removed),
            S::Ok
        );
        assert_eq!(take_list(removed), ["a", "b"]);
        assert_eq!(
            shardline_state_remove_shard(st, c("a").as_ptr(), ptr::null_mut()),
            S::InvalidState
        );
        shardline_state_free(st);
        shardline_state_free(ptr::null_mut());
    }
}

#[test]
fn allocate_and_rebalance() {
    let st = state();
    let s = strategy(r#"{"kind":"least-shard","absoluteLimit":1,"relativeLimit":1.0}"#);
    assert_eq!(allocate(s, st, "d"), Ok(Some("regionC".into())));
    unsafe {
        let mut region = ptr::null_mut();
        let mut pending = true;
        let mut explanation = ptr::null_mut();
        assert_eq!(
            shardline_allocate(
                s,
                st,
                ptr::null(),
                c("d").as_ptr(),
                &mut region,
                &mut pending,
                &mut explanation
            ),
            S::Ok
        );
        assert!(!pending);
        assert_eq!(take(region).as_deref(), Some("regionC"));
        let e: serde_json::Value = serde_json::from_str(&take(explanation).unwrap()).unwrap();
        assert_eq!(e["strategy"], "least-shard");

        // A missing out-parameter is caught before any output is written.
        region = ptr::null_mut();
        assert_eq!(
            shardline_allocate(
                s,
                st,
                ptr::null(),
                c("d").as_ptr(),
                &mut region,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            S::NullPointer
        );
        assert!(region.is_null());
        assert_eq!(last_error(), "out_pending is NULL");
        assert_eq!(
            shardline_allocate(
                s,
                st,
                bad(),
                c("d").as_ptr(),
                &mut region,
                &mut pending,
                ptr::null_mut()
            ),
            S::InvalidArgument
        );
        assert!(last_error().starts_with("requester is not valid UTF-8"));

        let mut list = ptr::null_mut();
        assert_eq!(
            shardline_rebalance(s, st, ptr::null(), 0, &mut list, ptr::null_mut()),
            S::Ok
        );
        assert_eq!(take_list(list), ["a"]);
        let in_progress = [c("a")];
        let ptrs = [in_progress[0].as_ptr()];
        assert_eq!(
            shardline_rebalance(s, st, ptrs.as_ptr(), 1, &mut list, ptr::null_mut()),
            S::Ok
        );
        assert_eq!(take_list(list), Vec::<String>::new());
        assert_eq!(
            shardline_rebalance(s, st, ptr::null(), 1, &mut list, ptr::null_mut()),
            S::NullPointer
        );
        let holes = [ptr::null::<c_char>()];
        assert_eq!(
            shardline_rebalance(s, st, holes.as_ptr(), 1, &mut list, ptr::null_mut()),
            S::NullPointer
        );
        assert_eq!(last_error(), "in_progress[0] is NULL");
        shardline_strategy_free(s);
        shardline_state_free(st);
    }
}

#[test]
fn no_candidates_is_its_own_status() {
    let mut st = ptr::null_mut();
    unsafe {
        assert_eq!(shardline_state_new(c("sys@h:1").as_ptr(), &mut st), S::Ok);
        let s = strategy(r#"{"kind":"actor-ts-hash"}"#);
        assert_eq!(allocate(s, st, "1"), Err(S::NoCandidates));
        shardline_strategy_free(s);
        shardline_state_free(st);
    }
}

#[test]
fn decide_and_hashing() {
    unsafe {
        let mut out = ptr::null_mut();
        let v = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/vectors/actor-ts-strategies.json"
        ))
        .unwrap();
        assert_eq!(shardline_decide(c(&v).as_ptr(), false, &mut out), S::Ok);
        let got: serde_json::Value = serde_json::from_str(&take(out).unwrap()).unwrap();
        assert!(got.as_array().is_some_and(|a| !a.is_empty()));
        assert_eq!(
            shardline_decide(c("[{\"op\": 1}]").as_ptr(), false, &mut out),
            S::InvalidArgument
        );
        assert_eq!(
            shardline_decide(c("nope").as_ptr(), true, &mut out),
            S::InvalidArgument
        );

        assert_eq!(
            shardline_pekko_shard_id(c("a").as_ptr(), 4, &mut out),
            S::Ok
        );
        assert_eq!(take(out).as_deref(), Some("1"));
        assert_eq!(
            shardline_pekko_shard_id(c("a").as_ptr(), 0, &mut out),
            S::InvalidArgument
        );
        let mut n = 0u32;
        assert_eq!(
            shardline_actor_ts_shard_id(c("").as_ptr(), 4, &mut n),
            S::Ok
        );
        assert_eq!(n, 1);
        assert_eq!(
            shardline_actor_ts_shard_id(c("a").as_ptr(), 0, &mut n),
            S::InvalidArgument
        );
        assert_eq!(
            shardline_actor_ts_shard_id(bad(), 4, &mut n),
            S::InvalidArgument
        );
        assert!(last_error().starts_with("entity is not valid UTF-8"));
    }
}

// ---- custom strategies ----------------------------------------------------------------------

#[derive(Default)]
struct Host {
    /// What the allocate callback answers: a region id, "" for pending, or None to fail.
    answer: Option<String>,
    /// Set to the strategy's own handle to make the callbacks call back into it.
    reenter: Option<*mut shardline_strategy>,
    /// Set to the owned state to make the callbacks try to change it.
    mutate: Option<*mut shardline_state>,
    regions_seen: usize,
    reentry_status: Option<S>,
    mutate_status: Option<S>,
    freed: usize,
}

unsafe extern "C" fn host_allocate(
    userdata: *mut c_void,
    state: *const shardline_state,
    _requester: *const c_char,
    _shard: *const c_char,
    out: *mut shardline_decision,
) -> shardline_status_code {
    let host = unsafe { &mut *(userdata as *mut Host) };
    let mut n = 0;
    unsafe { shardline_state_region_count(state, &mut n) };
    host.regions_seen = n;
    if let Some(s) = host.reenter {
        let (mut r, mut p) = (ptr::null_mut(), false);
        host.reentry_status = Some(unsafe {
            shardline_allocate(
                s,
                state,
                ptr::null(),
                c("x").as_ptr(),
                &mut r,
                &mut p,
                ptr::null_mut(),
            )
        });
    }
    if let Some(st) = host.mutate {
        host.mutate_status =
            Some(unsafe { shardline_state_add_shard(st, c("regionA").as_ptr(), c("x").as_ptr()) });
        // The view is read-only as well.
        let view = state as *mut shardline_state;
        assert_eq!(
            unsafe { shardline_state_add_shard(view, c("regionA").as_ptr(), c("x").as_ptr()) },
            S::ReentrantCall
        );
        unsafe { shardline_state_free(view) };
    }
    match host.answer.as_deref() {
        None => 42,
        Some("") => unsafe { shardline_decision_set_pending(out) as u32 },
        Some(r) => unsafe {
            assert_eq!(
                shardline_decision_add_shard(out, c("a").as_ptr()),
                S::InvalidState
            );
            shardline_decision_set_region(out, c(r).as_ptr()) as u32
        },
    }
}

unsafe extern "C" fn host_rebalance(
    _userdata: *mut c_void,
    _state: *const shardline_state,
    in_progress: *const *const c_char,
    n: usize,
    out: *mut shardline_decision,
) -> shardline_status_code {
    assert!(n == 0 || !in_progress.is_null());
    unsafe {
        assert_eq!(shardline_decision_add_shard(out, c("b").as_ptr()), S::Ok);
        assert_eq!(
            shardline_decision_add_shard(out, c("b").as_ptr()),
            S::InvalidState
        );
        assert_eq!(
            shardline_decision_set_region(out, c("regionA").as_ptr()),
            S::InvalidState
        );
        shardline_decision_add_shard(out, c(if n == 0 { "a" } else { "unknown" }).as_ptr()) as u32
    }
}

unsafe extern "C" fn host_free(userdata: *mut c_void) {
    unsafe { (*(userdata as *mut Host)).freed += 1 };
}

fn custom(host: &mut Host) -> *mut shardline_strategy {
    let vtable = shardline_custom_strategy {
        struct_size: std::mem::size_of::<shardline_custom_strategy>() as u32,
        userdata: host as *mut Host as *mut c_void,
        allocate: Some(host_allocate),
        rebalance: Some(host_rebalance),
        userdata_free: Some(host_free),
    };
    let mut out = ptr::null_mut();
    assert_eq!(
        unsafe { shardline_strategy_new_custom(&vtable, c("mine").as_ptr(), &mut out) },
        S::Ok
    );
    out
}

#[test]
fn custom_strategy_decides_through_callbacks() {
    let st = state();
    let mut host = Host {
        answer: Some("regionB".into()),
        ..Default::default()
    };
    let s = custom(&mut host);
    assert_eq!(allocate(s, st, "d"), Ok(Some("regionB".into())));
    assert_eq!(host.regions_seen, 3);
    host.answer = Some(String::new());
    assert_eq!(allocate(s, st, "d"), Ok(None));

    host.answer = Some("nowhere".into());
    assert_eq!(allocate(s, st, "d"), Err(S::InvalidState));
    assert!(
        last_error().contains("\"nowhere\", which is not registered"),
        "{}",
        last_error()
    );
    host.answer = None;
    assert_eq!(allocate(s, st, "d"), Err(S::CallbackFailed));
    assert!(
        last_error().contains("returned unknown status 42"),
        "{}",
        last_error()
    );

    unsafe {
        let mut list = ptr::null_mut();
        let mut explanation = ptr::null_mut();
        assert_eq!(
            shardline_rebalance(s, st, ptr::null(), 0, &mut list, &mut explanation),
            S::Ok
        );
        assert_eq!(take_list(list), ["b", "a"]);
        assert!(take(explanation).unwrap().contains("\"strategy\":\"mine\""));
        list = ptr::null_mut();
        let ip = [c("c")];
        let ptrs = [ip[0].as_ptr()];
        assert_eq!(
            shardline_rebalance(s, st, ptrs.as_ptr(), 1, &mut list, ptr::null_mut()),
            S::InvalidState
        );
        assert!(
            last_error().contains("\"unknown\", which is not allocated"),
            "{}",
            last_error()
        );
        assert!(list.is_null());
        shardline_strategy_free(s);
        shardline_state_free(st);
    }
    assert_eq!(host.freed, 1);
}

#[test]
fn callbacks_cannot_reenter() {
    let st = state();
    let mut host = Host {
        answer: Some("regionC".into()),
        ..Default::default()
    };
    let s = custom(&mut host);
    host.reenter = Some(s);
    host.mutate = Some(st);
    assert_eq!(allocate(s, st, "d"), Ok(Some("regionC".into())));
    assert_eq!(host.reentry_status, Some(S::ReentrantCall));
    assert_eq!(host.mutate_status, Some(S::ReentrantCall));
    assert_eq!(last_error(), "", "the outer call succeeded");
    // The state was neither changed nor freed by the callback.
    let mut home = ptr::null_mut();
    unsafe {
        assert_eq!(
            shardline_state_home_of(st, c("x").as_ptr(), &mut home),
            S::Ok
        );
        assert!(home.is_null());
        shardline_strategy_free(s);
        shardline_state_free(st);
    }
    assert_eq!(host.freed, 1);
}

#[test]
fn custom_strategy_struct_is_checked() {
    let mut host = Host::default();
    let mut vtable = shardline_custom_strategy {
        struct_size: 8,
        userdata: &mut host as *mut Host as *mut c_void,
        allocate: Some(host_allocate),
        rebalance: None,
        userdata_free: Some(host_free),
    };
    let mut out = ptr::null_mut();
    unsafe {
        assert_eq!(
            shardline_strategy_new_custom(&vtable, ptr::null(), &mut out),
            S::InvalidArgument
        );
        assert!(last_error().contains("struct_size is 8"));
        vtable.struct_size = std::mem::size_of::<shardline_custom_strategy>() as u32;
        vtable.allocate = None;
        assert_eq!(
            shardline_strategy_new_custom(&vtable, ptr::null(), &mut out),
            S::InvalidArgument
        );
        assert_eq!(
            shardline_strategy_new_custom(ptr::null(), ptr::null(), &mut out),
            S::NullPointer
        );
        assert!(out.is_null());
        vtable.allocate = Some(host_allocate);
        assert_eq!(
            shardline_strategy_new_custom(&vtable, ptr::null(), &mut out),
            S::Ok
        );
        // Without a rebalance callback nothing is handed off.
        let st = state();
        let mut list = ptr::null_mut();
        assert_eq!(
            shardline_rebalance(out, st, ptr::null(), 0, &mut list, ptr::null_mut()),
            S::Ok
        );
        assert!(take_list(list).is_empty());
        shardline_state_free(st);
        shardline_strategy_free(out);
    }
    assert_eq!(
        host.freed, 1,
        "userdata_free runs once, and not for failed constructions"
    );
}
