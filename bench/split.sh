#!/usr/bin/env bash
# split of a 1 GiB uncompressed TFRecord file (in the page cache) into 16
# shards, against `cp` of the same file, in the same run (median of 3
# each), on two kinds of output, each said by name:
#   - tmpfs (/dev/shm): the copying itself, where syncs cost nothing.
#     Target: split / cp <= 1.2;
#   - disk ($WORK): split syncs every shard before naming it (cp does not),
#     and the page cache's writeback makes wall times swing; both figures
#     are printed, with the run into an empty directory and the one that
#     replaces it (--force), which must cost no more than the first.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${RUNS:-3}

shard=$WORK/verify-1g.tfrecord
if [ ! -f "$shard" ]; then
  src=$ROOT/tests/data/tfrecord/tfx/mnist/mnist.tfrecord
  for _ in $(seq 336); do cat "$src"; done > "$shard"
fi
bytes=$(stat -c %s "$shard")
cat "$shard" > /dev/null
echo "input: $shard ($bytes bytes); median of $runs runs"

# first_run DIR: split into an empty directory each time (median of runs).
first_run() {
  local dir=$1 times=() t
  for _ in $(seq "$runs"); do
    rm -rf "$dir"; mkdir -p "$dir"; sync
    t=$(best_of 1 "$ST" split "$shard" -o "$dir/s" --shards 16 --quiet)
    times+=("$t")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

measure() {
  local kind=$1 out=$2
  mkdir -p "$out"
  local t_cp t_first t_force
  t_cp=$(median_of "$runs" cp "$shard" "$out/copy.tfrecord"); rm -f "$out/copy.tfrecord"
  t_first=$(first_run "$out/first")
  t_force=$(median_of "$runs" "$ST" split "$shard" -o "$out/first/s" --shards 16 --force --quiet)
  echo "$kind ($out):"
  echo "  cp:                             ${t_cp} s  ($(rate "$bytes" "$t_cp") MB/s)"
  echo "  split --shards 16, empty dir:   ${t_first} s  ($(rate "$bytes" "$t_first") MB/s)"
  echo "  split --shards 16 --force:      ${t_force} s  (replacing the set above)"
  echo "  $kind: split / cp = $(ratio "$t_first" "$t_cp"); --force / first run = $(ratio "$t_force" "$t_first")"
  rm -rf "$out"
}

if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  measure tmpfs "/dev/shm/shardtool-split-bench"
  echo "  (target on tmpfs: split / cp <= 1.2)"
else
  echo "tmpfs: /dev/shm is not writable here: not measured"
fi
measure disk "${OUT:-$WORK/split-out}"
echo "  (target on disk: --force / first run <= 1.0; wall times on disk swing with writeback)"
