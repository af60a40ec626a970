#!/bin/bash
# Remote reads against curl: 64 objects of 16 MiB served by nginx on
# loopback, read by our fetcher (remote_cat, or `shardtool cat --format
# tfrecord` when given) and by `curl --parallel --parallel-max 16`, both to
# /dev/null.  Prints throughput of each, their ratio, and the time to first
# byte.  A benchmark, not a test: nothing here passes or fails.
#
# usage: bench/remote.sh [BUILD_DIR] [RUNS]
#   BUILD_DIR defaults to build-remote (needs tests/remote_cat built there)
#   READER="path/to/shardtool cat --format tfrecord" overrides the reader.
#   SHARDTOOL=path/to/shardtool: the objects are valid TFRecord files (copies
#   of tests' mnist shard, ~15 MiB each), read by `shardtool cat --format
#   tfrecord`, and the time to the first record is `shardtool cat -n 1` of
#   one object, process start included.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/nginx_conf.sh"
build=${1:-$here/build-remote}
runs=${2:-3}
count=${COUNT:-64}
size_mib=${SIZE_MIB:-16}
parallel=${PARALLEL:-16}
reader=${READER:-$build/tests/remote_cat --parallel $parallel}
shardtool=${SHARDTOOL:-}
[ -n "$shardtool" ] && [ -z "${READER:-}" ] && reader="$shardtool cat --format tfrecord --parallel $parallel"
nginx=$(command -v nginx || echo /usr/sbin/nginx)

[ -x "$nginx" ] || { echo "nginx is not installed"; exit 1; }
command -v curl >/dev/null || { echo "curl is not installed"; exit 1; }

work=$(mktemp -d /tmp/st-bench-remote-XXXXXX)
ngx_pid=
cleanup() {
    [ -n "$ngx_pid" ] && kill -QUIT "$ngx_pid" 2>/dev/null && wait "$ngx_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/www" "$work/nginx"
for i in $(seq -w 0 $((count - 1))); do
    if [ -n "$shardtool" ]; then
        for _ in 1 2 3 4 5; do cat "$here/tests/data/tfrecord/tfx/mnist/mnist.tfrecord"; done
    else
        head -c $((size_mib << 20)) /dev/urandom
    fi > "$work/www/obj-$i.tfrecord"
done
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
nginx_conf "$work" "$port"
"$nginx" -c "$work/nginx/nginx.conf" -p "$work/nginx" &
ngx_pid=$!
for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/obj-00.tfrecord" && break
    sleep 0.1
done

urls=()
for i in $(seq -w 0 $((count - 1))); do urls+=("http://127.0.0.1:$port/obj-$i.tfrecord"); done
total_mib=$(du -cb "$work"/www/*.tfrecord | tail -1 | awk '{printf "%.1f", $1 / 1048576}')
# warm the page cache so both readers see the same server
cat "$work"/www/*.tfrecord > /dev/null

now() { date +%s.%N; }

best_ours=; best_curl=; ttfb_ours=; ttfb_curl=
for run in $(seq "$runs"); do
    t0=$(now)
    if [ -n "$shardtool" ]; then
        # shellcheck disable=SC2086
        $reader "${urls[@]}" 2> "$work/ours.err" > /dev/null
        t1=$(now)
        s0=$(now)
        "$shardtool" cat -n 1 --format tfrecord "${urls[0]}" > /dev/null
        tt=$(echo "$(now) - $s0" | bc -l)
    else
        # shellcheck disable=SC2086
        $reader --ttfb "${urls[@]}" 2> "$work/ours.err" > /dev/null
        t1=$(now)
        tt=$(sed -n 's/^ttfb //p' "$work/ours.err" | head -1)
    fi
    ours=$(echo "$t1 - $t0" | bc -l)

    t0=$(now)
    curl -s --parallel --parallel-max "$parallel" -w '%{time_starttransfer}\n' \
        $(for u in "${urls[@]}"; do printf -- '-o /dev/null %s ' "$u"; done) > "$work/curl.out" 2>/dev/null
    t1=$(now)
    theirs=$(echo "$t1 - $t0" | bc -l)
    ctt=$(sort -n "$work/curl.out" | head -1)

    printf 'run %d: ours %.3f s, curl %.3f s\n' "$run" "$ours" "$theirs"
    if [ -z "$best_ours" ] || [ "$(echo "$ours < $best_ours" | bc -l)" = 1 ]; then best_ours=$ours; ttfb_ours=$tt; fi
    if [ -z "$best_curl" ] || [ "$(echo "$theirs < $best_curl" | bc -l)" = 1 ]; then best_curl=$theirs; ttfb_curl=$ctt; fi
done

printf '\n%d objects x %d MiB over loopback, %d parallel (best of %d)\n' "$count" "$size_mib" "$parallel" "$runs"
printf 'ours: %8.1f MiB/s   time to first byte %s s\n' "$(echo "$total_mib / $best_ours" | bc -l)" "${ttfb_ours:-?}"
printf 'curl: %8.1f MiB/s   time to first byte %s s\n' "$(echo "$total_mib / $best_curl" | bc -l)" "${ttfb_curl:-?}"
printf 'throughput ratio ours/curl: %.2f\n' "$(echo "$best_curl / $best_ours" | bc -l)"
