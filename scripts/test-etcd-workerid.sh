#!/usr/bin/env bash
# 64 `shardline worker-id reserve` processes started at once against one etcd must get the
# worker ids 0..63 exactly. Uses SHARDLINE_ETCD_ENDPOINTS if set, else starts its own etcd.
# Prints `etcd worker-id: N passed, M failed`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/etcd-lib.sh

N=64
HOLD=${HOLD:-15}

work=$(mktemp -d "${TMPDIR:-/tmp}/shardline-wid.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  etcd_stop
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${SHARDLINE_ETCD_ENDPOINTS:-}" ]; then
  endpoint=$SHARDLINE_ETCD_ENDPOINTS
else
  command -v etcd >/dev/null || { echo "no etcd on PATH: run scripts/test-etcd.sh" >&2; exit 1; }
  etcd_start
  endpoint=$ETCD_ENDPOINT
fi

cargo build -q -p shardline-cli --features etcd
bin=$(cd "${CARGO_TARGET_DIR:-$PWD/target}" && pwd)/debug/shardline
ns="wid-test-$$-$(date +%s%N)"
common=(--backend etcd --endpoints "$endpoint" --namespace "$ns")

passed=0
failed=0
check() {
  if eval "$2"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $1" >&2
  fi
}

# Every process waits for the same go file, so they start their reservations together.
for i in $(seq 0 $((N - 1))); do
  (
    while [ ! -e "$work/go" ]; do sleep 0.01; done
    exec "$bin" worker-id reserve "${common[@]}" --ttl 10 --hold "$HOLD" >"$work/out.$i" 2>"$work/err.$i"
  ) &
  pids+=($!)
done
touch "$work/go"

# While they all hold: wait (bounded) for every line, then compare with the registry.
for _ in $(seq 1 $((HOLD * 10))); do
  [ "$(cat "$work"/out.* 2>/dev/null | wc -l)" -ge "$N" ] && break
  sleep 0.1
done
"$bin" worker-id list "${common[@]}" >"$work/list"

codes=()
for p in "${pids[@]}"; do
  if wait "$p"; then codes+=(0); else codes+=($?); fi
done
pids=()

for i in $(seq 0 $((N - 1))); do
  check "process $i exited 0 and printed one reservation" \
    "[ '${codes[$i]}' = 0 ] && grep -Eq '^\{\"workerId\":[0-9]+,\"epoch\":[0-9]+\}$' '$work/out.$i'"
  [ "${codes[$i]}" = 0 ] || sed "s/^/  process $i: /" "$work/err.$i" >&2
done
ids=$(cat "$work"/out.* | sed -E 's/.*"workerId":([0-9]+).*/\1/' | sort -n)
check "the 64 ids are 0..63 exactly" "[ \"\$(echo \"\$ids\" | tr '\n' ' ')\" = \"$(seq 0 $((N - 1)) | tr '\n' ' ')\" ]"
check "the registry listed 64 live reservations while they were held" \
  "[ \"\$(grep -o '\"workerId\"' '$work/list' | wc -l)\" = $N ]"
"$bin" worker-id list "${common[@]}" >"$work/after"
check "every reservation was released" "[ \"\$(cat '$work/after')\" = '[]' ]"

echo "etcd worker-id: $passed passed, $failed failed"
[ "$failed" = 0 ]
