#!/usr/bin/env bash
# avsc (npm) writes the 2M-row benchmark table (gen_table.py) as a deflate
# Avro file; then, in one run: `shardtool convert FILE -o out/x --shards 8`
# (2 threads) against avsc merely decoding the same file
# (createFileDecoder, counting records), and avro-c's avrocat for reference.
# Target: shardtool's whole conversion takes no longer than avsc's decode
# (ratio <= 1.0).  Needs avsc (tests/install-npm-deps.sh) and avrocat
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

t_st=$(best_of 3 "$ST" convert "$avro" -o "$WORK/out/a" --shards 8 --jobs 2 --force --quiet)
rss_st=$(peak_mb)
t_avsc=$(best_of 3 node "$BENCH_DIR/avsc.mjs" count "$avro")
echo "input: $avro ($bytes bytes, $rows rows, deflate, written by avsc)"
echo "shardtool convert --shards 8 --jobs 2: ${t_st} s ($(awk "BEGIN{printf \"%.2f\", $rows/$t_st/1e6}") M records/s), peak RSS ${rss_st} MB"
echo "avsc decode only (count records):      ${t_avsc} s"
if command -v avrocat > /dev/null; then
  t_avrocat=$(best_of 1 avrocat "$avro")
  echo "avro-c avrocat (to JSON):              ${t_avrocat} s"
fi
echo "ratio shardtool convert / avsc decode = $(ratio "$t_st" "$t_avsc")  (target <= 1.0)"
