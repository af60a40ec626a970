#!/usr/bin/env bash
# Parquet memory and I/O: peak RSS of `shardtool convert FILE --shards 8
# --jobs 2` on DuckDB-written snappy Parquet of the benchmark table (see
# convert_csv.sh) at 0.5M and 2M rows (targets: under 256 MB, and not
# growing with the number of rows), then the bytes read from a file written
# with ROW_GROUP_SIZE 1000000 (one page per column chunk, split into
# several units) over its size (target <= 1.05: each column chunk is read
# once however many units share its pages).  Bytes read are the sum of
# pread64 results under strace.
# Needs npm's @duckdb/node-api (tests/install-npm-deps.sh) and strace.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export NODE_PATH=$ROOT/tests/interop/node_modules

table() {  # table ROWS [ROW_GROUP_SIZE]: prints the Parquet file's path
  local rows=$1 rg=${2:-} csv=$WORK/table-$1.csv out opt=""
  out=$WORK/table-$rows${rg:+-rg$rg}.parquet
  [ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
  [ -n "$rg" ] && opt=", ROW_GROUP_SIZE $rg"
  [ -f "$out" ] || node "$BENCH_DIR/duckdb_copy.mjs" \
    "COPY (SELECT * FROM read_csv('$csv')) TO '$out' (FORMAT parquet, COMPRESSION snappy$opt)"
  echo "$out"
}

for rows in 500000 2000000; do
  f=$(table "$rows")
  t=$(best_of 1 "$ST" convert "$f" -o "$WORK/out/p" --shards 8 --jobs 2 --force --quiet)
  echo "peak RSS, $rows rows (default row groups): $(peak_mb) MB (${t} s)"
done

f=$(table 500000 1000000)
strace -f -e trace=pread64 -o "$WORK/.strace" \
  "$ST" convert "$f" -o "$WORK/out/p" --shards 8 --jobs 2 --force --quiet
read_bytes=$(grep pread64 "$WORK/.strace" | grep -v unfinished | sed -E 's/.*= ([0-9]+)$/\1/' |
  grep -E '^[0-9]+$' | awk '{s += $1} END {print s + 0}')
size=$(stat -c %s "$f")
echo "bytes read, 500000 rows in one row group: $read_bytes of $size ($(ratio "$read_bytes" "$size")x the file)"
rm -rf "$WORK/out" "$WORK/.strace"
