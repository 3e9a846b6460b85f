//! Replays every case of `tests/vectors/hashing.json` and checks the JVM string helpers.

use std::cmp::Ordering;
use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::Value;
use shardline_core::hashing::vnode_hash;
use shardline_core::hashing::{actor_ts_shard_id, pekko_shard_id, string_hash, Ring};
use shardline_core::jvm::{compare_utf16, sort_distinct_utf16, string_hash_code};
use shardline_core::ErrorKind;

fn vectors() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/hashing.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("hashing.json parses")
}

fn section(name: &str) -> Value {
    vectors()[name]["values"].clone()
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

#[test]
fn pekko_murmur_string_hash_vectors() {
    let values = section("pekkoMurmurStringHash");
    let values = values.as_object().expect("object of input -> hash");
    assert!(!values.is_empty());
    for (input, expected) in values {
        assert_eq!(
            i64::from(string_hash(input)),
            int(expected),
            "stringHash({input:?})"
        );
    }
}

#[test]
fn pekko_ring_node_vectors() {
    let nodes = section("pekkoRingNodes");
    let nodes = nodes.as_array().expect("array of nodes");
    assert!(!nodes.is_empty());
    for node in nodes {
        let address = text(&node["address"]);
        let node_hash = string_hash(address);
        assert_eq!(
            i64::from(node_hash),
            int(&node["nodeHash"]),
            "nodeHash({address})"
        );
        let expected: Vec<i64> = node["vnodeHashes(1..10)"]
            .as_array()
            .expect("vnode list")
            .iter()
            .map(int)
            .collect();
        assert_eq!(expected.len(), 10);
        let actual: Vec<i64> = (1..=10)
            .map(|r| i64::from(vnode_hash(node_hash, r)))
            .collect();
        assert_eq!(actual, expected, "vnodes of {address}");
    }
}

#[test]
fn pekko_ring_vectors() {
    let rings = section("pekkoRings");
    let rings = rings.as_array().expect("array of rings");
    assert!(!rings.is_empty());
    for case in rings {
        let nodes: Vec<&str> = case["nodes(sorted by Address ordering)"]
            .as_array()
            .expect("node list")
            .iter()
            .map(text)
            .collect();
        let factor = u32::try_from(int(&case["virtualNodesFactor"])).expect("factor fits u32");
        let ring = Ring::new(&nodes, factor);

        let expected: Vec<(i64, &str)> = case["ring"]
            .as_array()
            .expect("ring list")
            .iter()
            .map(|e| (int(&e[0]), text(&e[1])))
            .collect();
        let actual: Vec<(i64, &str)> = ring
            .positions()
            .map(|(p, i)| (i64::from(p), nodes[i]))
            .collect();
        assert_eq!(actual, expected, "ring of {nodes:?}");

        let lookups = case["nodeFor"].as_object().expect("nodeFor object");
        assert!(!lookups.is_empty());
        for (shard, owner) in lookups {
            let index = ring.node_for(shard).expect("non-empty ring");
            assert_eq!(nodes[index], text(owner), "nodeFor({shard:?}) on {nodes:?}");
            assert_eq!(ring.node_for_hash(string_hash(shard)), Some(index));
        }
    }
}

#[test]
fn actor_ts_hash_shard_id_vectors() {
    let cases = section("actorTsHashShardId");
    let cases = cases.as_array().expect("array of cases");
    assert!(!cases.is_empty());
    for case in cases {
        let id = text(&case["entityId"]);
        let n = u32::try_from(int(&case["numShards"])).expect("numShards fits u32");
        let shard = actor_ts_shard_id(id, n).expect("valid numShards");
        assert_eq!(
            i64::from(shard),
            int(&case["shard"]),
            "hashShardId({id:?}, {n})"
        );
    }
}

#[test]
fn pekko_hash_code_extractor_vectors() {
    let cases = section("pekkoHashCodeExtractor");
    let cases = cases.as_array().expect("array of cases");
    assert!(!cases.is_empty());
    for case in cases {
        let id = text(&case["entityId"]);
        let n = i32::try_from(int(&case["numShards"])).expect("numShards fits i32");
        let shard = pekko_shard_id(id, n).expect("valid numberOfShards");
        assert_eq!(
            shard,
            text(&case["shard"]),
            "shardId({id:?}) with {n} shards"
        );
    }
}

#[test]
fn every_vector_section_is_covered() {
    let v = vectors();
    let mut names: Vec<&str> = v
        .as_object()
        .expect("top-level object")
        .keys()
        .map(String::as_str)
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "actorTsHashShardId",
            "pekkoHashCodeExtractor",
            "pekkoMurmurStringHash",
            "pekkoRingNodes",
            "pekkoRings"
        ]
    );
}

#[test]
fn actor_ts_cases_outside_the_vector_file() {
    // From the actor-ts research notes (section 1.2); the JSON only uses n in {1, 4, 64, 100, 1000}.
    assert_eq!(actor_ts_shard_id("user-1", 8), Ok(4));
    assert_eq!(actor_ts_shard_id("user-2", 16), Ok(3));
    assert_eq!(actor_ts_shard_id("user-7", 33), Ok(19));
    // "" keeps the unsigned basis: |int32(0x811C9DC5)| % 64 would be 59.
    assert_eq!(actor_ts_shard_id("", 64), Ok(5));
}

#[test]
fn shard_count_below_one_is_rejected() {
    for n in [0, -1, i32::MIN] {
        let err = pekko_shard_id("a", n).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.message().contains("numberOfShards"), "{err}");
    }
    let err = actor_ts_shard_id("a", 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("numShards"), "{err}");
}

#[test]
fn pekko_extractor_handles_min_hash_code() {
    // "polygenelubricants" is a well-known String with hashCode Int.MinValue.
    assert_eq!(string_hash_code("polygenelubricants"), i32::MIN);
    assert_eq!(
        pekko_shard_id("polygenelubricants", 7).unwrap(),
        ((i32::MIN % 7).abs()).to_string()
    );
    assert_eq!(pekko_shard_id("polygenelubricants", 1).unwrap(), "0");
}

#[test]
fn string_hash_code_known_values() {
    assert_eq!(string_hash_code(""), 0);
    assert_eq!(string_hash_code("hello"), 99_162_322);
    // U+1F600 is the surrogate pair D83D DE00: 0xD83D * 31 + 0xDE00.
    assert_eq!(string_hash_code("😀"), 0xD83D * 31 + 0xDE00);
    assert_eq!(string_hash_code("é"), 0xE9);
}

#[test]
fn compare_utf16_orders_code_units() {
    // Supplementary characters start with a surrogate (0xD83D) and so sort before U+FFFD,
    // although their code point (and UTF-8 bytes) are greater.
    assert_eq!(compare_utf16("😀", "\u{FFFD}"), Ordering::Less);
    assert_eq!(compare_utf16("\u{FFFD}", "😀"), Ordering::Greater);
    assert_eq!(compare_utf16("x\u{E000}", "x\u{10000}"), Ordering::Greater);
    assert_eq!(compare_utf16("\u{D7FF}", "\u{10000}"), Ordering::Less);
    assert_eq!(compare_utf16("😀", "😁"), Ordering::Less);
    assert_eq!(compare_utf16("\u{E000}", "\u{FFFF}"), Ordering::Less);
    // Equal strings, including ones longer than a machine word.
    assert_eq!(compare_utf16("", ""), Ordering::Equal);
    assert_eq!(
        compare_utf16("pekko://sys@10.0.0.1:2552", "pekko://sys@10.0.0.1:2552"),
        Ordering::Equal
    );
    // A proper prefix sorts first.
    assert_eq!(
        compare_utf16("pekko://sys@10.0.0.1", "pekko://sys@10.0.0.1:2552"),
        Ordering::Less
    );
    assert_eq!(compare_utf16("abc", ""), Ordering::Greater);
    // Ordinary ASCII order, with the difference beyond the first word.
    assert_eq!(
        compare_utf16("pekko://sys@10.0.0.2:2552", "pekko://sys@10.0.0.10:2552"),
        Ordering::Greater
    );
    assert_eq!(compare_utf16("B", "a"), Ordering::Less);
}

#[test]
fn ring_later_node_wins_equal_positions() {
    // Listing a node twice makes every position collide; Pekko keeps the later insert.
    let ring = Ring::new(&["a", "b", "a"], 10);
    assert!(ring.positions().all(|(_, i)| i != 0));
    assert_eq!(ring.positions().filter(|&(_, i)| i == 2).count(), 10);
    assert_eq!(ring.positions().count(), 20);
}

#[test]
fn ring_empty_cases() {
    let none: [&str; 0] = [];
    for ring in [Ring::new(&none, 10), Ring::new(&["a"], 0)] {
        assert!(ring.is_empty());
        assert_eq!(ring.node_for("0"), None);
        assert_eq!(ring.node_for_hash(i32::MIN), None);
        assert_eq!(ring.positions().count(), 0);
    }
    let single = Ring::new(&["only"], 1);
    assert!(!single.is_empty());
    assert_eq!(single.node_for_hash(i32::MIN), Some(0));
    assert_eq!(single.node_for_hash(i32::MAX), Some(0));
}

#[test]
fn ring_build_scales() {
    let nodes: Vec<String> = (0..10_000)
        .map(|i| format!("pekko://sys@10.0.{}.{}:2552", i / 256, i % 256))
        .collect();
    let ring = Ring::new(&nodes, 10);
    let positions: Vec<(i32, usize)> = ring.positions().collect();
    assert!(positions.len() > 99_900 && positions.len() <= 100_000);
    assert!(positions.windows(2).all(|w| w[0].0 < w[1].0));
}

/// The spec transcribed literally in Java-style signed arithmetic, to cross-check the
/// unsigned implementation beyond the fixed vectors.
fn reference_string_hash(s: &str) -> i32 {
    let u: Vec<i32> = s.encode_utf16().map(i32::from).collect();
    let extend = |h: i32, v: i32, a: i32, b: i32| {
        let m = (v.wrapping_mul(a) as u32).rotate_left(11) as i32;
        (h ^ m.wrapping_mul(b))
            .wrapping_mul(3)
            .wrapping_add(0x52DC_E729)
    };
    let n = u.len() as i32;
    let mut h = n.wrapping_mul(0xF7CA_7FD2_u32 as i32) ^ 0x971E_137B_u32 as i32;
    let (mut a, mut b) = (0x9554_3787_u32 as i32, 0x2AD7_EB25_i32);
    let mut j = 0;
    while j + 1 < u.len() {
        h = extend(h, (u[j] << 16).wrapping_add(u[j + 1]), a, b);
        a = a.wrapping_mul(5).wrapping_add(0x7B7D_159C);
        b = b.wrapping_mul(5).wrapping_add(0x6BCE_6396);
        j += 2;
    }
    if j < u.len() {
        h = extend(h, u[j], a, b);
    }
    let mut i = h ^ ((h as u32) >> 16) as i32;
    i = i.wrapping_mul(0x85EB_CA6B_u32 as i32);
    i ^= ((i as u32) >> 13) as i32;
    i = i.wrapping_mul(0xC2B2_AE35_u32 as i32);
    i ^ ((i as u32) >> 16) as i32
}

/// Strings dense in the characters where UTF-8 and UTF-16 order disagree.
fn tricky_string() -> impl Strategy<Value = String> {
    "[a-c\u{7F}\u{80}\u{7FF}\u{800}\u{D7FF}\u{E000}\u{EFFF}\u{F000}\u{FFFD}\u{FFFF}\u{10000}\u{1F600}\u{10FFFF}]{0,12}"
}

proptest! {
    #[test]
    fn compare_utf16_matches_unit_order(prefix in tricky_string(), a in tricky_string(), b in tricky_string()) {
        let (a, b) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
        prop_assert_eq!(compare_utf16(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
    }

    #[test]
    fn compare_utf16_matches_unit_order_any(a in any::<String>(), b in any::<String>()) {
        prop_assert_eq!(compare_utf16(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        prop_assert_eq!(compare_utf16(&a, &a), Ordering::Equal);
    }

    #[test]
    fn sorting_distinct_ids_gives_unit_order(
        tricky in prop::collection::btree_set(tricky_string(), 0..20),
        plain in prop::collection::btree_set("[ -~]{0,9}", 0..20),
    ) {
        // the tricky set takes the careful path, the printable one the byte compare
        for set in [tricky, plain] {
            let mut got: Vec<String> = set.iter().rev().cloned().collect();
            sort_distinct_utf16(&mut got, |s| s);
            let mut want: Vec<String> = set.into_iter().collect();
            want.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn sorting_many_distinct_ids_gives_unit_order(
        // many, so the keyed sort runs; shared prefixes, zero bytes and lengths around the
        // 8-byte key
        ids in prop::collection::btree_set("[\\x00ab]{0,11}", 32..300)
            .prop_map(|s| s.into_iter().collect::<Vec<String>>())
            .prop_shuffle(),
    ) {
        let mut got = ids.clone();
        sort_distinct_utf16(&mut got, |s| s);
        let mut want = ids;
        want.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        prop_assert_eq!(got, want);
    }

    #[test]
    fn string_hash_code_matches_naive_fold(
        s in any::<String>(),
        ascii in "[ -~]{0,40}",
        mixed in "[a-z0-9]{0,9}[é😀]?[a-z0-9]{0,9}",
    ) {
        // arbitrary text, ASCII of every length (the fast path's four-byte steps and their
        // remainder), and ASCII with one character beyond it anywhere
        for s in [s, ascii, mixed] {
            let naive = s
                .encode_utf16()
                .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
            prop_assert_eq!(string_hash_code(&s), naive, "{:?}", s);
        }
    }

    #[test]
    fn string_hash_matches_reference(s in any::<String>(), t in tricky_string()) {
        prop_assert_eq!(string_hash(&s), reference_string_hash(&s));
        prop_assert_eq!(string_hash(&t), reference_string_hash(&t));
    }

    #[test]
    fn ring_lookup_matches_linear_scan(nodes in prop::collection::vec("[a-z]{1,6}", 1..8), vnodes in 1u32..12, hash in any::<i32>()) {
        let ring = Ring::new(&nodes, vnodes);
        let positions: Vec<(i32, usize)> = ring.positions().collect();
        let expected = positions.iter().find(|&&(p, _)| p >= hash).or(positions.first()).map(|&(_, i)| i);
        prop_assert_eq!(ring.node_for_hash(hash), expected);
    }
}
