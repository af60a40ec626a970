#!/usr/bin/env bash
# verify --payloads against jpeginfo -c, in the same run, files in the page
# cache: 20,000 real JPEGs of 50-200 KB (bench/gen_jpegs.py: DISTINCT of
# them made with PIL, cycled; the same bytes extracted to files for
# jpeginfo) in 8 TFRecord shards.
#   - verify --payloads (full decode, --jobs: all cores) against
#     `jpeginfo -c` over the files (one process, as it is run on a tree).
#     Target: <= 0.5 x jpeginfo's wall time on 2 cores.
#   - verify --payloads=headers.  Target: >= 3 x faster than full decoding.
# Both checkers must agree: every image intact.  COUNT, DISTINCT, RUNS set
# the sizes (defaults 20000, 400, 1).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${RUNS:-1}
count=${COUNT:-20000}
distinct=${DISTINCT:-400}
dir=$WORK/payloads-$count-$distinct
if [ ! -f "$dir/jpegs-00007-of-00008.tfrecord" ]; then
  rm -rf "$dir"
  /usr/bin/python3 "$BENCH_DIR/gen_jpegs.py" "$dir" "$count" 8 "$distinct"
fi
shards=("$dir"/jpegs-*-of-00008.tfrecord)
bytes=$(cat "${shards[@]}" | wc -c)
# into the page cache, both copies
cat "${shards[@]}" > /dev/null
find "$dir/files" -name '*.jpg' -print0 | xargs -0 cat > /dev/null

# jpeginfo takes the file names on its command line, in as few processes as
# the command line allows (xargs), one at a time: it has no threads.
jpeginfo_all() { find "$dir/files" -name '*.jpg' -print0 | xargs -0 jpeginfo -c; }
export -f jpeginfo_all; export dir

bad_jpeginfo=$(jpeginfo_all | grep -vc ' OK *$' || true)
"$ST" verify --payloads "${shards[@]}" > "$WORK/.verify-payloads.out" || {
  echo "verify --payloads failed:"; tail "$WORK/.verify-payloads.out"; exit 1; }
t_jpeginfo=$(median_of "$runs" bash -c jpeginfo_all); rss_jpeginfo=$(peak_mb); cpu_jpeginfo=$(cpu_s)
t_full=$(median_of "$runs" "$ST" verify --payloads "${shards[@]}"); rss_full=$(peak_mb); cpu_full=$(cpu_s)
t_heads=$(median_of "$runs" "$ST" verify --payloads=headers "${shards[@]}"); rss_heads=$(peak_mb)
t_plain=$(median_of "$runs" "$ST" verify "${shards[@]}")
echo "$count JPEGs in 8 shards ($bytes bytes); median of $runs runs; jpeginfo found $bad_jpeginfo bad, verify 0"
echo "the machine is shared with other builds: wall times vary; CPU times are steadier"
echo "jpeginfo -c (1 thread):          ${t_jpeginfo} s  ($(awk "BEGIN{printf \"%.0f\", $count / $t_jpeginfo}") images/s), CPU ${cpu_jpeginfo} s, peak RSS ${rss_jpeginfo} MB"
echo "verify --payloads ($(nproc) cores):     ${t_full} s  ($(awk "BEGIN{printf \"%.0f\", $count / $t_full}") images/s), CPU ${cpu_full} s, peak RSS ${rss_full} MB"
echo "verify --payloads=headers:       ${t_heads} s  ($(awk "BEGIN{printf \"%.0f\", $count / $t_heads}") images/s), peak RSS ${rss_heads} MB"
echo "verify (CRCs only):              ${t_plain} s"
echo "verify --payloads / jpeginfo wall time = $(ratio "$t_full" "$t_jpeginfo")  (target <= 0.5)"
echo "full / headers wall time = $(ratio "$t_full" "$t_heads")  (target >= 3)"
