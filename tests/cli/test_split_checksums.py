#!/usr/bin/env python3
"""The manifests of split and convert record each shard's CRC32C and size
as python computes them over the files.

Uncompressed TFRecord shards have their checksum combined from the
records' own CRCs (st_crc32c_combine) instead of read again, so the
manifest is checked here against a CRC that shares no code with it, for:
records of every small length (0 to 40 bytes, every remainder of 8), one
of 1.1 MiB (which the reader hands over rather than copies), --shards
(round robin), --shard-size, --records-per-shard with --index, two inputs
merged, gzip output (checksummed as stored, compressed), and convert of
JSON lines to TFRecord (frames made by the encoder).
Prints "N passed, M failed".
"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tfrecord_frames import crc32c, frame, masked  # noqa: E402

results = {"passed": 0, "failed": 0}

def check(cond, what, detail=""):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else "\n" + detail))


def run(st, *args):
    return subprocess.run([st] + list(args), capture_output=True, text=True, timeout=120)


def check_manifest(manifest, what, min_shards=2):
    with open(manifest) as f:
        m = json.load(f)
    base = os.path.dirname(manifest)
    bad = []
    for s in m["shards"]:
        with open(os.path.join(base, s["path"]), "rb") as f:
            data = f.read()
        want = "%08x" % crc32c(data)
        if s["crc32c"] != want or s["bytes"] != len(data):
            bad.append("%s: manifest crc32c %s bytes %d, file %s bytes %d"
                       % (s["path"], s["crc32c"], s["bytes"], want, len(data)))
    check(not bad and len(m["shards"]) >= min_shards, what + " (%d shards)" % len(m["shards"]), "\n".join(bad))


def main():
    st = os.path.abspath(sys.argv[1])
    rnd = random.Random(15)
    with tempfile.TemporaryDirectory() as tmp:
        # Every small length, some a few KiB, one past the 1 MiB hand-over size.
        sizes = list(range(41)) + [rnd.randrange(100, 5000) for _ in range(30)]
        sizes.insert(20, (1 << 20) + 100 * 1024)
        small = os.path.join(tmp, "small.tfrecord")
        with open(small, "wb") as f:
            for n in sizes:
                f.write(frame(rnd.randbytes(n)))
        other = os.path.join(tmp, "other.tfrecord")
        with open(other, "wb") as f:
            for _ in range(25):
                f.write(frame(rnd.randbytes(rnd.randrange(0, 3000))))

        def split(name, *args, inputs=(small,), min_shards=2):
            out = os.path.join(tmp, name, "s")
            r = run(st, "split", *inputs, "-o", out, "--quiet", *args)
            if r.returncode:
                check(False, "split " + " ".join(args), r.stderr)
                return
            check_manifest(out + ".manifest.json", "split " + name + ": " + " ".join(args), min_shards)

        split("shards", "--shards", "3")
        split("size", "--shard-size", "200KiB")
        split("records", "--records-per-shard", "7", "--index")
        split("merged", "--shards", "2", inputs=(small, other))
        split("gzip", "--shards", "2", "-z", "gzip")

        jsonl = os.path.join(tmp, "rows.jsonl")
        with open(jsonl, "w") as f:
            for i in range(300):
                f.write(json.dumps({"id": i, "name": "n" * (i % 37), "x": [i * 0.5] * (i % 5)}) + "\n")
        out = os.path.join(tmp, "conv", "c")
        r = run(st, "convert", jsonl, "-o", out, "--shards", "3", "--quiet")
        if r.returncode:
            check(False, "convert jsonl", r.stderr)
        else:
            check_manifest(out + ".manifest.json", "convert JSON lines to TFRecord", 3)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
