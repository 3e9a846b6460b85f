//! JVM `String` semantics that placement depends on.
//!
//! Java strings are sequences of UTF-16 code units, and both `hashCode` and `compareTo` are
//! defined over those units. Rust strings are UTF-8, so the two disagree whenever a character
//! lies outside the Basic Multilingual Plane; shard ids and addresses may contain anything.

use std::cmp::Ordering;

/// `java.lang.String.hashCode`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code units, wrapping.
pub fn string_hash_code(s: &str) -> i32 {
    // Byte-wise is exact for ASCII (one unit per byte) and skips UTF-16 encoding; one pass
    // hashes and checks, four bytes a step (h*31^4 + a*31^3 + b*31^2 + c*31 + d) so the
    // multiplications do not wait on each other. Entity ids are hashed on every message.
    let bytes = s.as_bytes();
    let (mut h, mut high) = (0i32, 0u32);
    let mut quads = bytes.chunks_exact(4);
    for q in &mut quads {
        let q: [u8; 4] = [q[0], q[1], q[2], q[3]];
        high |= u32::from_ne_bytes(q);
        let [a, b, c, d] = q.map(i32::from);
        h = h
            .wrapping_mul(923_521)
            .wrapping_add(a.wrapping_mul(29_791))
            .wrapping_add(b.wrapping_mul(961))
            .wrapping_add(c.wrapping_mul(31))
            .wrapping_add(d);
    }
    for &b in quads.remainder() {
        h = h.wrapping_mul(31).wrapping_add(i32::from(b));
        high |= u32::from(b);
    }
    if high & 0x8080_8080 == 0 {
        return h;
    }
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)))
}

/// `java.lang.String.compareTo`: lexicographic order of UTF-16 code units.
///
/// UTF-8 byte order equals code-point order, and UTF-16 order differs from that in one place
/// only: a supplementary character (encoded with surrogates U+D800..U+DFFF) sorts *before*
/// U+E000..U+FFFF. So the strings are compared as bytes and only the first differing byte pair
/// is inspected for that case; no transcoding happens.
pub fn compare_utf16(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    match first_mismatch(x, y) {
        None => x.len().cmp(&y.len()),
        Some(i) => {
            let (p, q) = (x[i], y[i]);
            // Both strings agree up to `i`, so `i` is a character boundary in both or in neither;
            // an inversion needs lead bytes 0xEE/0xEF (U+E000..U+FFFF) against 0xF0..=0xF4
            // (supplementary), which can only meet at a boundary.
            if p.min(q) >= 0xEE && (p >= 0xF0) != (q >= 0xF0) {
                q.cmp(&p)
            } else {
                p.cmp(&q)
            }
        }
    }
}

/// Sorts `v` into `String.compareTo` order of `key`, as Pekko orders shard ids. The keys must
/// be distinct (the sort is not stable). When no key has a byte of 0xEE or above there is
/// neither a U+E000..U+FFFF nor a supplementary character, so byte order is the order (see
/// [`compare_utf16`]) and a plain byte compare does: one pass to check, then `memcmp`s.
pub fn sort_distinct_utf16<T>(v: &mut [T], key: impl Fn(&T) -> &str) {
    if !v.iter().all(|x| key(x).bytes().all(|b| b < 0xEE)) {
        v.sort_unstable_by(|a, b| compare_utf16(key(a), key(b)));
    } else if v.len() < 32 {
        v.sort_unstable_by(|a, b| key(a).as_bytes().cmp(key(b).as_bytes()));
    } else {
        // Sorting (first 8 bytes as a big-endian integer, index) pairs compares integers where
        // the byte compare would call `memcmp` for every pair; ids as short as `s012345`
        // usually differ within them. Equal prefixes fall back to the bytes.
        let mut keyed: Vec<(u64, u32)> = v
            .iter()
            .enumerate()
            .map(|(i, x)| (prefix(key(x).as_bytes()), i as u32))
            .collect();
        keyed.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| {
                key(&v[a.1 as usize])
                    .as_bytes()
                    .cmp(key(&v[b.1 as usize]).as_bytes())
            })
        });
        permute(v, keyed.into_iter().map(|(_, i)| i as usize).collect());
    }
}

/// The first 8 bytes as a big-endian integer, zero-padded: integer order is the byte order of
/// the prefixes (a zero pad only ties a shorter prefix with one that goes on in zeros, and ties
/// compare the whole bytes).
fn prefix(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    u64::from_be_bytes(w)
}

/// Rearranges `v` so that position `i` holds what was at `from[i]` (`from` a permutation),
/// in place by following its cycles.
fn permute<T>(v: &mut [T], mut from: Vec<usize>) {
    const DONE: usize = usize::MAX;
    for start in 0..v.len() {
        let mut at = start;
        while from[at] != DONE {
            let src = from[at];
            from[at] = DONE;
            if src == start {
                break;
            }
            v.swap(at, src);
            at = src;
        }
    }
}

/// Index of the first differing byte within the common length.
fn first_mismatch(x: &[u8], y: &[u8]) -> Option<usize> {
    const W: usize = 8;
    let n = x.len().min(y.len());
    let mut i = 0;
    // Word-sized steps over the (usually long) shared prefix such as `pekko://sys@host:`.
    while i + W <= n {
        let a = u64::from_ne_bytes(x[i..i + W].try_into().expect("8-byte slice"));
        let b = u64::from_ne_bytes(y[i..i + W].try_into().expect("8-byte slice"));
        if a != b {
            break;
        }
        i += W;
    }
    (i..n).find(|&j| x[j] != y[j])
}
