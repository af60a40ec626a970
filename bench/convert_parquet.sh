#!/usr/bin/env bash
# DuckDB writes the 2M-row benchmark table (see convert_csv.sh) as snappy
# Parquet; then, in one run, `shardtool convert FILE -o out/x --shards 8
# --jobs 2` against DuckDB's COPY (SELECT * FROM FILE) TO 'x.csv' (HEADER)
# with 2 threads.  Target: ratio shardtool / DuckDB <= 1.0.
# Needs npm's @duckdb/node-api (tests/install-npm-deps.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
export NODE_PATH=$ROOT/tests/interop/node_modules

csv=$WORK/table-$rows.csv
parquet=$WORK/table-$rows.parquet
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
[ -f "$parquet" ] || node "$BENCH_DIR/duckdb_copy.mjs" \
  "COPY (SELECT * FROM read_csv('$csv')) TO '$parquet' (FORMAT parquet, COMPRESSION snappy)"
bytes=$(stat -c %s "$parquet")
cat "$parquet" > /dev/null

t_st=$(best_of 3 "$ST" convert "$parquet" -o "$WORK/out/p" --shards 8 --jobs 2 --force --quiet)
rss_st=$(peak_mb)
t_db=$(best_of 3 node "$BENCH_DIR/duckdb_copy.mjs" \
  "COPY (SELECT * FROM '$parquet') TO '$WORK/x.csv' (HEADER)")
echo "input: $parquet ($bytes bytes, $rows rows, snappy, written by DuckDB)"
echo "shardtool convert --shards 8 --jobs 2: ${t_st} s ($(awk "BEGIN{printf \"%.2f\", $rows/$t_st/1e6}") M records/s), peak RSS ${rss_st} MB"
echo "DuckDB Parquet -> CSV (2 threads): ${t_db} s"
echo "ratio shardtool / DuckDB = $(ratio "$t_st" "$t_db")  (target <= 1.0)"
