#!/usr/bin/env bash
# The etcd integration suite: installs etcd-server (and protobuf-compiler, needed to build
# the etcd-client crate) if missing, starts a throw-away etcd on loopback, runs the
# shardline-etcd tests, the 64-process worker-id test, and the C, Node and JVM etcd tests (each
# built with its `etcd` feature) against it, and stops it. (Python's run in
# scripts/test-python.sh: the wheel always has etcd.)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/etcd-lib.sh

etcd_install
trap etcd_stop EXIT
etcd_start
export SHARDLINE_ETCD_ENDPOINTS=$ETCD_ENDPOINT

cargo test -p shardline-etcd
bash scripts/test-etcd-workerid.sh

echo "=== C: shardline_etcd (libshardline built with --features etcd; prints 'c etcd: ...')"
bash scripts/test-c.sh --etcd

echo "=== Node: Etcd, EtcdLease, EtcdStore (addon built with --features etcd), and examples/node/etcd-service.mjs"
(
    cd bindings/node
    npm ci --no-audit --no-fund --loglevel=error
    npx napi build --platform --features etcd --js index.js --dts index.d.ts
    # The classes are the same with or without the feature, so the generated files are too.
    git diff --exit-code -- index.js index.d.ts
    report=${CARGO_TARGET_DIR:-../../target}/node-etcd-tests.xml
    node --test --test-reporter=spec --test-reporter-destination=stdout \
        --test-reporter=junit --test-reporter-destination="$report" test/etcd.test.mjs
    python3 ../../scripts/junit-summary.py "node etcd" "" "$report"
    node ../../examples/node/etcd-service.mjs
)

echo "=== JVM: org.shardline.Etcd (library built with the etcd feature)"
(cd bindings/java && mvn -B -ntp -Dstyle.color=never ${MVN_ARGS:-} -pl shardline \
    -Dshardline.cargo.features=bench,etcd -Dtest=EtcdTest -Dsurefire.failIfNoSpecifiedTests=false test)
python3 scripts/junit-summary.py "java etcd" "" bindings/java/shardline/target/surefire-reports/TEST-org.shardline.EtcdTest.xml
