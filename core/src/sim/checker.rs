//! Invariants checked while the simulation runs, and the message ledger behind them.
//!
//! Ownership is tracked incrementally: after every step the world reports the shards of each
//! region it touched, and the checker compares them with what every other region holds.
//! Every accepted entity message is followed from the region that accepted it, over the wire,
//! to the entity that got it; a message can be in one place only.

use std::collections::{BTreeSet, HashMap};

use crate::protocol::ShardId;

/// Region incarnations are numbered as they start; keys are never reused.
pub(crate) type RegionKey = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Accepted by, or delivered over the wire to, this region (buffered or in transit inside).
    At(RegionKey),
    InFlight(RegionKey),
    Delivered,
    /// Held by a region that crashed, or on the way to one: at-most-once delivery.
    LostToCrash,
    Lost,
}

#[derive(Debug, Clone)]
struct Msg {
    origin: RegionKey,
    entity: u32,
    accepted_at: u64,
    place: Place,
    bounces: u8,
}

/// Most violations of one kind are the same failure seen many times; keep the first few.
const KEEP_VIOLATIONS: usize = 100;

#[derive(Debug, Default)]
pub(crate) struct Checker {
    /// KeepOwner: a shard is never *hosted* (in any state) twice. A forced move may leave the
    /// old copy stopping while the new one runs, so then only running copies must be unique.
    strict_hosting: bool,
    names: Vec<String>,
    regions: HashMap<RegionKey, (BTreeSet<ShardId>, BTreeSet<ShardId>)>,
    running: HashMap<ShardId, BTreeSet<RegionKey>>,
    hosted: HashMap<ShardId, BTreeSet<RegionKey>>,
    dup_running: BTreeSet<ShardId>,
    dup_hosted: BTreeSet<ShardId>,
    msgs: Vec<Msg>,
    last_delivered: HashMap<(RegionKey, u32), u64>,
    pub delays: Vec<u64>,
    pub duplicate_owners: u64,
    pub duplicate_deliveries: u64,
    pub out_of_order: u64,
    pub lost_to_crash: u64,
    pub lost: u64,
    pub bounced: u64,
    pub delivered: u64,
    violations: Vec<String>,
    violation_count: u64,
}

impl Checker {
    pub fn new(strict_hosting: bool) -> Checker {
        Checker {
            strict_hosting,
            ..Default::default()
        }
    }

    pub fn name_region(&mut self, key: RegionKey, name: &str) {
        let i = key as usize;
        if self.names.len() <= i {
            self.names.resize(i + 1, String::new());
        }
        self.names[i] = name.to_owned();
    }

    fn name(&self, key: RegionKey) -> &str {
        self.names.get(key as usize).map_or("?", String::as_str)
    }

    pub fn violate(&mut self, now: u64, kind: &str, detail: impl AsRef<str>) {
        self.violation_count += 1;
        if self.violations.len() < KEEP_VIOLATIONS {
            self.violations
                .push(format!("t={now}ms {kind}: {}", detail.as_ref()));
        }
    }

    pub fn violations(&self) -> (&[String], u64) {
        (&self.violations, self.violation_count)
    }

    // ---- ownership ----------------------------------------------------------------------

    /// The shards `key` runs (accepting messages) and hosts (in any state) after a step.
    pub fn update_region(
        &mut self,
        now: u64,
        key: RegionKey,
        running: Vec<ShardId>,
        hosted: Vec<ShardId>,
    ) {
        let running: BTreeSet<ShardId> = running.into_iter().collect();
        let hosted: BTreeSet<ShardId> = hosted.into_iter().collect();
        let (old_running, old_hosted) = self.regions.remove(&key).unwrap_or_default();
        self.diff(now, key, &old_running, &running, true);
        self.diff(now, key, &old_hosted, &hosted, false);
        if !running.is_empty() || !hosted.is_empty() {
            self.regions.insert(key, (running, hosted));
        }
    }

    pub fn region_gone(&mut self, now: u64, key: RegionKey) {
        self.update_region(now, key, Vec::new(), Vec::new());
    }

    fn diff(
        &mut self,
        now: u64,
        key: RegionKey,
        old: &BTreeSet<ShardId>,
        new: &BTreeSet<ShardId>,
        running: bool,
    ) {
        for s in old.difference(new) {
            let (map, dups) = if running {
                (&mut self.running, &mut self.dup_running)
            } else {
                (&mut self.hosted, &mut self.dup_hosted)
            };
            if let Some(set) = map.get_mut(s) {
                set.remove(&key);
                if set.len() <= 1 {
                    dups.remove(s);
                }
                if set.is_empty() {
                    map.remove(s);
                }
            }
        }
        for s in new.difference(old) {
            let (map, dups) = if running {
                (&mut self.running, &mut self.dup_running)
            } else {
                (&mut self.hosted, &mut self.dup_hosted)
            };
            let set = map.entry(s.clone()).or_default();
            set.insert(key);
            if set.len() > 1 && dups.insert(s.clone()) {
                let holders: Vec<RegionKey> = set.iter().copied().collect();
                if running || self.strict_hosting {
                    let names: Vec<&str> = holders.iter().map(|k| self.name(*k)).collect();
                    let what = if running { "runs" } else { "is hosted" };
                    let detail = format!("shard {s} {what} in {}", names.join(", "));
                    self.duplicate_owners += 1;
                    let kind = if running {
                        "duplicate-owner"
                    } else {
                        "duplicate-host"
                    };
                    self.violate(now, kind, detail);
                }
            }
        }
    }

    /// Regions running `shard` now.
    pub fn runners(&self, shard: &str) -> Vec<RegionKey> {
        self.running
            .get(shard)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Every shard running anywhere, with its regions.
    pub fn running_shards(&self) -> impl Iterator<Item = (&ShardId, &BTreeSet<RegionKey>)> {
        self.running.iter()
    }

    // ---- the message ledger -------------------------------------------------------------

    pub fn accepted(&mut self, now: u64, origin: RegionKey, entity: u32) -> u64 {
        self.msgs.push(Msg {
            origin,
            entity,
            accepted_at: now,
            place: Place::At(origin),
            bounces: 0,
        });
        (self.msgs.len() - 1) as u64
    }

    /// Forget an acceptance that the region refused after all (the id is never sent).
    pub fn unaccept(&mut self, id: u64) {
        if id as usize + 1 == self.msgs.len() {
            self.msgs.pop();
        }
    }

    fn msg(&mut self, now: u64, id: u64) -> Option<&mut Msg> {
        if (id as usize) < self.msgs.len() {
            return self.msgs.get_mut(id as usize);
        }
        self.violate(
            now,
            "unknown-message",
            format!("message id {id} was never accepted"),
        );
        None
    }

    pub fn forwarded(&mut self, now: u64, id: u64, from: RegionKey, to: RegionKey) {
        let Some(m) = self.msg(now, id) else { return };
        let place = m.place;
        if place != Place::At(from) {
            self.violate(
                now,
                "message-teleported",
                format!(
                    "message {id} forwarded by {} but it was {place:?}",
                    self.name(from)
                ),
            );
        }
        if let Some(m) = self.msg(now, id) {
            m.place = Place::InFlight(to);
        }
    }

    pub fn arrived(&mut self, now: u64, id: u64, at: RegionKey) {
        if let Some(m) = self.msg(now, id) {
            m.place = Place::At(at);
        }
    }

    /// The message reached a region that no longer exists.
    pub fn dropped(&mut self, now: u64, id: u64, crashed: bool) {
        let Some(m) = self.msg(now, id) else { return };
        if !matches!(m.place, Place::InFlight(_)) {
            // Already written off when its destination went away.
            return;
        }
        if crashed {
            m.place = Place::LostToCrash;
            self.lost_to_crash += 1;
        } else {
            m.place = Place::Lost;
            self.lost += 1;
            self.violate(
                now,
                "lost-message",
                format!("message {id} arrived at a region that had left"),
            );
        }
    }

    /// A region handed the message back (undeliverable) and the host gave it to region `to`
    /// to route again. False when it has bounced too often, and is then lost.
    pub fn bounced(&mut self, now: u64, id: u64, to: RegionKey) -> bool {
        self.bounced += 1;
        let Some(m) = self.msg(now, id) else {
            return false;
        };
        m.bounces += 1;
        if m.bounces > 20 {
            m.place = Place::Lost;
            self.lost += 1;
            self.violate(
                now,
                "lost-message",
                format!("message {id} bounced 20 times"),
            );
            return false;
        }
        m.place = Place::InFlight(to);
        true
    }

    pub fn lost_undeliverable(&mut self, now: u64, id: u64, why: &str) {
        if let Some(m) = self.msg(now, id) {
            m.place = Place::Lost;
        }
        self.lost += 1;
        self.violate(now, "lost-message", format!("message {id}: {why}"));
    }

    pub fn delivered(&mut self, now: u64, id: u64, by: RegionKey) {
        let Some(m) = self.msg(now, id) else { return };
        let (origin, entity, accepted_at, place) = (m.origin, m.entity, m.accepted_at, m.place);
        m.place = Place::Delivered;
        if place == Place::Delivered {
            self.duplicate_deliveries += 1;
            self.violate(
                now,
                "duplicate-delivery",
                format!("message {id} delivered again by {}", self.name(by)),
            );
            return;
        }
        if place != Place::At(by) {
            self.violate(
                now,
                "message-teleported",
                format!(
                    "message {id} delivered by {} but it was {place:?}",
                    self.name(by)
                ),
            );
        }
        self.delivered += 1;
        self.delays.push(now.saturating_sub(accepted_at));
        let last = self.last_delivered.entry((origin, entity)).or_insert(0);
        if *last > id {
            self.out_of_order += 1;
        }
        *last = (*last).max(id);
    }

    /// A region crashed: what it held, and what was on the way to it, is gone.
    pub fn region_crashed(&mut self, key: RegionKey) {
        for m in &mut self.msgs {
            if matches!(m.place, Place::At(k) | Place::InFlight(k) if k == key) {
                m.place = Place::LostToCrash;
                self.lost_to_crash += 1;
            }
        }
    }

    /// A region left the cluster: anything it still held is lost, and that is a violation
    /// (a graceful leave must hand everything on). Messages on their way to it are judged
    /// when they arrive.
    pub fn region_left(&mut self, now: u64, key: RegionKey) {
        let held: Vec<usize> = self
            .msgs
            .iter()
            .enumerate()
            .filter(|(_, m)| m.place == Place::At(key))
            .map(|(i, _)| i)
            .collect();
        for i in held {
            self.msgs[i].place = Place::Lost;
            self.lost += 1;
            let name = self.name(key).to_owned();
            self.violate(
                now,
                "lost-message",
                format!("message {i} left the cluster with {name}"),
            );
        }
    }

    /// Messages not delivered yet and not written off.
    pub fn pending(&self) -> u64 {
        self.msgs
            .iter()
            .filter(|m| matches!(m.place, Place::At(_) | Place::InFlight(_)))
            .count() as u64
    }

    /// At the end: anything still on its way was lost.
    pub fn finish(&mut self, now: u64) {
        let stuck: Vec<(usize, Place)> = self
            .msgs
            .iter()
            .enumerate()
            .filter(|(_, m)| matches!(m.place, Place::At(_) | Place::InFlight(_)))
            .map(|(i, m)| (i, m.place))
            .collect();
        for (i, place) in &stuck {
            self.msgs[*i].place = Place::Lost;
            let where_ = match place {
                Place::At(k) => format!("still in {}", self.name(*k)),
                Place::InFlight(k) => format!("still on the way to {}", self.name(*k)),
                _ => unreachable!(),
            };
            self.violate(
                now,
                "lost-message",
                format!("message {i} never delivered: {where_}"),
            );
        }
        self.lost += stuck.len() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<ShardId> {
        v.iter().map(|x| (*x).into()).collect()
    }

    #[test]
    fn a_second_running_copy_is_one_violation_per_episode() {
        let mut c = Checker::new(false);
        c.name_region(0, "a");
        c.name_region(1, "b");
        c.update_region(1, 0, s(&["1", "2"]), s(&["1", "2"]));
        c.update_region(2, 1, s(&["2"]), s(&["2"]));
        c.update_region(3, 1, s(&["2", "3"]), s(&["2", "3"]));
        assert_eq!(c.duplicate_owners, 1);
        assert!(c.violations().0[0].contains("shard 2 runs in a, b"));
        c.update_region(4, 1, s(&["3"]), s(&["2", "3"]));
        assert_eq!(c.runners("2"), vec![0]);
        assert_eq!(
            c.duplicate_owners, 1,
            "a stopping copy is fine after a forced move"
        );
        c.region_gone(5, 1);
        c.update_region(6, 1, s(&["2"]), s(&["2"]));
        assert_eq!(c.duplicate_owners, 2);
    }

    #[test]
    fn strict_hosting_counts_stopping_copies() {
        let mut c = Checker::new(true);
        c.update_region(1, 0, s(&["1"]), s(&["1"]));
        c.update_region(2, 1, s(&[]), s(&["1"]));
        assert_eq!(c.duplicate_owners, 1);
    }

    #[test]
    fn ledger_follows_messages_and_finds_losses_and_duplicates() {
        let mut c = Checker::new(true);
        let a = c.accepted(0, 0, 7);
        let b = c.accepted(1, 0, 7);
        c.forwarded(2, a, 0, 1);
        c.arrived(3, a, 1);
        c.delivered(4, a, 1);
        c.delivered(5, a, 1);
        assert_eq!(c.duplicate_deliveries, 1);
        c.forwarded(6, b, 0, 2);
        c.region_crashed(2);
        assert_eq!(c.lost_to_crash, 1);
        let d = c.accepted(7, 0, 8);
        assert_eq!(c.pending(), 1);
        c.finish(9);
        assert_eq!(c.lost, 1);
        assert!(c
            .violations()
            .0
            .iter()
            .any(|v| v.contains(&format!("message {d}"))));
    }

    #[test]
    fn out_of_order_is_counted_not_a_violation() {
        let mut c = Checker::new(true);
        let a = c.accepted(0, 0, 1);
        let b = c.accepted(0, 0, 1);
        c.delivered(1, b, 0);
        c.delivered(2, a, 0);
        assert_eq!(c.out_of_order, 1);
        assert_eq!(c.violations().1, 0);
    }
}
