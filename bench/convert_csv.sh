#!/usr/bin/env bash
# convert of a 2M-row x 13-column CSV (~217 MB) into 8 shards with 2 threads,
# against DuckDB reading the same CSV and writing snappy Parquet with 2
# threads, in the same run.  Target: ratio shardtool/DuckDB <= 1.0, peak RSS
# under 300 MB.  Needs npm's @duckdb/node-api (tests/install-npm-deps.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}

csv=$WORK/table-$rows.csv
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
bytes=$(stat -c %s "$csv")
cat "$csv" > /dev/null

t_st=$(best_of 3 "$ST" convert "$csv" -o "$WORK/out/x" --shards 8 --jobs 2 --force --quiet)
rss_st=$(peak_mb)
export NODE_PATH=$ROOT/tests/interop/node_modules
t_db=$(best_of 3 node "$BENCH_DIR/duckdb_copy.mjs" \
  "COPY (SELECT * FROM read_csv('$csv')) TO '$WORK/x.parquet' (FORMAT parquet, COMPRESSION snappy)")
echo "input: $csv ($bytes bytes, $rows rows)"
echo "shardtool convert --shards 8 --jobs 2: ${t_st} s ($(rate "$bytes" "$t_st") MB/s, $(awk "BEGIN{printf \"%.2f\", $rows/$t_st/1e6}") M records/s), peak RSS ${rss_st} MB"
echo "DuckDB read_csv -> snappy Parquet (2 threads): ${t_db} s ($(rate "$bytes" "$t_db") MB/s)"
echo "ratio shardtool / DuckDB = $(ratio "$t_st" "$t_db")  (target <= 1.0; RSS target < 300 MB)"
