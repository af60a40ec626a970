#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs the whole test suite:
#   bash tests/run-all.sh
# Installs the Debian packages (and the npm packages the interop tests use),
# builds into build-test/ and runs `meson test`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash .ci/install-deps
bash tests/install-npm-deps.sh

if [ ! -d build-test ]; then
  meson setup build-test -Dbuildtype=debugoptimized
fi
ninja -C build-test
meson test -C build-test --print-errorlogs --num-processes 2 "$@"
