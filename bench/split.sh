#!/usr/bin/env bash
# split of a 1 GiB uncompressed TFRecord file (in the page cache) into 16
# shards, against `cp` of the same file, in the same run (median of 3
# each).  split syncs every shard before naming it (cp does not), so on a
# disk the sync dominates: OUT=/dev/shm/split-bench compares the copying
# itself (tmpfs, where the sync costs nothing).  Target: split / cp <= 2.
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
out=${OUT:-$WORK/split-out}
mkdir -p "$out"

t_cp=$(median_of "$runs" cp "$shard" "$out/copy.tfrecord")
rss_cp=$(peak_mb); cpu_cp=$(cpu_s)
t_split=$(median_of "$runs" "$ST" split "$shard" -o "$out/s" --shards 16 --force --quiet)
rss_split=$(peak_mb); cpu_split=$(cpu_s)
t_split_sz=$(median_of "$runs" "$ST" split "$shard" -o "$out/z" --shard-size 64MiB --force --quiet)
echo "input: $shard ($bytes bytes); output in $out; median of $runs runs"
echo "cp:                        ${t_cp} s  ($(rate "$bytes" "$t_cp") MB/s, CPU ${cpu_cp} s), peak RSS ${rss_cp} MB"
echo "split --shards 16:         ${t_split} s  ($(rate "$bytes" "$t_split") MB/s, CPU ${cpu_split} s), peak RSS ${rss_split} MB"
echo "split --shard-size 64MiB:  ${t_split_sz} s"
echo "ratio split / cp = $(ratio "$t_split" "$t_cp")  (target <= 2.0); CPU $(ratio "$cpu_split" "$cpu_cp")"
rm -rf "$out"
