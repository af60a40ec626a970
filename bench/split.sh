#!/usr/bin/env bash
# split of a 1 GiB uncompressed TFRecord file (in the page cache) into 16
# shards, against `cp` of the same file, in the same run (median of 3
# each), on two kinds of output, each said by name:
#   - tmpfs (/dev/shm): the copying itself, where syncs cost nothing.
#     Target: split / cp <= 1.2;
#   - disk ($WORK): split syncs every shard before naming it (cp does not),
#     and the page cache's writeback makes wall times swing; both figures
#     are printed, with the run into an empty directory and the one that
#     replaces it (--force), which must cost no more than the first; and the
#     same first/--force pair for convert of the bench table (gen_table.py,
#     ROWS rows) into 8 shards.
# CPU times (user + system, medians) beside the wall times.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${RUNS:-3}
rows=${ROWS:-2000000}

shard=$WORK/verify-1g.tfrecord
if [ ! -f "$shard" ]; then
  src=$ROOT/tests/data/tfrecord/tfx/mnist/mnist.tfrecord
  for _ in $(seq 336); do cat "$src"; done > "$shard"
fi
bytes=$(stat -c %s "$shard")
cat "$shard" > /dev/null
echo "input: $shard ($bytes bytes); median of $runs runs"

# first_run DIR CMD...: CMD (its output prefix under DIR) into an empty
# directory each time; prints the median wall time, and cpu_s then gives
# the median CPU time.
first_run() {
  local dir=$1 times=() cpus=() t; shift
  for _ in $(seq "$runs"); do
    rm -rf "$dir"; mkdir -p "$dir"; sync
    t=$(median_of 1 "$@")
    times+=("$t"); cpus+=("$(cpu_s)")
  done
  printf '%s\n' "${cpus[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p" > "$WORK/.cpu"
  printf '%s\n' "${times[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p"
}

# force_run CMD...: CMD over the set already there (--force), after the
# same sync as first_run's, so that neither starts with the other's
# writeback pending; prints the median wall time, cpu_s the median CPU.
force_run() {
  local times=() cpus=() t
  for _ in $(seq "$runs"); do
    sync
    t=$(median_of 1 "$@")
    times+=("$t"); cpus+=("$(cpu_s)")
  done
  printf '%s\n' "${cpus[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p" > "$WORK/.cpu"
  printf '%s\n' "${times[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p"
}

measure() {
  local kind=$1 out=$2
  mkdir -p "$out"
  local t_cp t_first t_force c_cp c_first c_force
  t_cp=$(median_of "$runs" cp "$shard" "$out/copy.tfrecord"); c_cp=$(cpu_s); rm -f "$out/copy.tfrecord"
  t_first=$(first_run "$out/first" "$ST" split "$shard" -o "$out/first/s" --shards 16 --quiet); c_first=$(cpu_s)
  t_force=$(force_run "$ST" split "$shard" -o "$out/first/s" --shards 16 --force --quiet); c_force=$(cpu_s)
  echo "$kind ($out):"
  echo "  cp:                             ${t_cp} s  ($(rate "$bytes" "$t_cp") MB/s), CPU ${c_cp} s"
  echo "  split --shards 16, empty dir:   ${t_first} s  ($(rate "$bytes" "$t_first") MB/s), CPU ${c_first} s"
  echo "  split --shards 16 --force:      ${t_force} s  (replacing the set above), CPU ${c_force} s"
  echo "  $kind: split / cp = $(ratio "$t_first" "$t_cp"); --force / first run = $(ratio "$t_force" "$t_first") (CPU $(ratio "$c_force" "$c_first"))"
  if [ "$kind" = disk ]; then
    local csv=$WORK/table-$rows.csv
    [ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
    cat "$csv" > /dev/null
    local conv=("$ST" convert "$csv" --shards 8 --quiet)
    t_first=$(first_run "$out/conv" "${conv[@]}" -o "$out/conv/x"); c_first=$(cpu_s)
    t_force=$(force_run "${conv[@]}" -o "$out/conv/x" --force); c_force=$(cpu_s)
    echo "  convert $rows rows --shards 8, empty dir: ${t_first} s, CPU ${c_first} s"
    echo "  convert $rows rows --shards 8 --force:    ${t_force} s, CPU ${c_force} s"
    echo "  $kind: convert --force / first run = $(ratio "$t_force" "$t_first") (CPU $(ratio "$c_force" "$c_first"))"
  fi
  rm -rf "$out"
}

if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  measure tmpfs "/dev/shm/shardtool-split-bench"
  echo "  (target on tmpfs: split / cp <= 1.2)"
else
  echo "tmpfs: /dev/shm is not writable here: not measured"
fi
measure disk "${OUT:-$WORK/split-out}"
echo "  (target on disk: --force / first run <= 1.0, split and convert; wall times on disk swing with writeback)"
