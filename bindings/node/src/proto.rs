//! Step-API inputs and outputs as tagged plain objects (`{type: 'receive', envelope}`).
//!
//! The core's serde shapes are used where they are unambiguous; variants that wrap another
//! tagged enum (a notice, a lease request) nest it under its own key, so no `type` is lost.

use serde::Deserialize;

use shardline_core::coordinator::{Input, LeaseRequest, Output, Phase};
use shardline_core::lease::LeaseGrant;
use shardline_core::protocol::{Envelope, FencingToken};
use shardline_core::region::{RegionInput, RegionOutput};
use shardline_core::store::StoredState;

use crate::conv;
use crate::error::{Fail, R};
use crate::js::{Js, V};
use crate::state;

pub fn envelope(js: Js, v: V, what: &str) -> R<Envelope> {
    conv::de(js, v, what)
}

pub fn envelope_js(js: Js, e: &Envelope) -> R<V> {
    conv::ser(js, e)
}

fn tag(js: Js, v: V, what: &str) -> R<String> {
    let v = conv::object(js, v, what)?;
    conv::string(js, js.get(v, "type")?, &format!("{what}.type"))
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
enum InputDoc {
    Receive {
        envelope: Envelope,
    },
    #[serde(rename_all = "camelCase")]
    MemberRemoved {
        address: String,
    },
    Reachability {
        address: String,
        reachable: bool,
    },
    RegionTerminated {
        region: String,
    },
    #[serde(rename_all = "camelCase")]
    LeaseGranted {
        token: u64,
        valid_until_ms: u64,
    },
    LeaseDenied,
    #[serde(rename_all = "camelCase")]
    LeaseRenewed {
        token: u64,
        valid_until_ms: u64,
    },
    LeaseRenewFailed {
        token: u64,
    },
    LeaseLost {
        token: u64,
    },
    StateLoaded {
        state: StoredState,
    },
    StateLoadFailed {
        fenced: bool,
    },
    StoreFailed {
        fenced: bool,
    },
    PreparingForShutdown,
    Stop,
}

pub fn coordinator_input(js: Js, v: V) -> R<Input> {
    if tag(js, v, "input")? == "member" {
        return Ok(Input::Member(state::member(
            js,
            js.get(v, "member")?,
            "input.member",
        )?));
    }
    let doc: InputDoc = conv::de(js, v, "input")?;
    Ok(match doc {
        InputDoc::Receive { envelope } => Input::Receive(envelope),
        InputDoc::MemberRemoved { address } => Input::MemberRemoved {
            address: state::address(&address, "input.address")?
                .as_str()
                .to_owned(),
        },
        InputDoc::Reachability { address, reachable } => Input::Reachability {
            address: state::address(&address, "input.address")?
                .as_str()
                .to_owned(),
            reachable,
        },
        InputDoc::RegionTerminated { region } => Input::RegionTerminated { region },
        InputDoc::LeaseGranted {
            token,
            valid_until_ms,
        } => Input::LeaseGranted(LeaseGrant {
            token: FencingToken(token),
            valid_until_ms,
        }),
        InputDoc::LeaseDenied => Input::LeaseDenied,
        InputDoc::LeaseRenewed {
            token,
            valid_until_ms,
        } => Input::LeaseRenewed {
            token: FencingToken(token),
            valid_until_ms,
        },
        InputDoc::LeaseRenewFailed { token } => Input::LeaseRenewFailed {
            token: FencingToken(token),
        },
        InputDoc::LeaseLost { token } => Input::LeaseLost {
            token: FencingToken(token),
        },
        InputDoc::StateLoaded { state } => Input::StateLoaded(state),
        InputDoc::StateLoadFailed { fenced } => Input::StateLoadFailed { fenced },
        InputDoc::StoreFailed { fenced } => Input::StoreFailed { fenced },
        InputDoc::PreparingForShutdown => Input::PreparingForShutdown,
        InputDoc::Stop => Input::Stop,
    })
}

fn tagged(js: Js, t: &str) -> R<V> {
    let o = js.object()?;
    js.set(o, "type", js.string(t)?)?;
    Ok(o)
}

pub fn coordinator_output(js: Js, o: &Output) -> R<V> {
    Ok(match o {
        Output::Send(e) => {
            let v = tagged(js, "send")?;
            js.set(v, "envelope", envelope_js(js, e)?)?;
            v
        }
        Output::Persist { token, record } => {
            let v = tagged(js, "persist")?;
            js.set(v, "token", js.number(token.0 as f64)?)?;
            js.set(v, "record", conv::ser(js, record)?)?;
            v
        }
        Output::SaveSnapshot { token, snapshot } => {
            let v = tagged(js, "saveSnapshot")?;
            js.set(v, "token", js.number(token.0 as f64)?)?;
            js.set(v, "snapshot", conv::ser(js, snapshot)?)?;
            v
        }
        Output::Lease(req) => {
            let v = tagged(js, "lease")?;
            js.set(v, "request", lease_request_js(js, req)?)?;
            v
        }
        Output::LoadState { token } => {
            let v = tagged(js, "loadState")?;
            js.set(v, "token", js.number(token.0 as f64)?)?;
            v
        }
        Output::Notice(n) => {
            let v = tagged(js, "notice")?;
            js.set(v, "notice", conv::ser(js, n)?)?;
            v
        }
    })
}

fn lease_request_js(js: Js, r: &LeaseRequest) -> R<V> {
    conv::ser(js, r)
}

pub fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Idle => "idle",
        Phase::AcquiringLease => "acquiringLease",
        Phase::Loading => "loading",
        Phase::Active => "active",
        Phase::Stopped => "stopped",
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
enum RegionInputDoc {
    Receive { envelope: Envelope },
    CoordinatorChanged,
    RegionTerminated { region: String },
    ShardStopped { shard: String },
    EntityPassivated { shard: String, entity: String },
    GracefulShutdown,
}

pub fn region_input(js: Js, v: V) -> R<RegionInput> {
    tag(js, v, "input")?;
    let doc: RegionInputDoc = conv::de(js, v, "input")?;
    Ok(match doc {
        RegionInputDoc::Receive { envelope } => RegionInput::Receive(envelope),
        RegionInputDoc::CoordinatorChanged => RegionInput::CoordinatorChanged,
        RegionInputDoc::RegionTerminated { region } => RegionInput::RegionTerminated { region },
        RegionInputDoc::ShardStopped { shard } => RegionInput::ShardStopped { shard },
        RegionInputDoc::EntityPassivated { shard, entity } => {
            RegionInput::EntityPassivated { shard, entity }
        }
        RegionInputDoc::GracefulShutdown => RegionInput::GracefulShutdown,
    })
}

pub fn region_output(js: Js, o: &RegionOutput) -> R<V> {
    Ok(match o {
        RegionOutput::Send(e) => {
            let v = tagged(js, "send")?;
            js.set(v, "envelope", envelope_js(js, e)?)?;
            v
        }
        RegionOutput::Notice(n) => {
            let v = tagged(js, "notice")?;
            js.set(v, "notice", conv::ser(js, n)?)?;
            v
        }
        other => conv::ser(js, other)?,
    })
}

pub fn fail_from_rejected(r: shardline_core::region::Rejected) -> Fail {
    Fail::state(r.to_string())
}
