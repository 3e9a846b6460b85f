//! `org.apache.pekko.routing.MurmurHash`: the Scala 2.9 "MurmurHash 3" with magic-number
//! streams. It is neither `MurmurHash3_x86_32` nor `scala.util.hashing.MurmurHash3`, so a
//! murmur3 crate yields different values and therefore a different consistent-hash ring.
//!
//! Java `Int` arithmetic wraps and `>>>` is a logical shift; `u32` gives both directly and
//! has the same bit pattern, so values are reinterpreted as `i32` only at the boundary.

const VISIBLE_MAGIC: u32 = 0x971E_137B;
const HIDDEN_MAGIC_A: u32 = 0x9554_3787;
const HIDDEN_MAGIC_B: u32 = 0x2AD7_EB25;
const VISIBLE_MIXER: u32 = 0x52DC_E729;
const HIDDEN_MIXER_A: u32 = 0x7B7D_159C;
const HIDDEN_MIXER_B: u32 = 0x6BCE_6396;
const FINAL_MIXER_1: u32 = 0x85EB_CA6B;
const FINAL_MIXER_2: u32 = 0xC2B2_AE35;
const SEED_STRING: u32 = 0xF7CA_7FD2;

fn start_hash(seed: u32) -> u32 {
    seed ^ VISIBLE_MAGIC
}

fn extend_hash(h: u32, value: u32, a: u32, b: u32) -> u32 {
    let mixed = value.wrapping_mul(a).rotate_left(11).wrapping_mul(b);
    (h ^ mixed).wrapping_mul(3).wrapping_add(VISIBLE_MIXER)
}

fn next_magic_a(a: u32) -> u32 {
    a.wrapping_mul(5).wrapping_add(HIDDEN_MIXER_A)
}

fn next_magic_b(b: u32) -> u32 {
    b.wrapping_mul(5).wrapping_add(HIDDEN_MIXER_B)
}

fn finalize_hash(h: u32) -> u32 {
    let mut i = h ^ (h >> 16);
    i = i.wrapping_mul(FINAL_MIXER_1);
    i ^= i >> 13;
    i = i.wrapping_mul(FINAL_MIXER_2);
    i ^ (i >> 16)
}

/// `MurmurHash.stringHash`: hashes the UTF-16 code units (Java `charAt`), two per step.
pub fn string_hash(s: &str) -> i32 {
    // ASCII strings have one unit per byte, which avoids both counting and transcoding.
    if s.is_ascii() {
        hash_units(s.len(), s.bytes().map(u16::from))
    } else {
        hash_units(s.encode_utf16().count(), s.encode_utf16())
    }
}

fn hash_units(len: usize, mut units: impl Iterator<Item = u16>) -> i32 {
    // Java's `length * seedString` is an Int product, so the length wraps like one too.
    let mut h = start_hash((len as u32).wrapping_mul(SEED_STRING));
    let (mut a, mut b) = (HIDDEN_MAGIC_A, HIDDEN_MAGIC_B);
    loop {
        match (units.next(), units.next()) {
            (Some(hi), Some(lo)) => {
                // `(c1 << 16) + c2` in Java: the low half is zero, so the sum is a plain OR.
                h = extend_hash(h, u32::from(hi) << 16 | u32::from(lo), a, b);
                a = next_magic_a(a);
                b = next_magic_b(b);
            }
            (Some(last), None) => {
                h = extend_hash(h, u32::from(last), a, b);
                break;
            }
            _ => break,
        }
    }
    finalize_hash(h) as i32
}

/// Position of virtual node `replica` of a node whose `string_hash` is `node_hash`
/// (Pekko `ConsistentHash.concatenateNodeHash`).
pub fn vnode_hash(node_hash: i32, replica: u32) -> i32 {
    let h = start_hash(node_hash as u32);
    finalize_hash(extend_hash(h, replica, HIDDEN_MAGIC_A, HIDDEN_MAGIC_B)) as i32
}
