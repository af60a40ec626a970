# Shared by the remote bench scripts (remote_latency.sh, remote_convert.sh),
# after lib.sh: a scratch directory whose servers are stopped on exit,
# ports, the TFRecord objects, s3rver and bench/delay_proxy.py.

# work_dir NAME: sets work (removed on exit) and pids (killed on exit)
work_dir() {
    work=$(mktemp -d "/tmp/st-bench-$1-XXXXXX")
    pids=()
    trap remote_cleanup EXIT
}
remote_cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing listens on $1" >&2; return 1; }
now_ns() { date +%s%N; }

# make_objects COUNT: COUNT copies x 5 of the tests' mnist shard (~15 MiB
# each) as $work/www/obj-NN.tfrecord; sets total_bytes
make_objects() {
    mkdir -p "$work/www"
    for i in $(seq -w 0 $(($1 - 1))); do
        for _ in 1 2 3 4 5; do cat "$ROOT/tests/data/tfrecord/tfx/mnist/mnist.tfrecord"; done > "$work/www/obj-$i.tfrecord"
    done
    total_bytes=$(du -cb "$work"/www/*.tfrecord | tail -1 | cut -f1)
}

S3_KEY=S3RVER # the one key id s3rver knows
S3RVER=$ROOT/tests/remote/node_modules/.bin/s3rver
# curl signs, but leaves S3's payload hash header to the caller
s3curl=(curl -s -f --aws-sigv4 "aws:amz:us-east-1:s3" -u "$S3_KEY:$S3_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")

# start_s3rver: s3rver on a free port (s3_port, s3pid) with a bucket
# "bench" holding the objects of make_objects under in/; the environment
# then holds its credentials
start_s3rver() {
    s3_port=$(free_port)
    NODE_OPTIONS=--openssl-legacy-provider "$S3RVER" -d "$work/s3rver" -a 127.0.0.1 -p "$s3_port" -s \
        > /dev/null 2> "$work/s3rver.err" &
    s3pid=$!
    pids+=("$s3pid")
    wait_port "$s3_port"
    "${s3curl[@]}" -X PUT "http://127.0.0.1:$s3_port/bench" > /dev/null
    for f in "$work"/www/*.tfrecord; do
        "${s3curl[@]}" -T "$f" "http://127.0.0.1:$s3_port/bench/in/$(basename "$f")" > /dev/null
    done
    export AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_KEY AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
    unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 || true
}

# start_proxy UPSTREAM_PORT DELAY_MS: sets proxy_port
start_proxy() {
    proxy_port=$(free_port)
    /usr/bin/python3 "$BENCH_DIR/delay_proxy.py" "$proxy_port" "$1" "$2" > "$work/proxy.out" 2>&1 &
    proxy_pid=$!
    pids+=("$proxy_pid")
    wait_port "$proxy_port"
}
stop_proxy() { kill "$proxy_pid" 2>/dev/null || true; wait "$proxy_pid" 2>/dev/null || true; }
