#!/usr/bin/env bash
# convert --to webdataset against its peers, in one run:
#   - the 2M-row bench table (gen_table.py), as 8 TFRecord shards, into 8
#     WebDataset shards of one KEY.json per row (--wds-member json: a
#     13-column row as 13 members would be 13 KiB of tar headers and padding
#     a row, 26 GB for the table; the default mapping is timed on TABLE_ROWS
#     rows of it, 200,000 by default);
#   - 20,000 JPEG-sized blobs (50-200 KB, gen_blobs.py) in Parquet into
#     4 WebDataset shards (members KEY.id.cls, KEY.image.jpg);
# each against Python's tarfile writing the same members from memory
# (wds_python_writer.py, what webdataset's TarWriter does; only the writing
# is timed, shardtool's time includes reading and decoding its input) and,
# for the blobs, `tar -cf` of the members already written as files (the
# copying limit).  Then verify of the blob shards against cat's throughput,
# when this build reads WebDataset.
# PARTS="json default blobs" (the default) chooses the parts to run.
# Targets: <= 0.2x the Python writer's time, <= 1.5x tar -cf, peak RSS < 256 MB.
# The machine the figures come from may be shared: medians of 3 runs.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
table_rows=${TABLE_ROWS:-200000}
blobs=${BLOBS:-20000}
jobs=${JOBS:-2}

csv=$WORK/table-$rows.csv
tf=$WORK/tf-$rows/t
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
if [ ! -f "$tf-00000-of-00008.tfrecord" ]; then
  "$ST" convert "$csv" -o "$tf" --shards 8 --force --quiet --no-manifest
fi
small=$WORK/table-$table_rows.csv
[ -f "$small" ] || head -n $((table_rows + 1)) "$csv" > "$small"
blob_pq=$WORK/blobs-$blobs/b
if [ ! -f "$blob_pq-00000-of-00001.parquet" ]; then
  python3 "$BENCH_DIR/gen_blobs.py" "$WORK/blobs.jsonl" "$blobs"
  "$ST" convert "$WORK/blobs.jsonl" --to parquet -o "$blob_pq" --force --quiet --no-manifest
  rm -f "$WORK/blobs.jsonl"
fi

out=$WORK/wds
rm -rf "$out" "$WORK/wds-py" "$WORK/wds-files" "$WORK/wds-tar"
report() { # label shardtool_s peer_s peer_name target
  echo "  $1: shardtool / $4 = $(ratio "$2" "$3")  (target <= $5)"
}

parts=${PARTS:-json default blobs}
part() { [[ " $parts " == *" $1 "* ]]; }

# 1. the table, one KEY.json per row
if part json; then
cat "$tf"-*.tfrecord > /dev/null
t_st=$(median_of 3 "$ST" convert "$tf"-*.tfrecord --to wds --wds-member json -o "$out/json/t" --shards 8 \
  --jobs "$jobs" --force --quiet)
rss_json=$(peak_mb)
t_py=$(python3 "$BENCH_DIR/wds_python_writer.py" "$WORK/wds-py/json" "$out"/json/t-*.tar)
echo "table: $rows rows x 13 columns (8 TFRecord shards) -> 8 shards, --wds-member json ($(cat "$out"/json/t-*.tar | wc -c) bytes)"
echo "  shardtool convert --jobs $jobs: ${t_st} s (median of 3), peak RSS ${rss_json} MB  (target < 256)"
echo "  Python tarfile, the same members from memory: ${t_py} s"
report "time" "$t_st" "$t_py" "Python" 0.2
fi

# 2. the table's first rows, a member per feature (the default mapping)
if part default; then
t_st=$(median_of 3 "$ST" convert "$small" --to wds -o "$out/default/t" --shards 8 --jobs "$jobs" --force --quiet)
rss_default=$(peak_mb)
t_py=$(python3 "$BENCH_DIR/wds_python_writer.py" "$WORK/wds-py/default" "$out"/default/t-*.tar)
echo "table: $table_rows rows (CSV) -> 8 shards, a member per feature ($(cat "$out"/default/t-*.tar | wc -c) bytes)"
echo "  shardtool convert --jobs $jobs: ${t_st} s (median of 3), peak RSS ${rss_default} MB  (target < 256)"
echo "  Python tarfile, the same members from memory: ${t_py} s"
report "time" "$t_st" "$t_py" "Python" 0.2
fi

# 3. the blobs
if part blobs; then
cat "$blob_pq"-*.parquet > /dev/null
t_st=$(median_of 3 "$ST" convert "$blob_pq"-*.parquet --to wds -o "$out/blobs/b" --shards 4 --jobs "$jobs" \
  --force --quiet)
rss_blobs=$(peak_mb)
t_py=$(python3 "$BENCH_DIR/wds_python_writer.py" "$WORK/wds-py/blobs" "$out"/blobs/b-*.tar)
mkdir -p "$WORK/wds-files"
: > "$WORK/wds-files.list"
for s in "$out"/blobs/b-*.tar; do
  tar -xf "$s" -C "$WORK/wds-files"
  tar -tf "$s" >> "$WORK/wds-files.list"
done
find "$WORK/wds-files" -type f -exec cat {} + > /dev/null
t_tar=$(median_of 3 tar -cf "$WORK/wds-tar.tar" -C "$WORK/wds-files" -T "$WORK/wds-files.list")
# shardtool syncs its shards before they take their names (nothing looks
# finished before it is on disk); tar -cf leaves its output in the page
# cache.  Both figures are given: tar -cf alone, and followed by a sync of
# what it wrote.
t_tar_sync=$(median_of 3 sh -c 'tar -cf "$1" -C "$2" -T "$3" && sync "$1"' sh "$WORK/wds-tar.tar" \
  "$WORK/wds-files" "$WORK/wds-files.list")
bytes=$(cat "$out"/blobs/b-*.tar | wc -c)
echo "blobs: $blobs blobs of 50-200 KB in Parquet -> 4 shards ($bytes bytes)"
echo "  shardtool convert --jobs $jobs: ${t_st} s (median of 3), $(rate "$bytes" "$t_st") MB/s, CPU $(cpu_s) s, peak RSS ${rss_blobs} MB"
echo "  Python tarfile, the same members from memory: ${t_py} s"
echo "  tar -cf of the members as files: ${t_tar} s, then sync: ${t_tar_sync} s (medians of 3)"
report "time" "$t_st" "$t_py" "Python" 0.2
report "time" "$t_st" "$t_tar" "tar -cf" 1.5
report "time" "$t_st" "$t_tar_sync" "(tar -cf + sync)" 1.5
echo "  peak RSS ${rss_blobs} MB  (target < 256)"

# 4. verify against cat, where this build reads WebDataset
if "$ST" verify "$out"/blobs/b-00000-of-00004.tar > /dev/null 2>&1; then
  t_verify=$(median_of 3 "$ST" verify "$out"/blobs/b-*.tar)
  t_cat=$(median_of 3 "$ST" cat "$out"/blobs/b-*.tar)
  echo "verify of the blob shards: ${t_verify} s, $(rate "$bytes" "$t_verify") MB/s; cat: ${t_cat} s, $(rate "$bytes" "$t_cat") MB/s"
  echo "  verify throughput / cat's = $(ratio "$t_cat" "$t_verify")  (target >= 0.75)"
else
  echo "verify of the blob shards: this build does not read WebDataset yet: skipped"
fi
fi
rm -rf "$WORK/wds-py" "$WORK/wds-files" "$WORK/wds-tar.tar" "$WORK/wds-files.list"
