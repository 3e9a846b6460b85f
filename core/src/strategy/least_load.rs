//! `least-load`: least-shard generalised to shard loads and region capacities, with hard rules
//! (tags, pins, a shard cap per region, draining) and a movement budget.
//!
//! Allocate: among the regions that may take the shard, the one whose utilisation after
//! taking it is lowest; member rules and ties as least-shard (not leaving, then newest app
//! version, then utilisation, then fewest shards, then map order).
//!
//! Rebalance, one round: first the shards that break a rule, each to a region that breaks
//! none; then, while the busiest region is above `(1 + band)` times the fluid optimum, one
//! shard off it whose move strictly lowers the larger of the two utilisations (the largest
//! shard within its excess, else the smallest that helps). Every move counts against
//! least-shard's limit and `maxLoadMoved`.
//!
//! With every load and capacity 1 and no rules it is least-shard, by calling least-shard.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use super::explain::{Candidate, MoveNote, Rejection, MAX_CANDIDATES};
use super::least_shard::{by_age, round_total};
use super::{
    note, AkkaOptions, Allocation, AllocationStrategy, Explanation, InProgress, LeastShard, Skip,
};
use crate::model::{check_budget, utilisation, Amount, CapVec, ClassKey, LoadVec, ShardRule};
use crate::model::{AllocationState, IdKey, IdMap, Region, RegionId, ShardId};
use crate::{Error, Result};

/// Tolerance above the fluid optimum before a region gives shards away.
pub const DEFAULT_BAND: f64 = 0.05;

#[derive(Debug, Clone)]
pub struct LeastLoad {
    /// Its limits bound a round; its decisions stand when loads are uniform.
    least: LeastShard,
    akka: AkkaOptions,
    band: f64,
    max_load_moved: Option<Amount>,
    /// Destinations the last rebalance planned, by shard. Pekko's rebalance only names
    /// shards; allocate places them after the hand-off.
    ///
    /// Keyed by a copy of the id rather than a share of it: a share would take a reference
    /// count on the id, a locked write that stalls on the cold cache line of every shard a
    /// round moves, where reading the bytes to copy lets those misses overlap.
    planned: IdMap<Planned>,
}

/// Where a rebalance sent a shard.
#[derive(Debug, Clone)]
struct Planned {
    from: RegionId,
    to: RegionId,
    /// The destination's slot in the state, where allocate finds it without looking its id
    /// up, as long as the slot still holds it.
    to_slot: usize,
}

impl LeastLoad {
    /// Limits as least-shard; `band` >= 0; `max_load_moved` > 0 per dimension (`None`: no
    /// load budget).
    pub fn new(
        absolute_limit: i32,
        relative_limit: f64,
        band: f64,
        max_load_moved: Option<Amount>,
    ) -> Result<LeastLoad> {
        if !(band.is_finite() && band >= 0.0) {
            return Err(Error::invalid_argument(format!(
                "band must be a finite number >= 0, got {band}"
            )));
        }
        if let Some(b) = &max_load_moved {
            check_budget("maxLoadMoved", b)?;
        }
        Ok(LeastLoad {
            least: LeastShard::new(absolute_limit, relative_limit)?,
            akka: AkkaOptions::default(),
            band,
            max_load_moved,
            planned: IdMap::default(),
        })
    }

    pub fn with_akka_options(mut self, akka: AkkaOptions) -> LeastLoad {
        self.least = self.least.with_akka_options(akka);
        self.akka = akka;
        self
    }

    /// Least-shard's order with utilisation after the move in place of the shard count:
    /// not leaving, newest app version, lowest utilisation, fewest shards, map order.
    fn order(&self, state: &AllocationState, a: &Fit, b: &Fit) -> Ordering {
        let ((la, va), (lb, vb)) = (a.class, b.class);
        la.cmp(&lb)
            .then_with(|| {
                if va.pekko_eq(vb) {
                    Ordering::Equal
                } else {
                    vb.pekko_compare(va).cmp(&0)
                }
            })
            .then(a.after.total_cmp(&b.after))
            .then(a.count.cmp(&b.count))
            .then_with(|| {
                if self.akka.tie_break_by_age {
                    by_age(state, a.region, b.region)
                } else {
                    Ordering::Equal
                }
            })
            .then(a.region.map_position().cmp(&b.region.map_position()))
    }

    /// Whether the class index decides as the full scan would: one load dimension (so the
    /// utilisation after a shard rises with a region's load), no age tie-break, and a
    /// consistent member ranking.
    fn indexed(&self, state: &AllocationState) -> bool {
        state.load_dimensions().names().is_empty()
            && !self.akka.tie_break_by_age
            && state.ranking_is_orderly()
    }

    /// The best region for a shard among `views`, and (when `rejected` is given) why each
    /// other region could not take it.
    fn best<'a>(
        &self,
        state: &AllocationState,
        views: impl Iterator<Item = View<'a>>,
        ask: &Ask,
        mut rejected: Option<&mut Vec<Rejection>>,
    ) -> Option<Fit<'a>> {
        let mut best: Option<Fit> = None;
        for v in views {
            if let Some(why) = refusal(&v, ask) {
                if let Some(out) = rejected.as_deref_mut() {
                    out.push(Rejection {
                        shard: ask.shard.to_string(),
                        region: v.region.id().to_string(),
                        reason: why.to_string(),
                    });
                }
                continue;
            }
            let fit = self.fit(v, ask);
            if best
                .as_ref()
                .is_none_or(|b| self.order(state, &fit, b) == Ordering::Less)
            {
                best = Some(fit);
            }
        }
        best
    }

    /// `v` as a candidate for the shard; `v` must be able to take it (no [`refusal`]).
    fn fit<'a>(&self, v: View<'a>, ask: &Ask) -> Fit<'a> {
        Fit {
            region: v.region,
            class: v.region.member_class().expect("refusal checks the member"),
            after: utilisation(
                v.load,
                Some(ask.load),
                &v.region.profile().capacity,
                ask.width,
            ),
            count: v.count,
        }
    }
}

/// A region as a decision sees it: its load and count, after the moves planned so far.
#[derive(Clone, Copy)]
struct View<'a> {
    region: &'a Region,
    load: &'a LoadVec,
    count: usize,
}

impl<'a> View<'a> {
    fn of(r: &'a Region) -> View<'a> {
        View {
            region: r,
            load: r.load(),
            count: r.shard_count(),
        }
    }
}

/// A region that may take the shard, and its utilisation if it does.
struct Fit<'a> {
    region: &'a Region,
    class: (bool, &'a crate::model::Version),
    after: f64,
    count: usize,
}

/// What is being placed.
#[derive(Clone, Copy)]
struct Ask<'a> {
    shard: &'a str,
    load: &'a LoadVec,
    rule: Option<&'a ShardRule>,
    /// The region the shard leaves: never its destination.
    avoid: Option<&'a str>,
    width: usize,
}

/// Why a region cannot take a shard. Kept as data, since most are checked only as a yes or no;
/// the words are made for an explanation.
enum Refusal<'a> {
    NoMember,
    NotAccepting,
    Draining,
    Pinned(&'a str),
    LacksTags(Vec<&'a str>),
    Full { count: usize, max: usize },
    Leaving,
}

impl fmt::Display for Refusal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NoMember => f.write_str("no known cluster member hosts it"),
            Refusal::NotAccepting => {
                f.write_str("not accepting shards (shutting down or not a candidate)")
            }
            Refusal::Draining => f.write_str("draining"),
            Refusal::Pinned(pin) => write!(f, "the shard is pinned to {pin}"),
            Refusal::LacksTags(missing) => write!(f, "lacks tags {missing:?}"),
            Refusal::Full { count, max } => write!(f, "holds {count} shards, its maximum is {max}"),
            Refusal::Leaving => f.write_str("the shard is leaving it"),
        }
    }
}

/// Why `v` cannot take the shard, if it cannot.
fn refusal<'a>(v: &View<'a>, ask: &Ask<'a>) -> Option<Refusal<'a>> {
    let r = v.region;
    if r.member_class().is_none() {
        return Some(Refusal::NoMember);
    }
    if !r.is_eligible() {
        return Some(Refusal::NotAccepting);
    }
    let p = r.profile();
    if p.draining {
        return Some(Refusal::Draining);
    }
    if let Some(rule) = ask.rule {
        if let Some(pin) = &rule.pin {
            if **pin != **r.id() {
                return Some(Refusal::Pinned(pin));
            }
        }
        let missing: Vec<&str> = rule.missing_tags(p).map(|t| &**t).collect();
        if !missing.is_empty() {
            return Some(Refusal::LacksTags(missing));
        }
    }
    if let Some(max) = p.max_shards {
        if v.count >= max {
            return Some(Refusal::Full {
                count: v.count,
                max,
            });
        }
    }
    if ask.avoid == Some(&**r.id()) {
        return Some(Refusal::Leaving);
    }
    None
}

impl AllocationStrategy for LeastLoad {
    fn name(&self) -> &str {
        "least-load"
    }

    fn drains(&self) -> bool {
        true
    }

    fn allocate(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Allocation> {
        note(&mut explain, |e| {
            *e = Explanation::new("least-load", "allocate")
        });
        let rule = state.shard_rule(shard);
        let width = state.load_dimensions().width();
        let mut avoid = None;
        let planned = self.planned.remove(shard);
        if let Some(Planned { from, to, to_slot }) = &planned {
            // `to` keeps its id's allocation alive, so a region in that slot sharing it is the
            // destination; one removed and added again since is found by its id
            let home = state
                .region_in(*to_slot)
                .filter(|r| Arc::ptr_eq(r.id(), to))
                .or_else(|| state.region(to));
            if let Some(r) = home {
                let ask = Ask {
                    shard,
                    // whether a region refuses a shard does not depend on its load
                    load: &LoadVec::UNIT,
                    rule,
                    avoid: None,
                    width,
                };
                if refusal(&View::of(r), &ask).is_none() {
                    note(&mut explain, |e| {
                        e.summary =
                            format!("region {to}: the destination the last rebalance planned");
                    });
                    return Ok(Allocation::Region(to.clone()));
                }
            }
            avoid = Some(&**from);
        }
        let load = state.shard_load(shard);
        if avoid.is_none() && state.loads_are_uniform() {
            let got = self
                .least
                .allocate(state, requester, shard, explain.as_deref_mut());
            note(&mut explain, |e| {
                e.strategy = "least-load".into();
                e.summary = format!("uniform loads, decided as least-shard: {}", e.summary);
            });
            return got;
        }
        let mut ask = Ask {
            shard,
            load,
            rule,
            avoid,
            width,
        };
        let mut rejected = explain.is_some().then(Vec::new);
        let fast = rejected.is_none() && self.indexed(state);
        let pinned = rule.and_then(|r| r.pin.as_deref());
        let mut pick = match (fast, pinned) {
            (true, Some(pin)) => self.best(
                state,
                state.region(pin).into_iter().map(View::of),
                &ask,
                None,
            ),
            (true, None) => {
                let required = rule.map_or(&[][..], |r| &r.tags[..]);
                let view = |slot| View::of(state.region_in_slot(slot));
                // the heads passed the refusal check already
                let mut best: Option<Fit> = None;
                let heads = state
                    .receiving_classes()
                    .heads(required, |slot| refusal(&view(slot), &ask).is_none());
                for slot in heads {
                    let fit = self.fit(view(slot), &ask);
                    if best
                        .as_ref()
                        .is_none_or(|b| self.order(state, &fit, b) == Ordering::Less)
                    {
                        best = Some(fit);
                    }
                }
                best
            }
            _ => self.best(
                state,
                state.regions().map(View::of),
                &ask,
                rejected.as_mut(),
            ),
        };
        if pick.is_none() && ask.avoid.is_some() {
            // Landing back beats staying unplaced.
            ask.avoid = None;
            pick = self.best(state, state.regions().map(View::of), &ask, None);
        }
        note(&mut explain, |e| {
            let mut ranked: Vec<Fit> = state
                .regions()
                .map(View::of)
                .filter(|v| refusal(v, &ask).is_none())
                .map(|v| Fit {
                    region: v.region,
                    class: v.region.member_class().expect("member"),
                    after: utilisation(v.load, Some(load), &v.region.profile().capacity, width),
                    count: v.count,
                })
                .collect();
            ranked.sort_by(|a, b| self.order(state, a, b));
            e.candidates = ranked
                .iter()
                .take(MAX_CANDIDATES)
                .map(|f| Candidate {
                    utilisation: Some(f.after),
                    ..Candidate::of(state, f.region)
                })
                .collect();
            e.summary = match &pick {
                Some(f) => format!(
                    "region {} ranks first: utilisation {} after taking the shard",
                    f.region.id(),
                    f.after
                ),
                None => "no region may take the shard; retry later".into(),
            };
            if pick.is_none() {
                e.rejected = rejected.take().unwrap_or_default();
            }
        });
        Ok(pick.map_or(Allocation::Pending, |f| {
            Allocation::Region(f.region.id().clone())
        }))
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Vec<ShardId>> {
        if state.loads_are_uniform() {
            self.planned.clear();
            let got = self
                .least
                .rebalance(state, in_progress, explain.as_deref_mut());
            note(&mut explain, |e| {
                e.strategy = "least-load".into();
                e.summary = format!("uniform loads, decided as least-shard: {}", e.summary);
            });
            return got;
        }
        note(&mut explain, |e| {
            *e = Explanation::new("least-load", "rebalance")
        });
        let total = match round_total(state, self.akka, in_progress, &mut explain) {
            Ok(total) => total,
            Err(answer) => return answer,
        };
        self.planned.clear();
        let limit = self.least.limit(total);
        note(&mut explain, |e| e.limit = Some(limit));
        let width = state.load_dimensions().width();
        let mut round = Round {
            state,
            width,
            slots: state
                .slotted_regions()
                .filter(|(_, r)| r.member_class().is_some())
                .map(|(home, r)| Slot {
                    region: r,
                    home,
                    load: r.load().clone(),
                    count: r.shard_count(),
                    class: None,
                    stamp: 0,
                })
                .collect(),
            fixed: HashSet::new(),
            // a shard moves at most once a round, so this bounds the moves; reserved, since
            // regrowing an unlimited round's moves copied them a dozen times over
            moves: Vec::with_capacity(limit.min(state.shard_count())),
            moves_left: limit,
            load_left: self
                .max_load_moved
                .as_ref()
                .map(|b| CapVec::budget(b, state.load_dimensions())),
            closed: false,
            notes: explain.is_some().then(Vec::new),
            rejected: explain.is_some().then(Vec::new),
            classes: None,
        };
        if self.indexed(state) {
            // The state keeps the same classes current; renumbering its index costs no key
            // building, where a fresh index per round cost more than the moves.
            let mut classes = Classes::default();
            for (c, (key, set)) in state.receiving_classes().groups().enumerate() {
                // a move pushes at most two entries: room for the first moves without regrowing
                let mut entries =
                    Vec::with_capacity(set.len() + 2 * round.moves_left.min(set.len()));
                entries.extend(set.iter().map(|e| {
                    let i = round
                        .slot_of(state.region_in_slot(e.3))
                        .expect("a receiving region has a member");
                    round.slots[i].class = Some(c);
                    let key = class_key(e.0 .0, e.1, i);
                    debug_assert_eq!(key, round.class_key(i), "the index is current");
                    Head { key }
                }));
                let rank = match (classes.keys.last(), classes.ranks.last()) {
                    (Some(prev), Some(&r)) if prev.same_member_class(key) => r,
                    (_, Some(&r)) => r + 1,
                    _ => 0,
                };
                classes.keys.push(key);
                classes.ranks.push(rank);
                classes.heaps.push(RefCell::new(entries.into()));
            }
            round.classes = Some(classes);
        }
        let fixed = self.fix_rules(&mut round);
        let (optimum, ceiling, stuck) = self.relieve(&mut round);
        self.planned.reserve(round.moves.len());
        // one pass: the copy of the id for the key brings in its cold cache line, where the
        // reference count of its share in `picked` is
        let mut picked: Vec<ShardId> = Vec::with_capacity(round.moves.len());
        for &(shard, from, to) in &round.moves {
            self.planned.insert(
                IdKey::new(shard),
                Planned {
                    from: round.slots[from].region.id().clone(),
                    to: round.slots[to].region.id().clone(),
                    to_slot: round.slots[to].home,
                },
            );
            picked.push(shard.clone());
        }
        note(&mut explain, |e| {
            e.fluid_optimum = optimum;
            e.band_ceiling = ceiling;
            e.moves = round.notes.take().unwrap_or_default();
            e.rejected = round.rejected.take().unwrap_or_default();
            let band = picked.len() - fixed;
            e.summary = format!(
                "{} move(s): {fixed} for broken rules, {band} toward the band",
                picked.len()
            );
            if picked.is_empty() {
                e.skipped = Some(if stuck { Skip::Stable } else { Skip::Balanced });
                e.summary = if stuck {
                    "above the band, but no single move off the busiest region lowers the maximum"
                        .into()
                } else {
                    "every rule holds and no region is above the band".into()
                };
            }
        });
        Ok(picked)
    }
}

/// One rebalance round: regions with a known member (map order), their loads after the moves
/// planned so far, and the budget left.
struct Round<'s> {
    state: &'s AllocationState,
    width: usize,
    /// In map order.
    slots: Vec<Slot<'s>>,
    /// Shards moved to fix a rule, before any source's list of movable shards is built (a
    /// band move leaves that list itself).
    fixed: HashSet<&'s str>,
    /// (shard, source slot, destination slot), in decision order.
    moves: Vec<(&'s ShardId, usize, usize)>,
    moves_left: usize,
    load_left: Option<CapVec>,
    /// A shard heavier than the load budget moved alone; nothing more this round.
    closed: bool,
    notes: Option<Vec<MoveNote>>,
    rejected: Option<Vec<Rejection>>,
    /// Slots that may receive, by class, when [`LeastLoad::indexed`] holds.
    classes: Option<Classes<'s>>,
}

struct Slot<'s> {
    region: &'s Region,
    /// The region's slot in the state.
    home: usize,
    load: LoadVec,
    count: usize,
    /// Its class in [`Round::classes`], by number.
    class: Option<usize>,
    /// Bumped by every move to or from it: entries in the busiest-first heap made before are
    /// stale.
    stamp: u32,
}

/// The state's class index (`ClassIndex`) over the round's slots, each class a min-heap of
/// [`class_key`]s whose entry ids are slots: the classes in the state's order. A move pushes
/// its two slots' new entries; an entry that is not its slot's current key is dropped when it
/// reaches the top. Most moves take a class's head, so this is cheaper than keeping
/// ordered sets exact.
#[derive(Default)]
struct Classes<'s> {
    keys: Vec<&'s ClassKey>,
    /// By class: its member class's rank, the first (not leaving, newest app version) 0. Keys
    /// order by member class first and, with a ranking [`LeastLoad::indexed`] accepts, as
    /// [`LeastLoad::order`] does, so comparing ranks decides as comparing the members would,
    /// without comparing version strings per candidate.
    ranks: Vec<u32>,
    heaps: Vec<RefCell<ClassHeap>>,
}

/// One class's entries, least on top.
type ClassHeap = BinaryHeap<Head>;

/// A slot's entry in its class heap: its [`class_key`] when made, the least first. The key
/// is its own stamp: it holds the slot's load and count, so an entry equal to the slot's key
/// now is as good as current (a slot back at a load and count it had before ranks where it
/// did then), and one that is not is stale. 16 bytes where a separate stamp made it 32: a
/// plan pushes two entries per move, and a sift moves them.
#[derive(Debug, Clone, Copy)]
struct Head {
    key: u128,
}

impl PartialEq for Head {
    fn eq(&self, other: &Head) -> bool {
        self.key == other.key
    }
}

impl Eq for Head {}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Head) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Head {
    fn cmp(&self, other: &Head) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A slot's entry in its class: (load, shard count, slot), which orders as the state's
/// `ClassEntry` does (slots are in map order), packed into one integer as [`Busy`] is, since
/// every move sifts a class heap.
fn class_key(load: f64, count: usize, slot: usize) -> u128 {
    let count = u32::try_from(count).expect("fewer than 2^32 shards in a region");
    u128::from(total_order_bits(load)) << 64 | u128::from(count) << 32 | u128::from(as_u32(slot))
}

/// The slot of a [`class_key`].
fn class_slot(key: u128) -> usize {
    key as u32 as usize
}

fn as_u32(slot: usize) -> u32 {
    u32::try_from(slot).expect("fewer than 2^32 regions")
}

/// `f64::total_cmp`'s order as an unsigned integer.
fn total_order_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

impl Round<'_> {
    /// Per class whose tags cover `required` (in class order): its first slot that
    /// `accepts`, given to `each`.
    fn heads(
        &self,
        ix: &Classes,
        required: &[Arc<str>],
        accepts: impl Fn(usize) -> bool,
        mut each: impl FnMut(usize),
    ) {
        for (k, heap) in ix.keys.iter().zip(&ix.heaps) {
            if !k.has_tags(required) {
                continue;
            }
            let mut heap = heap.borrow_mut();
            // current entries the shard may not take, put back after
            let mut refused = Vec::new();
            while let Some(&Head { key }) = heap.peek() {
                let i = class_slot(key);
                if key != self.class_key(i) {
                    heap.pop();
                } else if accepts(i) {
                    each(i);
                    break;
                } else {
                    refused.extend(heap.pop());
                }
            }
            if !refused.is_empty() {
                // rebuilding costs even when nothing comes back
                heap.extend(refused);
            }
        }
    }
}

impl<'s> Round<'s> {
    /// The best slot for a shard leaving slot `from` (`ask.avoid` is its region), see
    /// [`LeastLoad::best`]; through the class index when there is one and no reasons are
    /// wanted.
    fn best(
        &self,
        strategy: &LeastLoad,
        ask: &Ask,
        from: usize,
        rejected: Option<&mut Vec<Rejection>>,
    ) -> Option<(usize, f64)> {
        let Some(ix) = self.classes.as_ref().filter(|_| rejected.is_none()) else {
            let fit = strategy.best(self.state, self.views(), ask, rejected);
            return fit.map(|f| (self.slot_of(f.region).expect("a slot's region"), f.after));
        };
        debug_assert_eq!(ask.avoid, Some(&**self.slots[from].region.id()));
        // Every candidate has a class, so `LeastLoad::order` reduces to (member class rank,
        // utilisation after, shard count, slot): slots are in map order, and `indexed` rules
        // out the age tie-break. Numbers, where `order` compares version strings.
        let mut best: Option<(u32, f64, usize, usize)> = None;
        let mut consider = |i: usize| {
            let s = &self.slots[i];
            let cap = &s.region.profile().capacity;
            let fit = (
                // a class head always has a class; a pinned slot is the only candidate
                s.class.map_or(0, |c| ix.ranks[c]),
                utilisation(&s.load, Some(ask.load), cap, self.width),
                s.count,
                i,
            );
            let beats = |b: &(u32, f64, usize, usize)| {
                (fit.0.cmp(&b.0))
                    .then(fit.1.total_cmp(&b.1))
                    .then(fit.2.cmp(&b.2))
                    .then(fit.3.cmp(&b.3))
                    == Ordering::Less
            };
            if let Some(b) = &best {
                debug_assert_eq!(
                    beats(b),
                    strategy.order(
                        self.state,
                        &strategy.fit(self.view(i), ask),
                        &strategy.fit(self.view(b.3), ask)
                    ) == Ordering::Less,
                    "ranked comparison of slots {i} and {} departs from LeastLoad::order",
                    b.3
                );
            }
            if best.as_ref().is_none_or(beats) {
                best = Some(fit);
            }
        };
        // the same refusal, with the slot compared in place of the region's id
        let elsewhere = Ask {
            avoid: None,
            ..*ask
        };
        let accepts = |i: usize| i != from && refusal(&self.view(i), &elsewhere).is_none();
        match ask.rule.and_then(|r| r.pin.as_deref()) {
            Some(pin) => {
                let pinned = self.state.region(pin).and_then(|r| self.slot_of(r));
                if let Some(i) = pinned.filter(|&i| accepts(i)) {
                    consider(i);
                }
            }
            None => {
                let required = ask.rule.map_or(&[][..], |r| &r.tags[..]);
                // A class's slot has a member, is eligible, is not draining and has the tags:
                // of the refusals only the shard cap and the source are left.
                let takes = |i: usize| {
                    let s = &self.slots[i];
                    let takes =
                        i != from && s.region.profile().max_shards.is_none_or(|m| s.count < m);
                    debug_assert_eq!(takes, accepts(i));
                    takes
                };
                self.heads(ix, required, takes, &mut consider);
            }
        }
        best.map(|(_, after, _, i)| (i, after))
    }

    /// Slot `i`'s [`class_key`] now.
    fn class_key(&self, i: usize) -> u128 {
        let s = &self.slots[i];
        class_key(s.load.get(0), s.count, i)
    }

    /// The slot of a region with a known member.
    fn slot_of(&self, r: &Region) -> Option<usize> {
        self.slots
            .binary_search_by_key(&r.map_position(), |s| s.region.map_position())
            .ok()
    }

    fn view(&self, i: usize) -> View<'_> {
        let s = &self.slots[i];
        View {
            region: s.region,
            load: &s.load,
            count: s.count,
        }
    }

    fn util(&self, i: usize) -> f64 {
        let s = &self.slots[i];
        utilisation(&s.load, None, &s.region.profile().capacity, self.width)
    }

    fn views(&self) -> impl Iterator<Item = View<'_>> + '_ {
        self.slots.iter().map(|s| View {
            region: s.region,
            load: &s.load,
            count: s.count,
        })
    }

    fn spent(&self) -> bool {
        self.moves_left == 0 || self.closed
    }

    /// May `load` move now? A shard heavier than the load budget may move alone.
    fn fits(&self, load: &LoadVec) -> bool {
        !self.spent()
            && self
                .load_left
                .as_ref()
                .is_none_or(|b| b.holds(load, self.width) || self.moves.is_empty())
    }

    fn apply(
        &mut self,
        shard: &'s ShardId,
        load: &LoadVec,
        from: usize,
        to: usize,
        trigger: &'static str,
    ) {
        let before = self
            .notes
            .is_some()
            .then(|| (self.util(from), self.util(to)));
        self.slots[from].load.sub(load);
        self.slots[from].count -= 1;
        self.slots[to].load.add(load);
        self.slots[to].count += 1;
        for i in [from, to] {
            let s = &mut self.slots[i];
            s.stamp += 1;
            if let (Some(ix), Some(c)) = (self.classes.as_mut(), s.class) {
                let new = Head {
                    key: class_key(s.load.get(0), s.count, i),
                };
                let heap = ix.heaps[c].get_mut();
                // a destination was usually its class's head: its entry is replaced in place
                if heap.peek().is_some_and(|top| class_slot(top.key) == i) {
                    *heap.peek_mut().expect("a head") = new;
                } else {
                    heap.push(new);
                }
            }
        }
        self.moves_left -= 1;
        if let Some(b) = self.load_left.as_mut() {
            if b.holds(load, self.width) {
                b.take(load, self.width);
            } else {
                self.closed = true;
            }
        }
        if let Some((fb, tb)) = before {
            let note = MoveNote {
                shard: shard.to_string(),
                from: self.slots[from].region.id().to_string(),
                to: self.slots[to].region.id().to_string(),
                trigger: trigger.to_owned(),
                from_before: fb,
                from_after: self.util(from),
                to_before: tb,
                to_after: self.util(to),
                moves_left: if self.closed { 0 } else { self.moves_left },
                load_left: self.load_left.as_ref().map(|b| {
                    if self.closed {
                        0.0
                    } else {
                        b.least(self.width)
                    }
                }),
            };
            if let Some(notes) = self.notes.as_mut() {
                notes.push(note);
            }
        }
        if trigger != "band" {
            self.fixed.insert(&**shard);
        }
        self.moves.push((shard, from, to));
    }
}

impl LeastLoad {
    /// Moves shards that break a rule, oldest first by region in map order; each goes only
    /// where it breaks none. Returns how many moved.
    fn fix_rules(&self, round: &mut Round) -> usize {
        let state = round.state;
        // (region slot, allocation sequence, shard, rule broken)
        let mut broken: Vec<(usize, u64, &ShardId, &'static str)> = Vec::new();
        let mut listed: HashSet<&str> = HashSet::new();
        for (i, s) in round.slots.iter().enumerate() {
            if s.region.profile().draining {
                for sh in s.region.shards() {
                    broken.push((i, seq(state, sh), sh, "draining"));
                    listed.insert(sh);
                }
            }
        }
        for (sh, rule) in state.shard_rules() {
            let Some(home) = state.home_of(sh) else {
                continue;
            };
            let Some(i) = round.slot_of(home) else {
                continue;
            };
            if listed.contains(&**sh) {
                continue;
            }
            let trigger = match &rule.pin {
                Some(pin) if **pin != **home.id() => "off-pin",
                _ if rule.missing_tags(home.profile()).next().is_some() => "missing-tags",
                _ => continue,
            };
            broken.push((i, seq(state, sh), sh, trigger));
            listed.insert(sh);
        }
        for (i, s) in round.slots.iter().enumerate() {
            let Some(max) = s.region.profile().max_shards else {
                continue;
            };
            let already = broken.iter().filter(|b| b.0 == i).count();
            let excess = s.count.saturating_sub(max).saturating_sub(already);
            for sh in s
                .region
                .shards()
                .filter(|sh| !listed.contains(&***sh))
                .take(excess)
            {
                broken.push((i, seq(state, sh), sh, "above-max-shards"));
            }
        }
        broken.sort_by(|a, b| {
            let pos = |i: usize| round.slots[i].region.map_position();
            pos(a.0).cmp(&pos(b.0)).then(a.1.cmp(&b.1))
        });
        let before = round.moves.len();
        for (from, _, shard, trigger) in broken {
            if round.spent() {
                break;
            }
            let load = state.shard_load(shard);
            if !round.fits(load) {
                continue;
            }
            let ask = Ask {
                shard,
                load,
                rule: state.shard_rule(shard),
                avoid: Some(&**round.slots[from].region.id()),
                width: round.width,
            };
            let mut rejected = round.rejected.take();
            let pick = round
                .best(self, &ask, from, rejected.as_mut())
                .map(|(i, _)| i);
            if pick.is_some() {
                // keep the reasons only for shards that stay put
                if let Some(r) = rejected.as_mut() {
                    r.retain(|x| *x.shard != **shard);
                }
            }
            round.rejected = rejected;
            if let Some(to) = pick {
                round.apply(shard, load, from, to, trigger);
            }
        }
        round.moves.len() - before
    }

    /// Moves shards off the busiest region while it is above the band and a single move
    /// helps. Returns the fluid optimum, the band ceiling, and whether it stopped above the
    /// band for want of a helpful move.
    fn relieve(&self, round: &mut Round) -> (Option<f64>, Option<f64>, bool) {
        let state = round.state;
        let width = round.width;
        let live: Vec<usize> = (0..round.slots.len())
            .filter(|&i| {
                let r = round.slots[i].region;
                r.is_eligible() && !r.profile().draining
            })
            .collect();
        if live.is_empty() {
            return (None, None, false);
        }
        let optimum = (0..width)
            .map(|d| {
                let load: f64 = round.slots.iter().map(|s| s.load.get(d)).sum();
                let cap: f64 = live
                    .iter()
                    .map(|&i| round.slots[i].region.profile().capacity.get(d))
                    .sum();
                if cap.is_infinite() {
                    0.0
                } else {
                    load / cap
                }
            })
            .fold(0.0, f64::max);
        let ceiling = (1.0 + self.band) * optimum;
        // The busiest slot first (then map order). A move re-enters its two slots under their
        // new stamps (see [`Slot::stamp`]); an entry whose stamp is not its slot's current one
        // is dropped when it comes up.
        let entry = |round: &Round, i: usize| Busy::new(round.util(i), i, round.slots[i].stamp);
        // a move re-enters two slots: room for the first moves without regrowing
        let mut busiest =
            BinaryHeap::with_capacity(live.len() + 2 * round.moves_left.min(live.len()));
        busiest.extend(live.iter().map(|&i| entry(round, i)));
        // per source slot: its movable shards, largest first, then oldest; double-ended, since
        // most leave from near the front (the largest) or the back (the smallest)
        let mut lists: Vec<Option<VecDeque<Movable>>> = vec![None; round.slots.len()];
        // per source slot: where its list divided at the excess of its last look
        let mut splits: Vec<usize> = vec![0; round.slots.len()];
        let mut stuck = false;
        // pinned shards stay on their pin
        let ruled = state.shard_rules().next().is_some();
        while !round.spent() {
            let Some((top, s, stamp)) = busiest.peek().map(|b| b.parts()) else {
                break;
            };
            if stamp != round.slots[s].stamp {
                busiest.pop();
                continue;
            }
            if top <= ceiling {
                break;
            }
            let cap = &round.slots[s].region.profile().capacity;
            let list = lists[s].get_or_insert_with(|| {
                let region = round.slots[s].region;
                let mut v: Vec<Movable> = Vec::with_capacity(region.shard_count());
                let mut list = |i, load| {
                    let size = utilisation(load, None, cap, width);
                    // moving a weightless shard helps nobody
                    if size > 0.0 {
                        v.push(Movable::new(size, i));
                    }
                };
                let fixed = !round.fixed.is_empty();
                if fixed || ruled {
                    for (i, sh, load) in region.shards_indexed() {
                        if fixed && round.fixed.contains(&**sh) {
                            continue;
                        }
                        if ruled
                            && state
                                .shard_rule(sh)
                                .and_then(|r| r.pin.as_ref())
                                .is_some_and(|p| **p == **region.id())
                        {
                            continue;
                        }
                        list(i, load);
                    }
                } else {
                    // nothing to leave out by id: the ids are not read
                    for (i, load) in region.loads_indexed() {
                        list(i, load);
                    }
                }
                // indexes are distinct, so an unstable sort is exact
                v.sort_unstable();
                v.into()
            });
            let excess = top - ceiling;
            let mut over_budget = false;
            let within = divide(list, splits[s], excess);
            splits[s] = within;
            // the largest shard within the excess first, then the smallest beyond it (oldest
            // first among equals)
            // built only when nothing within the excess helps
            let beyond = || {
                let mut v: Vec<usize> = (0..within).collect();
                v.sort_by(|&x, &y| {
                    list[x]
                        .size()
                        .total_cmp(&list[y].size())
                        .then(list[x].index().cmp(&list[y].index()))
                });
                v
            };
            // A move helps when both ends finish below `top`; `None` when it does not fit the
            // budget.
            let source = round.slots[s].region;
            let movable = |k: usize| source.shard_by_index(list[k].index()).expect("listed");
            let helps = |k: usize| -> Option<Option<usize>> {
                let (shard, load) = movable(k);
                if !round.fits(load) {
                    return None;
                }
                let ask = Ask {
                    shard,
                    load,
                    rule: state.shard_rule(shard),
                    avoid: Some(&**round.slots[s].region.id()),
                    width,
                };
                let mut left = round.slots[s].load.clone();
                left.sub(load);
                let source_after = utilisation(&left, None, cap, width);
                Some(
                    round
                        .best(self, &ask, s, None)
                        .filter(|&(_, after)| source_after.max(after) < top)
                        .map(|(d, _)| d),
                )
            };
            let mut chosen = None;
            if !ruled && round.classes.is_some() {
                // One dimension and no per-shard rules: whether a shard fits and helps only
                // gets likelier as shards get lighter, so search instead of walking.
                // the destination of the last shard found to help
                let mut found = None;
                let mut ok = |k: usize| match helps(k) {
                    Some(Some(d)) => {
                        found = Some((k, d));
                        true
                    }
                    _ => false,
                };
                // usually the first shard within the excess helps
                let (mut lo, mut hi) = (within, list.len());
                if lo < hi && ok(lo) {
                    hi = lo;
                }
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if ok(mid) {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                // the search ends on the last shard it found to help, when it found one
                let k = if lo < list.len() {
                    Some(lo)
                } else if within > 0 {
                    // the smallest beyond the excess, oldest first among equals
                    let mut j = within - 1;
                    while j > 0 && list[j - 1].size() == list[within - 1].size() {
                        j -= 1;
                    }
                    Some(j)
                } else {
                    None
                };
                let known = found
                    .filter(|&(f, _)| Some(f) == k)
                    .map(|(_, d)| Some(Some(d)));
                match k.map(|k| (k, known.unwrap_or_else(|| helps(k)))) {
                    Some((k, Some(Some(d)))) => chosen = Some((k, d)),
                    Some((_, None)) => over_budget = true,
                    _ => {}
                }
            } else {
                for k in (within..list.len()).chain(std::iter::once_with(beyond).flatten()) {
                    match helps(k) {
                        None => over_budget = true,
                        Some(Some(d)) => {
                            chosen = Some((k, d));
                            break;
                        }
                        Some(None) => {}
                    }
                }
            }
            let Some((k, d)) = chosen else {
                stuck = !over_budget;
                break;
            };
            let (shard, load) = movable(k);
            list.remove(k);
            if k < splits[s] {
                splits[s] -= 1;
            }
            round.apply(shard, load, s, d, "band");
            // the source's old entry is still on top
            *busiest.peek_mut().expect("the source's entry") = entry(round, s);
            busiest.push(entry(round, d));
        }
        (Some(optimum), Some(ceiling), stuck)
    }
}

/// Where `list` (largest first) divides into the shards beyond `excess` and those within it,
/// as `partition_point` finds it, walking from `from`, where the last look divided it.
/// Between looks a source's excess only shrinks (unless it took a shard) and shards only
/// leave, so over a round the walks add up to about one pass over the list, where a binary
/// search per look missed the cache at most of its steps.
fn divide(list: &VecDeque<Movable>, from: usize, excess: f64) -> usize {
    let mut i = from.min(list.len());
    while i < list.len() && list[i].size() > excess {
        i += 1;
    }
    while i > 0 && list[i - 1].size() <= excess {
        i -= 1;
    }
    debug_assert_eq!(i, list.partition_point(|x| x.size() > excess));
    i
}

/// A shard a region may give away: the utilisation it adds there and its index in the
/// region's [`Region::shards_indexed`] (which orders as age does), packed into one integer
/// that orders largest first, then oldest, since sorting a source's list is most of what
/// building it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Movable(u128);

impl Movable {
    /// `size` must be positive, where its bits order as the number does.
    fn new(size: f64, index: u32) -> Movable {
        Movable(u128::from(!size.to_bits()) << 64 | u128::from(index))
    }

    fn size(self) -> f64 {
        f64::from_bits(!((self.0 >> 64) as u64))
    }

    fn index(self) -> u32 {
        self.0 as u32
    }
}

fn seq(state: &AllocationState, shard: &str) -> u64 {
    state.shard_sequence(shard).expect("allocated shard")
}

/// A slot in the busiest-first heap: (utilisation, then earlier in map order, which slot
/// order is) and its stamp, packed into one integer that orders as that tuple does, since
/// every move sifts the heap twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Busy(u128);

impl Busy {
    fn new(util: f64, slot: usize, stamp: u32) -> Busy {
        let key = total_order_bits(util);
        Busy(u128::from(key) << 64 | u128::from(u32::MAX - as_u32(slot)) << 32 | u128::from(stamp))
    }

    /// (utilisation, slot, stamp)
    fn parts(self) -> (f64, usize, u32) {
        let key = (self.0 >> 64) as u64;
        let b = if key >> 63 == 1 {
            key & !(1 << 63)
        } else {
            !key
        };
        let slot = u32::MAX - (self.0 >> 32) as u32;
        (f64::from_bits(b), slot as usize, self.0 as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn movables_order_largest_first_then_oldest_and_unpack_to_what_was_packed() {
        let sizes = [1e-300, 1e-9, 0.25, 0.5, 1.0, 3.0, f64::INFINITY];
        let mut all = Vec::new();
        for &size in &sizes {
            for index in [0u32, 1, 9, u32::MAX] {
                let m = Movable::new(size, index);
                assert_eq!((m.size().to_bits(), m.index()), (size.to_bits(), index));
                all.push((m, size, index));
            }
        }
        for (a, sa, ia) in &all {
            for (b, sb, ib) in &all {
                let want = sb.total_cmp(sa).then(ia.cmp(ib));
                assert_eq!(a.cmp(b), want, "{sa} {ia} vs {sb} {ib}");
            }
        }
    }

    #[test]
    fn class_keys_order_as_load_then_count_then_slot() {
        let loads = [-1e-17, -0.0, 0.0, 0.5, 2.0, f64::INFINITY];
        let mut all = Vec::new();
        for &load in &loads {
            for count in [0usize, 1, 1 << 20] {
                for slot in [0usize, 3, 999] {
                    let key = class_key(load, count, slot);
                    assert_eq!(class_slot(key), slot);
                    all.push((key, load, count, slot));
                }
            }
        }
        for (a, la, ca, sa) in &all {
            for (b, lb, cb, sb) in &all {
                let want = la.total_cmp(lb).then(ca.cmp(cb)).then(sa.cmp(sb));
                assert_eq!(a.cmp(b), want, "{la} {ca} {sa} vs {lb} {cb} {sb}");
            }
        }
    }

    #[test]
    fn busy_orders_as_utilisation_then_map_order_and_unpacks_to_what_was_packed() {
        let utils = [-1e-17, -0.0, 0.0, 1e-300, 0.5, 1.0, 2.5, f64::INFINITY];
        let mut all = Vec::new();
        for &u in &utils {
            for slot in [0usize, 1, 7, 999] {
                for stamp in [0u32, 3] {
                    let b = Busy::new(u, slot, stamp);
                    let (pu, ps, pt) = b.parts();
                    assert_eq!((pu.to_bits(), ps, pt), (u.to_bits(), slot, stamp));
                    all.push((b, u, slot, stamp));
                }
            }
        }
        for (a, ua, sa, ta) in &all {
            for (b, ub, sb, tb) in &all {
                let want = ua.total_cmp(ub).then(sb.cmp(sa)).then(ta.cmp(tb));
                assert_eq!(a.cmp(b), want, "{ua} {sa} {ta} vs {ub} {sb} {tb}");
            }
        }
    }
}
