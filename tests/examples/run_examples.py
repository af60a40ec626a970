#!/usr/bin/env python3
"""The programs of examples/ still build and run against the library.

    run_examples.py --shardtool SHARDTOOL --read-shards READ_SHARDS
                    --library LIBSHARDTOOL --source SOURCE_ROOT [--python PYTHON3]

  - examples/read_shards.c (compiled by meson against the library target)
    counts examples/taxi.csv's records as `shardtool stat --json` does, and
    of the same table converted to 4 TFRecord shards the records and the
    bytes of their payloads (read from the TFRecord framing here); a
    damaged shard and a missing input make it print the message and exit 1;
  - examples/pytorch_loader.py, run by PYTHON3 (Debian's, with python3-numpy
    and python3-torch) with SHARDTOOL_LIBRARY and PYTHONPATH set to this
    build and source tree, reads the 4 shards for 2 epochs: 10000 records
    each, and the features of the first batch are the shards' features.
    Without PYTHON3, NumPy or torch this part is skipped (and the test is,
    77, when the rest passes).

Exits 1 on any failure."""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)


def payload_bytes(paths):
    """(records, payload bytes) of uncompressed TFRecord files, from their framing."""
    records = total = 0
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos < len(data):
            (length,) = struct.unpack_from("<Q", data, pos)
            pos += 12 + length + 4
            records += 1
            total += length
    return records, total


def read_shards_counts(exe, inputs):
    r = run([exe] + inputs)
    m = re.fullmatch(r"(\d+) records, (\d+) bytes\n", r.stdout)
    if not check(r.returncode == 0 and m, "read_shards %s: exit %d, %r %r"
                 % (" ".join(inputs), r.returncode, r.stdout, r.stderr)):
        return None
    return int(m.group(1)), int(m.group(2))


def c_example(a, tmp, shard_dir, shards):
    taxi = os.path.join(a.source, "examples", "taxi.csv")
    stat = json.loads(run([a.shardtool, "stat", "--json", taxi], check=True).stdout)
    want = stat["files"][0]["records"]
    got = read_shards_counts(a.read_shards, [taxi])
    if got:
        check(got[0] == want, "read_shards taxi.csv: %d records, stat --json says %d" % (got[0], want))
        check(got[1] > 0, "read_shards taxi.csv: some bytes")
    got = read_shards_counts(a.read_shards, [shard_dir])
    want = payload_bytes(shards)
    if got:
        check(got == want, "read_shards over the shards: (records, bytes) %s, the framing says %s" % (got, want))
        check(got[0] == 10000, "read_shards over the shards: 10000 records, got %d" % got[0])
    # A damaged shard: the command line's message, exit 1.
    bad = os.path.join(tmp, "damaged.tfrecord")
    data = bytearray(open(shards[1], "rb").read())
    data[len(data) // 2] ^= 0x40
    with open(bad, "wb") as f:
        f.write(data)
    r = run([a.read_shards, bad])
    check(r.returncode == 1 and "damaged.tfrecord" in r.stderr and "crc" in r.stderr,
          "read_shards of a damaged shard: exit 1 with the message: %d %r" % (r.returncode, r.stderr))
    missing = os.path.join(tmp, "missing.tfrecord")
    r = run([a.read_shards, missing])
    check(r.returncode == 1 and "missing.tfrecord" in r.stderr,
          "read_shards of a missing input: exit 1 naming it: %d %r" % (r.returncode, r.stderr))
    r = run([a.read_shards])
    check(r.returncode == 2 and "usage" in r.stderr, "read_shards without inputs: usage, exit 2")


def python_example(a, shard_dir, shards):
    """True when it ran, False when skipped."""
    if not a.python:
        print("note: no Debian python3: examples/pytorch_loader.py not run")
        return False
    r = run([a.python, "-c", "import numpy, torch"])
    if r.returncode != 0:
        print("note: %s lacks numpy or torch: examples/pytorch_loader.py not run" % a.python)
        return False
    env = dict(os.environ, SHARDTOOL_LIBRARY=os.path.abspath(a.library),
               PYTHONPATH=os.path.join(a.source, "python"))
    script = os.path.join(a.source, "examples", "pytorch_loader.py")
    cmd = [a.python, script, shard_dir]
    method = os.environ.get("SHARDTOOL_TEST_START_METHOD")
    if method:
        # Under AddressSanitizer the workers start from a forkserver (see
        # tests/meson.build): the example runs as it is, after that choice.
        cmd = [a.python, "-c", "import runpy, sys, torch.multiprocessing as mp; "
               "mp.set_start_method(sys.argv[1], force=True); sys.argv = sys.argv[2:]; "
               "runpy.run_path(sys.argv[0], run_name='__main__')", method, script, shard_dir]
    r = run(cmd, env=env, timeout=600)
    if not check(r.returncode == 0, "pytorch_loader.py: exit %d: %s" % (r.returncode, r.stderr[-2000:])):
        return True
    epochs = re.findall(r"^epoch (\d+): (\d+) records$", r.stdout, re.M)
    check(epochs == [("0", "10000"), ("1", "10000")],
          "pytorch_loader.py: 10000 records in each of 2 epochs: %r" % (epochs or r.stdout[-2000:]))
    stat = json.loads(run([a.shardtool, "stat", "--json", "--totals"] + shards, check=True).stdout)
    everywhere = {f["name"] for f in stat["total"].get("features", []) if f["records"] == 10000}
    known = {f["name"] for f in stat["total"].get("features", [])}
    for block in re.split(r"^epoch \d+: \d+ records\n", r.stdout, flags=re.M)[1:]:
        names = dict(re.findall(r"^  (\S+): (.*)$", block, re.M))
        plain = {n[:-len("/length")] if n.endswith("/length") else n for n in names}
        check(everywhere and everywhere <= plain <= known,
              "pytorch_loader.py: the first batch's features are the shards' (%s; every record has %s)"
              % (sorted(plain), sorted(everywhere)))
        check(all(v.startswith("(64") or v == "list of 64" for v in names.values()),
              "pytorch_loader.py: the first batch holds 64 records: %r" % names)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shardtool", required=True)
    ap.add_argument("--read-shards", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--python")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="shardtool-examples-")
    try:
        shard_dir = os.path.join(tmp, "shards")
        os.makedirs(shard_dir)
        r = run([a.shardtool, "convert", "-q", "--shards", "4", "-o", os.path.join(shard_dir, "train"),
                 os.path.join(a.source, "examples", "taxi.csv")])
        if r.returncode != 0:
            sys.exit("shardtool convert of examples/taxi.csv failed: " + r.stderr)
        shards = sorted(os.path.join(shard_dir, p) for p in os.listdir(shard_dir) if p.endswith(".tfrecord"))
        check(len(shards) == 4, "4 shards converted: %s" % shards)
        c_example(a, tmp, shard_dir, shards)
        ran_python = python_example(a, shard_dir, shards)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    if not ran_python:
        return 77
    print("ok: examples/read_shards.c and examples/pytorch_loader.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
