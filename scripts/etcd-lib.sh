# Sourced by the etcd test scripts: install, start and stop a throw-away single-node etcd on
# loopback. Nothing here touches the etcd service the Debian package installs.
#
#   etcd_install      apt-installs etcd-server (and protobuf-compiler, which the etcd-client
#                     crate needs at build time) when missing
#   etcd_start        starts etcd on free loopback ports with a temp data dir; sets
#                     ETCD_ENDPOINT, ETCD_PID, ETCD_DIR
#   etcd_stop         stops it and removes the data dir (safe to call twice)

etcd_install() {
  bash "$(dirname "${BASH_SOURCE[0]}")/install-deps.sh" etcd protoc
}

# A loopback port nobody listens on.
etcd_free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

etcd_start() {
  local client peer
  client=$(etcd_free_port)
  peer=$(etcd_free_port)
  while [ "$peer" = "$client" ]; do peer=$(etcd_free_port); done
  ETCD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/shardline-etcd.XXXXXX")
  ETCD_ENDPOINT="http://127.0.0.1:$client"
  etcd --name shardline-test \
    --data-dir "$ETCD_DIR/data" \
    --listen-client-urls "$ETCD_ENDPOINT" \
    --advertise-client-urls "$ETCD_ENDPOINT" \
    --listen-peer-urls "http://127.0.0.1:$peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "shardline-test=http://127.0.0.1:$peer" \
    >"$ETCD_DIR/etcd.log" 2>&1 &
  ETCD_PID=$!
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$client") 2>/dev/null; then
      echo "etcd $(etcd --version | head -1 | awk '{print $3}') at $ETCD_ENDPOINT (pid $ETCD_PID)"
      return 0
    fi
    if ! kill -0 "$ETCD_PID" 2>/dev/null; then
      cat "$ETCD_DIR/etcd.log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "etcd did not start listening on $ETCD_ENDPOINT" >&2
  return 1
}

etcd_stop() {
  if [ -n "${ETCD_PID:-}" ]; then
    kill "$ETCD_PID" 2>/dev/null || true
    wait "$ETCD_PID" 2>/dev/null || true
    ETCD_PID=
  fi
  if [ -n "${ETCD_DIR:-}" ]; then
    rm -rf "$ETCD_DIR"
    ETCD_DIR=
  fi
}
