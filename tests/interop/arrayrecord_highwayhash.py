#!/usr/bin/env python3
"""Every hash in ArrayRecord files that shardtool writes, recomputed by
Google's HighwayHash (libhighwayhash, through ar_highwayhash_check): every
codec, group sizes 1 and 7, records large enough that chunk headers and
data cross 64 KiB block boundaries, split's shards, and Google's own files
(which the checker must pass too, or it proves nothing).

Usage: arrayrecord_highwayhash.py SHARDTOOL CHECKER SOURCE_ROOT
"""
import os
import random
import subprocess
import sys
import tempfile

results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def main():
    st, checker, src = sys.argv[1:4]
    run = lambda *a: subprocess.run([st] + [str(x) for x in a], capture_output=True, text=True)
    google = [os.path.join(src, "tests", "data", "arrayrecord", "digits.array_record-0000%d-of-00002" % i)
              for i in range(2)]
    r = subprocess.run([checker] + google, capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.count("chunks") == 2, "Google's files pass the checker (%s)" % r.stdout)
    with tempfile.TemporaryDirectory() as d:
        # Records of very different sizes: some larger than a block.
        rng = random.Random(7)
        jsonl = os.path.join(d, "t.jsonl")
        with open(jsonl, "w") as f:
            for i in range(400):
                n = rng.choice([1, 10, 300, 5000, 70000]) if i % 50 else 150000
                f.write('{"id": %d, "blob": "%s"}\n' % (i, "".join(rng.choice("abcdefgh") for _ in range(n))))
        files = []
        for codec in ("none", "zstd", "brotli", "snappy"):
            for group in (1, 7):
                out = os.path.join(d, "%s_%d" % (codec, group), "t")
                r = run("convert", jsonl, "--to", "arrayrecord", "--arrayrecord-codec", codec,
                        "--arrayrecord-group-size", group, "-o", out, "--shards", "2", "-q")
                check(r.returncode == 0, "convert %s/%d (%s)" % (codec, group, r.stderr[-200:]))
                files += [out + "-0000%d-of-00002.array_record" % i for i in range(2)]
        r = run("split", *files[:2], "-o", os.path.join(d, "split", "t"), "--shards", "3", "-q")
        check(r.returncode == 0, "split (%s)" % r.stderr[-200:])
        files += [os.path.join(d, "split", "t-0000%d-of-00003.array_record" % i) for i in range(3)]
        r = subprocess.run([checker] + files, capture_output=True, text=True)
        blocks = sum(int(line.split(": ")[1].split()[0]) for line in r.stdout.splitlines())
        check(r.returncode == 0 and r.stdout.count("chunks") == len(files) and blocks > 10 * len(files),
              "libhighwayhash recomputes every hash of %d files (%d block headers): all match (%s)"
              % (len(files), blocks, r.stderr[-300:]))
        # And the checker finds a flipped bit, or it proves nothing.
        with open(files[0], "rb") as f:
            b = bytearray(f.read())
        b[70000] ^= 1
        bad = os.path.join(d, "bad.array_record")
        with open(bad, "wb") as f:
            f.write(b)
        r = subprocess.run([checker, bad], capture_output=True, text=True)
        check(r.returncode == 1 and "wrong" in r.stderr, "the checker finds one flipped bit (%s)" % r.stderr.strip())
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
