#!/usr/bin/env bash
# The whole test suite again under AddressSanitizer + UndefinedBehaviorSanitizer
# (leaks included): every unit suite, CLI case, interop and hostile-input test,
# and every fuzz target replaying its corpus, built into build-asan/.
#   bash tests/run-sanitized.sh [meson test arguments]
# Expects the packages tests/run-all.sh installs.  Any sanitizer report fails
# the test that triggered it (halt_on_error / abort_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d build-asan ]; then
  meson setup build-asan -Dbuildtype=debug -Db_sanitize=address,undefined -Db_lundef=false
fi
ninja -C build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Sanitized code runs several times slower: give every suite three times its timeout.
meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3 "$@"
