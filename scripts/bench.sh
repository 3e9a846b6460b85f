#!/usr/bin/env bash
# Every benchmark of issue 8 in one run on this machine, then bench-results.json and the tables
# BENCHMARKS.md quotes. Not part of CI (release builds, minutes of measurement).
#
#   scripts/bench.sh [--quick] [--full] [--out FILE] [--only PART[,PART...]] [--run DIR]
#
#   --quick  a subset in under 10 minutes (warm build): fewer sizes, short measurement, no scale
#   --full   adds S = 1,000,000 shards everywhere and more seeds
#   --out    default: bench-results.json in the repository root
#   --only   core,memory,scale,c,python,node,jvm,quality (default: all)
#   --run    continue in an earlier run's directory (e.g. after fixing one part, with --only)
#
# Parts: core (criterion: strategies, coordinator, region, overhead baseline, snowflake,
# simulator, least-load at S = 100k), memory (bytes per shard), scale (issue 18's scale run: the
# strategy, coordinator, region, least-load and memory benches again at S = 1M shards over
# R = 10,000 regions, each held against its default size), c / python / node / jvm (binding
# overhead; jvm also runs Pekko's own strategies side by side), quality (shardline sim, every
# scenario x strategy).
# The run's raw output stays in ${CARGO_TARGET_DIR:-target}/bench/<time>/ (summary.md there).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

mode=default
run=""
out="$root/bench-results.json"
only="core,memory,scale,c,python,node,jvm,quality"
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) mode=quick ;;
        --full) mode=full ;;
        --out) out="${2:?--out needs a file}"; shift ;;
        --only) only="${2:?--only needs a list of parts}"; shift ;;
        --run) run="${2:?--run needs a directory}"; shift ;;
        -h|--help) sed -n '2,19p' "$0" | grep -v '^set ' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
for part in ${only//,/ }; do
    case "$part" in
        core|memory|scale|c|python|node|jvm|quality) ;;
        *) echo "bench.sh: --only: unknown part '$part' (core,memory,scale,c,python,node,jvm,quality)" >&2; exit 2 ;;
    esac
done
want() { [[ ",$only," == *",$1,"* ]]; }

target=${CARGO_TARGET_DIR:-$root/target}
run=${run:-"$target/bench/$(date -u +%Y%m%dT%H%M%SZ)"}
mkdir -p "$run"
run=$(cd "$run" && pwd)  # the parts run from other directories
export CRITERION_HOME="$run/criterion"
quick=()
criterion=()
case "$mode" in
    quick) quick=(--quick); criterion=(--quick); export BENCH_QUICK=1 ;;
    full) export BENCH_FULL=1 ;;
esac
# The release builds compile etcd-client, whose protos need protoc.
bash scripts/install-deps.sh protoc
start=$(date +%s)
stamp() { echo "== $1 ($(( $(date +%s) - start )) s)"; }

# The core's state benches run with malloc on transparent huge pages, as a coordinator with a
# large state should be deployed (BENCHMARKS.md, "Huge pages"): where the kernel leaves THP to
# madvise, glibc's tunable asks for them (glibc >= 2.35; older ones ignore it); where THP is
# always on there is nothing to ask. The binding-overhead baseline and the bindings run as a
# host starts them. Where huge pages were asked for, the hot paths are measured once more on
# 4 KiB pages, beside them in the same run.
thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)
huge=(env)
case "$thp" in
    madvise)
        huge=(env "GLIBC_TUNABLES=${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.hugetlb=1")
        BENCH_HEAP="core state benches: malloc on transparent huge pages (glibc.malloc.hugetlb=1, THP madvise); 4 KiB pages beside as core-4k" ;;
    always) BENCH_HEAP="core state benches: transparent huge pages (THP always)" ;;
    *) BENCH_HEAP="4 KiB pages (THP ${thp:-unknown})" ;;
esac
export BENCH_HEAP
echo "bench.sh: $BENCH_HEAP"

if want core; then
    stamp "core: criterion benches"
    for bench in strategies coordinator overhead snowflake sim least_load; do
        log="$run/core-$bench.log"
        heap=("${huge[@]}")
        # the bindings' baseline: the same call in Rust, in a process started as theirs are
        [ "$bench" = overhead ] && heap=(env)
        "${heap[@]}" cargo bench -p shardline-core --features sim --bench "$bench" -- "${criterion[@]}" >"$log" 2>&1 ||
            { cat "$log"; echo "bench.sh: cargo bench --bench $bench failed" >&2; exit 1; }
        grep -B1 -E '^ +time:' "$log" | grep -v -E '^--$' || true
    done
    if [ "$thp" = madvise ]; then
        stamp "core: the hot paths again on 4 KiB pages"
        for part in "coordinator get-shard-home/R100_S100000|hash-map-lookup/S100000" "least_load plan/"; do
            bench=${part%% *}
            log="$run/core-4k-$bench.log"
            CRITERION_HOME="$run/criterion-4k" cargo bench -p shardline-core --bench "$bench" -- "${part#* }" "${criterion[@]}" >"$log" 2>&1 ||
                { cat "$log"; echo "bench.sh: cargo bench --bench $bench (4 KiB pages) failed" >&2; exit 1; }
            grep -B1 -E '^ +time:' "$log" | grep -v -E '^--$' || true
        done
    fi
fi
if want memory; then
    stamp "core: memory per shard"
    cargo bench -q -p shardline-core --bench memory -- --out "$run/memory.json"
fi
if want scale && [ "$mode" != quick ]; then
    stamp "scale: S = 1M shards over R = 10,000 regions"
    scale_benches=(coordinator least_load)
    # --full's strategies bench already ran this size
    [ "$mode" = full ] || scale_benches=(strategies "${scale_benches[@]}")
    for bench in "${scale_benches[@]}"; do
        log="$run/scale-$bench.log"
        BENCH_SCALE=1 "${huge[@]}" cargo bench -p shardline-core --features sim --bench "$bench" >"$log" 2>&1 ||
            { cat "$log"; echo "bench.sh: BENCH_SCALE=1 cargo bench --bench $bench failed" >&2; exit 1; }
        grep -B1 -E '^ +time:' "$log" | grep -v -E '^--$' || true
    done
    BENCH_SCALE=1 cargo bench -q -p shardline-core --bench memory -- --out "$run/memory-scale.json"
fi
if want c; then
    stamp "C ABI overhead"
    bash scripts/bench/c.sh "${quick[@]}" --out "$run/c.json"
fi
if want python; then
    stamp "Python overhead"
    python3 scripts/bench/python.py "${quick[@]}" --out "$run/python.json"
fi
if want node; then
    stamp "Node overhead"
    bash scripts/bench/node.sh "${quick[@]}" --out "$run/node.json"
fi
if want jvm; then
    stamp "JVM: Pekko side by side and JNI overhead"
    jvm_mode=("${quick[@]}")
    [ "$mode" = full ] && jvm_mode=(--full)
    bash scripts/bench/jvm.sh "${jvm_mode[@]}" --out "$run/jvm.json"
fi
if want quality; then
    stamp "placement quality (shardline sim)"
    seeds=()
    [ "$mode" = full ] && seeds=(--seeds 20)
    python3 scripts/bench/quality.py "${quick[@]}" "${seeds[@]}" --out "$run/quality.json" --markdown "$run/quality.md" >/dev/null
    stamp "load-aware placement quality (plans with per-shard loads)"
    python3 scripts/bench/load_quality.py "${quick[@]}" --out "$run/load-quality.json" --markdown "$run/load-quality.md" >/dev/null
fi

stamp "merging"
python3 scripts/bench/merge.py --run "$run" --out "$out" --markdown "$run/summary.md" --mode "$mode"
echo "bench.sh: done in $(( $(date +%s) - start )) s; tables in $run/summary.md"
if [ -f "$run/quality.md" ]; then echo "placement quality table: $run/quality.md"; fi
if [ -f "$run/load-quality.md" ]; then echo "load-aware quality table: $run/load-quality.md"; fi
