//! Application versions with the exact semantics of `org.apache.pekko.util.Version`.
//!
//! Pekko's `compareTo` has two quirks we keep, because the strategies' decisions depend on them:
//! numbers are compared by `int` subtraction (wraps for huge values), and when the numbers are
//! equal and exactly one side has a qualifier, the answer depends on which side is the receiver
//! (`1.0.0` vs `1.0.0-RC1` says "less" both ways). [`Version::is_orderly`] tells callers when a
//! set of versions can be ordered by [`Version::sort_key`] with the same result.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use crate::jvm::compare_utf16;
use crate::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    // Shared strings: versions are copied into index entries on membership changes.
    text: Arc<str>,
    numbers: [i32; 4],
    rest: Arc<str>,
}

const ORDERLY_LIMIT: i32 = 1 << 30;

impl Version {
    /// Pekko's default `pekko.cluster.app-version`.
    pub fn zero() -> Version {
        Version {
            text: "0.0.0".into(),
            numbers: [0; 4],
            rest: "".into(),
        }
    }

    pub fn parse(text: &str) -> Result<Version> {
        let bad = |why: &str| Error::invalid_argument(format!("app version {text:?}: {why}"));
        let int = |s: &str| {
            s.parse::<i32>()
                .map_err(|_| bad(&format!("{s:?} is not a number")))
        };
        let segments: Vec<&str> = java_split_dot(text);
        let mut n = [0i32; 4];
        let rest = match segments.len() {
            1 => {
                let s = segments[0];
                if s.is_empty() {
                    return Err(bad("empty version"));
                }
                if s.as_bytes()[0].is_ascii_digit() {
                    match s.parse::<i32>() {
                        Ok(v) => {
                            n[0] = v;
                            String::new()
                        }
                        Err(_) => s.to_owned(),
                    }
                } else {
                    s.to_owned()
                }
            }
            2 => {
                let (n1, n2, rest) = last_parts(segments[1], &int)?;
                n = [int(segments[0])?, n1, n2, 0];
                rest
            }
            3 => {
                let (n2, n3, rest) = last_parts(segments[2], &int)?;
                n = [int(segments[0])?, int(segments[1])?, n2, n3];
                rest
            }
            _ => return Err(bad("only 3 numbers separated with '.' are supported")),
        };
        Ok(Version {
            text: text.into(),
            numbers: n,
            rest: rest.into(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `this.compareTo(other)` exactly as Pekko computes it (sign only matters).
    pub fn pekko_compare(&self, other: &Version) -> i32 {
        if self.text == other.text {
            return 0;
        }
        for i in 0..4 {
            let d = self.numbers[i].wrapping_sub(other.numbers[i]);
            if d != 0 {
                return d;
            }
        }
        // Pekko: `if (a) diff = 1; if (b) diff = -1 else diff = rest.compareTo(other.rest)`;
        // the missing `else` makes the first branch dead.
        if other.rest.is_empty() && !self.rest.is_empty() {
            -1
        } else {
            match compare_utf16(&self.rest, &other.rest) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }
        }
    }

    /// Pekko `Version.equals`.
    pub fn pekko_eq(&self, other: &Version) -> bool {
        self.pekko_compare(other) == 0
    }

    /// A key whose natural order equals `pekko_compare` among versions for which
    /// [`Version::is_orderly`] holds pairwise (see [`OrderlyVersions`]).
    pub fn sort_key(&self) -> VersionKey {
        VersionKey {
            numbers: self.numbers,
            rest: self.rest.clone(),
        }
    }

    fn numbers_are_small(&self) -> bool {
        self.numbers
            .iter()
            .all(|n| (-ORDERLY_LIMIT..ORDERLY_LIMIT).contains(n))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Totally ordered stand-in for a [`Version`]; only valid within an orderly set.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VersionKey {
    numbers: [i32; 4],
    rest: Arc<str>,
}

impl Ord for VersionKey {
    fn cmp(&self, other: &Self) -> Ordering {
        // Within an orderly set, equal numbers imply both or neither side has a qualifier.
        self.numbers
            .cmp(&other.numbers)
            .then_with(|| compare_utf16(&self.rest, &other.rest))
    }
}
impl PartialOrd for VersionKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Tracks a multiset of versions and whether Pekko's comparison is a total order on it: no
/// number large enough to overflow the subtraction, and no two versions with equal numbers
/// where exactly one has a qualifier.
#[derive(Debug, Default, Clone)]
pub struct OrderlyVersions {
    /// numbers -> (count without qualifier, count with qualifier)
    groups: std::collections::HashMap<[i32; 4], (usize, usize)>,
    mixed_groups: usize,
    huge: usize,
    distinct: std::collections::HashMap<VersionKey, usize>,
}

impl OrderlyVersions {
    pub fn add(&mut self, v: &Version) {
        let g = self.groups.entry(v.numbers).or_default();
        let was_mixed = g.0 > 0 && g.1 > 0;
        if v.rest.is_empty() {
            g.0 += 1
        } else {
            g.1 += 1
        }
        if !was_mixed && g.0 > 0 && g.1 > 0 {
            self.mixed_groups += 1;
        }
        if !v.numbers_are_small() {
            self.huge += 1;
        }
        *self.distinct.entry(v.sort_key()).or_default() += 1;
    }

    pub fn remove(&mut self, v: &Version) {
        if let Some(g) = self.groups.get_mut(&v.numbers) {
            let was_mixed = g.0 > 0 && g.1 > 0;
            if v.rest.is_empty() {
                g.0 -= 1
            } else {
                g.1 -= 1
            }
            if was_mixed && !(g.0 > 0 && g.1 > 0) {
                self.mixed_groups -= 1;
            }
            if *g == (0, 0) {
                self.groups.remove(&v.numbers);
            }
        }
        if !v.numbers_are_small() {
            self.huge -= 1;
        }
        let key = v.sort_key();
        if let Some(c) = self.distinct.get_mut(&key) {
            *c -= 1;
            if *c == 0 {
                self.distinct.remove(&key);
            }
        }
    }

    /// True when sorting by [`Version::sort_key`] reproduces `pekko_compare`.
    pub fn is_orderly(&self) -> bool {
        self.mixed_groups == 0 && self.huge == 0
    }

    /// True when every version tracked is Pekko-equal to every other (valid when orderly).
    pub fn all_equal(&self) -> bool {
        self.distinct.len() <= 1
    }
}

/// `String.split('.')`: trailing empty strings are dropped, a leading one is kept.
fn java_split_dot(s: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split('.').collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts.len() == 1 && parts[0].is_empty() && !s.is_empty() {
        // "..." splits to no elements in Java; Pekko then fails on segments(0).
        return vec![];
    }
    parts
}

type IntParser<'a> = dyn Fn(&str) -> Result<i32> + 'a;

fn last_parts(s: &str, int: &IntParser<'_>) -> Result<(i32, i32, String)> {
    // "2", "2-SNAPSHOT" or dynver "2+10-1234abcd"
    let (last, rest) = if s.is_empty() {
        (0, String::new())
    } else {
        match s.find(['-', '+']) {
            None => (int(s)?, String::new()),
            Some(k) => (int(&s[..k])?, s[k + 1..].to_owned()),
        }
    };
    if rest.is_empty() {
        return Ok((last, 0, rest));
    }
    // dynver: a commit count followed by '-' becomes the next number
    if rest.as_bytes()[0].is_ascii_digit() {
        if let Some(i) = rest.find('-') {
            if let Ok(d) = rest[..i].parse::<i32>() {
                return Ok((last, d, rest[i + 1..].to_owned()));
            }
        }
    }
    Ok((last, 0, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }
    fn lt(a: &str, b: &str) -> bool {
        v(a).pekko_compare(&v(b)) < 0
    }

    #[test]
    fn matches_pekko_version_spec() {
        assert!(v("1.2.3").pekko_eq(&v("1.2.3")));
        assert!(lt("1.2.3", "1.2.4") && lt("1.2.3", "3.2.1") && lt("3.2.1", "3.3.1"));
        assert!(v("1.2").pekko_eq(&v("1.2.0")) && v("1").pekko_eq(&v("1.0.0")));
        assert!(lt("1.2", "1.2.1") && lt("3.2", "3.2.7"));
        assert!(lt("2a", "2b") && lt("2020-08-30", "2020-09-07"));
        assert!(v("1.2.0-M1").pekko_eq(&v("1.2-M1")));
        assert!(lt("1.2-M1", "1.2.0") && lt("1.2.0-M1", "1.2.0") && lt("1.2.3-M1", "1.2.3-M2"));
        assert!(lt("1.0.10+3-1234abcd", "1.0.11") && lt("1.0.10+3-1234abcd", "1.0.10+10-1234abcd"));
        assert!(
            lt("1.2+3-1234abcd", "1.2+10-1234abcd") && lt("0.0.0+3-2234abcd", "0.0.0+4-1234abcd")
        );
        assert!(lt("HEAD+20140707-1030", "HEAD+20140707-1130"));
        assert!(lt("1.0.10-3-1234abcd", "1.0.10-10-1234abcd"));
        assert!(lt("1.0.10+3a-1234abcd", "1.0.10+3b-1234abcd"));
        assert!(
            lt("foo", "1.2.3")
                && lt("bar", "foo")
                && !v("1-foo").pekko_eq(&v("01-foo"))
                && lt("02-foo", "1-foo")
        );
        for bad in [
            "1.2.3.1", "1.x.3", "1.2x.3", "1.2.x", "1.2.3x", "x.3", "1.x", "1.2x", "",
        ] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn keeps_the_receiver_dependent_qualifier_quirk() {
        // Both directions answer "less": the comparison is not antisymmetric.
        assert!(lt("1.0.0", "1.0.0-RC1") && lt("1.0.0-RC1", "1.0.0"));
        let mut set = OrderlyVersions::default();
        set.add(&v("1.0.0"));
        assert!(set.is_orderly());
        set.add(&v("1.0.0-RC1"));
        assert!(!set.is_orderly());
        set.remove(&v("1.0.0"));
        assert!(set.is_orderly() && set.all_equal());
    }

    #[test]
    fn sort_key_agrees_with_pekko_on_orderly_sets() {
        let vs = [
            "0.0.0",
            "1",
            "1.0.1",
            "1.0.1-M1",
            "2.0-RC1",
            "2.0-RC2",
            "10.0.0",
            "foo",
            "bar",
            "1.0.10+3-abc",
        ];
        for a in vs {
            for b in vs {
                let (va, vb) = (v(a), v(b));
                let mixed = va.numbers == vb.numbers && va.rest.is_empty() != vb.rest.is_empty();
                if mixed {
                    continue;
                }
                assert_eq!(
                    va.sort_key().cmp(&vb.sort_key()),
                    va.pekko_compare(&vb).cmp(&0),
                    "{a} vs {b}"
                );
            }
        }
    }
}
