//! Memory per shard: live heap bytes of an active coordinator, and of an allocation state
//! alone, holding R=100 regions and S shards (decimal ids "0".."S-1"), per shard.
//!
//!     cargo bench -p shardline-core --bench memory -- [--quick] [--out FILE]
//!
//! Sizes: S in {10k, 100k}, plus 1M with `BENCH_FULL=1` (`--quick` changes nothing: both
//! default sizes take about a second). Figures: `core.memory.coordinator.bytes_per_shard.S{s}`
//! and `core.memory.state.bytes_per_shard.S{s}` (bytes), written as a results fragment to
//! `--out FILE` (or `BENCH_OUT_FILE`). `BENCH_SCALE=1` measures S = 1M over R = 10,000 regions
//! instead (issue 18's scale run; figures `....R10000_S1000000`).
//!
//! What is counted: a counting wrapper around the system allocator tracks requested bytes
//! (the figures), and also what glibc's malloc would hold for them (chunks of the request
//! plus an 8-byte header rounded up to 16, at least 32: the table's "malloc" columns and the
//! `*.malloc_bytes_per_shard.*` figures), since many small ids make the difference large.
//! Per shard is the difference between the
//! same structure with S shards and with none (same regions and members), divided by S.
//! The coordinator holds both its persistent state and the allocation map the strategies read,
//! reached as in production: regions register, each shard is allocated by `GetShardHome`
//! and acknowledged by `ShardStarted`, outputs are drained.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use shardline_core::model::{Address, AllocationState, ClusterView, Member};
use shardline_core::strategy::Allocation;

/// Live bytes requested from the system allocator by this process.
static LIVE: AtomicIsize = AtomicIsize::new(0);
/// The same, as glibc malloc chunks.
static CHUNKS: AtomicIsize = AtomicIsize::new(0);

fn chunk(size: usize) -> isize {
    ((size + 8 + 15) & !15).max(32) as isize
}

fn count(size: usize, sign: isize) {
    LIVE.fetch_add(sign * size as isize, Ordering::Relaxed);
    CHUNKS.fetch_add(sign * chunk(size), Ordering::Relaxed);
}

struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            count(layout.size(), 1);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            count(layout.size(), 1);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        count(layout.size(), -1);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            count(layout.size(), -1);
            count(new_size, 1);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (requested, malloc chunks) live now.
fn live() -> (isize, isize) {
    (LIVE.load(Ordering::Relaxed), CHUNKS.load(Ordering::Relaxed))
}

#[path = "support/coordinator_instance.rs"]
#[allow(dead_code)] // the walk over shard ids and the timed size are for the timed benches
mod coordinator_instance;
use coordinator_instance::{coordinator, least_shard, node};

/// An allocation state with `r` regions and shards `0..s` placed by least-shard.
fn state(r: usize, s: usize) -> AllocationState {
    let mut strategy = least_shard();
    let mut state = AllocationState::new(ClusterView::new(Address::parse(&node(0)).expect("a")));
    for i in 0..r {
        let a = Address::parse(&node(i)).expect("address");
        state.upsert_member(Member::new(a.clone()));
        state
            .add_region(&format!("r{i}"), a, false)
            .expect("region");
    }
    for k in 0..s {
        let id = k.to_string();
        match strategy
            .allocate(&state, None, &id, None)
            .expect("allocate")
        {
            Allocation::Region(r) => state.add_shard(&r, &id).expect("add"),
            Allocation::Pending => unreachable!("every region is on an Up member"),
        }
    }
    state
}

/// Live bytes (requested, malloc chunks) held by what `build` returns, while it is alive.
fn held<T>(build: impl FnOnce() -> T) -> (isize, isize) {
    let before = live();
    let value = build();
    let after = live();
    drop(value);
    (after.0 - before.0, after.1 - before.1)
}

fn usage(why: &str) -> ! {
    eprintln!("memory: {why} (usage: memory [--quick] [--out FILE])");
    std::process::exit(2);
}

fn main() {
    let mut out = std::env::var("BENCH_OUT_FILE").ok();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => match args.next() {
                Some(file) => out = Some(file),
                None => usage("--out needs a file"),
            },
            // `--quick`, and `--bench` that cargo passes: nothing to change.
            "--quick" | "--bench" => {}
            other => usage(&format!("unknown argument {other:?}")),
        }
    }
    let flag = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
    // (regions, shards, the figures' suffix)
    let sizes: Vec<(usize, usize, String)> = if flag("BENCH_SCALE") {
        vec![(10_000, 1_000_000, "R10000_S1000000".into())]
    } else {
        let mut shards = vec![10_000, 100_000];
        if flag("BENCH_FULL") {
            shards.push(1_000_000);
        }
        shards
            .into_iter()
            .map(|s| (100, s, format!("S{s}")))
            .collect()
    };
    println!("bytes per shard = (live bytes with S shards - with none, same regions) / S");
    println!(
        "{:>6}  {:>9}  {:>12}  {:>10}  {:>10}  {:>12}  {:>10}  {:>10}",
        "R", "S", "coordinator", "per shard", "malloc", "state", "per shard", "malloc"
    );
    let mut figures = Vec::new();
    let per_shard = |total: isize, base: isize, s: usize| (total - base) as f64 / s as f64;
    for (r, s, suffix) in sizes {
        let coordinator_base = held(|| coordinator(r, 0));
        let state_base = held(|| state(r, 0));
        let c = held(|| coordinator(r, s));
        let a = held(|| state(r, s));
        let cs = (
            per_shard(c.0, coordinator_base.0, s),
            per_shard(c.1, coordinator_base.1, s),
        );
        let as_ = (
            per_shard(a.0, state_base.0, s),
            per_shard(a.1, state_base.1, s),
        );
        println!(
            "{r:>6}  {s:>9}  {:>12}  {:>10.1}  {:>10.1}  {:>12}  {:>10.1}  {:>10.1}",
            c.0 - coordinator_base.0,
            cs.0,
            cs.1,
            a.0 - state_base.0,
            as_.0,
            as_.1
        );
        for (what, v) in [("coordinator", cs), ("state", as_)] {
            for (kind, value) in [("bytes_per_shard", v.0), ("malloc_bytes_per_shard", v.1)] {
                figures.push(serde_json::json!({
                    "name": format!("core.memory.{what}.{kind}.{suffix}"),
                    "value": (value * 10.0).round() / 10.0,
                    "unit": "bytes",
                }));
            }
        }
    }
    if let Some(path) = out {
        let doc = serde_json::json!({"figures": figures, "ratios": []});
        let text = serde_json::to_string_pretty(&doc).expect("json") + "\n";
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("memory: cannot write {path}: {e}");
            std::process::exit(1);
        }
    }
}
