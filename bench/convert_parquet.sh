#!/usr/bin/env bash
# DuckDB writes the 2M-row benchmark table (see convert_csv.sh) as snappy
# Parquet; then, in one run, `shardtool convert FILE -o out/x --shards 8
# --jobs 2` against DuckDB's COPY (SELECT * FROM FILE) TO 'x.csv' (HEADER)
# with 2 threads.  Target: ratio shardtool / DuckDB <= 0.5 (issue 31), judged
# by CPU time (user + system), which other load on a shared machine
# disturbs far less than wall time; medians of RUNS runs (5) each.
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

runs=${RUNS:-5}
t_st=$(median_of "$runs" "$ST" convert "$parquet" -o "$WORK/out/p" --shards 8 --jobs 2 --force --quiet)
rss_st=$(peak_mb); cpu_st=$(cpu_s)
t_db=$(median_of "$runs" node "$BENCH_DIR/duckdb_copy.mjs" \
  "COPY (SELECT * FROM '$parquet') TO '$WORK/x.csv' (HEADER)")
cpu_db=$(cpu_s)
echo "input: $parquet ($bytes bytes, $rows rows, snappy, written by DuckDB)"
echo "shardtool convert --shards 8 --jobs 2: ${t_st} s wall, CPU ${cpu_st} s ($(awk "BEGIN{printf \"%.2f\", $rows/$t_st/1e6}") M records/s), peak RSS ${rss_st} MB, $(cat "$WORK"/out/p-*.tfrecord | wc -c) bytes written"
echo "DuckDB Parquet -> CSV (2 threads): ${t_db} s wall, CPU ${cpu_db} s, $(stat -c %s "$WORK/x.csv") bytes written"
echo "ratio shardtool / DuckDB (medians of $runs) = $(ratio "$t_st" "$t_db") wall, $(ratio "$cpu_st" "$cpu_db") CPU  (target <= 0.5)"
