//! The checker: reads a run's history (every node's file, the client's and the campaign's)
//! and counts what went wrong.
//!
//! * **Duplicate owners**: for every shard, the spans in which each region ran it (from
//!   starting the shard, through every delivery, to stopping it, or to the region's last
//!   delivery if it never stopped it) must not overlap between regions. The keep-owner
//!   policy promises this outright: a shard is never hosted twice.
//! * **Under force-reallocate** (the nodes' `boot` lines name the policy) a timed-out
//!   hand-off may give the shard away while the old copy is still stopping, so a shard may be
//!   hosted twice, but never run twice:
//!   - the spans in which copies *run* (from the start to the last delivery) never overlap
//!     between regions;
//!   - copies may be *hosted* at once (from the start until the stop has finished) only
//!     when the earlier one was moved away by a forced move while it was hosted;
//!   - a copy moved away by a forced move delivers nothing after the move.
//! * **Lost / duplicated**: every message the client saw accepted is delivered exactly once,
//!   except a message that was held by a region that crashed before delivering it (it
//!   accepted it, was forwarded it, or had it bounced to it): at-most-once for those, as in
//!   Pekko, counted apart as `lostToCrash`. A second delivery is always a violation.
//! * **Duplicate ids**: no Snowflake id is issued twice across all holders.
//! * **Duplicate workers**: two tenures (region, epoch) of the same worker id never issue ids
//!   whose timestamps interleave.
//! * **Recovery**: after the last fault of a run heals, the cluster is back within the stated
//!   bound: no message the client saw accepted waits longer than the bound past the heal (or
//!   past its acceptance, if later) for its delivery, and the client never waits longer than
//!   the bound for an answer.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use shardline_core::workerid::snowflake::Layout;

use crate::history::read_dir;

#[derive(Debug, Default, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub violations: Vec<String>,
    pub accepted: u64,
    pub delivered: u64,
    pub lost: u64,
    pub lost_to_crash: u64,
    pub duplicated: u64,
    pub duplicate_owners: u64,
    pub duplicate_ids: u64,
    pub duplicate_workers: u64,
    pub ids: u64,
    /// `None`: no fault healed in this history.
    pub recovery_ms: Option<u64>,
    /// The longest a delivered message waited between its acceptance and its delivery, fault
    /// or not: how long the fault held things up.
    pub max_latency_ms: u64,
    pub torn_lines: usize,
    /// The nodes ran with the force-reallocate hand-off timeout policy.
    pub force_reallocate: bool,
    pub hand_off_timeouts: u64,
    /// Timed-out hand-offs that gave the shard to another region.
    pub forced_moves: u64,
    /// Pairs of copies hosted at once, each after a forced move (allowed).
    pub hosted_twice: u64,
    /// Deliveries by a copy after a forced move took its shard away.
    pub delivered_after_move: u64,
}

/// One region's copy of a shard, from its start until it stopped.
#[derive(Debug)]
struct Copy {
    region: String,
    start: u64,
    deliveries: Vec<u64>,
    stop: Option<u64>,
    /// Set once a slow stop (a `stop` line with `ms`) has finished.
    stopped: Option<u64>,
    slow_stop: bool,
}

impl Copy {
    /// The end of the span in which it ran: its last delivery.
    fn ran_until(&self) -> u64 {
        self.deliveries.last().copied().unwrap_or(self.start)
    }

    /// The end of the span in which it was hosted: until its stop finished; a slow stop
    /// never reported finished lasts as long as its region wrote anything; a copy never
    /// stopped ends with its last delivery.
    fn hosted_until(&self, last_line: &HashMap<String, u64>) -> u64 {
        match (self.stop, self.slow_stop) {
            (None, _) => self.ran_until(),
            (Some(t), false) => t,
            (Some(t), true) => self
                .stopped
                .unwrap_or_else(|| last_line.get(&self.region).map_or(t, |e| t.max(*e))),
        }
    }
}

/// A forced move: the shard was taken from `from` at `t`.
struct Forced {
    shard: String,
    from: String,
    t: u64,
}

fn s(v: &Value, k: &str) -> Option<String> {
    match &v[k] {
        Value::String(x) => Some(x.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn u(v: &Value, k: &str) -> Option<u64> {
    v[k].as_u64()
}

/// Messages the client saw accepted and not yet delivered, with no crashed holder: what a
/// drain waits for.
pub fn pending(dir: &Path) -> std::io::Result<u64> {
    Ok(check(dir, u64::MAX)?.lost)
}

pub fn check(dir: &Path, recovery_bound_ms: u64) -> std::io::Result<Verdict> {
    let (lines, torn) = read_dir(dir)?;
    let mut v = Verdict {
        torn_lines: torn,
        ..Verdict::default()
    };
    let by = |l: &Value| s(l, "by").unwrap_or_default();
    let kind = |l: &Value| s(l, "k").unwrap_or_default();

    let mut crashed: BTreeSet<String> = BTreeSet::new();
    let mut acked: BTreeSet<u64> = BTreeSet::new();
    let mut accept_at: HashMap<u64, (u64, Option<String>)> = HashMap::new();
    let mut holders: HashMap<u64, BTreeSet<String>> = HashMap::new();
    let mut deliveries: HashMap<u64, Vec<(u64, String)>> = HashMap::new();
    let mut heals: Vec<u64> = Vec::new();
    let mut client_at: Vec<u64> = Vec::new();
    let mut faults: Vec<u64> = Vec::new();
    let mut end = u64::MAX;
    // Copies by shard; (region, shard) -> the index of its running copy, or of its copy
    // whose slow stop is under way.
    let mut copies: BTreeMap<String, Vec<Copy>> = BTreeMap::new();
    let mut open: HashMap<(String, String), usize> = HashMap::new();
    let mut stopping: HashMap<(String, String), usize> = HashMap::new();
    let mut last_line: HashMap<String, u64> = HashMap::new();
    let mut forced: Vec<Forced> = Vec::new();
    let mut ids: HashMap<u64, u32> = HashMap::new();
    let mut tenures: BTreeMap<(u64, String, u64), (u64, u64)> = BTreeMap::new();
    let mut epochs: HashMap<(String, u64), u64> = HashMap::new();
    let layout = Layout::default();

    for l in &lines {
        let t = u(l, "t").unwrap_or(0);
        let who = by(l);
        last_line.insert(who.clone(), t);
        match kind(l).as_str() {
            "boot" if s(l, "policy").as_deref() == Some("force-reallocate") => {
                v.force_reallocate = true;
            }
            "handoff-timeout" => {
                v.hand_off_timeouts += 1;
                let from = s(l, "from");
                if s(l, "policy").as_deref() == Some("force-reallocate") && s(l, "to") != from {
                    if let (Some(shard), Some(from)) = (s(l, "s"), from) {
                        forced.push(Forced { shard, from, t });
                    }
                }
            }
            "killed" | "exited" => {
                if let Some(r) = s(l, "r") {
                    crashed.insert(r);
                }
            }
            "fenced" => {
                crashed.insert(who.clone());
            }
            "fault" => faults.push(t),
            "heal" => heals.push(t),
            "end" => end = end.min(t),
            "acked" => {
                client_at.push(t);
                if l["accepted"].as_bool() == Some(true) {
                    if let Some(m) = u(l, "m") {
                        acked.insert(m);
                    }
                }
            }
            "accept" => {
                if let Some(m) = u(l, "m") {
                    accept_at.entry(m).or_insert((t, s(l, "s")));
                    holders.entry(m).or_default().insert(who.clone());
                }
            }
            "fwd" | "bounce" => {
                if let (Some(m), Some(to)) = (u(l, "m"), s(l, "to")) {
                    holders.entry(m).or_default().insert(to);
                }
            }
            "deliver" => {
                if let Some(m) = u(l, "m") {
                    deliveries.entry(m).or_default().push((t, who.clone()));
                }
                if let Some(shard) = s(l, "s") {
                    let list = copies.entry(shard.clone()).or_default();
                    let i = *open.entry((who.clone(), shard)).or_insert_with(|| {
                        list.push(Copy::new(&who, t));
                        list.len() - 1
                    });
                    list[i].deliveries.push(t);
                }
            }
            "start" => {
                if let Some(shard) = s(l, "s") {
                    let list = copies.entry(shard.clone()).or_default();
                    open.entry((who.clone(), shard)).or_insert_with(|| {
                        list.push(Copy::new(&who, t));
                        list.len() - 1
                    });
                }
            }
            "stop" => {
                if let Some(shard) = s(l, "s") {
                    let key = (who.clone(), shard.clone());
                    if let Some(i) = open.remove(&key) {
                        let c = &mut copies.entry(shard).or_default()[i];
                        c.stop = Some(t);
                        c.slow_stop = u(l, "ms").is_some_and(|ms| ms > 0);
                        if c.slow_stop {
                            stopping.insert(key, i);
                        }
                    }
                }
            }
            "stopped" => {
                if let Some(shard) = s(l, "s") {
                    if let Some(i) = stopping.remove(&(who.clone(), shard.clone())) {
                        copies.entry(shard).or_default()[i].stopped = Some(t);
                    }
                }
            }
            "worker" => {
                if let (Some(w), Some(e)) = (u(l, "w"), u(l, "epoch")) {
                    epochs.insert((who.clone(), w), e);
                }
            }
            "id" => {
                if let (Some(w), Some(id)) = (u(l, "w"), u(l, "id")) {
                    *ids.entry(id).or_default() += 1;
                    let epoch = epochs.get(&(who.clone(), w)).copied().unwrap_or(0);
                    let ts = layout.decompose(id).unix_ms;
                    let span = tenures.entry((w, who.clone(), epoch)).or_insert((ts, ts));
                    span.0 = span.0.min(ts);
                    span.1 = span.1.max(ts);
                }
            }
            _ => {}
        }
    }

    // Owners.
    if v.force_reallocate {
        check_forced(&mut v, &copies, &forced, &last_line);
    } else {
        check_owners(&mut v, &copies, &last_line);
    }

    // Delivery.
    v.accepted = acked.len() as u64;
    for m in &acked {
        let got = deliveries.get(m).map_or(0, Vec::len) as u64;
        v.delivered += got.min(1);
        if let (Some((at, _)), Some(&(d, _))) =
            (accept_at.get(m), deliveries.get(m).and_then(|d| d.first()))
        {
            v.max_latency_ms = v.max_latency_ms.max(d.saturating_sub(*at) / 1_000);
        }
        if got > 1 {
            v.duplicated += got - 1;
            v.violations.push(format!(
                "message {m} delivered {got} times: {:?}",
                deliveries[m]
            ));
        }
        if got == 0 {
            let held = holders.get(m);
            if held.is_some_and(|h| h.iter().any(|r| crashed.contains(r))) {
                v.lost_to_crash += 1;
            } else {
                v.lost += 1;
                if recovery_bound_ms != u64::MAX {
                    v.violations.push(format!(
                        "message {m} accepted by {:?} never delivered (held by {held:?})",
                        accept_at.get(m)
                    ));
                }
            }
        }
    }

    // Ids.
    v.ids = ids.len() as u64;
    for (id, n) in &ids {
        if *n > 1 {
            v.duplicate_ids += u64::from(*n - 1);
            v.violations
                .push(format!("snowflake id {id} issued {n} times"));
        }
    }
    let mut by_worker: BTreeMap<u64, Vec<(u64, u64, String)>> = BTreeMap::new();
    for ((w, who, epoch), (a, b)) in tenures {
        by_worker
            .entry(w)
            .or_default()
            .push((a, b, format!("{who}/epoch {epoch}")));
    }
    for (w, mut list) in by_worker {
        list.sort();
        for pair in list.windows(2) {
            if pair[1].0 <= pair[0].1 {
                v.duplicate_workers += 1;
                v.violations.push(format!(
                    "worker id {w}: {} issued up to {} ms and {} from {} ms",
                    pair[0].2, pair[0].1, pair[1].2, pair[1].0
                ));
            }
        }
    }

    // Recovery after the last heal: how long anything the client saw accepted still waited
    // for its delivery past the heal, and how long the client waited for an answer.
    if let Some(&heal) = heals.last() {
        let until = faults
            .iter()
            .copied()
            .filter(|f| *f > heal)
            .min()
            .unwrap_or(end);
        let mut worst = 0u64;
        let mut why = String::new();
        for m in &acked {
            let Some((at, _)) = accept_at.get(m) else {
                continue;
            };
            if *at >= until {
                continue;
            }
            let Some(&(d, _)) = deliveries.get(m).and_then(|d| d.first()) else {
                continue;
            };
            if d > heal {
                let waited = (d - (*at).max(heal)) / 1_000;
                if waited > worst {
                    worst = waited;
                    why = format!(
                        "message {m} delivered {waited} ms after the heal or its acceptance"
                    );
                }
            }
        }
        let answered: Vec<u64> = client_at
            .iter()
            .copied()
            .filter(|t| *t >= heal && *t < until)
            .collect();
        for pair in std::iter::once(heal)
            .chain(answered)
            .collect::<Vec<_>>()
            .windows(2)
        {
            let gap = (pair[1] - pair[0]) / 1_000;
            if gap > worst {
                worst = gap;
                why = format!("the client had no answer for {gap} ms");
            }
        }
        v.recovery_ms = Some(worst);
        if worst > recovery_bound_ms {
            v.violations.push(format!(
                "recovery took {worst} ms ({why}); the bound is {recovery_bound_ms} ms"
            ));
        }
    }
    Ok(v)
}

impl Copy {
    fn new(region: &str, start: u64) -> Copy {
        Copy {
            region: region.to_owned(),
            start,
            deliveries: Vec::new(),
            stop: None,
            stopped: None,
            slow_stop: false,
        }
    }
}

/// Keep-owner: no two regions' spans (start to stop, or to the last delivery of a copy
/// never stopped) overlap.
fn check_owners(
    v: &mut Verdict,
    copies: &BTreeMap<String, Vec<Copy>>,
    last_line: &HashMap<String, u64>,
) {
    let hosted_until = |c: &Copy| c.hosted_until(last_line);
    for (shard, list) in copies {
        let mut list: Vec<(u64, u64, &str)> = list
            .iter()
            .map(|c| (c.start, hosted_until(c), c.region.as_str()))
            .collect();
        list.sort();
        let mut latest: Option<(u64, &str)> = None;
        for (a, b, region) in list {
            if let Some((until, other)) = latest {
                if a < until && other != region {
                    v.duplicate_owners += 1;
                    v.violations.push(format!(
                        "shard {shard}: {region} started it at {a} while {other} ran it until {until}"
                    ));
                }
            }
            if latest.is_none_or(|(until, _)| b > until) {
                latest = Some((b, region));
            }
        }
    }
}

/// Force-reallocate: copies never run at once; they are hosted at once only after a forced
/// move of the earlier one, which delivers nothing after the move.
fn check_forced(
    v: &mut Verdict,
    copies: &BTreeMap<String, Vec<Copy>>,
    forced: &[Forced],
    last_line: &HashMap<String, u64>,
) {
    v.forced_moves = forced.len() as u64;
    let hosted_until = |c: &Copy| c.hosted_until(last_line);
    // The forced move that took `c`'s shard away while `c` was hosted, if any.
    let moved = |shard: &str, c: &Copy| {
        forced.iter().find(|f| {
            f.shard == shard && f.from == c.region && c.start <= f.t && f.t <= hosted_until(c)
        })
    };
    for (shard, list) in copies {
        let mut list: Vec<&Copy> = list.iter().collect();
        list.sort_by_key(|c| c.start);
        for (i, a) in list.iter().enumerate() {
            if let Some(f) = moved(shard, a) {
                let late = a.deliveries.iter().filter(|d| **d > f.t).count() as u64;
                if late > 0 {
                    v.delivered_after_move += late;
                    v.violations.push(format!(
                        "shard {shard}: {} delivered {late} messages after the forced move at {}, the last at {}",
                        a.region, f.t, a.ran_until()
                    ));
                }
            }
            for b in list[i + 1..].iter().filter(|b| b.region != a.region) {
                let (ran, hosted) = (a.ran_until(), hosted_until(a));
                let overlap = if b.start < ran {
                    Some(("ran", ran, ""))
                } else if b.start >= hosted {
                    None
                } else if moved(shard, a).is_some() {
                    v.hosted_twice += 1;
                    None
                } else {
                    Some(("hosted", hosted, " with no forced move"))
                };
                if let Some((how, until, why)) = overlap {
                    v.duplicate_owners += 1;
                    v.violations.push(format!(
                        "shard {shard}: {} started it at {} while {} {how} it until {until}{why}",
                        b.region, b.start, a.region
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(dir: &Path, name: &str, lines: &[Value]) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(dir.join(name), text).unwrap();
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("shardline-check-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_clean_history_passes_and_each_fault_is_caught() {
        let d = scratch("faults");
        write(
            &d,
            "client.jsonl",
            &[
                json!({"t": 1, "by": "client", "k": "acked", "m": 1, "accepted": true}),
                json!({"t": 1, "by": "client", "k": "acked", "m": 2, "accepted": true}),
                json!({"t": 1, "by": "client", "k": "acked", "m": 3, "accepted": true}),
                json!({"t": 1, "by": "client", "k": "acked", "m": 4, "accepted": true}),
            ],
        );
        write(
            &d,
            "a.jsonl",
            &[
                json!({"t": 10, "by": "a", "k": "accept", "m": 1, "s": "0"}),
                json!({"t": 11, "by": "a", "k": "start", "s": "0"}),
                json!({"t": 12, "by": "a", "k": "deliver", "s": "0", "m": 1}),
                json!({"t": 13, "by": "a", "k": "accept", "m": 2, "s": "0"}),
                json!({"t": 14, "by": "a", "k": "fwd", "m": 3, "to": "c"}),
                json!({"t": 15, "by": "a", "k": "accept", "m": 4, "s": "0"}),
                json!({"t": 30, "by": "a", "k": "deliver", "s": "0", "m": 2}),
                json!({"t": 31, "by": "a", "k": "id", "w": 1, "id": 5u64 << 22}),
            ],
        );
        write(
            &d,
            "b.jsonl",
            &[
                json!({"t": 20, "by": "b", "k": "start", "s": "0"}),
                json!({"t": 21, "by": "b", "k": "deliver", "s": "0", "m": 2}),
                json!({"t": 22, "by": "b", "k": "id", "w": 1, "id": 5u64 << 22}),
            ],
        );
        write(
            &d,
            "campaign.jsonl",
            &[json!({"t": 40, "by": "campaign", "k": "killed", "r": "c"})],
        );
        let v = check(&d, 1_000).unwrap();
        assert_eq!(v.duplicate_owners, 1, "{:?}", v.violations);
        assert_eq!(v.duplicated, 1, "message 2 twice");
        assert_eq!(v.lost, 1, "message 4 held by live a");
        assert_eq!(v.lost_to_crash, 1, "message 3 went to crashed c");
        assert_eq!(v.duplicate_ids, 1);
        assert_eq!(v.duplicate_workers, 1);
        assert_eq!(v.violations.len(), 5, "{:?}", v.violations);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn hand_offs_in_order_and_recovery_are_measured() {
        let d = scratch("recovery");
        write(
            &d,
            "client.jsonl",
            &[json!({"t": 2_000_100, "by": "client", "k": "acked", "m": 1, "accepted": true})],
        );
        write(
            &d,
            "a.jsonl",
            &[
                json!({"t": 1, "by": "a", "k": "start", "s": "0"}),
                json!({"t": 2, "by": "a", "k": "stop", "s": "0"}),
            ],
        );
        write(
            &d,
            "b.jsonl",
            &[
                json!({"t": 3, "by": "b", "k": "start", "s": "0"}),
                json!({"t": 2_000_000, "by": "b", "k": "accept", "m": 1, "s": "0"}),
                json!({"t": 2_500_000, "by": "b", "k": "deliver", "s": "0", "m": 1}),
            ],
        );
        write(
            &d,
            "campaign.jsonl",
            &[json!({"t": 1_000_000, "by": "campaign", "k": "heal"})],
        );
        let v = check(&d, 2_000).unwrap();
        assert!(v.violations.is_empty(), "{:?}", v.violations);
        // The client waited 1 s past the heal for an answer; the message then took 0.5 s.
        assert_eq!(v.recovery_ms, Some(1_000));
        assert_eq!(v.max_latency_ms, 500);
        let v = check(&d, 900).unwrap();
        assert_eq!(v.violations.len(), 1, "over the bound");
        let _ = std::fs::remove_dir_all(&d);
    }

    fn boot(by: &str, policy: &str) -> Value {
        json!({"t": 1, "by": by, "k": "boot", "policy": policy})
    }

    /// Shard 0 moves from a to b by a forced move while a's copy is still stopping; a is
    /// the coordinator's node too.
    fn forced_move(d: &Path, policy: &str) {
        write(
            d,
            "client.jsonl",
            &[
                json!({"t": 1, "by": "client", "k": "acked", "m": 1, "accepted": true}),
                json!({"t": 1, "by": "client", "k": "acked", "m": 2, "accepted": true}),
            ],
        );
        write(
            d,
            "a.jsonl",
            &[
                boot("a", policy),
                json!({"t": 10, "by": "a", "k": "start", "s": "0"}),
                json!({"t": 12, "by": "a", "k": "deliver", "s": "0", "m": 1}),
                json!({"t": 20, "by": "a", "k": "stop", "s": "0", "ms": 12_000}),
                json!({"t": 30, "by": "a", "k": "handoff-timeout", "s": "0", "from": "a", "to": "b", "policy": policy}),
                json!({"t": 50, "by": "a", "k": "stopped", "s": "0"}),
            ],
        );
        write(
            d,
            "b.jsonl",
            &[
                boot("b", policy),
                json!({"t": 31, "by": "b", "k": "start", "s": "0"}),
                json!({"t": 35, "by": "b", "k": "deliver", "s": "0", "m": 2}),
            ],
        );
    }

    #[test]
    fn a_forced_move_may_host_a_shard_twice_but_only_under_force_reallocate() {
        let d = scratch("forced-ok");
        forced_move(&d, "force-reallocate");
        let v = check(&d, 1_000).unwrap();
        assert!(v.violations.is_empty(), "{:?}", v.violations);
        assert!(v.force_reallocate);
        assert_eq!(
            (v.hand_off_timeouts, v.forced_moves, v.hosted_twice),
            (1, 1, 1)
        );
        assert_eq!(v.delivered, 2);
        // The same history from keep-owner nodes: the shard was hosted twice.
        forced_move(&d, "keep-owner");
        let v = check(&d, 1_000).unwrap();
        assert!(!v.force_reallocate);
        assert_eq!(v.forced_moves, 0);
        assert_eq!(v.duplicate_owners, 1, "{:?}", v.violations);
        assert_eq!(v.violations.len(), 1, "{:?}", v.violations);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn force_reallocate_never_runs_a_shard_twice() {
        let d = scratch("forced-bad");
        let f = "force-reallocate";
        write(
            &d,
            "a.jsonl",
            &[
                boot("a", f),
                // Shard 1: a delivers after its shard was forced away, once b runs it too.
                json!({"t": 10, "by": "a", "k": "start", "s": "1"}),
                json!({"t": 30, "by": "a", "k": "handoff-timeout", "s": "1", "from": "a", "to": "b", "policy": f}),
                json!({"t": 40, "by": "a", "k": "deliver", "s": "1", "m": 3}),
                json!({"t": 45, "by": "a", "k": "stop", "s": "1", "ms": 5}),
                json!({"t": 60, "by": "a", "k": "stopped", "s": "1"}),
                // Shard 2: a delivers after the move, before b has started.
                json!({"t": 10, "by": "a", "k": "start", "s": "2"}),
                json!({"t": 30, "by": "a", "k": "handoff-timeout", "s": "2", "from": "a", "to": "b", "policy": f}),
                json!({"t": 32, "by": "a", "k": "deliver", "s": "2", "m": 4}),
                json!({"t": 34, "by": "a", "k": "stop", "s": "2"}),
                // Shard 3: hosted twice, with no forced move (the owner kept it).
                json!({"t": 10, "by": "a", "k": "start", "s": "3"}),
                json!({"t": 20, "by": "a", "k": "stop", "s": "3", "ms": 9}),
                json!({"t": 30, "by": "a", "k": "handoff-timeout", "s": "3", "from": "a", "to": "a", "policy": f}),
                json!({"t": 50, "by": "a", "k": "stopped", "s": "3"}),
                // Shard 4: a forced move of shard 4 does not excuse one of shard 3... nor
                // does a forced move from a region other than the old copy's.
                json!({"t": 10, "by": "a", "k": "start", "s": "4"}),
                json!({"t": 20, "by": "a", "k": "stop", "s": "4", "ms": 9}),
                json!({"t": 30, "by": "a", "k": "handoff-timeout", "s": "4", "from": "c", "to": "b", "policy": f}),
                json!({"t": 70, "by": "a", "k": "id", "w": 1, "id": 7u64 << 22}),
            ],
        );
        write(
            &d,
            "b.jsonl",
            &[
                boot("b", f),
                json!({"t": 35, "by": "b", "k": "start", "s": "1"}),
                json!({"t": 36, "by": "b", "k": "start", "s": "2"}),
                json!({"t": 31, "by": "b", "k": "start", "s": "3"}),
                // Shard 4's old copy never reported its stop finished: hosted until a's
                // last line (70).
                json!({"t": 65, "by": "b", "k": "start", "s": "4"}),
            ],
        );
        let v = check(&d, 1_000).unwrap();
        assert_eq!(v.forced_moves, 3, "to == from is no move");
        assert_eq!(v.delivered_after_move, 2, "{:?}", v.violations);
        assert_eq!(v.duplicate_owners, 3, "{:?}", v.violations);
        assert_eq!(v.hosted_twice, 0);
        assert_eq!(v.violations.len(), 5, "{:?}", v.violations);
        let _ = std::fs::remove_dir_all(&d);
    }
}
