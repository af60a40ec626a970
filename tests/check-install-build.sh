#!/usr/bin/env bash
# Builds shardtool exactly as the README's Install section says, on a machine
# without the test packages: CUnit is hidden from pkg-config (a
# PKG_CONFIG_LIBDIR that holds every .pc file but cunit's), so the build must
# leave the test suite out, say so, and still produce a working binary.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/pc"
for dir in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
  [ -d "$dir" ] || continue
  for pc in "$dir"/*.pc; do
    [ -e "$pc" ] || continue
    case "$(basename "$pc")" in cunit.pc) continue ;; esac
    ln -sf "$pc" "$work/pc/"
  done
done
export PKG_CONFIG_LIBDIR="$work/pc"
! pkg-config --exists cunit || { echo "cunit is still visible to pkg-config"; exit 1; }

# The Install section's commands (into a build directory of its own).
meson setup "$work/build" -Dbuildtype=release | tee "$work/setup.log"
ninja -C "$work/build"
grep -q "test suite *: no" "$work/setup.log" || { echo "meson's summary does not say the tests were left out"; exit 1; }
"$work/build/cli/shardtool" --version
printf 'a,b\n1,x\n' > "$work/t.csv"
"$work/build/cli/shardtool" convert "$work/t.csv" -o "$work/out/t" --quiet
"$work/build/cli/shardtool" verify "$work/out/t-00000-of-00001.tfrecord"
echo "install build without CUnit: ok"
