#!/bin/sh
# verify on the GPU must say exactly what verify on the CPU says.
#
#   test_gpu_verify.sh SHARDTOOL GPU_PROBE DATA_DIR
#
# Exits 77 (skipped) when GPU_PROBE finds no usable CUDA device.  Otherwise
# builds damaged variants of small real shards (every bit flipped, cut at
# every length), big shards that span several 64 MiB transfer chunks with
# records cut by chunk ends, and compares `verify --json` per file between
# --device cuda and --device cpu, with and without --decode: record counts,
# bytes, failure kind, record, offset and message, and the exit status.
# Then runs the GPU pass under compute-sanitizer's memcheck when it exists.
set -eu

shardtool=$1
probe=$2
data=$3

status=0
"$probe" >/dev/null || status=$?
if [ "$status" -eq 77 ]; then
    "$probe" || true
    echo "no usable GPU: skipped"
    exit 77
fi
[ "$status" -eq 0 ] || exit "$status"
"$probe"

py=$(command -v python3 || command -v /usr/bin/python3)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# ---- inputs ---------------------------------------------------------------------
"$py" - "$data" "$tmp" <<'EOF'
import gzip, os, struct, sys

data, out = sys.argv[1], sys.argv[2]

def records(blob):
    pos = 0
    while pos + 12 <= len(blob):
        n = struct.unpack_from('<Q', blob, pos)[0]
        yield blob[pos:pos + 16 + n]
        pos += 16 + n

def read(rel):
    with open(os.path.join(data, rel), 'rb') as f:
        b = f.read()
    return gzip.decompress(b) if rel.endswith('.gz') else b

os.makedirs(os.path.join(out, 'flip'))
os.makedirs(os.path.join(out, 'cut'))
os.makedirs(os.path.join(out, 'big'))

# Small real shards: a few Examples, and raw strings that are not Examples.
penguin = b''.join(list(records(read('tfrecord/tfx/penguin/Split-train/data_tfrecord-00000-of-00001.gz')))[:5])
seq = b''.join(list(records(read('tfrecord/tfx/tfrecord_sequence/Split-eval/data_tfrecord_eval.gz')))[:3])
magenta = read('tfrecord/magenta/tfrecord_iterator_test.tfrecord')
small = {'penguin': penguin, 'seq': seq, 'magenta': magenta}
for name, blob in small.items():
    for bit in range(len(blob) * 8):
        b = bytearray(blob)
        b[bit // 8] ^= 1 << (bit % 8)
        with open(os.path.join(out, 'flip', '%s-%06d.tfrecord' % (name, bit)), 'wb') as f:
            f.write(b)
    for n in range(len(blob) + 1):
        with open(os.path.join(out, 'cut', '%s-%06d.tfrecord' % (name, n)), 'wb') as f:
            f.write(blob[:n])

# Big shards: mnist (3 KB records) and deeplab (400 KB records) repeated past
# two 64 MiB chunks, intact and damaged near the chunk ends.
chunk = 64 << 20
for name, rel in (('mnist', 'tfrecord/tfx/mnist/mnist.tfrecord'),
                  ('deeplab', 'tfrecord/tensorflow-models/deeplab/val-00000-of-00001.tfrecord')):
    blob = read(rel)
    reps = (2 * chunk + 4 * len(blob)) // len(blob) + 1
    big = bytearray(blob * reps)
    with open(os.path.join(out, 'big', name + '-intact.tfrecord'), 'wb') as f:
        f.write(big)
    for k, at in enumerate((chunk - 5, chunk + 3, 2 * chunk - 13, len(big) - 2)):
        b = bytearray(big)
        b[at] ^= 0x10
        with open(os.path.join(out, 'big', '%s-flip%d.tfrecord' % (name, k)), 'wb') as f:
            f.write(b)
    with open(os.path.join(out, 'big', name + '-cut.tfrecord'), 'wb') as f:
        f.write(big[:chunk + 1000])
EOF

# ---- comparison -------------------------------------------------------------------
# Per file, everything but timings and the device's own fields.
normalize() {
    "$py" -c '
import json, sys
doc = json.load(sys.stdin)
for f in doc["files"]:
    for k in ("gpu", "device", "seconds", "bytes_per_second"):
        f.pop(k, None)
    print(json.dumps(f, sort_keys=True))
'
}

failures=0
compare() { # label, verify options..., -- files...
    label=$1
    shift
    set +e
    "$shardtool" verify --json --device cpu "$@" >"$tmp/cpu.json" 2>"$tmp/cpu.err"
    cpu_status=$?
    "$shardtool" verify --json --device cuda "$@" >"$tmp/gpu.json" 2>"$tmp/gpu.err"
    gpu_status=$?
    set -e
    if [ "$cpu_status" -ne "$gpu_status" ]; then
        echo "FAIL $label: exit status cpu $cpu_status, cuda $gpu_status"
        sed 's/^/  cuda stderr: /' "$tmp/gpu.err" | head -5
        failures=$((failures + 1))
        return
    fi
    normalize <"$tmp/cpu.json" >"$tmp/cpu.lines"
    normalize <"$tmp/gpu.json" >"$tmp/gpu.lines"
    if ! cmp -s "$tmp/cpu.lines" "$tmp/gpu.lines"; then
        echo "FAIL $label: verdicts differ"
        diff "$tmp/cpu.lines" "$tmp/gpu.lines" | head -10
        failures=$((failures + 1))
        return
    fi
    echo "ok   $label ($(wc -l <"$tmp/cpu.lines") files, exit $cpu_status)"
}

# Many files per run: the CUDA context is set up once per process.
for dir in flip cut big; do
    (cd "$tmp/$dir" && find . -type f | sed "s|^\./||" | sort) >"$tmp/list"
    split -l 1500 "$tmp/list" "$tmp/batch-$dir-"
    for batch in "$tmp"/batch-"$dir"-*; do
        files=$(sed "s|^|$tmp/$dir/|" "$batch")
        # shellcheck disable=SC2086
        compare "$dir $(basename "$batch")" $files
        # shellcheck disable=SC2086
        compare "$dir $(basename "$batch") --decode" --decode $files
    done
done
for f in "$data"/tfrecord/tfx/mnist/mnist.tfrecord \
         "$data"/tfrecord/tensorflow-models/deeplab/val-00000-of-00001.tfrecord \
         "$data"/tfrecord/corrupt/pets_examples.record; do
    compare "$(basename "$f") --decode" --decode "$f"
    compare "$(basename "$f") --max-record-size 1000" --max-record-size 1000 "$f"
done

# ---- memcheck ---------------------------------------------------------------------
sanitizer=$(command -v compute-sanitizer || true)
[ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [ -n "$sanitizer" ]; then
    set +e
    "$sanitizer" --tool memcheck --error-exitcode 99 --leak-check full \
        "$shardtool" verify --device cuda --decode \
        "$tmp/big/mnist-flip1.tfrecord" "$tmp/big/deeplab-intact.tfrecord" \
        "$data/tfrecord/corrupt/pets_examples.record" "$tmp/cut/penguin-000100.tfrecord" \
        >"$tmp/memcheck.out" 2>&1
    status=$?
    set -e
    if [ "$status" -eq 99 ]; then
        echo "FAIL compute-sanitizer memcheck"
        grep -m 20 -E "=========" "$tmp/memcheck.out" || true
        failures=$((failures + 1))
    else
        echo "ok   compute-sanitizer memcheck (verify exit $status)"
    fi
else
    echo "compute-sanitizer not found: memcheck skipped"
fi

[ "$failures" -eq 0 ] || { echo "$failures comparison(s) failed"; exit 1; }
echo "GPU and CPU verdicts identical"
