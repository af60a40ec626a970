#!/usr/bin/python3
"""TFRecord -> WebDataset -> TFRecord gives the same records, kinds included
(the default mapping of shardtool-convert(1), WebDataset output, and its
reverse, the WebDataset reader), and so does --wds-member json where JSON
lines keep kinds.

Inputs: MNIST (float lists, int64 scalars), SequenceExamples (events,
clicks_float; clicks_context's context feature and FeatureList of one name
must be refused on reading, naming it), and a TFRecord made from a JSON lines table with every kind and
shape the mapping has a member for: int64 scalars and lists, float scalars
and lists (empty ones too), UTF-8 and non-UTF-8 bytes, JPEG/PNG/WebP bytes,
bytes lists, a feature with no kind, absent features and an empty record.
Records are compared as `shardtool cat` prints them, parsed, with floats
compared as float32 and the kinds told apart (int64 numbers, floats with
'.' or an exponent, bytes as strings or base64).  The one difference the
man page lists for these inputs is allowed: a FeatureList of no steps comes
back as a context feature with no kind.

Needs a shardtool that reads WebDataset: without one this test fails (it
does not skip).  Prints "N passed, M failed".
"""
import base64
import io
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

from PIL import Image

ST = SOURCE = None
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)
    return cond


def st(*args):
    return subprocess.run([ST] + [str(a) for a in args], capture_output=True)


def f32(text):
    return ("f", struct.unpack("<f", struct.pack("<f", float(text)))[0])


def records(*paths):
    r = st("cat", *paths)
    if r.returncode != 0:
        return None, r.stderr.decode()[:300]
    out = []
    for line in r.stdout.decode().splitlines():
        rec = json.loads(line, parse_float=f32)
        if "context" in rec and "feature_lists" in rec:
            ctx = rec["context"]
            lists = {}
            for k, v in rec["feature_lists"].items():
                if v == []:   # no steps: comes back as a context feature with no kind
                    ctx[k] = []
                else:
                    lists[k] = v
            rec = {"context": ctx, "feature_lists": lists} if lists else ctx
        out.append(rec)
    return out, ""


def image(fmt, i):
    b = io.BytesIO()
    Image.new("RGB", (5 + i % 4, 4), (i * 30 % 256, 20, 200)).save(b, format=fmt)
    return {"base64": base64.b64encode(b.getvalue()).decode()}


def make_mixed(path, n=40):
    rng = random.Random(11)
    with open(path, "w") as f:
        for i in range(n):
            rec = {"label": rng.randrange(-9, 9), "score": rng.uniform(-1, 1),
                   "vec": [rng.uniform(-5, 5) for _ in range(rng.randrange(0, 4))],
                   "ids": [rng.randrange(-2**40, 2**40) for _ in range(rng.choice([2, 3]))],
                   "text": rng.choice(["a", "caf\u00e9", ""]),
                   "raw": {"base64": base64.b64encode(bytes([0xff, i % 256])).decode()},
                   "img": image(["JPEG", "PNG", "WEBP"][i % 3], i),
                   "tags": ["x", "y\u00e9"] if i % 2 else ["z", {"base64": "wyg="}],
                   "none": []}
            if i % 5 == 2:
                del rec["score"]
            if i == 7:
                rec = {}
            f.write(json.dumps(rec) + "\n")


def main():
    global ST, SOURCE
    ST, SOURCE = os.path.abspath(sys.argv[1]), sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="st-wds-rt-")
    try:
        run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


def run(tmp):
    data = os.path.join(SOURCE, "tests", "data", "tfrecord")
    mixed = os.path.join(tmp, "mixed.jsonl")
    make_mixed(mixed)
    mixed_tf = os.path.join(tmp, "mixed", "m")
    r = st("convert", "-q", mixed, "-o", mixed_tf)
    check(r.returncode == 0, "the mixed table as TFRecord")
    inputs = [
        ("mixed", mixed_tf + "-00000-of-00001.tfrecord"),
        ("mnist", os.path.join(data, "tfx/mnist/mnist.tfrecord")),
        ("events", os.path.join(data, "sequence/events.tfrecord")),
        ("clicks_float", os.path.join(data, "sequence/clicks_float.tfrecord")),
    ]
    # The reader must be there: a build without it fails here, loudly.
    probe = os.path.join(tmp, "probe", "p")
    st("convert", "-q", inputs[0][1], "--to", "wds", "-o", probe)
    r = st("cat", probe + "-00000-of-00001.tar")
    if not check(r.returncode == 0, "shardtool reads the WebDataset shards it writes (cat of a .tar): "
                 + r.stderr.decode()[:200]):
        return
    # A context feature and a FeatureList of one name: two members of one
    # field (KEY.clicks.txt, KEY.clicks.npy), read back as the context
    # feature and the FeatureList they were (two namespaces).
    clash = os.path.join(data, "sequence/clicks_context.tfrecord")
    d = os.path.join(tmp, "clash")
    a = st("convert", "-q", clash, "--to", "wds", "-o", os.path.join(d, "w"))
    b = st("convert", "-q", os.path.join(d, "w-00000-of-00001.tar"), "-o", os.path.join(d, "b"))
    want, _ = records(clash)
    got, _ = records(os.path.join(d, "b-00000-of-00001.tfrecord")) if b.returncode == 0 else (None, None)
    check(a.returncode == 0 and b.returncode == 0 and got == want,
          "a context feature and a FeatureList of one name come back as they were "
          f"({b.stderr.decode().strip()[-160:]})")
    for label, src in inputs:
        want, why = records(src)
        for member in ("default", "json"):
            if member == "json" and label != "mixed":
                continue
            d = os.path.join(tmp, f"{label}-{member}")
            ref, wds, back = (os.path.join(d, x, x[0]) for x in ("ref", "wds", "back"))
            st("convert", "-q", src, "-o", ref)
            a = st("convert", "-q", src, "--to", "wds", "-o", wds, "--wds-member", member)
            b = st("convert", "-q", wds + "-00000-of-00001.tar", "--to", "tfrecord", "-o", back)
            ok = a.returncode == 0 and b.returncode == 0
            got, why2 = records(back + "-00000-of-00001.tfrecord") if ok else (None, (a.stderr + b.stderr).decode())
            same = got == want
            if not same and got is not None:
                diff = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), None)
                why2 = f"record {diff}: {got[diff] if diff is not None else len(got)!r:.300} != " \
                       f"{want[diff] if diff is not None else len(want)!r:.300}"
            check(same, f"{label} ({member} members): TFRecord -> WebDataset -> TFRecord, cat shows the same "
                  f"{len(want or [])} records ({why or why2})")
            if member == "default" and label != "events":
                # Kinds cat cannot show (an empty list's): the TFRecord
                # writer encodes a feature of no kind and an empty float
                # list differently, so the same writer's bytes compare them.
                x = open(ref + "-00000-of-00001.tfrecord", "rb").read()
                y = open(back + "-00000-of-00001.tfrecord", "rb").read() if ok else b""
                check(x == y, f"{label}: the round trip's TFRecord is byte for byte the source's as shardtool "
                      f"writes it ({len(x)} / {len(y)} bytes)")

if __name__ == "__main__":
    sys.exit(main())
