//! One call a host makes on a state machine, as a trace records it: the inputs of
//! `step_json` plus the three calls that are not inputs (`start`, `timeout`, and a region's
//! `route`), so that a trace holds everything that moved a machine.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::coordinator::{Coordinator, CoordinatorInput, CoordinatorOutput};
use crate::protocol::json;
use crate::protocol::{EntityId, Payload, ShardId};
use crate::region::{Region, RegionInput, RegionOutput};
use crate::{Error, Result};

/// A call on a coordinator.
#[derive(Debug, Clone, PartialEq)]
pub enum CoordinatorStep {
    Start,
    Timeout,
    Input(CoordinatorInput),
}

/// A call on a region.
#[derive(Debug, Clone, PartialEq)]
pub enum RegionStep {
    Start,
    Timeout,
    /// `route_to_shard`: an entity message from a local sender.
    Route {
        shard: ShardId,
        entity: EntityId,
        payload: Payload,
    },
    Input(RegionInput),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Bare {
    #[serde(rename = "type")]
    _kind: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteDoc {
    #[serde(rename = "type")]
    _kind: String,
    shard: ShardId,
    entity: EntityId,
    #[serde(with = "crate::protocol::payload")]
    payload: Payload,
}

#[derive(Serialize)]
struct RouteOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    shard: &'a str,
    entity: &'a str,
    #[serde(serialize_with = "crate::protocol::payload::serialize")]
    payload: &'a [u8],
}

/// What recording and replaying need of a machine, the same for coordinators and regions.
pub(crate) trait StepMachine {
    type Step;
    type Output: Serialize;
    fn call(&mut self, now_ms: u64, step: Self::Step) -> Result<()>;
    #[cfg(feature = "sim")]
    fn step_json(step: &Self::Step) -> String;
    #[cfg(feature = "sim")]
    fn queued(&self) -> usize;
    fn deadline(&self) -> Option<u64>;
    fn drain(&mut self) -> Vec<Self::Output>;
}

impl StepMachine for Coordinator {
    type Step = CoordinatorStep;
    type Output = CoordinatorOutput;
    fn call(&mut self, now_ms: u64, step: CoordinatorStep) -> Result<()> {
        step.apply(self, now_ms)
    }
    #[cfg(feature = "sim")]
    fn step_json(step: &CoordinatorStep) -> String {
        step.to_json()
    }
    #[cfg(feature = "sim")]
    fn queued(&self) -> usize {
        self.queued_outputs()
    }
    fn deadline(&self) -> Option<u64> {
        self.next_deadline()
    }
    fn drain(&mut self) -> Vec<CoordinatorOutput> {
        self.drain_outputs()
    }
}

impl StepMachine for Region {
    type Step = RegionStep;
    type Output = RegionOutput;
    fn call(&mut self, now_ms: u64, step: RegionStep) -> Result<()> {
        step.apply(self, now_ms)
    }
    #[cfg(feature = "sim")]
    fn step_json(step: &RegionStep) -> String {
        step.to_json()
    }
    #[cfg(feature = "sim")]
    fn queued(&self) -> usize {
        self.queued_outputs()
    }
    fn deadline(&self) -> Option<u64> {
        self.next_deadline()
    }
    fn drain(&mut self) -> Vec<RegionOutput> {
        self.drain_outputs()
    }
}

const START: &str = r#"{"type":"start"}"#;
const TIMEOUT: &str = r#"{"type":"timeout"}"#;

fn text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("steps serialize")
}

/// The call a step document names, if it is one of the calls that are not inputs.
fn call_kind(value: &Value) -> Option<&str> {
    match value.get("type").and_then(Value::as_str) {
        Some(k @ ("start" | "timeout" | "route")) => Some(k),
        _ => None,
    }
}

impl CoordinatorStep {
    /// Reads `{"type":"start"}`, `{"type":"timeout"}` or a coordinator input; errors start
    /// with `name` and name the field.
    pub fn from_value(value: &Value, name: &str) -> Result<CoordinatorStep> {
        match call_kind(value) {
            Some("start") => json::from_value::<Bare>(value, name).map(|_| Self::Start),
            Some("timeout") => json::from_value::<Bare>(value, name).map(|_| Self::Timeout),
            Some(other) => Err(Error::invalid_argument(format!(
                "{name}.type: {other:?} is a region call; a coordinator takes start, timeout or an input"
            ))),
            None => CoordinatorInput::from_json_value(value, name).map(Self::Input),
        }
    }

    /// The step's JSON text, fields in the order of their forms (`type` first).
    pub fn to_json(&self) -> String {
        match self {
            Self::Start => START.to_owned(),
            Self::Timeout => TIMEOUT.to_owned(),
            Self::Input(i) => text(i),
        }
    }

    /// Makes the call, as a host would.
    pub fn apply(self, c: &mut Coordinator, now_ms: u64) -> Result<()> {
        match self {
            Self::Start => {
                c.start(now_ms);
                Ok(())
            }
            Self::Timeout => c.on_timeout(now_ms),
            Self::Input(i) => c.handle(now_ms, i),
        }
    }
}

impl RegionStep {
    /// Reads `{"type":"start"}`, `{"type":"timeout"}`,
    /// `{"type":"route","shard":..,"entity":..,"payload":"<base64>"}` or a region input.
    pub fn from_value(value: &Value, name: &str) -> Result<RegionStep> {
        match call_kind(value) {
            Some("start") => json::from_value::<Bare>(value, name).map(|_| Self::Start),
            Some("timeout") => json::from_value::<Bare>(value, name).map(|_| Self::Timeout),
            Some(_) => json::from_value::<RouteDoc>(value, name).map(|r| Self::Route {
                shard: r.shard,
                entity: r.entity,
                payload: r.payload,
            }),
            None => RegionInput::from_json_value(value, name).map(Self::Input),
        }
    }

    pub fn to_json(&self) -> String {
        match self {
            Self::Start => START.to_owned(),
            Self::Timeout => TIMEOUT.to_owned(),
            Self::Route {
                shard,
                entity,
                payload,
            } => text(&RouteOut {
                kind: "route",
                shard,
                entity,
                payload,
            }),
            Self::Input(i) => text(i),
        }
    }

    /// Makes the call, as a host would. A refused message is an error (nothing was queued).
    pub fn apply(self, r: &mut Region, now_ms: u64) -> Result<()> {
        match self {
            Self::Start => r.start(now_ms),
            Self::Timeout => r.on_timeout(now_ms),
            Self::Route {
                shard,
                entity,
                payload,
            } => r.route_to_shard(now_ms, &shard, &entity, payload)?,
            Self::Input(i) => r.handle(now_ms, i),
        }
        Ok(())
    }
}
