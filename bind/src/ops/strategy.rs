//! A `Strategy`'s operations: what it is (`name`, `kind`, `config`) and its decisions on a
//! state (`allocate`, `rebalance` and their explained forms), answered the same in every
//! language for built-in and host-written strategies alike.

use shardline_core::model::{AllocationState, ShardId};
use shardline_core::strategy::{
    Allocation, AllocationStrategy, Explanation, InProgress, StrategyConfig,
};

use super::{reply, Args, Reply};
use crate::objects::{ExplainedAllocation, ExplainedRebalance, Shard};
use crate::Failure;

/// A built-in strategy's configuration, checked by building it (so a bad one fails when the
/// host makes the strategy, not at its first decision). `value` is a configuration object,
/// its JSON text, or a bare kind ("least-shard"), with `overrides` set over its fields;
/// `what` names it in errors.
pub fn config(
    value: serde_json::Value,
    overrides: serde_json::Map<String, serde_json::Value>,
    what: &str,
) -> Result<StrategyConfig, Failure> {
    let mut value = match value {
        serde_json::Value::String(s) if s.trim_start().starts_with('{') => serde_json::from_str(&s)
            .map_err(|e| Failure::invalid_argument(format!("{what}: {e}")))?,
        serde_json::Value::String(kind) => serde_json::json!({ "kind": kind }),
        serde_json::Value::Null => serde_json::json!({}),
        v => v,
    };
    if let Some(fields) = value.as_object_mut() {
        fields.extend(overrides);
    }
    if value.get("kind").is_none() {
        return Err(Failure::invalid_argument(format!(
            "{what}: expected a strategy configuration ({{\"kind\": ...}}), a Strategy, or a \
             custom strategy with an allocate function"
        )));
    }
    let config = StrategyConfig::from_json(&value)?;
    config.build()?;
    Ok(config)
}

/// `name` (what explanations use), `kind` (the configuration's, or "custom"), `config` (with
/// every default filled in; null for a custom strategy). `config` is `None` for a custom one.
pub fn describe(config: Option<&StrategyConfig>, name: &str, a: Args<'_>) -> Reply {
    match a.op() {
        "name" => reply(name),
        "kind" => reply(config.map_or("custom", StrategyConfig::kind)),
        "config" => reply(&config),
        _ => Err(a.unknown()),
    }
}

/// Whether `op` is a decision, which takes the state as its first argument (the binding
/// reads it from its host object, then passes the rest).
pub fn is_decision(op: &str) -> bool {
    matches!(
        op,
        "allocate" | "explain_allocate" | "rebalance" | "explain_rebalance"
    )
}

/// `allocate(shard, requester?)`: a region id, or null when the strategy decides later;
/// `rebalance(in_progress?)`: shards to hand off in decision order; `explain_allocate` and
/// `explain_rebalance` answer `{region, explanation}` and `{shards, explanation}`.
pub fn decide(s: &mut dyn AllocationStrategy, state: &AllocationState, a: Args<'_>) -> Reply {
    match a.op() {
        "allocate" | "explain_allocate" => {
            let shard = a.get::<Shard>(0, "shard")?;
            let requester = a.opt::<String>(1, "requester")?;
            let mut e = Explanation::default();
            let explain = a.op() == "explain_allocate";
            let got = s.allocate(
                state,
                requester.as_deref(),
                &shard,
                explain.then_some(&mut e),
            )?;
            if explain {
                return reply(&ExplainedAllocation::new(&got, &e));
            }
            match got {
                Allocation::Region(r) => reply(&*r),
                Allocation::Pending => reply(&()),
            }
        }
        "rebalance" | "explain_rebalance" => {
            let busy: InProgress = a
                .opt::<Vec<Shard>>(0, "in_progress")?
                .unwrap_or_default()
                .into_iter()
                .map(|s| ShardId::from(s.0))
                .collect();
            let mut e = Explanation::default();
            let explain = a.op() == "explain_rebalance";
            let picked = s.rebalance(state, &busy, explain.then_some(&mut e))?;
            if explain {
                return reply(&ExplainedRebalance::new(&picked, &e));
            }
            reply(&picked.iter().map(|s| &**s).collect::<Vec<_>>())
        }
        _ => Err(a.unknown()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Tree;
    use crate::Status;
    use shardline_core::model::{Address, ClusterView, Member};

    fn text(s: &str) -> Tree {
        Tree::Text(s.into())
    }

    fn field(t: &Tree, k: &str) -> Tree {
        let m = t.as_map().unwrap();
        m.iter()
            .find(|(key, _)| key.as_text() == Some(k))
            .map(|(_, v)| v.clone())
            .unwrap()
    }

    fn state() -> AllocationState {
        let a = Address::parse("pekko://s@h:1").unwrap();
        let b = Address::parse("pekko://s@h:2").unwrap();
        let mut s = AllocationState::new(ClusterView::new(a.clone()));
        s.upsert_member(Member::new(a.clone()));
        s.upsert_member(Member::new(b.clone()));
        s.add_region("a", a, true).unwrap();
        s.add_region("b", b, false).unwrap();
        for shard in ["1", "2", "3"] {
            s.add_shard("a", shard).unwrap();
        }
        s
    }

    fn least_shard() -> StrategyConfig {
        config(serde_json::json!("least-shard"), Default::default(), "s").unwrap()
    }

    #[test]
    fn configs_take_a_kind_text_or_object_and_are_checked() {
        let c = least_shard();
        assert_eq!(c.kind(), "least-shard");
        let c = config(
            serde_json::json!("{\"kind\": \"consistent-hashing\"}"),
            Default::default(),
            "s",
        )
        .unwrap();
        assert_eq!(c.kind(), "consistent-hashing");
        let e = config(
            serde_json::json!({"absoluteLimit": 3}),
            Default::default(),
            "spec",
        )
        .unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(
            e.message.starts_with("spec: expected a strategy"),
            "{}",
            e.message
        );
        let e = config(
            serde_json::json!("most-shard"),
            Default::default(),
            "strategy",
        )
        .unwrap_err();
        assert!(e.message.contains("unknown variant"), "{}", e.message);
    }

    #[test]
    fn describe_names_kind_and_config() {
        let c = least_shard();
        let call =
            |c: Option<&StrategyConfig>, op| describe(c, "n", Args::new("Strategy", op, &[]));
        assert_eq!(call(Some(&c), "kind").unwrap(), text("least-shard"));
        assert_eq!(call(None, "kind").unwrap(), text("custom"));
        assert_eq!(call(None, "config").unwrap(), Tree::Null);
        assert_eq!(
            field(&call(Some(&c), "config").unwrap(), "kind"),
            text("least-shard")
        );
        assert_eq!(call(None, "name").unwrap(), text("n"));
    }

    #[test]
    fn decisions_answer_regions_shards_and_explanations() {
        let st = state();
        let c = least_shard();
        let mut s = c.build().unwrap();
        let go = |s: &mut dyn AllocationStrategy, op, values: &[Tree]| {
            decide(s, &st, Args::new("Strategy", op, values))
        };
        assert_eq!(
            go(&mut *s, "allocate", &[Tree::Integer(9.into())]).unwrap(),
            text("b")
        );
        let explained = go(&mut *s, "explain_allocate", &[text("9")]).unwrap();
        assert_eq!(field(&explained, "region"), text("b"));
        assert!(field(&explained, "explanation").as_map().is_some());
        let picked = go(&mut *s, "rebalance", &[]).unwrap();
        assert_eq!(picked, Tree::Array(vec![text("1")]));
        let busy = Tree::Array(vec![text("1")]);
        let explained = go(&mut *s, "explain_rebalance", &[busy]).unwrap();
        assert_eq!(field(&explained, "shards"), Tree::Array(vec![]));
        let e = go(&mut *s, "allocate", &[]).unwrap_err();
        assert_eq!(e.message, "Strategy.allocate: shard is required");
        let e = go(&mut *s, "rebalance", &[text("1")]).unwrap_err();
        assert!(
            e.message.starts_with("Strategy.rebalance: in_progress "),
            "{}",
            e.message
        );
        assert!(is_decision("explain_rebalance") && !is_decision("config"));
    }
}
