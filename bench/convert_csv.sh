#!/usr/bin/env bash
# convert of a 2M-row x 13-column CSV (~207 MB) into 8 shards with 2 threads,
# against DuckDB reading the same CSV and writing snappy Parquet with 2
# threads, in the same run.  Target: ratio shardtool/DuckDB <= 0.5 (issue
# 31), peak RSS under 300 MB.  The two run in turns, RUNS rounds (default
# 5), and the ratio printed is the median of the rounds' ratios: on a
# shared machine the load changes within seconds, and a round compares
# runs made under about the same load.  CPU time (user + system) is
# printed beside wall time: it says more there.  Put WORK on tmpfs
# (WORK=/dev/shm/...) to take the disk out.  Needs npm's @duckdb/node-api
# (tests/install-npm-deps.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}

csv=$WORK/table-$rows.csv
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
bytes=$(stat -L -c %s "$csv")
cat "$csv" > /dev/null
export NODE_PATH=$ROOT/tests/interop/node_modules

runs=${RUNS:-5}
rounds_reset
for _ in $(seq "$runs"); do
  round_timed st "$ST" convert "$csv" -o "$WORK/out/x" --shards 8 --jobs 2 --force --quiet
  round_timed db node "$BENCH_DIR/duckdb_copy.mjs" \
    "COPY (SELECT * FROM read_csv('$csv')) TO '$WORK/x.parquet' (FORMAT parquet, COMPRESSION snappy)"
done
t_st=$(round_median st 2); cpu_st=$(round_median st 3)
t_db=$(round_median db 2); cpu_db=$(round_median db 3)
rss_st=$(round_max_mb st)
r_wall=$(round_ratio st db 2)
r_cpu=$(round_ratio st db 3)
echo "input: $csv ($bytes bytes, $rows rows); $runs rounds, medians"
echo "shardtool convert --shards 8 --jobs 2: ${t_st} s ($(rate "$bytes" "$t_st") MB/s, $(awk "BEGIN{printf \"%.2f\", $rows/$t_st/1e6}") M records/s), CPU ${cpu_st} s, peak RSS ${rss_st} MB"
echo "DuckDB read_csv -> snappy Parquet (2 threads): ${t_db} s ($(rate "$bytes" "$t_db") MB/s), CPU ${cpu_db} s"
echo "ratio shardtool / DuckDB (median of the rounds) = $r_wall wall, $r_cpu CPU  (target <= 0.5; RSS target < 300 MB)"
echo "load average: $(load_avg)"
