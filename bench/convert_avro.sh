#!/usr/bin/env bash
# avsc (npm) writes the 2M-row benchmark table (gen_table.py) as a deflate
# Avro file; then, in one run: `shardtool convert FILE -o out/x --shards 8`
# (2 threads) against avsc merely decoding the same file
# (createFileDecoder, counting records), and avro-c's avrocat for reference.
# Target: shardtool's whole conversion takes at most half of avsc's decode
# (ratio <= 0.5, issue 31).  The two run in turns, RUNS rounds (default 5);
# the ratios printed are the medians of the rounds' ratios, by wall time and
# by CPU time (user + system), which other load on a shared machine
# disturbs far less.  Needs avsc (tests/install-npm-deps.sh) and avrocat
# (Debian avro-bin).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
export NODE_PATH=$ROOT/tests/interop/node_modules

csv=$WORK/table-$rows.csv
avro=$WORK/table-$rows-avsc.avro
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
[ -f "$avro" ] || node "$BENCH_DIR/avsc.mjs" write "$csv" "$avro"
bytes=$(stat -c %s "$avro")
cat "$avro" > /dev/null

runs=${RUNS:-5}
rounds_reset
for _ in $(seq "$runs"); do
  round_timed st "$ST" convert "$avro" -o "$WORK/out/a" --shards 8 --jobs 2 --force --quiet
  round_timed avsc node "$BENCH_DIR/avsc.mjs" count "$avro"
done
t_st=$(round_median st 2); cpu_st=$(round_median st 3)
t_avsc=$(round_median avsc 2); cpu_avsc=$(round_median avsc 3)
echo "input: $avro ($bytes bytes, $rows rows, deflate, written by avsc); $runs rounds, medians"
echo "shardtool convert --shards 8 --jobs 2: ${t_st} s ($(awk "BEGIN{printf \"%.2f\", $rows/$t_st/1e6}") M records/s), CPU ${cpu_st} s, peak RSS $(round_max_mb st) MB"
echo "avsc decode only (count records):      ${t_avsc} s, CPU ${cpu_avsc} s"
if command -v avrocat > /dev/null; then
  t_avrocat=$(best_of 1 avrocat "$avro")
  echo "avro-c avrocat (to JSON):              ${t_avrocat} s"
fi
echo "ratio shardtool convert / avsc decode (median of the rounds) = $(round_ratio st avsc 2) wall, $(round_ratio st avsc 3) CPU  (target <= 0.5)"
echo "load average: $(load_avg)"
