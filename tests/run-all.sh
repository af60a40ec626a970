#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs the whole test suite:
#   bash tests/run-all.sh
# Installs the Debian packages (and the npm packages the interop tests use),
# builds into build-test/ and runs `meson test`.  The packages include
# services the tests start: nginx (HTTP tests), Slurm and munge (a one-node
# Slurm job array for the distributed tests); see .ci/install-deps.
set -euo pipefail
cd "$(dirname "$0")/.."

bash .ci/install-deps
bash tests/install-npm-deps.sh

if [ ! -d build-test ]; then
  meson setup build-test -Dbuildtype=debugoptimized
fi
ninja -C build-test
meson test -C build-test --print-errorlogs --num-processes 2 "$@"
