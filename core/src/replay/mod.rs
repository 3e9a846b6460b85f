//! Record and replay: a trace holds every call a host made on coordinator and region state
//! machines (with the machine's own time) and every output each call produced; replaying it
//! feeds the same calls to fresh machines and checks that they produce the same outputs.
//! It answers "what would this version have done with that trace"; the format is described
//! in `tests/traces/README.md`. Every binding calls [`replay`], so all of them judge alike.
//!
//! A trace is JSON lines: a header (format, version, and the strategy, coordinator, region
//! and extractor settings every machine is built with), then one record per line, in the
//! order the host made the calls:
//! `{"create":"coordinator"|"region","machine":..,"address":..}`, a step
//! `{"machine":..,"now":..,"input":..,"outputs":[..],"deadline":..,"error":..}` (`deadline`
//! and `error` only when there is one), and `{"end":..}` when a machine crashed or left.

#[cfg(feature = "sim")]
mod record;
mod step;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::coordinator::{Coordinator, CoordinatorConfig};
use crate::model::Address;
use crate::protocol::json;
use crate::region::{ExtractorDoc, Region, RegionConfig};
use crate::strategy::StrategyConfig;
use crate::{Error, Result};

#[cfg(feature = "sim")]
pub(crate) use record::Recorder;
pub(crate) use step::StepMachine;
pub use step::{CoordinatorStep, RegionStep};

/// The header's `format`.
pub const FORMAT: &str = "shardline-trace";
/// The trace format version this build writes and reads.
pub const FORMAT_VERSION: u64 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MachineKind {
    Coordinator,
    Region,
}

/// The first line: everything needed to build fresh machines.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Header {
    pub format: String,
    pub version: u64,
    pub strategy: StrategyConfig,
    pub coordinator: CoordinatorConfig,
    pub region: RegionConfig,
    pub extractor: ExtractorDoc,
    /// How the trace was made (the command line); replay ignores it.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub recorded_by: Value,
}

impl Header {
    #[cfg(feature = "sim")]
    pub fn new(
        strategy: StrategyConfig,
        coordinator: CoordinatorConfig,
        region: RegionConfig,
        extractor: ExtractorDoc,
        recorded_by: Value,
    ) -> Header {
        Header {
            format: FORMAT.to_owned(),
            version: FORMAT_VERSION,
            strategy,
            coordinator,
            region,
            extractor,
            recorded_by,
        }
    }

    fn parse(text: &str, at: &str) -> Result<Header> {
        let value = json_line(text, at)?;
        // Format and version first: a newer trace fails on its version, not on a field.
        if value.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(Error::invalid_argument(format!(
                "{at}: field format: expected {FORMAT:?} (is this a shardline trace?)"
            )));
        }
        match value.get("version").and_then(Value::as_u64) {
            Some(FORMAT_VERSION) => {}
            other => {
                return Err(Error::invalid_argument(format!(
                    "{at}: field version: this build reads trace version {FORMAT_VERSION}, the trace has {}",
                    other.map_or_else(|| "none".to_owned(), |v| v.to_string())
                )))
            }
        }
        let h: Header = json::from_value(&value, &format!("{at}: header"))?;
        h.strategy
            .build()
            .map_err(|e| e.context(format!("{at}: header.strategy")))?;
        h.coordinator
            .validate()
            .map_err(|e| e.context(format!("{at}: header.coordinator")))?;
        h.region
            .validate()
            .map_err(|e| e.context(format!("{at}: header.region")))?;
        h.extractor
            .build()
            .map_err(|e| e.context(format!("{at}: header.extractor")))?;
        Ok(h)
    }
}

fn json_line(text: &str, at: &str) -> Result<Value> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid_argument(format!("{at}: not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(Error::invalid_argument(format!(
            "{at}: expected a JSON object"
        )));
    }
    Ok(value)
}

/// Any record line; which fields are present says which kind it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordDoc {
    create: Option<MachineKind>,
    end: Option<String>,
    machine: Option<String>,
    address: Option<String>,
    now: Option<u64>,
    input: Option<Value>,
    outputs: Option<Vec<Value>>,
    deadline: Option<u64>,
    error: Option<String>,
}

enum Record {
    Create {
        kind: MachineKind,
        machine: String,
        address: String,
    },
    End(String),
    Step {
        machine: String,
        now: u64,
        input: Value,
        expected: Outcome,
    },
}

impl RecordDoc {
    fn into_record(self, at: &str) -> Result<Record> {
        let need = |what: &str, present: bool| {
            if present {
                Ok(())
            } else {
                Err(Error::invalid_argument(format!(
                    "{at}: missing field {what}"
                )))
            }
        };
        let only = |kind: &str, stray: &[(&str, bool)]| match stray.iter().find(|(_, p)| *p) {
            Some((field, _)) => Err(Error::invalid_argument(format!(
                "{at}: field {field} does not belong to a {kind} record"
            ))),
            None => Ok(()),
        };
        let step_fields = [
            ("now", self.now.is_some()),
            ("input", self.input.is_some()),
            ("outputs", self.outputs.is_some()),
            ("deadline", self.deadline.is_some()),
            ("error", self.error.is_some()),
        ];
        if let Some(kind) = self.create {
            need("machine", self.machine.is_some())?;
            need("address", self.address.is_some())?;
            only("create", &step_fields)?;
            only("create", &[("end", self.end.is_some())])?;
            return Ok(Record::Create {
                kind,
                machine: self.machine.unwrap_or_default(),
                address: self.address.unwrap_or_default(),
            });
        }
        if let Some(machine) = self.end {
            only("end", &step_fields)?;
            only(
                "end",
                &[
                    ("machine", self.machine.is_some()),
                    ("address", self.address.is_some()),
                ],
            )?;
            return Ok(Record::End(machine));
        }
        if self.machine.is_none() {
            return Err(Error::invalid_argument(format!(
                "{at}: expected a record: {{\"create\":..}}, {{\"end\":..}} or a step with fields machine, now, input and outputs"
            )));
        }
        need("now", self.now.is_some())?;
        need("input", self.input.is_some())?;
        need("outputs", self.outputs.is_some())?;
        only("step", &[("address", self.address.is_some())])?;
        Ok(Record::Step {
            machine: self.machine.unwrap_or_default(),
            now: self.now.unwrap_or_default(),
            input: self.input.unwrap_or_default(),
            expected: Outcome {
                outputs: self.outputs.unwrap_or_default(),
                deadline: self.deadline,
                error: self.error,
            },
        })
    }
}

/// What one call produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub outputs: Vec<Value>,
    pub deadline: Option<u64>,
    pub error: Option<String>,
}

/// The first step whose outcome differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// 1-based, counting steps only.
    pub step: u64,
    /// 1-based line in the trace text.
    pub line: u64,
    pub machine: String,
    pub now: u64,
    pub input: Value,
    pub expected: Outcome,
    pub actual: Outcome,
}

/// What a replay found: `{"steps": N, "mismatches": M, "first": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replayed {
    pub steps: u64,
    pub mismatches: u64,
    pub first: Option<Mismatch>,
}

enum Machine {
    Coordinator(Box<Coordinator>),
    Region(Box<Region>),
}

impl Machine {
    fn call(&mut self, now: u64, input: &Value, at: &str) -> Result<Outcome> {
        let name = format!("{at}: input");
        match self {
            Machine::Coordinator(c) => {
                outcome(&mut **c, now, CoordinatorStep::from_value(input, &name)?)
            }
            Machine::Region(r) => outcome(&mut **r, now, RegionStep::from_value(input, &name)?),
        }
    }
}

fn outcome<M: StepMachine>(m: &mut M, now: u64, step: M::Step) -> Result<Outcome> {
    let error = m.call(now, step).err().map(|e| e.to_string());
    Ok(Outcome {
        outputs: m
            .drain()
            .iter()
            .map(|o| serde_json::to_value(o).expect("outputs serialize"))
            .collect(),
        deadline: m.deadline(),
        error,
    })
}

/// Replays a trace on fresh machines. A trace that cannot be read (not JSON, another format
/// version, an unknown machine, a malformed input) is an InvalidArgument error naming the
/// line and field; outputs that differ are the result, not an error.
pub fn replay(text: &str) -> Result<Replayed> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i as u64 + 1, l));
    let (n, first) = lines
        .next()
        .ok_or_else(|| Error::invalid_argument("the trace is empty: expected a header line"))?;
    let header = Header::parse(first, &format!("line {n}"))?;
    // Every name ever created, with the line that ended it (names never come back).
    let mut machines: HashMap<String, (Option<Machine>, Option<u64>)> = HashMap::new();
    let mut result = Replayed {
        steps: 0,
        mismatches: 0,
        first: None,
    };
    for (n, text) in lines {
        let at = format!("line {n}");
        let doc: RecordDoc = json::from_value(&json_line(text, &at)?, &at)?;
        match doc.into_record(&at)? {
            Record::Create {
                kind,
                machine,
                address,
            } => {
                if machines.contains_key(&machine) {
                    return Err(Error::invalid_argument(format!(
                        "{at}: field machine: {machine:?} was created before; names are never reused"
                    )));
                }
                let built = match kind {
                    MachineKind::Coordinator => {
                        let address = Address::parse(&address)
                            .map_err(|e| e.context(format!("{at}: field address")))?;
                        Machine::Coordinator(Box::new(Coordinator::new(
                            header.coordinator.clone(),
                            header.strategy.build()?,
                            address,
                        )?))
                    }
                    MachineKind::Region => Machine::Region(Box::new(
                        Region::new(
                            header.region.clone(),
                            &machine,
                            &address,
                            header.extractor.build()?,
                        )
                        .map_err(|e| e.context(&at))?,
                    )),
                };
                machines.insert(machine, (Some(built), None));
            }
            Record::End(machine) => match machines.get_mut(&machine) {
                Some((m @ Some(_), ended)) => {
                    *m = None;
                    *ended = Some(n);
                }
                _ => return Err(unknown_machine(&at, "end", &machine, &machines)),
            },
            Record::Step {
                machine,
                now,
                input,
                expected,
            } => {
                let Some((Some(m), _)) = machines.get_mut(&machine) else {
                    return Err(unknown_machine(&at, "machine", &machine, &machines));
                };
                let actual = m.call(now, &input, &at)?;
                result.steps += 1;
                if actual != expected {
                    result.mismatches += 1;
                    if result.first.is_none() {
                        result.first = Some(Mismatch {
                            step: result.steps,
                            line: n,
                            machine,
                            now,
                            input,
                            expected,
                            actual,
                        });
                    }
                }
            }
        }
    }
    Ok(result)
}

fn unknown_machine(
    at: &str,
    field: &str,
    machine: &str,
    machines: &HashMap<String, (Option<Machine>, Option<u64>)>,
) -> Error {
    let why = match machines.get(machine) {
        Some((_, Some(ended))) => format!("it ended at line {ended}"),
        _ => "no earlier line creates it".to_owned(),
    };
    Error::invalid_argument(format!(
        "{at}: field {field}: unknown machine {machine:?}: {why}"
    ))
}

/// [`replay`] as JSON text: `{"steps":N,"mismatches":M,"first":null|{..}}`.
pub fn replay_json(text: &str) -> Result<String> {
    json::to_string(&replay(text)?)
}

/// The result as a JSON value (what the bindings hand out).
pub fn replay_value(text: &str) -> Result<Value> {
    Ok(json!(replay(text)?))
}
