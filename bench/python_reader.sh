#!/usr/bin/env bash
# The Python reader (python/shardtool) in a DataLoader against a pure-Python
# TFRecord reader written the way the common one is (struct framing +
# python3-protobuf, no CRC), in the same run, on the 2M-row bench table
# converted to 8 TFRecord shards; DataLoader(num_workers=2), batches of 1024.
#   - baseline: the pure-Python reader, records collated by shardtool.torch.collate;
#   - records:  ShardDataset (every CRC checked, decoded in C), one dict per record;
#   - batches:  ShardDataset(batch_size=BATCH, bytes_layout="offsets"), whole
#               batches cut in C, bytes as uint8 values + int64 offsets, each
#               batch packed into a slot its worker shares with the main
#               process (SHARED_SLOTS=0: through the worker's pipe instead);
#   - verify --decode of the same shards (records/s), the ceiling;
#   - batches again from the s3 test server (s3rver) through bench/delay_proxy.py,
#     with no delay and with 40 ms added to every request.
# Targets (issue 27): records/s >= 10x the baseline and >= 0.5x verify
# --decode; remote >= 0.8x local.  Each line also gives CPU seconds (user +
# system) of the main process and of the workers; the ratios are given by
# wall time and by records per CPU second, which a busy machine disturbs
# far less.  Needs python3-torch, python3-numpy,
# python3-protobuf, protoc, and s3rver (npm ci in tests/remote) for the last.
#   ROWS=2000000 WORKERS=2 BATCH=1024 bash bench/python_reader.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
workers=${WORKERS:-2}
batch=${BATCH:-1024}
lib=${LIBSHARDTOOL:-$(dirname "$(dirname "$ST")")/lib/libshardtool.so}
[ -f "$lib" ] || { echo "no libshardtool at $lib (set LIBSHARDTOOL)" >&2; exit 2; }
export SHARDTOOL_LIBRARY=$lib PYTHONPATH=$ROOT/python

table=$WORK/table-$rows.csv
[ -f "$table" ] || python3 "$BENCH_DIR/gen_table.py" "$table" "$rows"
set_dir=$WORK/python-reader-$rows
if [ ! -f "$set_dir/t-00007-of-00008.tfrecord" ]; then
  rm -rf "$set_dir"; mkdir -p "$set_dir"
  "$ST" convert --to tfrecord --shards 8 --quiet -o "$set_dir/t" "$table"
fi
proto=$WORK/proto
mkdir -p "$proto"
protoc --proto_path="$ROOT/formats/example" --python_out="$proto" example.proto
cat "$set_dir"/t-*.tfrecord > /dev/null   # into the page cache

run() { /usr/bin/python3 -W ignore "$BENCH_DIR/python_reader.py" "$@" --workers "$workers" --batch "$batch"; }
echo "mode records seconds records/s peak_rss_main_mb peak_rss_worker_mb main_cpu_s workers_cpu_s"
base=$(run baseline "$set_dir"/t-*.tfrecord --proto "$proto"); echo "$base"
recs=$(run records "$set_dir"/t-*.tfrecord); echo "$recs"
bats=$(run batches "$set_dir"/t-*.tfrecord --shared-slots "${SHARED_SLOTS:-6}"); echo "$bats"
t_verify=$(median_of 3 "$ST" verify --decode "$set_dir"/t-*.tfrecord)
cpu_verify=$(cpu_s)
verify_rate=$(awk "BEGIN{printf \"%.0f\", $rows / $t_verify}")
verify_cpu_rate=$(awk "BEGIN{printf \"%.0f\", $rows / $cpu_verify}")
echo "verify --decode: ${t_verify} s, $verify_rate records/s; CPU ${cpu_verify} s, $verify_cpu_rate records per CPU s"
rate_of() { echo "$1" | awk '{print $4}'; }
cpu_rate_of() { echo "$1" | awk '{printf "%.0f", $2 / ($7 + $8)}'; }
for m in base recs bats; do
  line=${!m}
  echo "${line%% *}: $(cpu_rate_of "$line") records per CPU s"
done
for m in recs bats; do
  line=${!m}; name=${line%% *}
  echo "$name vs baseline: $(ratio "$(rate_of "$line")" "$(rate_of "$base")")x by wall time," \
       "$(ratio "$(cpu_rate_of "$line")" "$(cpu_rate_of "$base")")x by CPU time (target >= 10)"
  echo "$name vs verify --decode: $(ratio "$(rate_of "$line")" "$verify_rate")x by wall time," \
       "$(ratio "$(cpu_rate_of "$line")" "$verify_cpu_rate")x by CPU time (target >= 0.5)"
done
if [ -x "$ROOT/tests/remote/node_modules/.bin/s3rver" ]; then
  for delay in 0 0.04; do
    remote=$(/usr/bin/python3 "$BENCH_DIR/python_reader_remote.py" "$delay" batches "$set_dir"/t-*.tfrecord \
             --workers "$workers" --batch "$batch")
    echo "$remote (s3, $delay s a request)"
    echo "remote batches at $delay s vs local: $(ratio "$(rate_of "$remote")" "$(rate_of "$bats")")x (target >= 0.8 at 0.04 s)"
  done
else
  echo "remote: s3rver is not installed (npm ci in tests/remote): not measured"
fi
