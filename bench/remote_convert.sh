#!/bin/bash
# convert between object stores, against the same convert between local
# files: COUNT TFRecord objects (copies of the tests' mnist shard, ~15 MiB
# each) in s3rver (the S3 test server of tests/remote), converted to
# --shards 8 TFRecord shards with `shardtool convert s3://... -o s3://...`
# through bench/delay_proxy.py at each of DELAYS ms (every request held that
# long, every new connection that long more), and with `shardtool convert`
# between local files, in the same run.
#
# What bounds it is printed beside it: s3rver is one node.js process that
# hashes (MD5) every part it is sent, then reads, hashes and writes every
# byte again when an upload is completed.  So each row also gives the CPU
# time s3rver spent (from /proc), and a peer uploads the local convert's
# shards to the same server through the same proxy: `aws s3 cp
# --recursive` (multipart, 8 MiB parts, 10 at once), when the AWS CLI is
# installed.  The uploads alone (local -> s3) are timed too.
#
# Prints per row the best wall time of RUNS, the CPU time (user + system)
# of that run's client and of s3rver, and ratios: local / row (the issue's
# target, >= 0.9, is this for s3 -> s3 at 40 ms) and the row against the
# peer's upload.  A benchmark, not a test: nothing here passes or fails.
#
# usage: bench/remote_convert.sh [RUNS]
#   ST=path/to/shardtool (default build/cli/shardtool), COUNT=64,
#   DELAYS="0 40", PARALLEL=16
set -euo pipefail

source "$(dirname "$0")/lib.sh"
source "$BENCH_DIR/remote_lib.sh"
runs=${1:-3}
count=${COUNT:-64}
delays=${DELAYS:-0 40}
parallel=${PARALLEL:-16}

[ -x "$S3RVER" ] || { echo "s3rver is not installed (npm ci in tests/remote)"; exit 1; }
command -v curl >/dev/null || { echo "curl is not installed"; exit 1; }
aws=$(command -v aws || true)

# CPU seconds (user + system) a process has used so far
proc_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }

work_dir rconvert
make_objects "$count"
start_s3rver

# timed CMD...: runs CMD to /dev/null; sets wall (s), cpu (its user+sys s)
# and srv (s3rver's CPU s meanwhile)
timed() {
    local t0 t1 s0 s1
    s0=$(proc_cpu "$s3pid")
    t0=$(now_ns)
    /usr/bin/time -f "%U %S" -o "$work/.time" "$@" > /dev/null 2> "$work/.err" || {
        echo "failed: $*" >&2; tail -5 "$work/.err" >&2; return 1; }
    t1=$(now_ns)
    s1=$(proc_cpu "$s3pid")
    wall=$(awk "BEGIN{printf \"%.3f\", ($t1 - $t0) / 1e9}")
    cpu=$(tail -1 "$work/.time" | awk '{printf "%.2f", $1 + $2}')
    srv=$(awk "BEGIN{printf \"%.2f\", $s1 - $s0}")
}

# best NAME CMD...: best wall of RUNS (with that run's CPU times); a fresh
# output prefix per run ({RUN} in CMD); sets best_wall best_cpu best_srv
best() {
    local name=$1; shift
    best_wall=; best_cpu=; best_srv=
    for run in $(seq "$runs"); do
        rm -rf "$work/local-out"; mkdir -p "$work/local-out"
        timed "${@//\{RUN\}/$name$run}"
        rm -rf "$work/s3rver/bench/$name$run" # the objects just written: the disk stays small
        if [ -z "$best_wall" ] || awk "BEGIN{exit !($wall < $best_wall)}"; then
            best_wall=$wall; best_cpu=$cpu; best_srv=$srv
        fi
    done
}

in_urls=(); for f in "$work"/www/*.tfrecord; do in_urls+=("s3://bench/in/$(basename "$f")"); done
printf '%d objects, %.1f MiB in all, to 8 shards; --parallel %d; best of %d; machine shared with other work (load %s)\n' \
    "$count" "$(awk "BEGIN{print $total_bytes / 1048576}")" "$parallel" "$runs" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-38s %8s %8s %10s %8s %8s\n' what wall cpu s3rver_cpu local/it it/peer

best local "$ST" convert "$work"/www/*.tfrecord -o "$work/local-out/part" --shards 8 -q
local_wall=$best_wall
printf '%-38s %7.3fs %7.2fs %10s %8s %8s\n' "local -> local" "$best_wall" "$best_cpu" - 1.00 -
# the shards every upload below sends
"$ST" convert "$work"/www/*.tfrecord -o "$work/shards/part" --shards 8 -q

for d in $delays; do
    start_proxy "$s3_port" "$d"
    base="http://127.0.0.1:$proxy_port"
    peer_wall=
    if [ -n "$aws" ]; then
        best "aws$d-" "$aws" --endpoint-url "$base" s3 cp --recursive --quiet "$work/shards/" "s3://bench/{RUN}/"
        peer_wall=$best_wall
        printf '%-38s %7.3fs %7.2fs %9.2fs %8.2f %8s\n' "peer: aws s3 cp of the shards, ${d} ms" "$best_wall" \
            "$best_cpu" "$best_srv" "$(ratio "$local_wall" "$best_wall")" 1.00
    fi
    vs_peer() { [ -n "$peer_wall" ] && ratio "$best_wall" "$peer_wall" || echo -; }
    best "up$d-" "$ST" convert --parallel "$parallel" --endpoint "$base" "$work"/www/*.tfrecord \
        -o "s3://bench/{RUN}/part" --shards 8 -q
    printf '%-38s %7.3fs %7.2fs %9.2fs %8.2f %8s\n' "local -> s3, ${d} ms" "$best_wall" "$best_cpu" "$best_srv" \
        "$(ratio "$local_wall" "$best_wall")" "$(vs_peer)"
    best "s3$d-" "$ST" convert --parallel "$parallel" --endpoint "$base" "${in_urls[@]}" \
        -o "s3://bench/{RUN}/part" --shards 8 -q
    printf '%-38s %7.3fs %7.2fs %9.2fs %8.2f %8s\n' "s3 -> s3, ${d} ms" "$best_wall" "$best_cpu" "$best_srv" \
        "$(ratio "$local_wall" "$best_wall")" "$(vs_peer)"
    best "down$d-" "$ST" convert --parallel "$parallel" --endpoint "$base" "${in_urls[@]}" \
        -o "$work/local-out/part" --shards 8 -q
    printf '%-38s %7.3fs %7.2fs %9.2fs %8.2f %8s\n' "s3 -> local, ${d} ms" "$best_wall" "$best_cpu" "$best_srv" \
        "$(ratio "$local_wall" "$best_wall")" -
    stop_proxy
done
[ -n "$aws" ] || echo "(the AWS CLI is not installed: no peer rows; apt-get install awscli)"
