#!/usr/bin/env bash
# Installs the npm packages that interop tests and benchmarks run beside
# shardtool (DuckDB, avsc, s3rver), each pinned by its own package.json.
# Tests that need one skip (exit 77) when it is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
for dir in tests/interop tests/remote; do
  if [ -f "$dir/package.json" ] && [ ! -d "$dir/node_modules" ]; then
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error) ||
      echo "warning: npm install in $dir failed; tests that need it will be skipped" >&2
  fi
done
exit 0
