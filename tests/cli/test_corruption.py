#!/usr/bin/env python3
"""verify must catch every single-bit flip and every truncation.

Builds a small TFRecord file from a real TFX shard, then
  - flips every bit of it, one at a time: `verify` must exit 1 each time;
  - truncates it at every length: at a record boundary the shorter file is
    a valid TFRecord file (exit 0, fewer records); anywhere else `verify`
    must exit 1 and say "truncated";
  - does the truncations again through standard input, where the size is
    unknown and truncation is found at the end of the stream;
  - truncates a GZIP-compressed copy at every length: always exit 1.
Prints "N passed, M failed".
"""
import gzip
import os
import subprocess
import sys
import tempfile


def run(st, args, data=None, path=None):
    if path is not None:
        with open(path, "wb") as f:
            f.write(data)
        return subprocess.run([st, "verify", path] + args, capture_output=True, text=True)
    return subprocess.run([st, "verify", "-"] + args, input=data, capture_output=True)


def boundaries(data):
    """Offsets where records start (and the end)."""
    out, at = [0], 0
    while at < len(data):
        length = int.from_bytes(data[at:at + 8], "little")
        at += 16 + length
        out.append(at)
    return set(out)


def main():
    st, source = sys.argv[1], sys.argv[2]
    shard = os.path.join(source, "tests", "data", "tfrecord", "tfx", "penguin", "Split-eval",
                         "data_tfrecord-00000-of-00001.gz")
    small = subprocess.run([st, "cat", "-f", "tfrecord", "-n", "2", shard],
                           capture_output=True, check=True).stdout
    ok = bad = 0
    failures = []

    def expect(cond, what):
        nonlocal ok, bad
        if cond:
            ok += 1
        else:
            bad += 1
            if len(failures) < 20:
                failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "case.tfrecord")
        r = run(st, [], small, path)
        expect(r.returncode == 0 and "2 records" in r.stdout, f"intact file: {r.stdout}{r.stderr}")

        for bit in range(len(small) * 8):
            flipped = bytearray(small)
            flipped[bit // 8] ^= 1 << (bit % 8)
            r = run(st, [], bytes(flipped), path)
            expect(r.returncode == 1 and "DAMAGED" in r.stdout,
                   f"bit {bit}: exit {r.returncode}: {r.stdout.strip()}")

        cuts = boundaries(small)
        for length in range(len(small)):
            r = run(st, [], small[:length], path)
            if length in cuts:
                expect(r.returncode == 0, f"cut at boundary {length}: exit {r.returncode}")
            else:
                expect(r.returncode == 1 and "truncated" in r.stdout,
                       f"cut at {length}: exit {r.returncode}: {r.stdout.strip()}")

        for length in range(len(small)):
            r = run(st, [], small[:length])
            out = r.stdout.decode()
            if length in cuts:
                expect(r.returncode == 0, f"stdin cut at boundary {length}: exit {r.returncode}")
            else:
                expect(r.returncode == 1 and "truncated" in out,
                       f"stdin cut at {length}: exit {r.returncode}: {out.strip()}")

        packed = gzip.compress(small, mtime=0)
        gz_path = os.path.join(tmp, "case.tfrecord.gz")
        for length in range(1, len(packed)):
            r = run(st, [], packed[:length], gz_path)
            expect(r.returncode == 1, f"gzip cut at {length}: exit {r.returncode}: {r.stdout.strip()}")

    for f in failures:
        print("FAIL " + f)
    print(f"{ok} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
