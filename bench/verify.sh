#!/usr/bin/env bash
# verify against `cat FILE > /dev/null` in the same run (median of 3 each),
# files in the page cache:
#   - one 1 GiB uncompressed shard, one thread each.  Target: verify reaches
#     at least 0.8 of cat's throughput (the CRC is the only real work), with
#     the CRC32C this CPU runs fastest and, forced by SHARDTOOL_CRC32C, the
#     paths of CPUs without AVX-512 (avx2-vpclmul, sse42-3way-clmul) where
#     this CPU can run them; and the same shard read with read(2) instead
#     of mapped (SHARDTOOL_MMAP=0), to compare the two ways of reading;
#   - the same bytes as a set of 8 shards: verify (--jobs: all cores) of the
#     set against one cat of the set.  Target: verify > 1.5x cat.
# CPU times (user + system, medians) beside wall times: on a shared machine
# the CPU ratio says more than the wall one.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${RUNS:-3}

shard=$WORK/verify-1g.tfrecord
if [ ! -f "$shard" ]; then
  # Concatenated TFRecord files are one valid TFRecord file: 336 x mnist (3.2 MB).
  src=$ROOT/tests/data/tfrecord/tfx/mnist/mnist.tfrecord
  for _ in $(seq 336); do cat "$src"; done > "$shard"
fi
set_dir=$WORK/verify-set
if [ ! -f "$set_dir/s-00007-of-00008.tfrecord" ]; then
  "$ST" split "$shard" -o "$set_dir/s" --shards 8 --force --quiet --no-manifest
fi
bytes=$(stat -c %s "$shard")
cat "$shard" "$set_dir"/s-*.tfrecord > /dev/null   # into the page cache

t_cat=$(median_of "$runs" cat "$shard"); cpu_cat=$(cpu_s)
t_verify=$(median_of "$runs" "$ST" verify --jobs 1 "$shard")
rss_verify=$(peak_mb); cpu_verify=$(cpu_s)
t_decode=$(median_of "$runs" "$ST" verify --jobs 1 --decode "$shard")
t_read=$(SHARDTOOL_MMAP=0 median_of "$runs" "$ST" verify --jobs 1 "$shard"); cpu_read=$(cpu_s)
t_cat_set=$(median_of "$runs" bash -c "cat '$set_dir'/s-*.tfrecord"); cpu_cat_set=$(cpu_s)
t_verify_set=$(median_of "$runs" bash -c "'$ST' verify '$set_dir'/s-*.tfrecord")
rss_set=$(peak_mb); cpu_verify_set=$(cpu_s)
echo "shard: $bytes bytes, $(("$bytes" / 3203000 * 1000)) records; median of $runs runs"
echo "cat > /dev/null:             ${t_cat} s  ($(rate "$bytes" "$t_cat") MB/s)"
echo "verify (1 thread):           ${t_verify} s  ($(rate "$bytes" "$t_verify") MB/s), peak RSS ${rss_verify} MB"
echo "verify --decode (1 thread):  ${t_decode} s  ($(rate "$bytes" "$t_decode") MB/s)"
echo "verify throughput / cat throughput = $(ratio "$t_cat" "$t_verify")  (target >= 0.8; CPU: $(ratio "$cpu_cat" "$cpu_verify")); CPU cat ${cpu_cat} s, verify ${cpu_verify} s  [crc32c: $("$ST" version | awk '/^crc32c:/{print $2}'), file mapped]"
echo "  read(2) instead of mapped (SHARDTOOL_MMAP=0): ${t_read} s, ratio $(ratio "$t_cat" "$t_read") (CPU ${cpu_read} s, $(ratio "$cpu_cat" "$cpu_read"))"
for impl in avx2-vpclmul sse42-3way-clmul; do
  if ! SHARDTOOL_CRC32C=$impl "$ST" version | grep -q "^crc32c: $impl\$"; then
    echo "  crc32c $impl: this CPU cannot run it"; continue
  fi
  t_c=$(SHARDTOOL_CRC32C=$impl median_of "$runs" "$ST" verify --jobs 1 "$shard"); cpu_c=$(cpu_s)
  t_cr=$(SHARDTOOL_CRC32C=$impl SHARDTOOL_MMAP=0 median_of "$runs" "$ST" verify --jobs 1 "$shard"); cpu_cr=$(cpu_s)
  echo "  crc32c $impl (forced): mapped ${t_c} s, ratio $(ratio "$t_cat" "$t_c") (CPU ${cpu_c} s, $(ratio "$cpu_cat" "$cpu_c")); read(2) ${t_cr} s, ratio $(ratio "$t_cat" "$t_cr") (CPU ${cpu_cr} s, $(ratio "$cpu_cat" "$cpu_cr"))"
done
echo "8-shard set: cat ${t_cat_set} s (CPU ${cpu_cat_set} s), verify (all cores) ${t_verify_set} s (CPU ${cpu_verify_set} s), peak RSS ${rss_set} MB"
echo "set: verify throughput / cat throughput = $(ratio "$t_cat_set" "$t_verify_set")  (target > 1.5)"
