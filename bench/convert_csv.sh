#!/usr/bin/env bash
# convert of a 2M-row x 13-column CSV (~207 MB) into 8 shards with 2 threads,
# against DuckDB reading the same CSV and writing snappy Parquet with 2
# threads, in the same run (median of RUNS, default 3).  Target: ratio
# shardtool/DuckDB <= 0.6 (issue 15), peak RSS under 300 MB.  CPU time
# (user + system) is printed beside wall time: on a shared machine it says
# more.  Put WORK on tmpfs (WORK=/dev/shm/...) to take the disk out.  Needs
# npm's @duckdb/node-api (tests/install-npm-deps.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}

csv=$WORK/table-$rows.csv
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
bytes=$(stat -c %s "$csv")
cat "$csv" > /dev/null

runs=${RUNS:-3}
t_st=$(median_of "$runs" "$ST" convert "$csv" -o "$WORK/out/x" --shards 8 --jobs 2 --force --quiet)
rss_st=$(peak_mb); cpu_st=$(cpu_s)
export NODE_PATH=$ROOT/tests/interop/node_modules
t_db=$(median_of "$runs" node "$BENCH_DIR/duckdb_copy.mjs" \
  "COPY (SELECT * FROM read_csv('$csv')) TO '$WORK/x.parquet' (FORMAT parquet, COMPRESSION snappy)")
cpu_db=$(cpu_s)
echo "input: $csv ($bytes bytes, $rows rows); median of $runs runs"
echo "shardtool convert --shards 8 --jobs 2: ${t_st} s ($(rate "$bytes" "$t_st") MB/s, $(awk "BEGIN{printf \"%.2f\", $rows/$t_st/1e6}") M records/s), CPU ${cpu_st} s, peak RSS ${rss_st} MB"
echo "DuckDB read_csv -> snappy Parquet (2 threads): ${t_db} s ($(rate "$bytes" "$t_db") MB/s), CPU ${cpu_db} s"
echo "ratio shardtool / DuckDB = $(ratio "$t_st" "$t_db") wall, $(ratio "$cpu_st" "$cpu_db") CPU  (target <= 0.6; RSS target < 300 MB)"
