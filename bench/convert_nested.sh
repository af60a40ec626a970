#!/usr/bin/env bash
# Nested data: DuckDB writes a 1M-row Parquet table with a context of five
# scalars and two LIST<LIST<...>> columns (on average 20 inner lists of 8
# values each); then, in one run, `shardtool convert FILE -o out/s --shards
# 8 --jobs 2` (SequenceExample records) against DuckDB reading the same file
# to JSON lines with 2 threads.  Targets: ratio shardtool / DuckDB <= 0.5
# (issue 31), peak RSS under 300 MB.  The two run in turns, RUNS rounds
# (default 3); the ratios printed are the medians of the rounds' ratios, by
# wall time and by CPU time (user + system), which other load on a shared
# machine disturbs far less.
# Needs npm's @duckdb/node-api (tests/install-npm-deps.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-1000000}
export NODE_PATH=$ROOT/tests/interop/node_modules

parquet=$WORK/nested-$rows.parquet
# Inner list lengths 0..16 (mean 8), outer lengths 10..30 (mean 20):
# deterministic functions of the row number, so every run gets one table.
[ -f "$parquet" ] || node "$BENCH_DIR/duckdb_copy.mjs" "
  COPY (
    SELECT i AS id,
           (i * 7919) % 1000003 AS user_id,
           (i % 997) / 7.0 AS score,
           'country-' || (i % 50) AS country,
           i % 2 = 0 AS is_new,
           [[(i + o * 31 + k) % 100000 FOR k IN range((i + o) % 17)]
             FOR o IN range(10 + i % 21)] AS clicks,
           [[((i * o + k) % 1000) / 10.0 FOR k IN range((i * 3 + o) % 17)]
             FOR o IN range(10 + (i * 5) % 21)] AS dwell
    FROM range($rows) t(i)
  ) TO '$parquet' (FORMAT parquet, COMPRESSION snappy)"
bytes=$(stat -c %s "$parquet")
cat "$parquet" > /dev/null

runs=${RUNS:-3}
rounds_reset
for _ in $(seq "$runs"); do
  round_timed st "$ST" convert "$parquet" -o "$WORK/out/s" --shards 8 --jobs 2 --force --quiet
  round_timed db node "$BENCH_DIR/duckdb_copy.mjs" \
    "COPY (SELECT * FROM '$parquet') TO '$WORK/nested.json' (FORMAT json)"
done
echo "input: $parquet ($bytes bytes, $rows rows, 5 scalars + 2 lists of lists, snappy, written by DuckDB); $runs rounds, medians"
echo "shardtool convert --shards 8 --jobs 2 (SequenceExample): $(round_median st 2) s, CPU $(round_median st 3) s, peak RSS $(round_max_mb st) MB (target < 300)"
echo "DuckDB Parquet -> JSON lines (2 threads): $(round_median db 2) s, CPU $(round_median db 3) s, peak RSS $(round_max_mb db) MB"
echo "ratio shardtool / DuckDB (median of the rounds) = $(round_ratio st db 2) wall, $(round_ratio st db 3) CPU  (target <= 0.5)"
echo "load average: $(load_avg)"
