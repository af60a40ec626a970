#!/usr/bin/env bash
# Avro reading: the bench table (gen_table.py, 13 columns) written once as a
# deflate Avro file by shardtool, then, in the same run:
#   shardtool cat FILE.avro (JSON lines)    against  avrocat (avro-c, JSON)
#   shardtool convert FILE.avro --shards 8 --jobs 2   (records/s, peak RSS)
# and, when built, build/tests/avro_read_bench: the datum decoder against
# avro-c's generic reader on one thread (CPU time).  Needs avrocat (Debian
# avro-bin).  Not a test.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-1000000}

csv=$WORK/table-$rows.csv
avro=$WORK/table-$rows.avro
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
if [ ! -f "$avro" ]; then
  "$ST" convert "$csv" --to avro --avro-codec deflate -o "$WORK/avro-src" --force --quiet --no-manifest
  mv "$WORK/avro-src-00000-of-00001.avro" "$avro"
fi
bytes=$(stat -c %s "$avro")
cat "$avro" > /dev/null

t_cat=$(best_of 3 "$ST" cat "$avro")
echo "input: $avro ($bytes bytes, $rows rows, deflate)"
echo "shardtool cat: ${t_cat} s ($(awk "BEGIN{printf \"%.2f\", $rows/$t_cat/1e6}") M records/s)"
if command -v avrocat > /dev/null; then
  t_peer=$(best_of 3 avrocat "$avro")
  echo "avrocat (avro-c): ${t_peer} s ($(awk "BEGIN{printf \"%.2f\", $rows/$t_peer/1e6}") M records/s)"
  echo "ratio shardtool cat / avrocat = $(ratio "$t_cat" "$t_peer")  (lower is better)"
else
  echo "avrocat not found (apt-get install avro-bin): no peer for cat"
fi

t_conv=$(best_of 3 "$ST" convert "$avro" -o "$WORK/out/avro" --shards 8 --jobs 2 --force --quiet)
# best_of runs in a subshell: read the last run's peak RSS from its time file.
rss_kb=$(awk '{print $2}' "$WORK/.time")
echo "shardtool convert --shards 8 --jobs 2: ${t_conv} s ($(awk "BEGIN{printf \"%.2f\", $rows/$t_conv/1e6}") M records/s), peak RSS $((rss_kb / 1024)) MB"

bench_bin=$(dirname "$ST")/../tests/avro_read_bench
if [ -x "$bench_bin" ]; then
  for codec in null deflate snappy; do "$bench_bin" 500000 "$codec"; done
else
  echo "(ninja -C $(dirname "$(dirname "$ST")") tests/avro_read_bench adds the decoder-only comparison)"
fi
