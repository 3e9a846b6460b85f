//! A machine's configuration as a host passes it: an object of fields (or nothing, for the
//! defaults) plus the keyword arguments of a call, in either spelling. What wins and how a
//! key is spelt is decided here once, so `Coordinator(config, **kw)` in Python reads the same
//! configuration as the object Node or Java pass.

use serde_json::{Map, Value};

use crate::driver_host::Spelling;
use crate::Failure;

/// `base` (null for none) with `overrides` on top; snake_case keys are written as the
/// camelCase the core reads. `what` names the argument in an error.
pub fn merged(base: Value, overrides: Map<String, Value>, what: &str) -> Result<Value, Failure> {
    let mut fields = match base {
        Value::Null => Map::new(),
        Value::Object(m) => m,
        other => {
            return Err(Failure::invalid_argument(format!(
                "{what}: expected a configuration object, got {other}"
            )))
        }
    };
    fields.extend(overrides);
    Ok(Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (Spelling::Camel.spell(&k), v))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn overrides_win_and_keys_read_as_camel_case() {
        let kw = json!({"handoff_timeout_ms": 5, "rebalanceIntervalMs": 7});
        let got = merged(
            json!({"handoffTimeoutMs": 1, "least_shard": true}),
            kw.as_object().unwrap().clone(),
            "config",
        )
        .unwrap();
        assert_eq!(
            got,
            json!({"handoffTimeoutMs": 5, "rebalanceIntervalMs": 7, "leastShard": true})
        );
        assert_eq!(
            merged(Value::Null, Map::new(), "config").unwrap(),
            json!({})
        );
    }

    #[test]
    fn a_configuration_that_is_not_an_object_is_refused() {
        let err = merged(json!([1]), Map::new(), "config").unwrap_err();
        assert_eq!(
            err.message,
            "config: expected a configuration object, got [1]"
        );
    }
}
