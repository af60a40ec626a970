#!/bin/sh
# verify on the GPU against verify on the CPU, on a 4 GiB set of
# uncompressed shards built from real records: small (penguin, ~150 B),
# medium (mnist, ~3 KB) and large (deeplab JPEG/PNG Examples, ~400 KB).
# Prints GB/s per device and profile, with and without --decode, the
# cuda/cpu ratio, and the pinned and pageable host-to-device copy rates,
# which bound what the GPU pass can reach.  Not a test: it asserts nothing.
#
#   bench/verify_gpu.sh [BUILD_DIR] [WORK_DIR] [GIB]
#
# BUILD_DIR defaults to ./build (needs cli/shardtool and tests/gpu_probe);
# the shards go to WORK_DIR (default: a temporary directory, removed at the
# end).  Each run is done twice and the second is reported, so both devices
# read from the page cache.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
work=${2:-}
gib=${3:-4}
shardtool=$build/cli/shardtool
probe=$build/tests/gpu_probe
data=$here/tests/data
py=$(command -v python3 || command -v /usr/bin/python3)

for f in "$shardtool" "$probe"; do
    [ -x "$f" ] || { echo "verify_gpu.sh: $f not built (ninja -C $build cli/shardtool tests/gpu_probe)" >&2; exit 2; }
done
if ! "$probe" >/dev/null; then
    "$probe" || true
    echo "verify_gpu.sh: no usable GPU; nothing to compare"
    exit 0
fi

if [ -z "$work" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT INT TERM
fi
mkdir -p "$work"

# ---- the shard set: whole real shards concatenated (still valid TFRecord) ------
"$py" - "$data" "$work" "$gib" <<'EOF'
import gzip, os, sys
data, work, gib = sys.argv[1], sys.argv[2], float(sys.argv[3])
def read(rel):
    with open(os.path.join(data, rel), 'rb') as f:
        b = f.read()
    return gzip.decompress(b) if rel.endswith('.gz') else b
profiles = {
    'small': read('tfrecord/tfx/penguin/Split-train/data_tfrecord-00000-of-00001.gz'),
    'medium': read('tfrecord/tfx/mnist/mnist.tfrecord'),
    'large': read('tfrecord/tensorflow-models/deeplab/val-00000-of-00001.tfrecord'),
}
shard_bytes = 256 << 20
per_profile = int(gib * (1 << 30)) // len(profiles)
for name, blob in profiles.items():
    reps = max(1, shard_bytes // len(blob))
    body = blob * reps
    nshards = max(1, per_profile // len(body))
    for i in range(nshards):
        path = os.path.join(work, '%s-%05d.tfrecord' % (name, i))
        if not os.path.exists(path) or os.path.getsize(path) != len(body):
            with open(path, 'wb') as f:
                f.write(body)
EOF

rate() { # device, options..., -- prints GB/s from the second of two runs
    device=$1
    shift
    "$shardtool" verify --json --device "$device" "$@" >/dev/null 2>&1 || true
    "$shardtool" verify --json --device "$device" "$@" 2>/dev/null |
        "$py" -c 'import json,sys; d=json.load(sys.stdin); print("%.2f" % (d["bytes_per_second"] / 1e9))'
}

echo "device: $("$probe" | sed 's/^usable: //')"
"$probe" --bandwidth 256 | grep GBps | sed 's/^/host-to-device /'
printf '%-8s %-9s %10s %10s %8s\n' profile mode "cpu GB/s" "cuda GB/s" "cuda/cpu"
for profile in small medium large all; do
    if [ "$profile" = all ]; then
        set -- "$work"/*.tfrecord
    else
        set -- "$work/$profile"-*.tfrecord
    fi
    for mode in crc decode; do
        opt=
        [ "$mode" = decode ] && opt=--decode
        # shellcheck disable=SC2086
        cpu=$(rate cpu $opt "$@")
        # shellcheck disable=SC2086
        gpu=$(rate cuda $opt "$@")
        ratio=$("$py" -c "print('%.2f' % ($gpu / $cpu if $cpu > 0 else 0))")
        printf '%-8s %-9s %10s %10s %8s\n' "$profile" "$mode" "$cpu" "$gpu" "$ratio"
    done
done
du -sh "$work" | sed 's/^/shard set: /'
