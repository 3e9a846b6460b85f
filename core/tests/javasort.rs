//! Conformance of `shardline_core::jvm::sort_by` with JDK 17's
//! `java.util.Arrays.sort(T[], Comparator)` (java.util.TimSort).
//!
//! `tests/data/javasort.json` is produced by `scripts/javasort-fixture/GenFixture.java` on a real
//! JDK; every comparator there is mirrored here. For each case we check the exact output order,
//! whether a contract violation was raised (and, then, the order the JDK left the array in), and
//! the exact number of comparator calls.

use std::cmp::Ordering;

use proptest::prelude::*;
use serde_json::Value;
use shardline_core::jvm::{sort_by, ContractViolation};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rec {
    id: usize,
    a: i64,
    b: i64,
    c: i64,
}

/// splitmix64 finalizer, as `GenFixture.mix` (Java long arithmetic wraps).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// As `GenFixture.pairHash`.
fn pair_hash(x: usize, y: usize, seed: i64) -> u64 {
    let lo = x.min(y) as u64;
    let hi = x.max(y) as u64;
    mix((seed as u64)
        .wrapping_mul(0x9E3779B97F4A7C15)
        .wrapping_add(lo.wrapping_mul(1_000_003))
        .wrapping_add(hi))
}

fn leaving(status: i64) -> bool {
    matches!(status, 3..=5)
}

/// The fixture's comparators, mirrored from `GenFixture.comparator`.
fn compare(kind: &str, seed: i64, x: &Rec, y: &Rec) -> Ordering {
    match kind {
        "key" => x.a.cmp(&y.a),
        "key_b_desc" => x.a.cmp(&y.a).then_with(|| y.b.cmp(&x.b)),
        "pekko" => {
            if x.a != y.a {
                leaving(x.a).cmp(&leaving(y.a))
            } else if x.b != y.b {
                y.b.cmp(&x.b)
            } else {
                x.c.cmp(&y.c)
            }
        }
        "random" => {
            if x.id == y.id {
                return Ordering::Equal;
            }
            let r = (pair_hash(x.id, y.id, seed) % 3) as i32 - 1;
            let r = if x.id < y.id { r } else { -r };
            r.cmp(&0)
        }
        "noisy" => {
            let r = x.a.cmp(&y.a);
            if x.id != y.id && pair_hash(x.id, y.id, seed).is_multiple_of(13) {
                if r != Ordering::Equal {
                    return r.reverse();
                }
                return if x.id < y.id {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
            }
            r
        }
        other => panic!("unknown comparator kind {other}"),
    }
}

fn load_cases() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/javasort.json");
    let text = std::fs::read_to_string(path).expect("read tests/data/javasort.json");
    let doc: Value = serde_json::from_str(&text).expect("parse javasort.json");
    doc["cases"].as_array().expect("cases array").clone()
}

#[test]
fn replays_every_java_case() {
    let cases = load_cases();
    assert!(cases.len() >= 250, "fixture too small: {}", cases.len());
    let mut failures = Vec::new();
    let mut violations = 0;
    for (i, case) in cases.iter().enumerate() {
        let kind = case["cmp"].as_str().unwrap();
        let seed = case["seed"].as_i64().unwrap();
        let mut v: Vec<Rec> = case["input"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(id, t)| Rec {
                id,
                a: t[0].as_i64().unwrap(),
                b: t[1].as_i64().unwrap(),
                c: t[2].as_i64().unwrap(),
            })
            .collect();
        let expected: Vec<usize> = case["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        let expect_violation = case["violation"].as_bool().unwrap();
        let expect_compares = case["compares"].as_u64().unwrap();
        if expect_violation {
            violations += 1;
        }

        let mut compares = 0u64;
        let result = sort_by(&mut v, |x, y| {
            compares += 1;
            compare(kind, seed, x, y)
        });
        let got: Vec<usize> = v.iter().map(|r| r.id).collect();
        let ok =
            result.is_err() == expect_violation && got == expected && compares == expect_compares;
        if !ok {
            failures.push(format!(
                "case {i} ({kind}, seed {seed}, {}, n={}): violation {:?} vs java {expect_violation}, \
                 compares {compares} vs java {expect_compares}, order matches: {}",
                case["pattern"],
                expected.len(),
                result,
                got == expected
            ));
        }
    }
    assert!(violations > 0, "fixture has no contract-violation cases");
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from Java:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn small_and_degenerate_inputs() {
    let mut empty: Vec<i32> = vec![];
    assert_eq!(sort_by(&mut empty, |a, b| a.cmp(b)), Ok(()));
    let mut one = vec![5];
    assert_eq!(
        sort_by(&mut one, |_, _| panic!("no comparison for one element")),
        Ok(())
    );
    // Non-Clone payload.
    let mut boxes: Vec<Box<str>> = ["d", "a", "c", "b"].iter().map(|s| Box::from(*s)).collect();
    sort_by(&mut boxes, |a, b| a.cmp(b)).unwrap();
    assert_eq!(
        boxes.iter().map(|b| &**b).collect::<Vec<_>>(),
        ["a", "b", "c", "d"]
    );
    assert_eq!(
        ContractViolation.to_string(),
        "Comparison method violates its general contract!"
    );
}

#[test]
fn always_less_comparator_is_reported_as_violation_without_losing_elements() {
    // A comparator that claims x < y for every pair is maximally inconsistent.
    for n in [31usize, 32, 33, 64, 65, 100, 257, 1000] {
        let mut v: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let _ = sort_by(&mut v, |_, _| Ordering::Less);
        let mut ids: Vec<usize> = v.iter().map(|s| s.parse().unwrap()).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..n).collect::<Vec<_>>());
        let mut v: Vec<usize> = (0..n).collect();
        let _ = sort_by(&mut v, |_, _| Ordering::Greater);
        v.sort_unstable();
        assert_eq!(v, (0..n).collect::<Vec<_>>());
    }
}

/// A tiny deterministic generator for comparator answers that ignore their arguments.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn consistent_comparator_matches_std_stable_sort(
        keys in prop::collection::vec((0u8..16, any::<u8>()), 0..700),
        by_second in any::<bool>(),
    ) {
        let items: Vec<(usize, (u8, u8))> = keys.into_iter().enumerate().collect();
        let cmp = |x: &(usize, (u8, u8)), y: &(usize, (u8, u8))| {
            if by_second { (x.1).1.cmp(&(y.1).1) } else { (x.1).0.cmp(&(y.1).0) }
        };
        let mut ours = items.clone();
        prop_assert_eq!(sort_by(&mut ours, cmp), Ok(()));
        let mut std_sorted = items;
        std_sorted.sort_by(cmp);
        prop_assert_eq!(ours, std_sorted);
    }

    #[test]
    fn random_comparator_never_panics_and_permutes(
        n in 0usize..1200,
        seed in 1u64..u64::MAX,
        bias in 0u64..3,
    ) {
        let mut rng = XorShift(seed);
        let mut v: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let _ = sort_by(&mut v, |_, _| match rng.next() % (3 + bias) {
            0 => Ordering::Less,
            1 => Ordering::Equal,
            _ => Ordering::Greater,
        });
        let mut ids: Vec<usize> = v.iter().map(|s| s.parse().unwrap()).collect();
        ids.sort_unstable();
        prop_assert_eq!(ids, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn noisy_comparator_never_panics_and_permutes(
        keys in prop::collection::vec(0u16..500, 0..800),
        seed in any::<i64>(),
        modulus in 2u64..40,
    ) {
        let recs: Vec<Rec> = keys.iter().enumerate()
            .map(|(id, &k)| Rec { id, a: k as i64, b: 0, c: 0 }).collect();
        let mut v = recs.clone();
        let res = sort_by(&mut v, |x, y| {
            let r = x.a.cmp(&y.a);
            if x.id != y.id && pair_hash(x.id, y.id, seed).is_multiple_of(modulus) { r.reverse() } else { r }
        });
        let mut ids: Vec<usize> = v.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        prop_assert_eq!(ids, (0..recs.len()).collect::<Vec<_>>());
        if recs.len() < 32 {
            // Below MIN_MERGE it is binary insertion sort, which never reports a violation.
            prop_assert_eq!(res, Ok(()));
        }
    }
}
