#!/bin/bash
# Remote reads over a far link, against curl: COUNT TFRecord objects (copies
# of the tests' mnist shard, ~15 MiB each) served by nginx and by s3rver
# (the S3 test server of tests/remote), each behind bench/delay_proxy.py,
# which holds every request DELAY ms (and every new connection DELAY ms
# more: its handshake), as a store far away would.  At each delay it reads
# all objects with `shardtool cat --format tfrecord --parallel P` and with
# `curl --parallel --parallel-max P` (signed with --aws-sigv4 for S3), both
# through the same proxy, and prints the throughput of each, their ratio,
# the CPU time (user + system) of each, and the time to the first record:
# `shardtool cat -n 1` of one object (first), the same of a local copy
# (local: process start and exit, the same for every delay), the remote
# part (first - local), and curl's time to its first byte of one object
# through the proxy, all against the 2 x DELAY that a new connection's
# handshake and the first request cost at least (target: remote part
# under 2 x DELAY + 5 ms).
#
# `convert s3://... -o s3://...` through the same proxy, against the same
# convert between local files: bench/remote_convert.sh.
#
# A benchmark, not a test: nothing here passes or fails.
#
# usage: bench/remote_latency.sh [RUNS]
#   ST=path/to/shardtool (default build/cli/shardtool), COUNT=64,
#   DELAYS="0 10 40 80", PARALLEL=16, TARGETS="http s3"
set -euo pipefail

source "$(dirname "$0")/lib.sh"
source "$BENCH_DIR/remote_lib.sh"
source "$BENCH_DIR/nginx_conf.sh"
runs=${1:-3}
count=${COUNT:-64}
delays=${DELAYS:-0 10 40 80}
parallel=${PARALLEL:-16}
targets=${TARGETS:-http s3}
nginx=$(command -v nginx || echo /usr/sbin/nginx)

[ -x "$nginx" ] || { echo "nginx is not installed"; exit 1; }
command -v curl >/dev/null || { echo "curl is not installed"; exit 1; }

work_dir latency
mkdir -p "$work/nginx"
make_objects "$count"
cat "$work"/www/*.tfrecord > /dev/null # the page cache: both readers see the same server

# ---- servers ----
ngx_port=$(free_port)
nginx_conf "$work" "$ngx_port"
"$nginx" -c "$work/nginx/nginx.conf" -p "$work/nginx" &
pids+=($!)
wait_port "$ngx_port"

s3_port=
if [[ " $targets " == *" s3 "* ]]; then
    if [ -x "$S3RVER" ]; then
        start_s3rver
    else
        echo "s3rver is not installed (npm ci in tests/remote): S3 rows left out"
        targets=${targets/s3/}
    fi
fi

# timed CMD...: runs CMD to /dev/null; sets wall (s) and cpu (user+sys s)
timed() {
    local t0 t1
    t0=$(now_ns)
    /usr/bin/time -f "%U %S" -o "$work/.time" "$@" > /dev/null 2> "$work/.err" || {
        echo "failed: $*" >&2; tail -5 "$work/.err" >&2; return 1; }
    t1=$(now_ns)
    wall=$(awk "BEGIN{printf \"%.3f\", ($t1 - $t0) / 1e9}")
    cpu=$(tail -1 "$work/.time" | awk '{printf "%.2f", $1 + $2}')
}

printf '%d objects, %.1f MiB in all, %d parallel, best of %d; machine shared with other work\n' \
    "$count" "$(awk "BEGIN{print $total_bytes / 1048576}")" "$parallel" "$runs"
# process start and exit: cat -n 1 of a local copy
best_local=
for _ in $(seq "$runs"); do
    timed "$ST" cat -n 1 --format tfrecord "$(ls "$work"/www/*.tfrecord | head -1)"
    if [ -z "$best_local" ] || awk "BEGIN{exit !($wall < $best_local)}"; then best_local=$wall; fi
done
printf 'cat -n 1 of a local copy (process start and exit): %.3f s\n' "$best_local"
printf '%-5s %6s %11s %11s %6s %8s %8s %8s %8s %8s %8s\n' store delay ours curl ratio our_cpu curl_cpu first remote "2xdelay" curl_fb
for target in $targets; do
    for d in $delays; do
        if [ "$target" = http ]; then
            start_proxy "$ngx_port" "$d"
            base="http://127.0.0.1:$proxy_port"
            ours_urls=(); curl_args=()
            for f in "$work"/www/*.tfrecord; do
                ours_urls+=("$base/$(basename "$f")")
                curl_args+=(-o /dev/null "$base/$(basename "$f")")
            done
            ours=("$ST" cat --format tfrecord --parallel "$parallel")
            curl_one=(curl -s -f)
        else
            start_proxy "$s3_port" "$d"
            base="http://127.0.0.1:$proxy_port"
            ours_urls=(); curl_args=()
            for f in "$work"/www/*.tfrecord; do
                ours_urls+=("s3://bench/in/$(basename "$f")")
                curl_args+=(-o /dev/null "$base/bench/in/$(basename "$f")")
            done
            ours=("$ST" cat --format tfrecord --parallel "$parallel" --endpoint "$base")
            curl_one=(curl -s -f --aws-sigv4 "aws:amz:us-east-1:s3" -u "$S3_KEY:$S3_KEY"
                      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
        fi
        curl_cmd=("${curl_one[@]}" --parallel --parallel-max "$parallel")
        best_o=; best_c=; cpu_o=; cpu_c=; best_first=
        for _ in $(seq "$runs"); do
            timed "${ours[@]}" "${ours_urls[@]}"
            if [ -z "$best_o" ] || awk "BEGIN{exit !($wall < $best_o)}"; then best_o=$wall; cpu_o=$cpu; fi
            timed "${curl_cmd[@]}" "${curl_args[@]}"
            if [ -z "$best_c" ] || awk "BEGIN{exit !($wall < $best_c)}"; then best_c=$wall; cpu_c=$cpu; fi
            timed "${ours[@]}" -n 1 "${ours_urls[0]}"
            if [ -z "$best_first" ] || awk "BEGIN{exit !($wall < $best_first)}"; then best_first=$wall; fi
        done
        # curl's own time to the first byte of one object (a new connection)
        cttfb=$("${curl_one[@]}" -o /dev/null -w '%{time_starttransfer}' "${curl_args[2]}" 2>/dev/null)
        printf '%-5s %4sms %6.0fMiB/s %6.0fMiB/s %6.2f %7.2fs %7.2fs %7.3fs %7.3fs %7.3fs %7.3fs\n' "$target" "$d" \
            "$(awk "BEGIN{print $total_bytes / 1048576 / $best_o}")" \
            "$(awk "BEGIN{print $total_bytes / 1048576 / $best_c}")" \
            "$(awk "BEGIN{print $best_c / $best_o}")" "$cpu_o" "$cpu_c" "$best_first" \
            "$(awk "BEGIN{print $best_first - $best_local}")" \
            "$(awk "BEGIN{print 2 * $d / 1000}")" "$cttfb"
        stop_proxy
    done
done
