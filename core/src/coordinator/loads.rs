//! Shard loads as the coordinator keeps them: regions report what their hosts measure, the
//! coordinator smooths each shard's samples, gives shards nobody has reported a prior, and
//! feeds the result to the strategy's [`AllocationState`](crate::model::AllocationState).
//!
//! Smoothing rises at once and decays slowly: a sample above the smoothed load replaces it,
//! one below moves it [`LOAD_DECAY`] of the way down. A shard that turns hot is seen hot on
//! the next report, so nothing piles more onto its region; a shard that cools keeps weighing
//! for a few reports, so a short lull does not move it back and forth (the hysteresis that
//! keeps a rebalance from chasing noise). What the strategy sees is the smoothed load, and it
//! is stored (an event per report that changed it), so a successor decides the same.
//!
//! Nothing reported, nothing changes: every shard weighs 1, and least-load decides as
//! least-shard does.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::Amount;
use crate::protocol::{RegionOffer, ShardId};
use crate::{Error, Result};

/// How far a smoothed load moves towards a lower sample per report. At 0.2 a load that drops
/// to nothing halves in about three reports (0.8^3 ~ 0.51) and is within 10% of the new level
/// after ten; a rise is taken whole.
pub const LOAD_DECAY: f64 = 0.2;

/// The smoothed load after `sample`, given the one before (if any).
pub fn smooth(old: Option<&Amount>, sample: &Amount) -> Amount {
    let step = |o: f64, s: f64| if s >= o { s } else { o + LOAD_DECAY * (s - o) };
    match (old, sample) {
        (Some(Amount::Uniform(o)), Amount::Uniform(s)) => Amount::Uniform(step(*o, *s)),
        (Some(Amount::PerDimension(o)), Amount::PerDimension(s)) => {
            // A dimension missing from the sample measured 0 this time.
            let dims: BTreeSet<&String> = o.keys().chain(s.keys()).collect();
            Amount::PerDimension(
                dims.into_iter()
                    .map(|d| {
                        let v = step(
                            o.get(d).copied().unwrap_or(0.0),
                            s.get(d).copied().unwrap_or(0.0),
                        );
                        (d.clone(), v)
                    })
                    .collect(),
            )
        }
        // First sample, or the host changed how it measures: nothing to smooth against.
        _ => sample.clone(),
    }
}

/// The load of a shard nobody has reported: the mean smoothed load of the shards that have
/// one (summed in shard id order, so every coordinator gets the same bits), or `None` when no
/// shard has one (every shard then weighs 1).
pub fn prior(loads: &BTreeMap<ShardId, Amount>) -> Option<Amount> {
    if loads.is_empty() {
        return None;
    }
    let n = loads.len() as f64;
    let dims: BTreeSet<&String> = loads
        .values()
        .filter_map(|l| match l {
            Amount::PerDimension(m) => Some(m.keys()),
            Amount::Uniform(_) => None,
        })
        .flatten()
        .collect();
    if dims.is_empty() {
        let sum: f64 = loads
            .values()
            .map(|l| match l {
                Amount::Uniform(v) => *v,
                Amount::PerDimension(_) => 0.0,
            })
            .sum();
        return Some(Amount::Uniform(sum / n));
    }
    // A plain number weighs that much in every dimension.
    let of = |l: &Amount, d: &str| match l {
        Amount::Uniform(v) => *v,
        Amount::PerDimension(m) => m.get(d).copied().unwrap_or(0.0),
    };
    Some(Amount::PerDimension(
        dims.into_iter()
            .map(|d| (d.clone(), loads.values().map(|l| of(l, d)).sum::<f64>() / n))
            .collect(),
    ))
}

/// Refuses loads in dimensions no region's capacity names, once some capacity names
/// dimensions: such a load could never bind, and is most likely a misspelt dimension.
pub fn check_dimensions<'a>(
    loads: &BTreeMap<ShardId, Amount>,
    offers: impl Iterator<Item = &'a RegionOffer>,
) -> Result<()> {
    let known: BTreeSet<&String> = offers
        .filter_map(|o| match &o.capacity {
            Some(Amount::PerDimension(m)) => Some(m.keys()),
            _ => None,
        })
        .flatten()
        .collect();
    if known.is_empty() {
        return Ok(());
    }
    for (shard, load) in loads {
        if let Amount::PerDimension(m) = load {
            if let Some(d) = m.keys().find(|d| !known.contains(d)) {
                let known: Vec<&str> = known.iter().map(|s| s.as_str()).collect();
                return Err(Error::invalid_argument(format!(
                    "loads.{shard}: dimension {d:?} is not one a region's capacity names ({})",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(pairs: &[(&str, f64)]) -> Amount {
        Amount::PerDimension(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
    }

    #[test]
    fn smoothing_rises_at_once_and_decays_by_the_factor() {
        let up = smooth(Some(&Amount::Uniform(2.0)), &Amount::Uniform(10.0));
        assert_eq!(up, Amount::Uniform(10.0));
        let down = smooth(Some(&up), &Amount::Uniform(0.0));
        assert_eq!(down, Amount::Uniform(8.0));
        assert_eq!(smooth(None, &Amount::Uniform(3.0)), Amount::Uniform(3.0));
        let d = smooth(
            Some(&dims(&[("cpu", 4.0), ("mem", 1.0)])),
            &dims(&[("cpu", 9.0)]),
        );
        assert_eq!(d, dims(&[("cpu", 9.0), ("mem", 0.8)]));
        // A change of form is taken as it comes.
        let f = smooth(Some(&Amount::Uniform(5.0)), &dims(&[("cpu", 1.0)]));
        assert_eq!(f, dims(&[("cpu", 1.0)]));
    }

    #[test]
    fn the_prior_is_the_mean_or_nothing() {
        assert_eq!(prior(&BTreeMap::new()), None);
        let plain: BTreeMap<ShardId, Amount> = [("a", 1.0), ("b", 5.0)]
            .into_iter()
            .map(|(s, v)| (s.into(), Amount::Uniform(v)))
            .collect();
        assert_eq!(prior(&plain), Some(Amount::Uniform(3.0)));
        let mut mixed = plain;
        mixed.insert("c".into(), dims(&[("cpu", 6.0)]));
        assert_eq!(prior(&mixed), Some(dims(&[("cpu", 4.0)])));
    }

    #[test]
    fn loads_in_dimensions_no_capacity_names_are_refused() {
        let offer = RegionOffer {
            capacity: Some(dims(&[("cpu", 4.0), ("mem", 8.0)])),
            ..RegionOffer::default()
        };
        let ok: BTreeMap<ShardId, Amount> = [("1".into(), dims(&[("cpu", 1.0)]))].into();
        check_dimensions(&ok, [&offer].into_iter()).unwrap();
        let bad: BTreeMap<ShardId, Amount> = [("1".into(), dims(&[("cpux", 1.0)]))].into();
        let e = check_dimensions(&bad, [&offer].into_iter()).unwrap_err();
        assert_eq!(
            e.message(),
            "loads.1: dimension \"cpux\" is not one a region's capacity names (cpu, mem)"
        );
        // Without dimensional capacities any dimension goes.
        check_dimensions(&bad, [&RegionOffer::default()].into_iter()).unwrap();
    }
}
