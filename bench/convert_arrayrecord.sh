#!/usr/bin/env bash
# The 2M-row benchmark table (gen_table.py, CSV) into 8 shards, in one run,
# median of 3 each:
#   - `convert --to arrayrecord` (zstd, group size 1: the defaults) against
#     `convert` to TFRecord.  Target: <= 1.3x TFRecord's time, peak RSS
#     < 256 MB;
#   - `verify` of the 8 ArrayRecord shards (every HighwayHash, block header,
#     chunk's record sizes and stated decompressed size, footer and
#     postscript; one file per core; values not decompressed) against `cat`
#     of the same files to /dev/null, and against `shardtool cat --format
#     raw` of them.  Target: verify at >= 0.5 of cat's throughput.  `verify
#     --decode` (every chunk decompressed, every Example parsed) is timed
#     beside it.
# The machine these figures come from is shared: CPU time is printed beside
# wall time, which other load disturbs far less.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
runs=${RUNS:-3}

csv=$WORK/table-$rows.csv
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
cat "$csv" > /dev/null

rm -rf "$WORK/ar-tf" "$WORK/ar-ar"
t_tf=$(median_of "$runs" "$ST" convert "$csv" -o "$WORK/ar-tf/t" --shards 8 --force --quiet)
rss_tf=$(peak_mb); cpu_tf=$(cpu_s)
t_ar=$(median_of "$runs" "$ST" convert "$csv" --to arrayrecord -o "$WORK/ar-ar/t" --shards 8 --force --quiet)
rss_ar=$(peak_mb); cpu_ar=$(cpu_s)
size_tf=$(cat "$WORK/ar-tf"/t-*.tfrecord | wc -c)
size_ar=$(cat "$WORK/ar-ar"/t-*.array_record | wc -c)

shards=("$WORK/ar-ar"/t-*.array_record)
cat "${shards[@]}" > /dev/null   # into the page cache
t_cat=$(median_of "$runs" cat "${shards[@]}"); cpu_cat=$(cpu_s)
t_stcat=$(median_of "$runs" "$ST" cat --format raw --force "${shards[@]}"); cpu_stcat=$(cpu_s)
t_verify=$(median_of "$runs" "$ST" verify "${shards[@]}")
rss_verify=$(peak_mb); cpu_verify=$(cpu_s)
t_verify1=$(median_of "$runs" "$ST" verify --jobs 1 "${shards[@]}"); cpu_verify1=$(cpu_s)
t_decode=$(median_of "$runs" "$ST" verify --decode "${shards[@]}"); cpu_decode=$(cpu_s)

echo "input: $rows rows x 13 columns, CSV ($(stat -c %s "$csv") bytes); median of $runs runs"
echo "convert -> TFRecord, 8 shards:             ${t_tf} s (CPU ${cpu_tf} s), ${size_tf} bytes, peak RSS ${rss_tf} MB"
echo "convert -> ArrayRecord (zstd, group 1):    ${t_ar} s (CPU ${cpu_ar} s), ${size_ar} bytes, peak RSS ${rss_ar} MB"
echo "time ratio ArrayRecord / TFRecord = $(ratio "$t_ar" "$t_tf")  (target <= 1.3); CPU ratio $(ratio "$cpu_ar" "$cpu_tf")"
echo "peak RSS ${rss_ar} MB  (target < 256)"
echo "ArrayRecord shards: cat > /dev/null ${t_cat} s (CPU ${cpu_cat} s, $(rate "$size_ar" "$t_cat") MB/s); shardtool cat --format raw ${t_stcat} s (CPU ${cpu_stcat} s)"
echo "verify (all cores):  ${t_verify} s (CPU ${cpu_verify} s, $(rate "$size_ar" "$t_verify") MB/s), peak RSS ${rss_verify} MB"
echo "verify (--jobs 1):   ${t_verify1} s (CPU ${cpu_verify1} s)"
echo "verify --decode:     ${t_decode} s (CPU ${cpu_decode} s)"
echo "verify throughput / cat throughput = $(ratio "$t_cat" "$t_verify")  (target >= 0.5); / shardtool cat's = $(ratio "$t_stcat" "$t_verify")"
