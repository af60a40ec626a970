#!/usr/bin/env bash
# convert --shuffle of the 2M-row x 13-column CSV into 8 shards with 2
# threads against the same convert without --shuffle, in the same run:
# the two alternate (plain, shuffled, plain, ...), so that a slow spell of
# a shared machine falls on both; the ratio is the median of each pair's.
# Buckets go to $TMPDIR (default /tmp).  Target: shuffle / plain <= 1.3.
#
# Also timed: writing as many bytes as the output holds, with dd and one
# fdatasync.  A shuffle writes every output byte after the last input
# record is read (any record may be the first out), so the shuffle's extra
# time cannot be much below that on this disk, however fast the drain.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
runs=${RUNS:-5}

csv=$WORK/table-$rows.csv
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
cat "$csv" > /dev/null
# Wall times on a shared machine mean little without the load beside them.
load=$(cut -d' ' -f1-3 /proc/loadavg)

convert=("$ST" convert "$csv" --shards 8 --jobs 2 --force --quiet)
plain=() shuf=() pairs=() cpu_plain=() cpu_shuf=() rss_plain=0 rss_shuf=0
for _ in $(seq "$runs"); do
  p=$(median_of 1 "${convert[@]}" -o "$WORK/out-plain/x")
  plain+=("$p"); cpu_plain+=("$(cpu_s)"); rss_plain=$(( $(peak_mb) > rss_plain ? $(peak_mb) : rss_plain ))
  s=$(median_of 1 "${convert[@]}" -o "$WORK/out-shuf/x" --shuffle --seed 1)
  shuf+=("$s"); cpu_shuf+=("$(cpu_s)"); rss_shuf=$(( $(peak_mb) > rss_shuf ? $(peak_mb) : rss_shuf ))
  pairs+=("$(awk "BEGIN{printf \"%.3f\", $s / $p}")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

out_mb=$(du -cm "$WORK"/out-plain/x-*-of-00008.tfrecord | tail -n 1 | cut -f1)
floor=$(median_of 3 dd if=/dev/zero of="$WORK/floor.bin" bs=1M count="$out_mb" conv=fdatasync)
rm -f "$WORK/floor.bin"

echo "input: $csv ($rows rows); $runs runs each, alternating; load average at start: $load"
echo "convert --shards 8 --jobs 2:           median $(median "${plain[@]}") s (CPU $(median "${cpu_plain[@]}") s), peak RSS ${rss_plain} MB"
echo "convert ... --shuffle:                 median $(median "${shuf[@]}") s (CPU $(median "${cpu_shuf[@]}") s), peak RSS ${rss_shuf} MB"
echo "pairs' ratios: ${pairs[*]}"
echo "ratio shuffle / plain = $(median "${pairs[@]}") (median of the pairs; target <= 1.3); CPU $(ratio "$(median "${cpu_shuf[@]}")" "$(median "${cpu_plain[@]}")")"
echo "shuffle - plain = $(awk "BEGIN{printf \"%.3f\", $(median "${shuf[@]}") - $(median "${plain[@]}")}") s; writing the output's ${out_mb} MB with dd + fdatasync: ${floor} s"
