//! The coordinator and region step exports called from Rust the way a C host would: the
//! standard coordinator step, typed inputs written with the core's JSON form, and misuse.

use std::ffi::{c_char, CStr, CString};
use std::ptr;

use shardline::boundary::shardline_last_error_message;
use shardline::coordinator::*;
use shardline::region::*;
use shardline::status::shardline_status as S;
use shardline::strategy::shardline_strategy_new;
use shardline::string::shardline_string_free;
use shardline_core::coordinator::LeaseGrant;
use shardline_core::coordinator::{CoordinatorInput, CoordinatorOutput};
use shardline_core::protocol::json;
use shardline_core::protocol::{Command, Endpoint, Envelope, FencingToken, Message};
use shardline_core::region::RegionOutput;

fn last_error() -> String {
    let mut buf = [0 as c_char; 1024];
    let rc = unsafe { shardline_last_error_message(buf.as_mut_ptr(), buf.len(), ptr::null_mut()) };
    assert_eq!(rc, S::Ok);
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn take(p: *mut c_char) -> Option<String> {
    (!p.is_null()).then(|| {
        let s = unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned();
        unsafe { shardline_string_free(p) };
        s
    })
}

const SELF: &str = "pekko://sys@10.0.0.0:2552";

fn handle(co: *mut shardline_coordinator, now: u64, input: &CoordinatorInput) -> S {
    let text = c(&json::to_string(input).unwrap());
    unsafe { shardline_coordinator_handle(co, now, text.as_ptr()) }
}

fn drain(co: *mut shardline_coordinator) -> Vec<CoordinatorOutput> {
    let mut out = ptr::null_mut();
    assert_eq!(
        unsafe { shardline_coordinator_drain_outputs(co, &mut out) },
        S::Ok
    );
    json::from_str(&take(out).unwrap(), "outputs").unwrap()
}

fn from_r1(cmd: Command) -> CoordinatorInput {
    CoordinatorInput::Receive(Envelope {
        from: Endpoint::Region("r1".into()),
        to: Endpoint::Coordinator,
        message: Message::Command(cmd),
    })
}

/// The standard workload's coordinator: active with token 1, r1 registered, shard 7 on r1.
fn standard() -> *mut shardline_coordinator {
    let mut s = ptr::null_mut();
    let config = c(r#"{"kind":"least-shard"}"#);
    assert_eq!(
        unsafe { shardline_strategy_new(config.as_ptr(), &mut s) },
        S::Ok
    );
    let mut co = ptr::null_mut();
    let me = c(SELF);
    let rc = unsafe { shardline_coordinator_new(s, me.as_ptr(), ptr::null(), &mut co) };
    assert_eq!(rc, S::Ok, "{}", last_error());
    assert_eq!(unsafe { shardline_coordinator_start(co, 0) }, S::Ok);
    let grant = CoordinatorInput::LeaseGranted(LeaseGrant {
        token: FencingToken(1),
        valid_until_ms: 1 << 63,
    });
    for input in [
        grant,
        CoordinatorInput::StateLoaded(Box::default()),
        CoordinatorInput::from_json(
            r#"{"type":"member","member":{"address":"pekko://sys@10.0.0.1:2552"}}"#,
            "member",
        )
        .unwrap(),
        from_r1(Command::register("pekko://sys@10.0.0.1:2552")),
        from_r1(Command::GetShardHome { shard: "7".into() }),
    ] {
        assert_eq!(handle(co, 0, &input), S::Ok, "{}", last_error());
    }
    drain(co);
    co
}

#[test]
fn the_standard_coordinator_step() {
    let co = standard();
    for _ in 0..3 {
        let ask = from_r1(Command::GetShardHome { shard: "7".into() });
        assert_eq!(handle(co, 0, &ask), S::Ok);
        let out = drain(co);
        assert_eq!(out.len(), 1, "{out:?}");
        let text = json::to_string(&out[0]).unwrap();
        assert!(
            text.contains(r#""type":"shardHome","shard":"7","region":"r1""#),
            "{text}"
        );
    }
    let mut home = ptr::null_mut();
    let seven = c("7");
    assert_eq!(
        unsafe { shardline_coordinator_home_of(co, seven.as_ptr(), &mut home) },
        S::Ok
    );
    assert_eq!(take(home).as_deref(), Some("r1"));
    unsafe { shardline_coordinator_free(co) };
}

#[test]
fn bad_inputs_name_the_field_and_change_nothing() {
    let co = standard();
    let cases = [
        (
            r#"{"type":"getShardHome"}"#,
            "input_json.type: unknown variant `getShardHome`",
        ),
        (
            r#"{"type":"leaseLost","token":-1}"#,
            "input_json.token: invalid value: integer `-1`",
        ),
        (
            r#"{"type":"leaseLost"}"#,
            "input_json: type \"leaseLost\" needs field `token`",
        ),
    ];
    for (text, want) in cases {
        let t = c(text);
        assert_eq!(
            unsafe { shardline_coordinator_handle(co, 0, t.as_ptr()) },
            S::InvalidArgument
        );
        assert!(last_error().starts_with(want), "{text}: {}", last_error());
    }
    let mut active = false;
    assert_eq!(
        unsafe { shardline_coordinator_is_active(co, &mut active) },
        S::Ok
    );
    assert!(active);
    assert!(drain(co).is_empty());
    unsafe { shardline_coordinator_free(co) };
}

#[test]
fn a_region_registers_and_routes() {
    let mut r = ptr::null_mut();
    let (id, node) = (c("r1"), c("pekko://sys@10.0.0.1:02552"));
    let extractor = c(r#"{"kind":"actor-ts","numShards":4}"#);
    let rc = unsafe {
        shardline_region_new(
            id.as_ptr(),
            node.as_ptr(),
            extractor.as_ptr(),
            ptr::null(),
            &mut r,
        )
    };
    assert_eq!(rc, S::Ok, "{}", last_error());
    assert_eq!(unsafe { shardline_region_start(r, 0) }, S::Ok);
    let mut out = ptr::null_mut();
    assert_eq!(unsafe { shardline_region_poll_output(r, &mut out) }, S::Ok);
    let first: RegionOutput = json::from_str(&take(out).unwrap(), "output").unwrap();
    let RegionOutput::Send(e) = first else {
        panic!("{first:?}")
    };
    // The node address was written in canonical form.
    assert_eq!(
        e.message,
        Message::Command(Command::register("pekko://sys@10.0.0.1:2552"))
    );
    let entity = c("user-1");
    assert_eq!(
        unsafe { shardline_region_route(r, 0, entity.as_ptr(), b"x".as_ptr(), 1) },
        S::Ok
    );
    let mut n = 0;
    assert_eq!(unsafe { shardline_region_buffered(r, &mut n) }, S::Ok);
    assert_eq!(n, 1);
    let (mut has, mut at) = (false, 0);
    assert_eq!(
        unsafe { shardline_region_next_deadline(r, &mut has, &mut at) },
        S::Ok
    );
    assert!(has && at > 0);
    unsafe { shardline_region_free(r) };
}
