//! Load and capacity, what `least-load` balances.
//!
//! A shard carries a load: one number, or a number per dimension (cpu, memory, ...). A region
//! carries a capacity in the same terms, tags, an optional cap on its shard count and a
//! draining flag. A shard may require tags or be pinned to one region. A region's
//! utilisation is the maximum over dimensions of its summed load over its capacity.
//!
//! [`AllocationState`](crate::model::AllocationState) keeps all of this beside the shard
//! map and re-sums a region's load as shards come and go, so a host that learns new loads
//! (reported by regions, or measured) updates them in place and the next decision sees them.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::RegionId;
use crate::model::{Version, VersionKey};
use crate::{Error, Result};

/// A load, capacity or budget as given: one number for every dimension, or a number per
/// named dimension.
///
/// In a load map a missing dimension is 0; in a capacity or budget map it is unbounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Amount {
    Uniform(f64),
    PerDimension(BTreeMap<String, f64>),
}

// Amounts travel in protocol messages and stored events, which compare and (for the model
// checker) hash. Every amount that gets there has passed `check`, so no NaN breaks `Eq`.
impl Eq for Amount {}

impl std::hash::Hash for Amount {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // `+ 0.0` makes -0.0 hash as 0.0, which it equals.
        let bits = |v: f64| (v + 0.0).to_bits();
        match self {
            Amount::Uniform(v) => bits(*v).hash(h),
            Amount::PerDimension(m) => {
                for (k, v) in m {
                    k.hash(h);
                    bits(*v).hash(h);
                }
            }
        }
    }
}

impl Amount {
    /// Checks a load: finite and >= 0 in every dimension, dimension names not empty.
    pub fn check_load(&self, what: &str) -> Result<()> {
        self.check(what, false)
    }

    /// Checks a capacity: finite and > 0 in every dimension, dimension names not empty.
    pub fn check_capacity(&self, what: &str) -> Result<()> {
        self.check(what, true)
    }

    fn check(&self, what: &str, positive: bool) -> Result<()> {
        let bad = |v: f64| !v.is_finite() || v < 0.0 || (positive && v == 0.0);
        let expected = if positive {
            "a finite number > 0"
        } else {
            "a finite number >= 0"
        };
        match self {
            Amount::Uniform(v) if bad(*v) => Err(Error::invalid_argument(format!(
                "{what}: expected {expected}, got {v}"
            ))),
            Amount::PerDimension(m) => {
                for (k, v) in m {
                    if k.is_empty() {
                        return Err(Error::invalid_argument(format!(
                            "{what}: a dimension name is empty"
                        )));
                    }
                    if bad(*v) {
                        return Err(Error::invalid_argument(format!(
                            "{what}.{k}: expected {expected}, got {v}"
                        )));
                    }
                }
                Ok(())
            }
            Amount::Uniform(_) => Ok(()),
        }
    }
}

/// Dimension names, numbered in the order they were first seen.
#[derive(Debug, Default, Clone)]
pub struct Dimensions {
    names: Vec<Arc<str>>,
    index: HashMap<Arc<str>, usize>,
}

impl Dimensions {
    pub fn names(&self) -> &[Arc<str>] {
        &self.names
    }
    /// How many values a utilisation looks at: one when no dimension is named.
    pub fn width(&self) -> usize {
        self.names.len().max(1)
    }
    fn id(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let name: Arc<str> = Arc::from(name);
        self.names.push(name.clone());
        self.index.insert(name, self.names.len() - 1);
        self.names.len() - 1
    }
}

/// A load in dense form: `base` in every dimension plus `extra[d]` in dimension `d`.
/// `extra` is an optional boxed slice, not a `Vec`: every placed shard holds one, almost
/// always empty, and a `Vec`'s capacity word would cost 8 bytes a shard.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadVec {
    base: f64,
    extra: Option<Box<[f64]>>,
}

impl LoadVec {
    /// The load of a shard nobody reported: 1 in every dimension.
    pub const UNIT: LoadVec = LoadVec {
        base: 1.0,
        extra: None,
    };

    fn extra(&self) -> &[f64] {
        self.extra.as_deref().unwrap_or_default()
    }

    #[inline]
    pub fn get(&self, d: usize) -> f64 {
        self.base + self.extra().get(d).copied().unwrap_or(0.0)
    }

    pub fn is_unit(&self) -> bool {
        self.base == 1.0 && self.extra().iter().all(|&e| e == 0.0)
    }

    #[inline]
    pub fn add(&mut self, other: &LoadVec) {
        self.base += other.base;
        if let Some(extra) = &other.extra {
            self.widen(extra.len());
            for (a, b) in self.extra.iter_mut().flatten().zip(extra.iter()) {
                *a += b;
            }
        }
    }

    #[inline]
    pub fn sub(&mut self, other: &LoadVec) {
        self.base -= other.base;
        if let Some(extra) = &other.extra {
            self.widen(extra.len());
            for (a, b) in self.extra.iter_mut().flatten().zip(extra.iter()) {
                *a -= b;
            }
        }
    }

    fn widen(&mut self, dims: usize) {
        if self.extra().len() < dims {
            let mut extra = self.extra.take().map(Vec::from).unwrap_or_default();
            extra.resize(dims, 0.0);
            self.extra = Some(extra.into_boxed_slice());
        }
    }

    pub(crate) fn resolve(amount: &Amount, dims: &mut Dimensions) -> LoadVec {
        match amount {
            Amount::Uniform(v) => LoadVec {
                base: *v,
                extra: None,
            },
            Amount::PerDimension(m) => {
                let mut extra = Vec::new();
                for (k, v) in m {
                    let d = dims.id(k);
                    if extra.len() <= d {
                        extra.resize(d + 1, 0.0);
                    }
                    extra[d] = *v;
                }
                LoadVec {
                    base: 0.0,
                    extra: (!extra.is_empty()).then(|| extra.into_boxed_slice()),
                }
            }
        }
    }
}

/// A capacity (or budget) in dense form: `per[d]` in dimension `d`, `rest` beyond.
#[derive(Debug, Clone, PartialEq)]
pub struct CapVec {
    per: Vec<f64>,
    rest: f64,
}

impl Default for CapVec {
    fn default() -> Self {
        CapVec::UNIT
    }
}

impl CapVec {
    pub const UNIT: CapVec = CapVec {
        per: Vec::new(),
        rest: 1.0,
    };

    #[inline]
    pub fn get(&self, d: usize) -> f64 {
        self.per.get(d).copied().unwrap_or(self.rest)
    }

    pub fn is_unit(&self) -> bool {
        *self == CapVec::UNIT
    }

    pub(crate) fn resolve(amount: &Amount, dims: &mut Dimensions) -> CapVec {
        match amount {
            Amount::Uniform(v) => CapVec {
                per: Vec::new(),
                rest: *v,
            },
            Amount::PerDimension(m) => {
                let mut per = Vec::new();
                for (k, v) in m {
                    let d = dims.id(k);
                    if per.len() <= d {
                        per.resize(d + 1, f64::INFINITY);
                    }
                    per[d] = *v;
                }
                CapVec {
                    per,
                    rest: f64::INFINITY,
                }
            }
        }
    }

    /// A budget over the state's dimensions; a dimension no load uses cannot bind, so names
    /// the state has never seen are left out.
    pub(crate) fn budget(amount: &Amount, dims: &Dimensions) -> CapVec {
        match amount {
            Amount::Uniform(v) => CapVec {
                per: Vec::new(),
                rest: *v,
            },
            Amount::PerDimension(m) => {
                let mut per = vec![f64::INFINITY; dims.names.len()];
                for (k, v) in m {
                    if let Some(&d) = dims.index.get(k.as_str()) {
                        per[d] = *v;
                    }
                }
                CapVec {
                    per,
                    rest: f64::INFINITY,
                }
            }
        }
    }

    /// Spends `load` from a budget.
    pub(crate) fn take(&mut self, load: &LoadVec, width: usize) {
        if self.per.len() < width {
            self.per.resize(width, self.rest);
        }
        for d in 0..width {
            self.per[d] -= load.get(d);
        }
    }

    pub(crate) fn holds(&self, load: &LoadVec, width: usize) -> bool {
        (0..width).all(|d| load.get(d) <= self.get(d))
    }

    /// The least room left over the dimensions (for explanations).
    pub(crate) fn least(&self, width: usize) -> f64 {
        (0..width)
            .map(|d| self.get(d))
            .fold(f64::INFINITY, f64::min)
    }
}

/// Utilisation of `load` (plus `extra`, when given) on `capacity`: the maximum over the
/// `width` dimensions of load over capacity.
#[inline]
pub fn utilisation(
    load: &LoadVec,
    extra: Option<&LoadVec>,
    capacity: &CapVec,
    width: usize,
) -> f64 {
    if width == 1 {
        // the one-dimension case, which every round computes per shard and candidate, without
        // the loop (the same value: the loop's maximum starts at 0)
        let l = load.get(0) + extra.map_or(0.0, |e| e.get(0));
        let c = capacity.get(0);
        let x = if c.is_infinite() { 0.0 } else { l / c };
        return if x > 0.0 { x } else { 0.0 };
    }
    let mut u = 0.0f64;
    for d in 0..width {
        let l = load.get(d) + extra.map_or(0.0, |e| e.get(d));
        let c = capacity.get(d);
        let x = if c.is_infinite() { 0.0 } else { l / c };
        if x > u {
            u = x;
        }
    }
    u
}

/// What a region offers beyond its shard count.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RegionProfile {
    pub capacity: CapVec,
    pub tags: BTreeSet<Arc<str>>,
    pub max_shards: Option<usize>,
    pub draining: bool,
}

impl RegionProfile {
    pub fn is_default(&self) -> bool {
        self.capacity.is_unit()
            && self.tags.is_empty()
            && self.max_shards.is_none()
            && !self.draining
    }
}

/// Where a shard may live.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShardRule {
    /// Tags its region must have, sorted.
    pub tags: Vec<Arc<str>>,
    /// The only region it may live on.
    pub pin: Option<RegionId>,
}

impl ShardRule {
    pub fn new<'a>(tags: impl IntoIterator<Item = &'a str>, pin: Option<&str>) -> ShardRule {
        let mut tags: Vec<Arc<str>> = tags.into_iter().map(Arc::from).collect();
        tags.sort();
        tags.dedup();
        ShardRule {
            tags,
            pin: pin.map(Arc::from),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.pin.is_none()
    }
    /// The tags `profile` lacks.
    pub fn missing_tags<'a>(
        &'a self,
        profile: &'a RegionProfile,
    ) -> impl Iterator<Item = &'a Arc<str>> {
        self.tags.iter().filter(|t| !profile.tags.contains(*t))
    }
}

/// A map keyed by shard id: rounds look shards up by the thousand, so a fast hash (keys are
/// still seeded per map, so iteration order decides nothing).
pub(crate) type ShardMap<V> = HashMap<Arc<str>, V, foldhash::fast::RandomState>;

/// Loads, capacities and rules, kept by the allocation state.
#[derive(Debug, Default)]
#[cfg_attr(feature = "model-check", derive(Clone))]
pub(crate) struct LoadBook {
    pub(crate) dims: Dimensions,
    /// Loads other than the unit load.
    pub(crate) shard_loads: ShardMap<LoadVec>,
    pub(crate) rules: ShardMap<ShardRule>,
    /// Regions whose profile is not the default.
    pub(crate) custom_regions: usize,
    /// Bumped by every change of `shard_loads`: a shard taken off its region carries its load
    /// only while this stands (see `AllocationState::place_taken`).
    pub(crate) loads_gen: u64,
}

impl LoadBook {
    pub(crate) fn load_of(&self, shard: &str) -> &LoadVec {
        static UNIT: LoadVec = LoadVec::UNIT;
        self.shard_loads.get(shard).unwrap_or(&UNIT)
    }

    pub(crate) fn resolve_load(&mut self, what: &str, amount: &Amount) -> Result<LoadVec> {
        amount.check(what, false)?;
        Ok(LoadVec::resolve(amount, &mut self.dims))
    }

    pub(crate) fn resolve_capacity(&mut self, what: &str, amount: &Amount) -> Result<CapVec> {
        amount.check(what, true)?;
        Ok(CapVec::resolve(amount, &mut self.dims))
    }

    pub(crate) fn is_uniform(&self) -> bool {
        self.shard_loads.is_empty() && self.rules.is_empty() && self.custom_regions == 0
    }
}

/// Checks a budget such as `maxLoadMoved` and resolves it against the state's dimensions.
pub fn check_budget(what: &str, amount: &Amount) -> Result<()> {
    amount.check(what, true)
}

/// Regions that receive shards alike: same member class (leaving, app version), capacity and
/// tags. Within a class, with one load dimension, the utilisation after taking a shard rises
/// with the region's load, so the class's first region by (load, shards, map order) is its
/// best; a placement compares only those heads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ClassKey {
    leaving: bool,
    version: Reverse<VersionKey>,
    capacity: Vec<u64>,
    tags: Vec<Arc<str>>,
}

impl ClassKey {
    pub(crate) fn new(
        leaving: bool,
        version: &Version,
        capacity: &CapVec,
        tags: &BTreeSet<Arc<str>>,
    ) -> ClassKey {
        let mut bits: Vec<u64> = capacity.per.iter().map(|c| c.to_bits()).collect();
        bits.push(capacity.rest.to_bits());
        ClassKey {
            leaving,
            version: Reverse(version.sort_key()),
            capacity: bits,
            tags: tags.iter().cloned().collect(),
        }
    }
    /// Whether both classes' regions have the same member class (leaving, app version): keys
    /// order by that first, so equal member classes are adjacent.
    pub(crate) fn same_member_class(&self, other: &ClassKey) -> bool {
        self.leaving == other.leaving && self.version == other.version
    }
    #[inline]
    pub(crate) fn has_tags(&self, required: &[Arc<str>]) -> bool {
        required.iter().all(|t| self.tags.binary_search(t).is_ok())
    }
}

/// (load, shard count, map position, id) of one region in its class.
pub(crate) type ClassEntry = (Ordered, usize, u64, usize);

/// Regions that may receive shards, grouped by [`ClassKey`].
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct ClassIndex {
    classes: BTreeMap<ClassKey, BTreeSet<ClassEntry>>,
}

impl ClassIndex {
    pub(crate) fn insert(&mut self, class: ClassKey, entry: ClassEntry) {
        self.classes.entry(class).or_default().insert(entry);
    }
    pub(crate) fn remove(&mut self, class: &ClassKey, entry: &ClassEntry) {
        if let Some(set) = self.classes.get_mut(class) {
            set.remove(entry);
            if set.is_empty() {
                self.classes.remove(class);
            }
        }
    }
    pub(crate) fn replace(&mut self, class: &ClassKey, old: &ClassEntry, new: ClassEntry) {
        if let Some(set) = self.classes.get_mut(class) {
            set.remove(old);
            set.insert(new);
        }
    }
    /// How many entries, over every class.
    pub(crate) fn len(&self) -> usize {
        self.classes.values().map(BTreeSet::len).sum()
    }
    /// Replaces every entry `e` by `remake(e)`, each staying in its class.
    pub(crate) fn rebuild(&mut self, mut remake: impl FnMut(ClassEntry) -> ClassEntry) {
        for set in self.classes.values_mut() {
            *set = std::mem::take(set).into_iter().map(&mut remake).collect();
        }
    }
    /// Every class with its entries.
    pub(crate) fn groups(&self) -> impl Iterator<Item = (&ClassKey, &BTreeSet<ClassEntry>)> {
        self.classes.iter()
    }
    /// Per class whose tags cover `required`: its first id that `accepts`.
    pub(crate) fn heads<'a>(
        &'a self,
        required: &'a [Arc<str>],
        mut accepts: impl FnMut(usize) -> bool + 'a,
    ) -> impl Iterator<Item = usize> + 'a {
        self.classes
            .iter()
            .filter(move |(k, _)| k.has_tags(required))
            .filter_map(move |(_, set)| set.iter().map(|e| e.3).find(|&id| accepts(id)))
    }
}

/// An `f64` ordered by `total_cmp`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ordered(pub f64);
impl Eq for Ordered {}
impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}
