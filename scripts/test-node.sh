#!/usr/bin/env bash
# The Node binding: install the locked tools, build the addon (debug), check that the
# generated loader and typings match the checked-in ones, run the node:test suite, and run
# the example. Needs Node >= 20, npm and cargo.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pkg="$root/bindings/node"
cd "$pkg"

# The generated files as checked in (or as they were before this run, when not yet tracked).
before=$(mktemp -d)
trap 'rm -rf "$before"' EXIT
cp index.js index.d.ts "$before/"

npm ci --no-audit --no-fund
npm run build:debug

if git ls-files --error-unmatch index.js index.d.ts >/dev/null 2>&1; then
    git diff --exit-code -- index.js index.d.ts ||
        { echo "index.js / index.d.ts differ from the generated ones: commit the regenerated files" >&2; exit 1; }
fi
for f in index.js index.d.ts; do
    diff -u "$before/$f" "$f" ||
        { echo "$f changed when regenerated: commit the regenerated file" >&2; exit 1; }
done

# The randomized test compares with the CLI; build it here so the test does not have to.
(cd "$root" && cargo build -q -p shardline-cli)

npm test

node "$root/examples/node/three-nodes.mjs"
