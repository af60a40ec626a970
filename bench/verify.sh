#!/usr/bin/env bash
# verify on a 1 GiB uncompressed shard in the page cache against
# `cat FILE > /dev/null` in the same run (one thread each).  Target: verify
# reaches at least 50% of cat's throughput: the CRC is the only real work.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

shard=$WORK/verify-1g.tfrecord
if [ ! -f "$shard" ]; then
  # Concatenated TFRecord files are one valid TFRecord file: 336 x mnist (3.2 MB).
  src=$ROOT/tests/data/tfrecord/tfx/mnist/mnist.tfrecord
  for _ in $(seq 336); do cat "$src"; done > "$shard"
fi
bytes=$(stat -c %s "$shard")
cat "$shard" > /dev/null   # into the page cache

t_cat=$(best_of 5 cat "$shard")
t_verify=$(best_of 5 "$ST" verify "$shard")
t_decode=$(best_of 3 "$ST" verify --decode "$shard")
echo "shard: $bytes bytes, $(("$bytes" / 3203000 * 1000)) records"
echo "cat > /dev/null:   ${t_cat} s  ($(rate "$bytes" "$t_cat") MB/s)"
echo "verify:            ${t_verify} s  ($(rate "$bytes" "$t_verify") MB/s)"
echo "verify --decode:   ${t_decode} s  ($(rate "$bytes" "$t_decode") MB/s)"
echo "verify throughput / cat throughput = $(ratio "$t_cat" "$t_verify")  (target >= 0.50)"
