#!/usr/bin/env bash
# convert --compression gzip (default level) of a 2M-row x 13-column CSV
# into 8 shards with 2 threads, against plain convert and against plain
# convert followed by `pigz -p 2` of its shards, in the same run (median of
# 3 each), for two tables (gen_table.py):
#   - the bench table (6 small ints, 4 short decimals, 3 short strings);
#   - a wide one (gen_table.py --wide: 6 int64s over their whole range, 4
#     doubles at full precision, 3 short strings), whose shards compress
#     worse, so that deflate is a larger share of the work.
# Targets: gzip / plain <= 1.4 on both; gzip <= plain + pigz.
# CASES=table or CASES=wide runs one of them.
# Needs pigz (apt-get install pigz).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
runs=${RUNS:-3}
kind=${KIND:-gzip}

run_case() {
local name=$1 csv=$WORK/$1-$rows.csv
if [ "$name" = wide ]; then
  [ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" --wide "$csv" "$rows"
else
  [ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
fi
cat "$csv" > /dev/null

convert=("$ST" convert "$csv" --shards 8 --jobs 2 --force --quiet)
t_plain=$(median_of "$runs" "${convert[@]}" -o "$WORK/out-plain/x")
rss_plain=$(peak_mb); cpu_plain=$(cpu_s)
t_gz=$(median_of "$runs" "${convert[@]}" -o "$WORK/out-gz/x" --compression "$kind")
rss_gz=$(peak_mb); cpu_gz=$(cpu_s)
t_pigz=$(median_of "$runs" bash -c \
  "rm -rf '$WORK/out-pigz' && \"\$@\" -o '$WORK/out-pigz/x' && pigz -p 2 '$WORK/out-pigz/'x-*.tfrecord" \
  _ "${convert[@]}")
cpu_pigz=$(cpu_s)
plain_bytes=$(cat "$WORK/out-plain/"x-*.tfrecord | wc -c)
gz_bytes=$(cat "$WORK/out-gz/"x-*.tfrecord.* | wc -c)
pigz_bytes=$(cat "$WORK/out-pigz/"x-*.gz | wc -c)
echo "== $name table: $csv ($rows rows, $(stat -c %s "$csv") bytes); median of $runs runs"
echo "plain convert --shards 8 --jobs 2:       ${t_plain} s (CPU ${cpu_plain} s), $plain_bytes bytes, peak RSS ${rss_plain} MB"
echo "convert --compression $kind:              ${t_gz} s (CPU ${cpu_gz} s), $gz_bytes bytes, peak RSS ${rss_gz} MB"
echo "plain convert + pigz -p 2 (level 6):     ${t_pigz} s (CPU ${cpu_pigz} s), $pigz_bytes bytes"
echo "$name: ratio $kind / plain = $(ratio "$t_gz" "$t_plain")  (target <= 1.4); CPU $(ratio "$cpu_gz" "$cpu_plain")"
echo "$name: ratio $kind / (plain + pigz -p 2) = $(ratio "$t_gz" "$t_pigz")  (target <= 1.0); CPU $(ratio "$cpu_gz" "$cpu_pigz")"
}
for c in ${CASES:-table wide}; do run_case "$c"; done
