#!/usr/bin/env bash
# Node binding overhead: builds the addon in release mode and runs scripts/bench/node.mjs.
#   scripts/bench/node.sh [--quick] [--out FILE]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root/bindings/node"
[ -d node_modules ] || npm ci --no-audit --no-fund >/dev/null
npm run -s build >/dev/null
node "$root/scripts/bench/node.mjs" "$@"
