//! What a host exports about the placement brain: one list of named values, so every
//! language's bridge (Prometheus, Micrometer, OpenTelemetry) iterates the same list instead of
//! knowing the state machines.
//!
//! Names follow OpenTelemetry's conventions: dot-separated namespaces under `shardline.`,
//! lower case, counts without a unit suffix; attributes say which region a value is about.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum MetricKind {
    /// A value now (may go down).
    Gauge,
    /// A monotonic total since the state machine was created.
    Counter,
}

impl MetricKind {
    /// The name in the JSON form, for bindings that carry it as text.
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::Gauge => "gauge",
            MetricKind::Counter => "counter",
        }
    }
}

/// One exported value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Metric {
    pub name: String,
    pub kind: MetricKind,
    pub value: u64,
    /// What the value is about, e.g. `{"shardline.region": "r1"}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
    pub description: String,
}

impl Metric {
    pub(crate) fn gauge(name: &str, value: u64, description: &str) -> Metric {
        Metric::new(name, MetricKind::Gauge, value, description)
    }

    pub(crate) fn counter(name: &str, value: u64, description: &str) -> Metric {
        Metric::new(name, MetricKind::Counter, value, description)
    }

    fn new(name: &str, kind: MetricKind, value: u64, description: &str) -> Metric {
        Metric {
            name: name.to_owned(),
            kind,
            value,
            attributes: BTreeMap::new(),
            description: description.to_owned(),
        }
    }

    pub(crate) fn with(mut self, key: &str, value: &str) -> Metric {
        self.attributes.insert(key.to_owned(), value.to_owned());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_are_the_json_form() {
        for k in [MetricKind::Gauge, MetricKind::Counter] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
    }
}
