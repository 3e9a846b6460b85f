//! Compact map keys for ids on hot paths.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};

/// 22, not 23: with the variant's tag and the length the key is then 24 bytes, the size of
/// the heap variant's tag and pointer; at 23 it would take 32.
const INLINE: usize = 22;

/// A map keyed by ids on a hot path (`GetShardHome`, routing). Hashed with foldhash, seeded
/// per map, rather than SipHash, which costs more than the rest of the lookup for short ids.
pub(crate) type IdMap<V> = HashMap<IdKey, V, foldhash::fast::RandomState>;

/// An id (a shard id, usually) as a hash map key. Ids of up to 22 bytes, i.e. decimal numbers
/// and most names, are held inline: a lookup compares the key without following a pointer to
/// another cache line, and the key costs no allocation. Hashes and compares exactly as the
/// `str`, so maps keyed by it are queried with `&str`.
#[derive(Clone)]
pub(crate) enum IdKey {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

impl IdKey {
    pub fn new(s: &str) -> IdKey {
        let mut bytes = [0u8; INLINE];
        match bytes.get_mut(..s.len()) {
            Some(b) => {
                b.copy_from_slice(s.as_bytes());
                IdKey::Inline {
                    len: s.len() as u8,
                    bytes,
                }
            }
            None => IdKey::Heap(s.into()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // Not `from_utf8`: checking the bytes again on every hash and compare cost ~4% of
            // a least-load plan, which probes these maps several times per move.
            // SAFETY: `new` is the only constructor and copies the whole of a `str` into
            // `bytes[..len]`; the fields are private to this module and never changed after.
            IdKey::Inline { len, bytes } => unsafe {
                std::str::from_utf8_unchecked(&bytes[..*len as usize])
            },
            IdKey::Heap(s) => s,
        }
    }
}

/// `map`'s value for `id`, compared without `memcmp` for ids of up to 16 bytes (see
/// [`IdStr`]).
#[inline]
pub(crate) fn get<'m, V>(map: &'m IdMap<V>, id: &str) -> Option<&'m V> {
    map.get(IdStr::new(id))
}

/// An id as a lookup key for an [`IdMap`]: hashes as the `str`, but compares ids of up to 16
/// bytes as two (possibly overlapping) fixed-size words each rather than through `memcmp`,
/// whose call costs more than the rest of the compare for the short ids hot paths look up.
#[repr(transparent)]
#[derive(Debug)]
pub(crate) struct IdStr(str);

impl IdStr {
    #[inline]
    pub fn new(s: &str) -> &IdStr {
        // SAFETY: `IdStr` is `repr(transparent)` over `str`, so the two have one layout and
        // pointer metadata (the length); the lifetime carries over unchanged.
        unsafe { &*(s as *const str as *const IdStr) }
    }
}

impl Borrow<IdStr> for IdKey {
    #[inline]
    fn borrow(&self) -> &IdStr {
        IdStr::new(self.as_str())
    }
}

impl Hash for IdStr {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl PartialEq for IdStr {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        let n = a.len();
        if n != b.len() {
            return false;
        }
        // The first and last few bytes of each, which together cover all `n`.
        fn ends<const W: usize>(s: &[u8]) -> ([u8; W], [u8; W]) {
            let first = s[..W].try_into().expect("W bytes");
            let last = s[s.len() - W..].try_into().expect("W bytes");
            (first, last)
        }
        match n {
            0 => true,
            1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
            4..=7 => ends::<4>(a) == ends::<4>(b),
            8..=16 => ends::<8>(a) == ends::<8>(b),
            _ => a == b,
        }
    }
}

impl Eq for IdStr {}

impl Borrow<str> for IdKey {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Hash for IdKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq for IdKey {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for IdKey {}

impl fmt::Debug for IdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_str().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn short_and_long_ids_are_found_by_str() {
        let long = "x".repeat(INLINE + 1);
        let ids = ["", "7", "12345", "é-ünïcode", &"y".repeat(INLINE), &long];
        let mut m = HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            m.insert(IdKey::new(id), i);
        }
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(m.get(*id), Some(&i), "{id:?}");
            assert_eq!(IdKey::new(id).as_str(), *id);
        }
        assert!(matches!(
            IdKey::new(&"y".repeat(INLINE)),
            IdKey::Inline { .. }
        ));
        assert!(matches!(IdKey::new(&long), IdKey::Heap(_)));
        assert_eq!(m.get("12346"), None);
        assert_eq!(format!("{:?}", IdKey::new("a")), "\"a\"");
        assert_eq!(std::mem::size_of::<IdKey>(), 24);
    }

    #[test]
    fn id_strs_compare_as_their_strs() {
        // every length up to past the word compares, with a difference at each position
        for n in 0..=24 {
            let a = "abcdefghijklmnopqrstuvwxyz"[..n].to_owned();
            assert!(IdStr::new(&a) == IdStr::new(&a.clone()), "{a:?}");
            assert!(IdStr::new(&a) != IdStr::new(&format!("{a}z")), "{a:?}");
            for i in 0..n {
                let mut b = a.clone().into_bytes();
                b[i] = b'_';
                let b = String::from_utf8(b).unwrap();
                assert!(IdStr::new(&a) != IdStr::new(&b), "{a:?} {b:?}");
            }
        }
        let mut m: IdMap<usize> = IdMap::default();
        let long = "x".repeat(INLINE + 1);
        for (i, id) in ["", "7", "12345", &long].iter().enumerate() {
            m.insert(IdKey::new(id), i);
            assert_eq!(get(&m, id), Some(&i), "{id:?}");
        }
        assert_eq!(get(&m, "12346"), None);
    }
}
