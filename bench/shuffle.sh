#!/usr/bin/env bash
# convert --shuffle of the 2M-row x 13-column CSV into 8 shards with 2
# threads against the same convert without --shuffle, in the same run
# (median of 3 each).  Buckets go to $TMPDIR (default /tmp).
# Target: shuffle / plain <= 1.3.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
runs=${RUNS:-3}

csv=$WORK/table-$rows.csv
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
cat "$csv" > /dev/null
# Wall times on a shared machine mean little without the load beside them.
load=$(cut -d' ' -f1-3 /proc/loadavg)

convert=("$ST" convert "$csv" --shards 8 --jobs 2 --force --quiet)
t_plain=$(median_of "$runs" "${convert[@]}" -o "$WORK/out-plain/x")
rss_plain=$(peak_mb); cpu_plain=$(cpu_s)
t_shuf=$(median_of "$runs" "${convert[@]}" -o "$WORK/out-shuf/x" --shuffle --seed 1)
rss_shuf=$(peak_mb); cpu_shuf=$(cpu_s)
echo "input: $csv ($rows rows); median of $runs runs; load average at start: $load"
echo "convert --shards 8 --jobs 2:           ${t_plain} s (CPU ${cpu_plain} s), peak RSS ${rss_plain} MB"
echo "convert ... --shuffle:                 ${t_shuf} s (CPU ${cpu_shuf} s), peak RSS ${rss_shuf} MB"
echo "ratio shuffle / plain = $(ratio "$t_shuf" "$t_plain")  (target <= 1.3); CPU $(ratio "$cpu_shuf" "$cpu_plain")"
