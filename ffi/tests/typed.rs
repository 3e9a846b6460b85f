//! The typed step form and the callback drivers, called from Rust the way a C host would:
//! envelopes survive the trip through their C view, the typed step yields what the JSON step
//! yields, and a driver's callbacks report failures by name.

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;

use shardline::boundary::shardline_last_error_message;
use shardline::coordinator::*;
use shardline::driver::*;
use shardline::envelope::*;
use shardline::region::*;
use shardline::status::shardline_status as S;
use shardline::strategy::shardline_strategy_new;
use shardline::string::shardline_string_free;
use shardline_core::coordinator::{CoordinatorOutput, LeaseRequest};
use shardline_core::model::Amount;
use shardline_core::protocol::json;
use shardline_core::protocol::{
    Command, Directive, Endpoint, Envelope, FencingToken, Forward, Message, RegionOffer, ShardHome,
    Stamp,
};

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

fn text(s: shardline_str) -> String {
    let bytes = unsafe { std::slice::from_raw_parts(s.data.cast::<u8>(), s.len) };
    std::str::from_utf8(bytes).unwrap().to_owned()
}

fn one_of_each() -> Vec<Envelope> {
    let st = Stamp::new(3, 9);
    let to_c = |m| Envelope {
        from: Endpoint::Region("r1".into()),
        to: Endpoint::Coordinator,
        message: Message::Command(m),
    };
    let to_r = |m| Envelope {
        from: Endpoint::Coordinator,
        to: Endpoint::Region("r-2".into()),
        message: Message::Directive(m),
    };
    let s = || shardline_core::protocol::ShardId::from("shard-ü");
    vec![
        to_c(Command::register("pekko://sys@h:1")),
        to_c(Command::RegisterProxy {
            node: "pekko://sys@h:2".into(),
        }),
        to_c(Command::GetShardHome { shard: s() }),
        to_c(Command::ShardStarted {
            shard: s(),
            stamp: st,
        }),
        to_c(Command::BeginHandOffAck {
            shard: s(),
            stamp: st,
        }),
        to_c(Command::ShardStopped {
            shard: s(),
            stamp: st,
        }),
        to_c(Command::GracefulShutdownReq),
        to_c(Command::RegionStopped),
        to_c(Command::EntityStarted {
            shard: s(),
            entity: "e".into(),
        }),
        to_c(Command::EntityPassivated {
            shard: Default::default(),
            entity: "e".into(),
        }),
        to_r(Directive::RegisterAck {
            token: FencingToken(4),
        }),
        to_r(Directive::ShardHome(ShardHome {
            shard: s(),
            region: "r1".into(),
            stamp: st,
        })),
        to_r(Directive::ShardHomes {
            token: FencingToken(4),
            homes: vec![
                ShardHome {
                    shard: "a".into(),
                    region: "r1".into(),
                    stamp: Stamp::new(4, 1),
                },
                ShardHome {
                    shard: "b".into(),
                    region: "r2".into(),
                    stamp: Stamp::new(4, 2),
                },
            ],
        }),
        to_r(Directive::HostShard {
            shard: s(),
            stamp: st,
            entities: vec!["x".into(), "y".into()],
        }),
        to_r(Directive::BeginHandOff {
            shard: s(),
            stamp: st,
        }),
        to_r(Directive::HandOff {
            shard: s(),
            stamp: st,
        }),
        Envelope {
            from: Endpoint::Region("r1".into()),
            to: Endpoint::Region("r2".into()),
            message: Message::Forward(Forward {
                shard: s(),
                entity: "e".into(),
                payload: vec![0, 255, 7],
            }),
        },
        to_c(Command::ReportLoads {
            loads: [
                (s(), Amount::Uniform(2.5)),
                ("9".into(), Amount::Uniform(0.0)),
            ]
            .into(),
        }),
        to_c(Command::UpdateOffer {
            offer: Box::new(RegionOffer {
                capacity: Some(Amount::PerDimension([("cpu".into(), 4.0)].into())),
                tags: vec!["ssd".into()],
                max_shards: Some(7),
            }),
        }),
    ]
}

#[test]
fn a_registration_carries_its_offer_in_the_payload() {
    let e = Envelope {
        from: Endpoint::Region("r1".into()),
        to: Endpoint::Coordinator,
        message: Message::Command(Command::Register {
            node: "pekko://sys@h:1".into(),
            offer: Box::new(RegionOffer {
                capacity: Some(Amount::Uniform(2.0)),
                ..RegionOffer::default()
            }),
        }),
    };
    let mut lists = Lists::default();
    let view = shardline_envelope::view(&e, &mut lists);
    let payload = unsafe { std::slice::from_raw_parts(view.payload.data, view.payload.len) };
    assert_eq!(payload, br#"{"capacity":2.0}"#);
    assert_eq!(unsafe { view.read("envelope") }.unwrap(), e);
    // Bad documents are named.
    let mut view = view;
    let bad = br#"{"capacity":-1}"#;
    view.payload = shardline_bytes {
        data: bad.as_ptr(),
        len: bad.len(),
    };
    let err = unsafe { view.read("envelope") }.unwrap_err();
    assert!(
        err.message
            .contains("envelope.payload: capacity: expected a finite number > 0"),
        "{}",
        err.message
    );
}

#[test]
fn every_envelope_survives_its_c_view() {
    let all = one_of_each();
    let mut kinds = Vec::new();
    for e in &all {
        let mut lists = Lists::default();
        let view = shardline_envelope::view(e, &mut lists);
        kinds.push(view.kind);
        let back = unsafe { view.read("envelope") }.unwrap();
        assert_eq!(&back, e);
    }
    let want: Vec<u32> = (1..=shardline_message_kind::all().len() as u32).collect();
    assert_eq!(kinds, want, "one envelope of every kind, in kind order");
}

#[test]
fn kinds_are_numbered_from_one_in_order() {
    for (i, k) in shardline_message_kind::all().iter().enumerate() {
        assert_eq!(*k as u32, i as u32 + 1, "{k:?}");
    }
    for (i, k) in shardline_coordinator_input_kind::all().iter().enumerate() {
        assert_eq!(*k as u32, i as u32 + 1, "{k:?}");
    }
    for (i, k) in shardline_region_input_kind::all().iter().enumerate() {
        assert_eq!(*k as u32, i as u32 + 1, "{k:?}");
    }
}

fn input(kind: shardline_coordinator_input_kind) -> shardline_coordinator_input {
    let mut i: shardline_coordinator_input = unsafe { std::mem::zeroed() };
    i.struct_size = std::mem::size_of::<shardline_coordinator_input>() as u32;
    i.kind = kind as u32;
    i.up_number = i32::MAX;
    i
}

fn str_of(s: &'static str) -> shardline_str {
    shardline_str {
        data: s.as_ptr().cast(),
        len: s.len(),
    }
}

fn receive_from_r1(kind: shardline_message_kind) -> shardline_coordinator_input {
    let mut i = input(shardline_coordinator_input_kind::Receive);
    i.envelope = shardline_envelope::none();
    i.envelope.from = str_of("r1");
    i.envelope.kind = kind as u32;
    i
}

/// A least-shard coordinator on 10.0.0.0, idle.
fn coordinator() -> *mut shardline_coordinator {
    let mut s = ptr::null_mut();
    let config = c(r#"{"kind":"least-shard"}"#);
    assert_eq!(
        unsafe { shardline_strategy_new(config.as_ptr(), &mut s) },
        S::Ok
    );
    let mut co = ptr::null_mut();
    let me = c("pekko://sys@10.0.0.0:2552");
    assert_eq!(
        unsafe { shardline_coordinator_new(s, me.as_ptr(), ptr::null(), &mut co) },
        S::Ok
    );
    co
}

/// Both forms on one coordinator each, fed the standard workload's inputs: the typed outputs,
/// read back into core values, equal the JSON ones.
#[test]
fn the_typed_step_yields_what_the_json_step_yields() {
    let new = || {
        let co = coordinator();
        assert_eq!(unsafe { shardline_coordinator_start(co, 0) }, S::Ok);
        co
    };
    let (typed, json) = (new(), new());
    let mut grant = input(shardline_coordinator_input_kind::LeaseGranted);
    grant.token = 1;
    grant.valid_until_ms = 1 << 63;
    let mut loaded = input(shardline_coordinator_input_kind::StateLoaded);
    loaded.state_json = str_of(r#"{"snapshot":null,"events":[]}"#);
    let mut member = input(shardline_coordinator_input_kind::Member);
    member.address = str_of("pekko://sys@10.0.0.1:2552");
    let mut register = receive_from_r1(shardline_message_kind::Register);
    register.envelope.node = str_of("pekko://sys@10.0.0.1:2552");
    let mut ask = receive_from_r1(shardline_message_kind::GetShardHome);
    ask.envelope.shard = str_of("7");
    let docs = [
        r#"{"type":"leaseGranted","token":1,"validUntilMs":9223372036854775808}"#,
        r#"{"type":"stateLoaded","state":{"snapshot":null,"events":[]}}"#,
        r#"{"type":"member","member":{"address":"pekko://sys@10.0.0.1:2552"}}"#,
        r#"{"type":"receive","envelope":{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"register","node":"pekko://sys@10.0.0.1:2552"}}}}"#,
        r#"{"type":"receive","envelope":{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"getShardHome","shard":"7"}}}}"#,
        r#"{"type":"receive","envelope":{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"getShardHome","shard":"7"}}}}"#,
    ];
    let inputs = [grant, loaded, member, register, ask, ask];
    let mut seen = 0;
    for (typed_in, doc) in inputs.iter().zip(docs) {
        assert_eq!(
            unsafe { shardline_coordinator_feed(typed, 5, typed_in) },
            S::Ok,
            "{}",
            last_error()
        );
        let d = c(doc);
        assert_eq!(
            unsafe { shardline_coordinator_handle(json, 5, d.as_ptr()) },
            S::Ok
        );
        let mut out = ptr::null_mut();
        assert_eq!(
            unsafe { shardline_coordinator_drain_outputs(json, &mut out) },
            S::Ok
        );
        let want: Vec<CoordinatorOutput> =
            json::from_str(unsafe { CStr::from_ptr(out) }.to_str().unwrap(), "out").unwrap();
        unsafe { shardline_string_free(out) };
        for w in want {
            let mut o = ptr::null();
            assert_eq!(
                unsafe { shardline_coordinator_next_output(typed, &mut o) },
                S::Ok
            );
            let o = unsafe { o.as_ref() }.expect("as many typed outputs as JSON ones");
            use shardline_coordinator_output_kind as K;
            match (&w, o.kind) {
                (CoordinatorOutput::Send(e), K::Send) => {
                    assert_eq!(&unsafe { o.envelope.read("envelope") }.unwrap(), e)
                }
                (CoordinatorOutput::Persist { token, record }, K::Persist) => {
                    assert_eq!(o.token, token.0);
                    assert_eq!(text(o.document), json::to_string(record).unwrap());
                }
                (CoordinatorOutput::Notice(n), K::Notice) => {
                    assert_eq!(text(o.document), json::to_string(n).unwrap())
                }
                (CoordinatorOutput::LoadState { token }, K::LoadState) => {
                    assert_eq!(o.token, token.0)
                }
                (CoordinatorOutput::Lease(LeaseRequest::Acquire), K::LeaseAcquire) => {}
                (w, k) => panic!("JSON gave {w:?}, typed gave {k:?}"),
            }
            seen += 1;
        }
        let mut o = ptr::null();
        assert_eq!(
            unsafe { shardline_coordinator_next_output(typed, &mut o) },
            S::Ok
        );
        assert!(o.is_null(), "no more typed outputs than JSON ones");
    }
    assert!(seen >= 6, "{seen} outputs compared");
    unsafe {
        shardline_coordinator_free(typed);
        shardline_coordinator_free(json);
    }
}

// ---- a driver whose lease fails, then whose store answers garbage ---------------------------

struct Fake {
    acquire: u32,
    state: &'static str,
    sent: usize,
}

unsafe extern "C" fn now(_: *mut c_void) -> u64 {
    7
}

unsafe extern "C" fn send(ud: *mut c_void, _: *const shardline_envelope) -> u32 {
    unsafe { (*ud.cast::<Fake>()).sent += 1 };
    0
}

unsafe extern "C" fn acquire(
    ud: *mut c_void,
    now_ms: u64,
    granted: *mut bool,
    token: *mut u64,
    until: *mut u64,
) -> u32 {
    unsafe {
        *granted = true;
        *token = 1;
        *until = now_ms + 1000;
        (*ud.cast::<Fake>()).acquire
    }
}

unsafe extern "C" fn renew(_: *mut c_void, _: u64, _: u64, renewed: *mut bool, _: *mut u64) -> u32 {
    unsafe { *renewed = false };
    0
}

unsafe extern "C" fn release(_: *mut c_void, _: u64) -> u32 {
    0
}

unsafe extern "C" fn write(
    _: *mut c_void,
    _: u64,
    _: shardline_str,
    fenced: *mut bool,
    _: *mut u64,
) -> u32 {
    unsafe { *fenced = false };
    0
}

unsafe extern "C" fn load(
    ud: *mut c_void,
    _: u64,
    fenced: *mut bool,
    state: *mut shardline_str,
) -> u32 {
    unsafe {
        *fenced = false;
        *state = str_of((*ud.cast::<Fake>()).state);
    }
    0
}

fn driver(fake: &mut Fake) -> *mut shardline_coordinator_driver {
    let co = coordinator();
    let cb = shardline_coordinator_callbacks {
        struct_size: std::mem::size_of::<shardline_coordinator_callbacks>() as u32,
        userdata: (fake as *mut Fake).cast(),
        now_ms: Some(now),
        send: Some(send),
        lease_acquire: Some(acquire),
        lease_renew: Some(renew),
        lease_release: Some(release),
        store_append: Some(write),
        store_save_snapshot: Some(write),
        store_load: Some(load),
        notice: None,
        userdata_free: None,
    };
    let mut d = ptr::null_mut();
    assert_eq!(
        unsafe { shardline_coordinator_driver_new(co, &cb, &mut d) },
        S::Ok,
        "{}",
        last_error()
    );
    d
}

#[test]
fn a_failing_callback_is_named_and_a_bad_answer_is_refused() {
    let mut fake = Fake {
        acquire: S::Internal as u32,
        state: r#"{"snapshot":null,"events":[]}"#,
        sent: 0,
    };
    let d = driver(&mut fake);
    assert_eq!(
        unsafe { shardline_coordinator_driver_start(d) },
        S::CallbackFailed
    );
    assert_eq!(
        last_error(),
        "the lease_acquire callback of the coordinator driver returned SHARDLINE_STATUS_INTERNAL"
    );
    let mut active = true;
    assert_eq!(
        unsafe { shardline_coordinator_driver_is_active(d, &mut active) },
        S::Ok
    );
    assert!(!active, "a failed acquisition counts as denied");
    unsafe { shardline_coordinator_driver_free(d) };

    let mut fake = Fake {
        acquire: 0,
        state: r#"{"snapshot":null}"#,
        sent: 0,
    };
    let d = driver(&mut fake);
    assert_eq!(
        unsafe { shardline_coordinator_driver_start(d) },
        S::InvalidArgument
    );
    assert!(
        last_error()
            .starts_with("the state_json of the store_load callback: missing field `events`"),
        "{}",
        last_error()
    );
    unsafe { shardline_coordinator_driver_free(d) };

    fake.state = r#"{"snapshot":null,"events":[]}"#;
    let d = driver(&mut fake);
    assert_eq!(unsafe { shardline_coordinator_driver_start(d) }, S::Ok);
    let mut active = false;
    assert_eq!(
        unsafe { shardline_coordinator_driver_is_active(d, &mut active) },
        S::Ok
    );
    assert!(active);
    let mut register = receive_from_r1(shardline_message_kind::Register);
    register.envelope.node = str_of("pekko://sys@10.0.0.0:2552");
    assert_eq!(
        unsafe { shardline_coordinator_driver_feed(d, &register) },
        S::Ok,
        "{}",
        last_error()
    );
    assert_eq!(fake.sent, 1, "the RegisterAck went out through send");
    unsafe { shardline_coordinator_driver_free(d) };
}
