//! least-load: decides as least-shard on every least-shard vector; balances loads within the
//! band with little movement; never breaks a budget or a rule; deterministic.

use std::collections::BTreeMap;
use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::{json, Value};
use shardline_core::decide::decide;
use shardline_core::jvm::compare_utf16;
use shardline_core::model::Address;
use shardline_core::model::{utilisation, Amount, ShardRule};
use shardline_core::model::{AllocationState, ShardId};
use shardline_core::model::{ClusterView, Member, MemberStatus};
use shardline_core::strategy::{
    Allocation, AllocationStrategy, Explanation, InProgress, LeastLoad,
};

fn vectors(file: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors")
        .join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn without_explanation(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("explanation");
    }
    v
}

/// Every least-shard vector, with kind switched to least-load, gives least-shard's result
/// (the whole output: decision, order and the re-allocation that follows).
#[test]
fn every_least_shard_vector_decides_alike_as_least_load() {
    let mut n = 0;
    for v in vectors("pekko-strategies.json") {
        if v["strategy"]["kind"] != "least-shard" {
            continue;
        }
        let mut switched = v.clone();
        switched["strategy"]["kind"] = json!("least-load");
        let want = decide(&v, false).unwrap();
        let got = decide(&switched, false).unwrap();
        assert_eq!(got, want, "{}", v["id"]);
        for key in ["region", "pending", "order", "shards"] {
            if let Some(e) = v["expect"].get(key) {
                assert_eq!(got.get(key), Some(e), "{}: {key}", v["id"]);
            }
        }
        let explained = without_explanation(decide(&switched, true).unwrap());
        assert_eq!(
            explained, want,
            "{}: explaining changed the decision",
            v["id"]
        );
        n += 1;
    }
    assert!(n >= 20, "only {n} least-shard vectors");
}

// ---- a seeded instance -----------------------------------------------------------------

/// SplitMix64: a seed from proptest, then deterministic draws.
#[path = "../benches/support/splitmix.rs"]
mod splitmix;
use splitmix::Rng;

fn region_id(i: usize) -> String {
    format!("r{i:03}")
}

/// `regions` regions with capacities from {1, 2, 4}, `per` shards per region dealt round
/// robin (a count-balanced start), loads lognormal(0, sigma).
fn instance(seed: u64, regions: usize, per: usize, sigma: f64) -> AllocationState {
    instance_in(seed, regions, per, sigma, &Amount::Uniform)
}

/// The same numbers as one named dimension: one value per region and shard as before, but a
/// named dimension keeps decisions off the class index and the searched move, on the plain
/// scans.
fn named_instance(seed: u64, regions: usize, per: usize, sigma: f64) -> AllocationState {
    instance_in(seed, regions, per, sigma, &|v| {
        Amount::PerDimension(BTreeMap::from([("cpu".to_string(), v)]))
    })
}

fn instance_in(
    seed: u64,
    regions: usize,
    per: usize,
    sigma: f64,
    amount: &dyn Fn(f64) -> Amount,
) -> AllocationState {
    let mut rng = Rng(seed);
    let first = Address::parse("pekko://sys@10.0.0.0:2552").unwrap();
    let mut state = AllocationState::new(ClusterView::new(first));
    for i in 0..regions {
        let a = Address::parse(&format!("pekko://sys@10.0.{}.{}:2552", i / 250, i % 250)).unwrap();
        state.upsert_member(Member::new(a.clone()));
        state.add_region(&region_id(i), a, false).unwrap();
        let cap = [1.0, 2.0, 4.0][rng.below(3)];
        state
            .set_region_capacity(&region_id(i), &amount(cap))
            .unwrap();
    }
    for s in 0..regions * per {
        let id = format!("s{s:06}");
        state
            .set_shard_load(&id, &amount(rng.lognormal(sigma)))
            .unwrap();
        state.add_shard(&region_id(s % regions), &id).unwrap();
    }
    state
}

fn util_of(state: &AllocationState, id: &str) -> f64 {
    let r = state.region(id).unwrap();
    let w = state.load_dimensions().width();
    utilisation(r.load(), None, &r.profile().capacity, w)
}

fn scalar_load(state: &AllocationState, shard: &str) -> f64 {
    state.shard_load(shard).get(0)
}

type Move = (ShardId, String, String);

/// Explained decisions scan every region; unexplained ones use the class index. They agree.
fn index_agrees_with_scan(strategy: &LeastLoad, state: &AllocationState, probe: &str) {
    let (mut a, mut b) = (strategy.clone(), strategy.clone());
    let mut e = Explanation::default();
    assert_eq!(
        a.allocate(state, None, probe, None).unwrap(),
        b.allocate(state, None, probe, Some(&mut e)).unwrap(),
        "allocate {probe}"
    );
    let none = InProgress::new();
    assert_eq!(
        a.rebalance(state, &none, None).unwrap(),
        b.rebalance(state, &none, Some(&mut e)).unwrap(),
        "rebalance"
    );
}

/// One round as the coordinator runs it: rebalance, hand off, re-allocate in String order.
fn round(strategy: &mut LeastLoad, state: &mut AllocationState) -> Vec<Move> {
    let picked = strategy.rebalance(state, &InProgress::new(), None).unwrap();
    let mut from: Vec<(ShardId, String)> = picked
        .iter()
        .map(|s| (s.clone(), state.remove_shard(s).unwrap().to_string()))
        .collect();
    from.sort_by(|a, b| compare_utf16(&a.0, &b.0));
    from.into_iter()
        .map(
            |(s, f)| match strategy.allocate(state, None, &s, None).unwrap() {
                Allocation::Region(r) => {
                    state.add_shard(&r, &s).unwrap();
                    (s, f, r.to_string())
                }
                Allocation::Pending => panic!("{s} found no region"),
            },
        )
        .collect()
}

fn plan(strategy: &mut LeastLoad, state: &mut AllocationState) -> Vec<Vec<Move>> {
    let mut rounds = Vec::new();
    for _ in 0..10_000 {
        let r = round(strategy, state);
        let done = r.is_empty();
        rounds.push(r);
        if done {
            return rounds;
        }
    }
    panic!("no convergence in 10000 rounds");
}

const BAND: f64 = 0.05;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Unconstrained plans with fine-grained shards end within 5% of LB, moving within 10% of
    /// the least load any plan must move; the move limit and load budget hold every round;
    /// a shard never lands back where it left; the same input gives the same plan.
    #[test]
    fn fine_grained_plans_reach_the_band_cheaply(
        seed in any::<u64>(),
        regions in 3usize..24,
        per in 40usize..80,
        limit in prop_oneof![Just(i32::MAX), 5i32..50],
        budget in prop::option::of(5.0f64..40.0),
    ) {
        let mut state = instance(seed, regions, per, 0.5);
        let ids: Vec<String> = (0..regions).map(region_id).collect();
        let caps: Vec<f64> = ids.iter().map(|r| state.region(r).unwrap().profile().capacity.get(0)).collect();
        let loads: Vec<f64> = ids.iter().map(|r| state.region(r).unwrap().load().get(0)).collect();
        let total: f64 = loads.iter().sum();
        let fluid = total / caps.iter().sum::<f64>();
        let biggest = state.regions().flat_map(|r| r.shards()).map(|s| scalar_load(&state, s)).fold(0.0, f64::max);
        let lb = fluid.max(biggest / caps.iter().cloned().fold(0.0, f64::max));
        let ceiling = (1.0 + BAND) * fluid;
        let lb_move: f64 = loads.iter().zip(&caps).map(|(l, c)| (l - ceiling * c).max(0.0)).sum();

        let make = || LeastLoad::new(limit, 1.0, BAND, budget.map(Amount::Uniform)).unwrap();
        let mut strategy = make();
        index_agrees_with_scan(&strategy, &state, "probe");
        let start = instance(seed, regions, per, 0.5);
        let rounds = plan(&mut strategy, &mut state);
        let shard_total = regions * per;
        let move_limit = (shard_total as i64).min(limit as i64) as usize;
        let mut moved = 0.0;
        for r in &rounds {
            prop_assert!(r.len() <= move_limit);
            let load: f64 = r.iter().map(|m| scalar_load(&state, &m.0)).sum();
            if let Some(b) = budget {
                prop_assert!(r.len() <= 1 || load <= b + 1e-9, "round moved {} > {}", load, b);
            }
            for m in r {
                prop_assert_ne!(&m.1, &m.2, "{} landed back", m.0);
            }
            moved += load;
        }
        let max = ids.iter().map(|r| util_of(&state, r)).fold(0.0, f64::max);
        prop_assert!(max <= 1.05 * lb + 1e-9, "max {} vs LB {}", max, lb);
        // Each source overshoots its excess by at most one shard; with shards small against the
        // work (fine-grained), that is within 10%.
        let sources = loads.iter().zip(&caps).filter(|(l, c)| **l > ceiling * **c).count() as f64;
        prop_assert!(moved <= lb_move + sources * biggest + 1e-9, "moved {} vs least {}", moved, lb_move);
        if lb_move >= 10.0 * biggest {
            prop_assert!(moved <= 1.10 * lb_move + 1e-9, "moved {} vs least {}", moved, lb_move);
        }

        // Deterministic: the same start plans the same rounds.
        let mut again = start;
        prop_assert_eq!(plan(&mut make(), &mut again), rounds);
    }

    /// The indexed, searched path plans exactly as the plain scans over every region and every
    /// movable shard, round for round, under any move limit and load budget.
    #[test]
    fn the_indexed_path_plans_as_the_plain_scan(
        seed in any::<u64>(),
        regions in 2usize..16,
        per in 1usize..30,
        sigma in 0.1f64..2.0,
        limit in prop_oneof![Just(i32::MAX), 1i32..20],
        budget in prop::option::of(1.0f64..20.0),
    ) {
        let make = || LeastLoad::new(limit, 1.0, BAND, budget.map(Amount::Uniform)).unwrap();
        let mut fast = instance(seed, regions, per, sigma);
        let mut plain = named_instance(seed, regions, per, sigma);
        prop_assert_eq!(plan(&mut make(), &mut fast), plan(&mut make(), &mut plain));
    }

    /// Rules: a round never moves a shard to where it breaks a rule, never breaks a rule a
    /// shard kept, and every rule that can be fixed is fixed by the end.
    #[test]
    fn rules_are_never_broken_by_a_move(
        seed in any::<u64>(),
        regions in 3usize..10,
        per in 2usize..12,
        limit in 1i32..8,
    ) {
        let mut state = instance(seed, regions, per, 1.0);
        let mut rng = Rng(seed ^ 0xABCD);
        let ids: Vec<String> = (0..regions).map(region_id).collect();
        for id in &ids {
            if rng.below(5) == 0 {
                // a leaving member: its region still receives, ranked last
                let mut m = Member::new(state.region(id).unwrap().address().clone());
                m.status = MemberStatus::Leaving;
                state.upsert_member(m);
            }
            if rng.below(3) == 0 {
                state.set_region_tags(id, ["ssd"]).unwrap();
            }
            if rng.below(4) == 0 {
                state.set_region_max_shards(id, Some(per + rng.below(3))).unwrap();
            }
        }
        state.set_region_draining(&ids[rng.below(regions)], true).unwrap();
        // keep at least one undrained, uncapped, tagged region so every rule can be met
        let last = &ids[regions - 1];
        state.set_region_draining(last, false).unwrap();
        state.set_region_max_shards(last, None).unwrap();
        state.set_region_tags(last, ["ssd"]).unwrap();
        let shards: Vec<String> = state.regions().flat_map(|r| r.shards()).map(|s| s.to_string()).collect();
        for s in &shards {
            match rng.below(6) {
                0 => state.set_shard_rule(s, ShardRule::new(["ssd"], None)),
                1 => state.set_shard_rule(s, ShardRule::new([], Some(last))),
                _ => {}
            }
        }
        let breaks = |state: &AllocationState, shard: &str| -> bool {
            let home = state.home_of(shard).unwrap();
            let p = home.profile();
            p.draining
                || state.shard_rule(shard).is_some_and(|r| {
                    r.pin.as_deref().is_some_and(|pin| pin != &**home.id()) || r.missing_tags(p).next().is_some()
                })
        };
        let over = |state: &AllocationState, id: &str| {
            let r = state.region(id).unwrap();
            r.profile().max_shards.map_or(0, |m| r.shard_count().saturating_sub(m))
        };
        let mut strategy = LeastLoad::new(limit, 1.0, BAND, None).unwrap();
        for _ in 0..1000 {
            index_agrees_with_scan(&strategy, &state, "probe");
            index_agrees_with_scan(&strategy, &state, &shards[0]);
            let before: BTreeMap<String, bool> = shards.iter().map(|s| (s.clone(), breaks(&state, s))).collect();
            let over_before: Vec<usize> = ids.iter().map(|r| over(&state, r)).collect();
            let moves = round(&mut strategy, &mut state);
            prop_assert!(moves.len() <= limit as usize);
            for (s, _, _) in &moves {
                prop_assert!(!breaks(&state, s), "{} moved to where it breaks a rule", s);
            }
            for s in &shards {
                prop_assert!(before[s] || !breaks(&state, s), "{} kept a rule and broke it", s);
            }
            for (i, r) in ids.iter().enumerate() {
                prop_assert!(over(&state, r) <= over_before[i], "{} went further above maxShards", r);
            }
            if moves.is_empty() {
                break;
            }
        }
        for s in &shards {
            prop_assert!(!breaks(&state, s), "{} still breaks a rule at the end", s);
        }
        for r in &ids {
            prop_assert_eq!(over(&state, r), 0);
        }
        // Steady state: nothing more to do.
        prop_assert!(strategy.rebalance(&state, &InProgress::new(), None).unwrap().is_empty());
    }

    /// With no loads, no capacities and no rules, least-load is least-shard, call for call.
    #[test]
    fn uniform_states_decide_as_least_shard(
        counts in prop::collection::vec(0usize..30, 1..8),
        abs in 1i32..40,
        rel in 0.05f64..1.0,
        leaving in any::<u8>(),
    ) {
        let regions: Vec<Value> = counts.iter().enumerate().map(|(i, &n)| json!({
            "region": format!("region{i}"),
            "address": format!("pekko://sys@127.0.0.{}:2552", i + 1),
            "shards": (0..n).map(|s| format!("{i}-{s:03}")).collect::<Vec<_>>(),
        })).collect();
        let members: Vec<Value> = (0..counts.len()).map(|i| json!({
            "address": format!("pekko://sys@127.0.0.{}:2552", i + 1),
            "status": if leaving >> (i % 8) & 1 == 1 && i > 0 { "Leaving" } else { "Up" },
        })).collect();
        for op in ["allocate", "rebalance", "plan"] {
            let doc = |kind: &str| json!({
                "strategy": {"kind": kind, "absoluteLimit": abs, "relativeLimit": rel},
                "op": op,
                "cluster": {"self": "pekko://sys@127.0.0.1:2552", "members": members},
                "regions": regions,
                "shardId": "new",
            });
            // (least-shard may never settle with leaving regions: then both plans fail alike)
            let run = |kind: &str| decide(&doc(kind), false).map_err(|e| e.to_string());
            prop_assert_eq!(run("least-load"), run("least-shard"));
        }
    }
}

/// The bench's shape at a fifth of its size (200 regions of capacity 1, 2 or 4, 100 shards
/// each, lognormal(0, 1) loads, a count-balanced start): the plan through the class index, the
/// heaps and the searched move is the plain scans' plan, move for move.
#[test]
fn a_large_plan_is_the_plain_scans_plan_move_for_move() {
    let make = || LeastLoad::new(i32::MAX, 1.0, BAND, None).unwrap();
    let fast = plan(&mut make(), &mut instance(42, 200, 100, 1.0));
    let plain = plan(&mut make(), &mut named_instance(42, 200, 100, 1.0));
    let moves: usize = fast.iter().map(Vec::len).sum();
    assert!(moves >= 1000, "only {moves} moves");
    // the first move that differs, rather than two lists of thousands
    let flat = |p: &[Vec<Move>]| -> Vec<(usize, Move)> {
        let mut v = Vec::new();
        for (i, r) in p.iter().enumerate() {
            v.extend(r.iter().map(|m| (i, m.clone())));
        }
        v
    };
    let (a, b) = (flat(&fast), flat(&plain));
    let first = a.iter().zip(&b).position(|(x, y)| x != y);
    assert_eq!(
        (first, a.len(), fast.len()),
        (None, b.len(), plain.len()),
        "first difference (round, move): {:?} vs {:?}",
        first.map(|i| &a[i]),
        first.map(|i| &b[i])
    );
}

/// Explanations: each move names its source, destination, utilisations, trigger and budget.
#[test]
fn a_rebalance_explains_each_move() {
    let v = vectors("least-load.json")
        .into_iter()
        .find(|v| v["id"] == "least-load-plan-heavy-alone")
        .unwrap();
    let mut r = v.clone();
    r["op"] = json!("rebalance");
    let got = decide(&r, true).unwrap();
    let moves = &got["explanation"]["moves"];
    assert_eq!(moves.as_array().unwrap().len(), 1, "{got}");
    let m = &moves[0];
    assert_eq!(m["shard"], "heavy-1");
    assert_eq!(m["from"], "regionA");
    assert_eq!(m["to"], "regionB");
    assert_eq!(m["trigger"], "band");
    assert_eq!(m["fromBefore"], 6.5);
    assert_eq!(m["fromAfter"], 3.5);
    assert_eq!(m["toBefore"], 0.0);
    assert_eq!(m["toAfter"], 3.0);
    assert_eq!(
        m["movesLeft"], 0,
        "a shard over the load budget closes the round"
    );

    let pending = vectors("least-load.json")
        .into_iter()
        .find(|v| v["id"] == "least-load-alloc-pending")
        .unwrap();
    let got = decide(&pending, true).unwrap();
    let rejected = got["explanation"]["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 2, "{got}");
    assert!(rejected
        .iter()
        .all(|r| r["reason"].as_str().unwrap().contains("pinned to regionZ")));
}

#[test]
fn bad_loads_and_parameters_are_named() {
    let v = vectors("least-load.json")[0].clone();
    let mut bad = v.clone();
    bad["loads"] = json!({"a1": -1});
    let e = decide(&bad, false).unwrap_err().to_string();
    assert!(e.contains("loads.a1") && e.contains(">= 0"), "{e}");
    let mut bad = v.clone();
    bad["regions"][0]["capacity"] = json!({"cpu": 0});
    let e = decide(&bad, false).unwrap_err().to_string();
    assert!(
        e.contains("regions[0].capacity") && e.contains("> 0"),
        "{e}"
    );
    let mut bad = v.clone();
    bad["strategy"]["band"] = json!(-0.1);
    let e = decide(&bad, false).unwrap_err().to_string();
    assert!(e.contains("band"), "{e}");
    let mut bad = v;
    bad["strategy"]["maxLoadMoved"] = json!(0);
    let e = decide(&bad, false).unwrap_err().to_string();
    assert!(e.contains("maxLoadMoved"), "{e}");
}
