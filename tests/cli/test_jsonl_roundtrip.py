#!/usr/bin/env python3
"""Property test: the JSON-lines round trip keeps records byte for byte.

    test_jsonl_roundtrip.py SHARDTOOL

Random tf.train.Example records of every kind (int64 extremes, float32
specials: -0.0, NaN, +-inf, denormals, whole numbers; non-UTF-8 and
escape-heavy bytes, NUL inside values; empty lists, missing features,
several values per feature) are written as a TFRecord file by the small
encoder below (no protobuf package needed).  Then, for several seeds:

    convert orig --shards 1                         -> A (shardtool's encoding)
    cat orig | convert --from jsonl --shards 1      -> B
    convert orig --to jsonl ; convert --from jsonl  -> C

and A, B and C must be byte-identical.  A feature keeps one kind over all
records and holds at least one value somewhere (a feature that is empty
everywhere has no kind left in JSON, see shardtool-cat(1)).
Prints "N passed, M failed"; exits 1 on any failure.
"""
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tfrecord_frames import crc32c, frame, masked  # noqa: E402

ST = None
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


# ---- encoding ----------------------------------------------------------------

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def feature(kind, values):
    if kind == "int64":
        body = b"".join(varint(v) for v in values)
        inner = field(1, body) if values else b""
        return field(3, inner)
    if kind == "float":
        body = b"".join(struct.pack("<I", v) for v in values)  # float32 bit patterns
        inner = field(1, body) if values else b""
        return field(2, inner)
    inner = b"".join(field(1, v) for v in values)
    return field(1, inner)


def example(features):
    entries = b"".join(field(1, field(1, name) + field(2, feature(kind, vals)))
                       for name, kind, vals in features)
    return field(1, entries)


# ---- random values -----------------------------------------------------------

I64 = [-(1 << 63), (1 << 63) - 1, 0, -1, 1, (1 << 53) + 1, -(1 << 31), (1 << 32)]
F32 = [0x00000000, 0x80000000, 0x7FC00000, 0x7F800000, 0xFF800000,  # 0, -0, NaN, +-inf
       0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF,              # denormals, min/max normal
       0x3F800000, 0xBF800000, 0x42C80000, 0x4B800000, 0x7149F2CA,  # 1, -1, 100, 2^24, 1e30
       0x3DCCCCCD, 0x3E800000]                                        # 0.1, 0.25


def rand_i64(rng):
    r = rng.random()
    if r < 0.3:
        return rng.choice(I64)
    if r < 0.6:
        return rng.randint(-1000, 1000)
    return rng.randint(-(1 << 63), (1 << 63) - 1)


def rand_f32(rng):
    r = rng.random()
    if r < 0.35:
        return rng.choice(F32)
    if r < 0.5:  # whole numbers: print as "N.0"
        return struct.unpack("<I", struct.pack("<f", float(rng.randint(-100000, 100000))))[0]
    while True:  # any finite pattern (a NaN keeps no payload in JSON: only the canonical one)
        bits = rng.getrandbits(32)
        if (bits >> 23) & 0xFF != 0xFF:
            return bits


TEXTS = ["", "a", "caf\u00e9", "\u65e5\u672c", "\U0001F600", "q\"uote", "back\\slash",
         "line\nbreak\ttab", "nul\u0000in", "{\"base64\": \"AA==\"}", "123", "1.5", "true", "null"]


def rand_bytes(rng):
    r = rng.random()
    if r < 0.4:
        return rng.choice(TEXTS).encode()
    if r < 0.7:  # raw bytes, mostly not UTF-8
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 12)))
    return "".join(chr(rng.randint(32, 0x2FF)) for _ in range(rng.randint(0, 8))).encode()


NAMES = ["id", "score", "tags", "img", "a.b", "caf\u00e9", "x y", "emb", "label", "w", "q\"k", "z"]


def make_records(seed, count):
    rng = random.Random(seed)
    kinds = {}
    for name in NAMES:
        kinds[name.encode()] = rng.choice(["int64", "float", "bytes"])
    gens = {"int64": rand_i64, "float": rand_f32, "bytes": rand_bytes}
    records = []
    for _ in range(count):
        feats = []
        names = list(kinds)
        rng.shuffle(names) if rng.random() < 0.1 else None  # record order varies sometimes
        for name in names:
            if rng.random() < 0.25:
                continue  # missing feature
            kind = kinds[name]
            n = rng.choice([0, 1, 1, 1, 2, 3, 5])
            feats.append((name, kind, [gens[kind](rng) for _ in range(n)]))
        records.append(feats)
    # Every feature holds a value somewhere, so its kind survives JSON.
    for name, kind in kinds.items():
        records.append([(name, kind, [gens[kind](rng)])])
    return records


# ---- the round trip ----------------------------------------------------------

def run(args, stdin=None):
    return subprocess.run([ST] + args, input=stdin, capture_output=True)


def shard_bytes(prefix):
    with open(prefix + "-00000-of-00001.tfrecord", "rb") as f:
        return f.read()


def one_seed(tmp, seed, count):
    orig = os.path.join(tmp, "orig-%d.tfrecord" % seed)
    with open(orig, "wb") as f:
        for rec in make_records(seed, count):
            f.write(frame(example(rec)))
    a = os.path.join(tmp, "a%d" % seed, "x")
    r = run(["convert", orig, "-o", a, "--shards", "1", "--quiet"])
    check(r.returncode == 0, "seed %d: convert the original (%s)" % (seed, r.stderr.decode(errors="replace").strip()))
    if r.returncode:
        return
    catted = run(["cat", orig])
    check(catted.returncode == 0, "seed %d: cat" % seed)
    b = os.path.join(tmp, "b%d" % seed, "x")
    r = run(["convert", "--from", "jsonl", "-", "-o", b, "--shards", "1", "--quiet"], stdin=catted.stdout)
    check(r.returncode == 0, "seed %d: cat | convert --from jsonl (%s)" % (seed, r.stderr.decode(errors="replace").strip()))
    if r.returncode == 0:
        same = shard_bytes(a) == shard_bytes(b)
        check(same, "seed %d: cat | convert --from jsonl gives byte-identical shards" % seed)
        if not same:
            ra = run(["cat", a + "-00000-of-00001.tfrecord"]).stdout.splitlines()
            rb = run(["cat", b + "-00000-of-00001.tfrecord"]).stdout.splitlines()
            for i, (x, y) in enumerate(zip(ra, rb)):
                if x != y:
                    print("  record %d\n    original: %s\n    via JSON: %s" % (i, x[:400], y[:400]))
                    break
    j = os.path.join(tmp, "j%d" % seed, "x")
    r = run(["convert", orig, "-o", j, "--to", "jsonl", "--shards", "1", "--quiet"])
    check(r.returncode == 0, "seed %d: convert --to jsonl" % seed)
    c = os.path.join(tmp, "c%d" % seed, "x")
    r = run(["convert", j + "-00000-of-00001.jsonl", "-o", c, "--shards", "1", "--quiet"])
    check(r.returncode == 0, "seed %d: convert the .jsonl back (%s)" % (seed, r.stderr.decode(errors="replace").strip()))
    if r.returncode == 0:
        check(shard_bytes(a) == shard_bytes(c), "seed %d: --to jsonl and back gives byte-identical shards" % seed)


def main():
    global ST
    ST = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        for seed in (1, 2, 3):
            one_seed(tmp, seed, 150)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
