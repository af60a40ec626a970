#!/usr/bin/env bash
# The 2M-row benchmark table (gen_table.py) as 8 TFRecord shards, then, in
# one run: `shardtool convert SHARDS --to parquet --shards 8 --jobs 2`
# (snappy) against DuckDB converting the same table from CSV to snappy
# Parquet with 2 threads (the same column types: BIGINT, FLOAT, VARCHAR).
# The two run in turns, RUNS rounds (default 3); the time ratios printed
# are the medians of the rounds' ratios, by wall time and by CPU time
# (user + system), which other load on a shared machine disturbs far less.
# Prints the time ratios (target <= 0.5, issue 31), the size ratio (target
# <= 1.15) and shardtool's peak RSS (target < 300 MB).
# Needs npm's @duckdb/node-api (tests/install-npm-deps.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
export NODE_PATH=$ROOT/tests/interop/node_modules

csv=$WORK/table-$rows.csv
tf=$WORK/tf-$rows/t
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
if [ ! -f "$tf-00000-of-00008.tfrecord" ]; then
  "$ST" convert "$csv" -o "$tf" --shards 8 --force --quiet --no-manifest
fi
cat "$csv" "$tf"-*.tfrecord > /dev/null

types="{'i0':'BIGINT','i1':'BIGINT','i2':'BIGINT','i3':'BIGINT','i4':'BIGINT','i5':'BIGINT',"
types+="'f0':'FLOAT','f1':'FLOAT','f2':'FLOAT','f3':'FLOAT','s0':'VARCHAR','s1':'VARCHAR','s2':'VARCHAR'}"
rm -rf "$WORK/pq"
runs=${RUNS:-3}
rounds_reset
for _ in $(seq "$runs"); do
  round_timed st "$ST" convert "$tf"-*.tfrecord --to parquet -o "$WORK/pq/p" --shards 8 --jobs 2 --force --quiet
  round_timed db node "$BENCH_DIR/duckdb_copy.mjs" \
    "COPY (SELECT * FROM read_csv('$csv', columns = $types, header = true)) TO '$WORK/duck.parquet' (FORMAT parquet, COMPRESSION snappy)"
done
size_st=$(cat "$WORK/pq"/p-*.parquet | wc -c)
size_db=$(stat -c %s "$WORK/duck.parquet")
echo "input: $rows rows x 13 columns as 8 TFRecord shards ($(cat "$tf"-*.tfrecord | wc -c) bytes); $runs rounds, medians"
echo "shardtool convert --to parquet --shards 8 --jobs 2: $(round_median st 2) s, CPU $(round_median st 3) s, ${size_st} bytes, peak RSS $(round_max_mb st) MB"
echo "DuckDB CSV -> snappy Parquet (2 threads):          $(round_median db 2) s, CPU $(round_median db 3) s, ${size_db} bytes"
echo "time ratio shardtool / DuckDB (median of the rounds) = $(round_ratio st db 2) wall, $(round_ratio st db 3) CPU  (target <= 0.5)"
echo "size ratio shardtool / DuckDB = $(ratio "$size_st" "$size_db")  (target <= 1.15)"
echo "peak RSS $(round_max_mb st) MB  (target < 300)"
echo "load average: $(load_avg)"
