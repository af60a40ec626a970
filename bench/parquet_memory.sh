#!/usr/bin/env bash
# Parquet memory and I/O: peak RSS and CPU time of `shardtool convert FILE
# --shards 8 --jobs 2` on DuckDB-written snappy Parquet files (target: under
# 256 MB for each, and not growing with the number of rows; the nested file
# of convert_nested.sh: under 300 MB), then the bytes read from a file
# written with ROW_GROUP_SIZE 1000000 (one page per column chunk, split into
# several units) over its size (target <= 1.05: each column chunk is read
# once however many units share its pages), and its CPU time against the
# same rows in DuckDB's default row groups (target: within 10%).  Bytes read are the sum of
# pread64 results under strace.
#
# Files (generated once, cached in bench/work):
#   table-N       the 13-column table of gen_table.py, 0.5M / 2M / 8M rows
#   wide          50k rows x 1,000 columns (ints, doubles, short strings)
#   text          200k rows with one 2 KiB text value each
#   binary-rg     5,000 image-like values of 100-300 KiB (random bytes, each
#                 unique) in row groups of 2,000 rows (about 400 MB each)
#   binary-1rg    the same values in one row group of about 1 GB (DuckDB's
#                 default for such a file would be one 4 GB row group: 1 GB
#                 keeps the disk use sane and shows the same thing)
#   nested        convert_nested.sh's 1M-row table (two lists of lists)
# ONLY=NAME[,NAME...] measures only those; JOBS=N (default 2).  The files
# take about 3 GB under bench/work; CLEAN=1 deletes the large ones after.
# Needs npm's @duckdb/node-api (tests/install-npm-deps.sh) and strace.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export NODE_PATH=$ROOT/tests/interop/node_modules
JOBS=${JOBS:-2}
ONLY=${ONLY:-}

duck() { node "$BENCH_DIR/duckdb_copy.mjs" "$1"; }

table() {  # table ROWS [ROW_GROUP_SIZE]: prints the Parquet file's path
  local rows=$1 rg=${2:-} csv=$WORK/table-$1.csv out opt=""
  out=$WORK/table-$rows${rg:+-rg$rg}.parquet
  [ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
  [ -n "$rg" ] && opt=", ROW_GROUP_SIZE $rg"
  [ -f "$out" ] || duck "COPY (SELECT * FROM read_csv('$csv')) TO '$out' (FORMAT parquet, COMPRESSION snappy$opt)"
  echo "$out"
}

wide() {
  local out=$WORK/wide-50000x1000.parquet cols="" k
  if [ ! -f "$out" ]; then
    for k in $(seq 0 999); do
      case $((k % 3)) in
        0) cols+=", (i * $((k + 7)) + $k) % 1000003 AS c$k";;
        1) cols+=", ((i + $k) % 9973) / 7.0 AS c$k";;
        2) cols+=", 'v' || ((i * $k) % 5000) AS c$k";;
      esac
    done
    duck "COPY (SELECT i AS id$cols FROM range(50000) t(i)) TO '$out' (FORMAT parquet, COMPRESSION snappy)"
  fi
  echo "$out"
}

text() {
  local out=$WORK/text-2k.parquet
  # 2 KiB per value: 64 MD5 digests of the row number and a counter (snappy
  # finds little to share in them).
  [ -f "$out" ] || duck "COPY (SELECT i AS id,
      (SELECT string_agg(md5((i * 64 + k)::VARCHAR), '') FROM range(64) r(k)) AS body
    FROM range(200000) t(i)) TO '$out' (FORMAT parquet, COMPRESSION snappy)"
  echo "$out"
}

blobs() {  # 64 files of random bytes, 100-300 KiB each (read_blob's input)
  local dir=$WORK/blobs i
  [ -d "$dir" ] && { echo "$dir"; return; }
  mkdir -p "$dir.tmp"
  for i in $(seq 0 63); do
    head -c $(( (100 + (i * 37) % 201) * 1024 )) /dev/urandom > "$dir.tmp/b$i.bin"
  done
  mv "$dir.tmp" "$dir"
  echo "$dir"
}

binary() {  # binary ROW_GROUP_ROWS NAME
  local out=$WORK/binary-$2.parquet dir
  dir=$(blobs)
  # 5,000 values: each blob taken again with the row number appended, so
  # that no two are equal (no dictionary) and snappy finds nothing.
  [ -f "$out" ] || duck "COPY (SELECT i AS id, content || ('#' || i)::BLOB AS image
      FROM range(5000) t(i) JOIN (SELECT row_number() OVER (ORDER BY filename) - 1 AS n, content
                                  FROM read_blob('$dir/*.bin')) b ON b.n = i % 64
      ORDER BY i) TO '$out' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE $1)"
  echo "$out"
}

nested() {
  local out=$WORK/nested-1000000.parquet
  [ -f "$out" ] || ROWS=1000000 bash "$BENCH_DIR/convert_nested.sh" > /dev/null
  echo "$out"
}

wanted() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }

measure() {  # measure NAME FILE
  local t mb
  t=$(median_of 1 "$ST" convert "$2" -o "$WORK/out/p" --shards 8 --jobs "$JOBS" --force --quiet)
  mb=$(peak_mb)
  printf '%-12s %6s MB  %7s s wall  %7s s CPU  (%s, %s MB)\n' "$1" "$mb" "$t" "$(cpu_s)" \
    "$(basename "$2")" "$(( $(stat -L -c %s "$2") / 1048576 ))"
}

echo "peak RSS of shardtool convert FILE --shards 8 --jobs $JOBS (target < 256 MB; nested < 300 MB)"
for rows in 500000 2000000 8000000; do
  wanted "table-$rows" && measure "table-$rows" "$(table "$rows")"
done
wanted wide && measure wide "$(wide)"
wanted text && measure text "$(text)"
wanted binary-rg && measure binary-rg "$(binary 2000 rg400m)"
wanted binary-1rg && measure binary-1rg "$(binary 1000000 1rg)"
wanted nested && measure nested "$(nested)"

if wanted bytes-read; then
  f=$(table 500000 1000000)
  strace -f -e trace=pread64 -o "$WORK/.strace" \
    "$ST" convert "$f" -o "$WORK/out/p" --shards 8 --jobs "$JOBS" --force --quiet
  read_bytes=$(grep pread64 "$WORK/.strace" | grep -v unfinished | sed -E 's/.*= ([0-9]+)$/\1/' |
    grep -E '^[0-9]+$' | awk '{s += $1} END {print s + 0}')
  size=$(stat -L -c %s "$f")
  echo "bytes read, 500000 rows in one row group: $read_bytes of $size ($(ratio "$read_bytes" "$size")x the file)"
  # CPU per record: the same rows in DuckDB's default row groups against
  # one row group split into units (target: within 10%).
  median_of 3 "$ST" convert "$(table 500000)" -o "$WORK/out/p" --shards 8 --jobs "$JOBS" --force --quiet > /dev/null
  cpu_default=$(cpu_s)
  median_of 3 "$ST" convert "$f" -o "$WORK/out/p" --shards 8 --jobs "$JOBS" --force --quiet > /dev/null
  cpu_one=$(cpu_s)
  echo "CPU, 500000 rows: one row group $cpu_one s, default row groups $cpu_default s ($(ratio "$cpu_one" "$cpu_default")x; median of 3)"
fi
rm -rf "$WORK/out" "$WORK/.strace"
if [ "${CLEAN:-0}" = 1 ]; then
  rm -rf "$WORK"/table-8000000.* "$WORK"/wide-*.parquet "$WORK"/text-2k.parquet \
    "$WORK"/binary-*.parquet "$WORK/blobs"
fi
