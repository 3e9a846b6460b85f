//! Replays conformance vectors (`tests/vectors/README.md`): one JSON case in, the decision out
//! in the `expect` shape. Every language binding calls this, so all of them decide alike.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::jvm::sort_distinct_utf16;
use crate::model::Address;
use crate::model::Version;
use crate::model::{AllocationState, ShardId};
use crate::model::{Amount, ShardRule};
use crate::model::{ClusterView, Member, MemberStatus};
use crate::strategy::{
    AkkaOptions, Allocation, AllocationStrategy, Explanation, InProgress, StrategyConfig,
};
use crate::{Error, ErrorKind, Result};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VectorDoc {
    strategy: Value,
    op: Op,
    #[serde(default)]
    cluster: Option<ClusterDoc>,
    #[serde(default)]
    regions: Vec<RegionDoc>,
    #[serde(default)]
    candidates: Option<Vec<String>>,
    #[serde(default)]
    rebalance_in_progress: Vec<String>,
    #[serde(default)]
    shard_id: Option<String>,
    #[serde(default)]
    requester: Option<String>,
    #[serde(default)]
    then: Option<Value>,
    /// least-load: shard loads (a number, or a number per dimension; default 1).
    #[serde(default)]
    loads: BTreeMap<String, Amount>,
    /// least-load: required tags and pins by shard.
    #[serde(default)]
    shard_rules: BTreeMap<String, RuleDoc>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleDoc {
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    pin: Option<String>,
}

/// `plan` stops after this many rounds.
const MAX_PLAN_ROUNDS: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Op {
    Allocate,
    Rebalance,
    Rank,
    /// Rebalance, hand off and re-allocate, round after round, until a round moves nothing.
    Plan,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ClusterDoc {
    #[serde(rename = "self")]
    self_address: String,
    members: Vec<MemberDoc>,
    #[serde(default)]
    unreachable: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MemberDoc {
    address: String,
    #[serde(default = "up")]
    status: String,
    #[serde(default = "zero_version")]
    app_version: String,
    #[serde(default = "default_dc")]
    data_center: String,
    #[serde(default)]
    up_number: Option<i32>,
}

fn up() -> String {
    "Up".into()
}
fn zero_version() -> String {
    "0.0.0".into()
}
fn default_dc() -> String {
    "default".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RegionDoc {
    region: String,
    address: String,
    #[serde(default)]
    shards: Vec<String>,
    #[serde(default)]
    local: bool,
    #[serde(default)]
    capacity: Option<Amount>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    max_shards: Option<usize>,
    #[serde(default)]
    draining: bool,
}

/// Decides one vector (an object) or each of an array of vectors.
///
/// Malformed input is an `InvalidArgument` error whose message names the vector and field.
/// A decision that fails the way the reference fails (no candidates) is a result:
/// `{"error": "no-candidates"}`.
pub fn decide(input: &Value, explain: bool) -> Result<Value> {
    match input {
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                out.push(
                    decide_one(v, explain)
                        .map_err(|e| e.context(format!("vector [{i}]")))
                        .map_err(|e| with_id(e, v))?,
                );
            }
            Ok(Value::Array(out))
        }
        Value::Object(_) => decide_one(input, explain).map_err(|e| with_id(e, input)),
        _ => Err(Error::invalid_argument(
            "expected a vector object or an array of vectors",
        )),
    }
}

/// [`decide`] on JSON text; returns JSON text.
pub fn decide_json(text: &str, explain: bool) -> Result<String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid_argument(format!("not valid JSON: {e}")))?;
    Ok(decide(&value, explain)?.to_string())
}

fn with_id(e: Error, v: &Value) -> Error {
    match v.get("id").and_then(Value::as_str) {
        Some(id) => e.context(format!("vector {id:?}")),
        None => e,
    }
}

fn decide_one(input: &Value, explain: bool) -> Result<Value> {
    let doc: VectorDoc = serde_path_to_error::deserialize(input)
        .map_err(|e| Error::invalid_argument(format!("field {}: {}", e.path(), e.inner())))?;
    let config = StrategyConfig::from_json(&doc.strategy)?;
    let mut strategy = config.build()?;
    let mut state = build_state(&doc)?;
    let in_progress: HashSet<ShardId> = doc
        .rebalance_in_progress
        .iter()
        .map(|s| ShardId::from(s.as_str()))
        .collect();
    let mut explanation = explain.then(Explanation::default);

    let mut out = Map::new();
    match doc.op {
        Op::Allocate => {
            let shard = doc
                .shard_id
                .as_deref()
                .ok_or_else(|| Error::invalid_argument("field shardId: required for allocate"))?;
            match strategy.allocate(
                &state,
                doc.requester.as_deref(),
                shard,
                explanation.as_mut(),
            ) {
                Ok(Allocation::Region(r)) => out.insert("region".into(), json!(&*r)),
                Ok(Allocation::Pending) => out.insert("pending".into(), json!(true)),
                Err(e) if e.kind() == ErrorKind::NoCandidates => {
                    out.insert("error".into(), json!("no-candidates"))
                }
                Err(e) => return Err(e),
            };
        }
        Op::Rebalance => {
            let picked = strategy.rebalance(&state, &in_progress, explanation.as_mut())?;
            let mut sorted: Vec<&str> = picked.iter().map(|s| &**s).collect();
            sorted.sort_unstable();
            out.insert("shards".into(), json!(sorted));
            out.insert(
                "shardsInOrder".into(),
                json!(picked.iter().map(|s| &**s).collect::<Vec<_>>()),
            );
            if doc.then.is_some() {
                out.insert(
                    "then".into(),
                    reallocate(&mut *strategy, &mut state, picked)?,
                );
            }
        }
        Op::Plan => {
            out.insert(
                "rounds".into(),
                plan(&mut *strategy, &mut state, explanation.as_mut())?,
            );
        }
        Op::Rank => {
            let akka = match config {
                StrategyConfig::LeastShard {
                    tie_break_by_age, ..
                }
                | StrategyConfig::LeastLoad {
                    tie_break_by_age, ..
                }
                | StrategyConfig::LeastShardLegacy {
                    tie_break_by_age, ..
                } => AkkaOptions {
                    tie_break_by_age,
                    ..Default::default()
                },
                _ => AkkaOptions::default(),
            };
            let order = crate::strategy::rank(&state, akka).ok_or_else(|| {
                Error::invalid_state(
                    "the region ordering is inconsistent (Pekko's sort would throw)",
                )
            })?;
            out.insert(
                "order".into(),
                json!(order.iter().map(|r| &**r).collect::<Vec<_>>()),
            );
        }
    }
    if let Some(e) = explanation {
        out.insert(
            "explanation".into(),
            serde_json::to_value(e).expect("explanations serialize"),
        );
    }
    Ok(Value::Object(out))
}

/// What the coordinator does after a round's hand-offs: deallocate every picked shard, then
/// re-allocate them one by one in `String` order (Pekko's spec helper `afterRebalance`).
/// Returns (shard, from, to) in that order.
fn hand_off(
    strategy: &mut dyn AllocationStrategy,
    state: &mut AllocationState,
    mut picked: Vec<ShardId>,
) -> Result<Vec<(ShardId, String, String)>> {
    // taken in the order they are placed again, so that each id is read while still cached
    // from the sort (a rebalance names each shard once)
    sort_distinct_utf16(&mut picked, |s| s);
    let from: Vec<String> = picked
        .iter()
        .map(|s| {
            state
                .home_of(s)
                .map_or_else(String::new, |r| r.id().to_string())
        })
        .collect();
    let taken = state.take_shards(picked)?;
    let mut out = Vec::with_capacity(taken.len());
    for (t, src) in taken.into_iter().zip(from) {
        match strategy.allocate(state, None, t.id(), None)? {
            Allocation::Region(r) => {
                let s = t.id().clone();
                state.place_taken(&r, t)?;
                out.push((s, src, r.to_string()));
            }
            Allocation::Pending => {
                return Err(Error::invalid_state(format!(
                    "re-allocating shard {:?}: no region",
                    t.id()
                )))
            }
        }
    }
    Ok(out)
}

/// Rounds of rebalance and hand-off until one moves nothing (that empty round included).
/// The explanation, when asked for, is the last round's.
fn plan(
    strategy: &mut dyn AllocationStrategy,
    state: &mut AllocationState,
    mut explain: Option<&mut Explanation>,
) -> Result<Value> {
    let none = InProgress::new();
    let mut rounds = Vec::new();
    for _ in 0..MAX_PLAN_ROUNDS {
        let picked = strategy.rebalance(state, &none, explain.as_deref_mut())?;
        let moved = hand_off(strategy, state, picked)?;
        rounds.push(Value::Array(
            moved
                .iter()
                .map(|(s, f, t)| json!({"shard": &**s, "from": f, "to": t}))
                .collect(),
        ));
        if moved.is_empty() {
            return Ok(Value::Array(rounds));
        }
    }
    Err(Error::invalid_state(format!(
        "plan: still moving shards after {MAX_PLAN_ROUNDS} rounds"
    )))
}

/// Pekko's spec helper `afterRebalance`, reporting the counts and shard lists it leaves.
fn reallocate(
    strategy: &mut dyn AllocationStrategy,
    state: &mut AllocationState,
    picked: Vec<ShardId>,
) -> Result<Value> {
    hand_off(strategy, state, picked)?;
    let counts: Vec<usize> = state.regions().map(|r| r.shard_count()).collect();
    let regions: Vec<Value> = state
        .regions()
        .map(|r| json!({"region": &**r.id(), "shards": r.shards().map(|s| &**s).collect::<Vec<_>>()}))
        .collect();
    Ok(json!({"counts": counts, "regions": regions}))
}

/// An allocation state as documents describe it: the conformance vectors here, and the Node
/// binding's `new AllocationState(init)`. One builder, so both read a document alike.
#[derive(Debug, Clone, Default)]
pub struct StateDoc {
    /// Default: the first region's address, else the first candidate, else `shardline://self`.
    pub self_address: Option<Address>,
    /// `None`: every region and candidate address is an Up member, in that order. A member
    /// whose `up_number` is unset (`i32::MAX`) gets its position + 1.
    pub members: Option<Vec<Member>>,
    pub unreachable: Vec<Address>,
    pub regions: Vec<StateRegion>,
    /// `Some`: exactly these regions may receive shards (missing ones are added with the
    /// candidate as id and address).
    pub candidates: Option<Vec<String>>,
    /// least-load: shard loads (default 1).
    pub loads: BTreeMap<String, Amount>,
    /// least-load: required tags and pins by shard.
    pub shard_rules: BTreeMap<String, ShardRule>,
}

#[derive(Debug, Clone, Default)]
pub struct StateRegion {
    pub id: String,
    pub address: String,
    pub shards: Vec<String>,
    pub local: bool,
    /// least-load: capacity (default 1 in every dimension), tags, shard limit, draining.
    pub capacity: Option<Amount>,
    pub tags: Vec<String>,
    pub max_shards: Option<usize>,
    pub draining: bool,
}

fn parse_address(text: &str, field: impl std::fmt::Display) -> Result<Address> {
    Address::parse(text).map_err(|e| e.context(format!("field {field}")))
}

impl StateDoc {
    pub fn build(&self) -> Result<AllocationState> {
        let self_address = match &self.self_address {
            Some(a) => a.clone(),
            None => match self.regions.first() {
                Some(r) => parse_address(&r.address, "regions[0].address")?,
                None => match self.candidates.iter().flatten().next() {
                    Some(c) => parse_address(c, "candidates[0]")?,
                    None => Address::parse("shardline://self")?,
                },
            },
        };
        let mut state = AllocationState::new(ClusterView::new(self_address));
        match &self.members {
            Some(members) => {
                for (i, m) in members.iter().enumerate() {
                    let mut m = m.clone();
                    if m.up_number == i32::MAX {
                        m.up_number = i as i32 + 1;
                    }
                    state.upsert_member(m);
                }
            }
            None => {
                let all = self
                    .regions
                    .iter()
                    .map(|r| r.address.as_str())
                    .chain(self.candidates.iter().flatten().map(String::as_str));
                for (i, a) in all.enumerate() {
                    let a = parse_address(a, "regions/candidates")?;
                    if state.cluster().member(a.as_str()).is_none() {
                        let mut m = Member::new(a);
                        m.up_number = i as i32 + 1;
                        state.upsert_member(m);
                    }
                }
            }
        }
        for a in &self.unreachable {
            state.set_reachable(a.as_str(), false);
        }
        for (i, r) in self.regions.iter().enumerate() {
            let a = parse_address(&r.address, format_args!("regions[{i}].address"))?;
            state
                .add_region(&r.id, a, r.local)
                .map_err(|e| e.context(format!("field regions[{i}]")))?;
            let field = |f: &str| format!("field regions[{i}].{f}");
            if let Some(c) = &r.capacity {
                state
                    .set_region_capacity(&r.id, c)
                    .map_err(|e| e.context(field("capacity")))?;
            }
            state.set_region_tags(&r.id, r.tags.iter().map(String::as_str))?;
            state.set_region_max_shards(&r.id, r.max_shards)?;
            state.set_region_draining(&r.id, r.draining)?;
        }
        // Loads before shards, so each region sums them as its shards arrive.
        for (shard, load) in &self.loads {
            state
                .set_shard_load(shard, load)
                .map_err(|e| e.context(format!("field loads.{shard}")))?;
        }
        for (shard, rule) in &self.shard_rules {
            state.set_shard_rule(shard, rule.clone());
        }
        for (i, r) in self.regions.iter().enumerate() {
            for (j, s) in r.shards.iter().enumerate() {
                state
                    .add_shard(&r.id, s)
                    .map_err(|e| e.context(format!("field regions[{i}].shards[{j}]")))?;
            }
        }
        if let Some(cands) = &self.candidates {
            for (i, c) in cands.iter().enumerate() {
                if state.region(c).is_none() {
                    let a = parse_address(c, format_args!("candidates[{i}]"))?;
                    state.add_region(c, a, false)?;
                }
            }
            let ids: Vec<String> = state.regions().map(|r| r.id().to_string()).collect();
            for id in ids {
                state.set_eligible(&id, false)?;
            }
            for c in cands {
                state.set_eligible(c, true)?;
            }
        }
        Ok(state)
    }
}

fn build_state(doc: &VectorDoc) -> Result<AllocationState> {
    let mut state = StateDoc {
        regions: doc
            .regions
            .iter()
            .map(|r| StateRegion {
                id: r.region.clone(),
                address: r.address.clone(),
                shards: r.shards.clone(),
                local: r.local,
                capacity: r.capacity.clone(),
                tags: r.tags.clone(),
                max_shards: r.max_shards,
                draining: r.draining,
            })
            .collect(),
        candidates: doc.candidates.clone(),
        loads: doc.loads.clone(),
        shard_rules: doc
            .shard_rules
            .iter()
            .map(|(shard, rule)| {
                let rule =
                    ShardRule::new(rule.tags.iter().map(String::as_str), rule.pin.as_deref());
                (shard.clone(), rule)
            })
            .collect(),
        ..StateDoc::default()
    };
    if let Some(c) = &doc.cluster {
        state.self_address = Some(parse_address(&c.self_address, "cluster.self")?);
        let mut members = Vec::with_capacity(c.members.len());
        for (i, m) in c.members.iter().enumerate() {
            let at = |f: &str| format!("field cluster.members[{i}].{f}");
            let mut member = Member::new(parse_address(
                &m.address,
                format_args!("cluster.members[{i}].address"),
            )?);
            member.status = m
                .status
                .parse::<MemberStatus>()
                .map_err(|e| e.context(at("status")))?;
            member.app_version =
                Version::parse(&m.app_version).map_err(|e| e.context(at("appVersion")))?;
            member.data_center = m.data_center.clone();
            member.up_number = m.up_number.unwrap_or(i32::MAX);
            members.push(member);
        }
        state.members = Some(members);
        for (i, u) in c.unreachable.iter().enumerate() {
            state
                .unreachable
                .push(parse_address(u, format_args!("cluster.unreachable[{i}]"))?);
        }
    }
    state.build()
}
