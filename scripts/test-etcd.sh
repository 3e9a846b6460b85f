#!/usr/bin/env bash
# The etcd integration suite: installs etcd-server (and protobuf-compiler, needed to build
# the etcd-client crate) if missing, starts a throw-away etcd on loopback, runs the
# shardline-etcd tests and the 64-process worker-id test against it, and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/etcd-lib.sh

etcd_install
trap etcd_stop EXIT
etcd_start
export SHARDLINE_ETCD_ENDPOINTS=$ETCD_ENDPOINT

cargo test -p shardline-etcd
bash scripts/test-etcd-workerid.sh
