#!/usr/bin/python3
"""SequenceExamples through every command, against python3-protobuf and python3-avro.

    sequence_protobuf.py SHARDTOOL SOURCE_ROOT

python3-protobuf (TensorFlow's example.proto, formats/example/example.proto,
compiled by protoc) writes random tf.train.SequenceExample records: a
context (scalars some records lack, lists, empty lists), several
FeatureLists (int64, float, bytes; empty steps, steps with no kind, zero
steps, lists absent from some records) and a FeatureList named like a
context feature.  Then:
  - `cat` prints every record as {"context", "feature_lists"}, value by
    value (a step with no kind as null);
  - `convert --to tfrecord --shards 3` and `split --shards 2`: python3-
    protobuf parses every record written, equal to the original;
  - `convert --to jsonl` writes the lines `cat` prints;
  - `convert --to avro`: python3-avro reads FeatureLists as arrays of
    arrays (None for a step with no kind), equal to the originals;
  - `verify --decode` accepts every shard;
  - `stat --feature-spec` gives the parse_sequence_example spec computed
    here from the records by the rules of shardtool-convert(1).
Exit 77 (skipped) without python3-protobuf, protoc or python3-avro.
Prints "N passed, M failed".
"""
import base64
import gzip
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tfrecord_frames import crc32c, frame, masked  # noqa: E402

try:
    import google.protobuf  # noqa: F401
    import avro.datafile
    import avro.io
except ImportError:
    print("python3-protobuf or python3-avro is not installed: skipped")
    sys.exit(77)
if not shutil.which("protoc"):
    print("protoc is not installed: skipped")
    sys.exit(77)

ST, SOURCE = sys.argv[1], sys.argv[2]
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)
    return cond


def read_tfrecords(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    out, at = [], 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (len_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        payload = data[at + 12:at + 12 + length]
        (data_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if masked(crc32c(header)) != len_crc or masked(crc32c(payload)) != data_crc:
            raise ValueError(f"{path}: bad crc at {at}")
        out.append(payload)
        at += 16 + length
    return out


def run(*args, ok=True):
    p = subprocess.run([ST, *args], capture_output=True)
    if ok and p.returncode != 0:
        print("FAIL", args, p.stderr.decode(errors="replace"))
    return p


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


# ---- random SequenceExamples ------------------------------------------------

rng = random.Random(20261124)
KIND = {"user": "int64", "score": "float", "tags": "bytes", "clicks": "int64",
        "[]clicks": "int64", "[]emb": "float", "[]tokens": "bytes", "[]gaps": "float"}


def value(kind):
    if kind == "int64":
        return rng.choice([0, 1, -1, 2**63 - 1, -2**63, rng.randrange(-10**6, 10**6)])
    if kind == "float":
        return f32(rng.choice([0.0, -1.5, 0.1, 1e30, rng.uniform(-1e3, 1e3)]))
    return rng.choice([b"", b"a", "\u00e9t\u00e9".encode(), b"\xff\x00bin", b"x" * rng.randrange(1, 9)])


def random_record():
    """(context, lists): context {name: [values]}; lists {name: [step]} where a
    step is a list of values, or None (a Feature with no kind)."""
    ctx = {"user": [value("int64")]}
    if rng.random() < 0.7:
        ctx["score"] = [value("float")]
    if rng.random() < 0.8:
        ctx["tags"] = [value("bytes") for _ in range(rng.randrange(0, 4))]
    if rng.random() < 0.5:
        ctx["clicks"] = [value("int64")]  # a context feature named like a FeatureList
    lists = {}
    for name in ["clicks", "emb", "tokens", "gaps"]:
        if name != "clicks" and rng.random() < 0.2:
            continue  # absent from this record
        kind = KIND["[]" + name]
        steps = []
        for _ in range(rng.choice([0, 1, 2, 3, 5])):
            if name == "clicks":
                steps.append([value(kind)])
            elif name == "emb":
                steps.append([value(kind), value(kind)])
            elif name == "tokens" and rng.random() < 0.25:
                steps.append(None)
            else:
                steps.append([value(kind) for _ in range(rng.randrange(0, 4))])
        lists[name] = steps
    return ctx, lists


def to_proto(pb, rec):
    ctx, lists = rec
    se = pb.SequenceExample()
    for name, vals in ctx.items():
        lst = getattr(se.context.feature[name], KIND[name] + "_list")
        lst.SetInParent()
        lst.value.extend(vals)
    for name, steps in lists.items():
        fl = se.feature_lists.feature_list[name]
        fl.SetInParent()
        for step in steps:
            feat = fl.feature.add()
            if step is not None:
                lst = getattr(feat, KIND["[]" + name] + "_list")
                lst.SetInParent()
                lst.value.extend(step)
    return se


def from_proto(se):
    ctx = {}
    for name, feat in se.context.feature.items():
        kind = feat.WhichOneof("kind")
        ctx[name] = list(getattr(feat, kind).value) if kind else []
    lists = {}
    for name, fl in se.feature_lists.feature_list.items():
        steps = []
        for feat in fl.feature:
            kind = feat.WhichOneof("kind")
            steps.append(list(getattr(feat, kind).value) if kind else None)
        lists[name] = steps
    return ctx, lists


def json_value(v):
    if isinstance(v, dict):
        return base64.b64decode(v["base64"])
    if isinstance(v, str):
        return v.encode()
    return v


def from_json(line, rec):
    """The record as cat prints it, with values typed by the original's kinds."""
    doc = json.loads(line)
    ctx = {k: [json_value(x) for x in v] for k, v in doc["context"].items()}
    lists = {k: [None if s is None else [json_value(x) for x in s] for s in v]
             for k, v in doc["feature_lists"].items()}
    return ctx, lists


def same(a, b):
    """Records equal, floats compared as float32."""
    def norm(rec):
        ctx, lists = rec
        f = lambda v: f32(v) if isinstance(v, float) else v  # noqa: E731
        return ({k: [f(x) for x in v] for k, v in ctx.items()},
                {k: [None if s is None else [f(x) for x in s] for s in v] for k, v in lists.items()})
    return norm(a) == norm(b)


# ---- the spec computed here -------------------------------------------------

def expected_spec(records):
    n = len(records)

    def dtype(kind):
        return {"int64": "int64", "float": "float32", "bytes": "string"}[kind]
    ctx_spec, seq_spec = {}, {}
    names = []
    for ctx, _ in records:
        for k in ctx:
            if k not in names:
                names.append(k)
    for k in names:
        lens = [len(c[k]) for c, _ in records if k in c]
        present = len(lens)
        e = {"dtype": dtype(KIND[k])}
        if len(set(lens)) == 1 and present == n:
            e.update(type="FixedLenFeature", shape=[] if lens[0] == 1 else [lens[0]])
        elif set(lens) == {1}:
            e.update(type="FixedLenFeature", shape=[],
                     default_value={"int64": 0, "float": 0.0, "bytes": ""}[KIND[k]])
        else:
            e.update(type="VarLenFeature")
        ctx_spec[k] = e
    for k in ["clicks", "emb", "tokens", "gaps"]:
        having = [lists[k] for _, lists in records if k in lists]
        if not having:
            continue
        steps = [s for lst in having for s in lst]
        lens = {len(s) for s in steps if s is not None}
        e = {"dtype": dtype(KIND["[]" + k])}
        if steps and None not in steps and len(lens) == 1:
            e.update(type="FixedLenSequenceFeature", shape=[] if lens == {1} else [lens.pop()])
            if len(having) < n:
                e["allow_missing"] = True
        else:
            e.update(type="VarLenFeature")
        seq_spec[k] = e
    return {"context_features": ctx_spec, "sequence_features": seq_spec}


def spec_equal(got, want):
    def strip(d):
        return {k: {kk: vv for kk, vv in v.items()} for k, v in d.items()}
    return (strip(got["context_features"]) == strip(want["context_features"]) and
            strip(got["sequence_features"]) == strip(want["sequence_features"]))


# ---- Avro -------------------------------------------------------------------

def from_avro(datum, schema, rec):
    """The Avro datum as a record like rec (the original decides kinds)."""
    ctx, lists = {}, {}
    for field in schema.fields:
        name = field.other_props.get("tf_feature", field.name)
        t = field.type
        types = t.schemas if hasattr(t, "schemas") else [t]
        arr = [x for x in types if x.type == "array"]
        seq = bool(arr) and (arr[0].items.type == "array" or
                             (hasattr(arr[0].items, "schemas") and
                              any(s.type == "array" for s in arr[0].items.schemas)))
        v = datum[field.name]
        if v is None:
            continue
        if seq:
            lists[name] = [None if s is None else list(s) for s in v]
        elif arr:
            ctx[name] = list(v)
        else:
            ctx[name] = [v]
    # A scalar column holds null where a record had an empty list.
    for k, v in rec[0].items():
        if v == [] and k not in ctx:
            ctx[k] = []
    return ctx, lists


def main():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["protoc", "--proto_path=" + os.path.join(SOURCE, "formats", "example"),
                        "--python_out=" + tmp, "example.proto"], check=True)
        sys.path.insert(0, tmp)
        import example_pb2 as pb

        records = [random_record() for _ in range(300)]
        payloads = [to_proto(pb, r).SerializeToString() for r in records]
        src = os.path.join(tmp, "seq.tfrecord")
        with open(src, "wb") as f:
            f.write(b"".join(frame(p) for p in payloads))
        srcgz = os.path.join(tmp, "seq.tfrecord.gz")
        with open(srcgz, "wb") as f:
            f.write(gzip.compress(open(src, "rb").read()))
        originals = [from_proto(pb.SequenceExample.FromString(p)) for p in payloads]
        check(all(same(a, b) for a, b in zip(originals, records)), "python3-protobuf round trip of the generator")

        # cat
        p = run("cat", srcgz)
        lines = p.stdout.decode().splitlines()
        check(len(lines) == len(records), f"cat prints {len(records)} lines")
        bad = [i for i, (line, r) in enumerate(zip(lines, originals)) if not same(from_json(line, r), r)]
        check(not bad, f"cat: every record as context + feature_lists (first differing: {bad[:3]})")
        check(sum(line.count("null") for line in lines) ==
              sum(s is None for _, l in originals for st in l.values() for s in st),
              "cat: one null per step with no kind")

        # convert --to tfrecord, split
        for cmd, out, n in [("convert", "conv/x", 3), ("split", "split/y", 2)]:
            run(cmd, src, "-o", os.path.join(tmp, out), "--shards", str(n), "--quiet")
            got = []
            for i in range(n):
                got.append([pb.SequenceExample.FromString(x) for x in
                            read_tfrecords(os.path.join(tmp, f"{out}-{i:05d}-of-{n:05d}.tfrecord"))])
            # round robin: record j is in shard j % n at place j // n
            back = [from_proto(got[j % n][j // n]) for j in range(len(records))]
            check(all(same(a, b) for a, b in zip(back, originals)),
                  f"{cmd} --shards {n}: python3-protobuf parses every record, equal to the original")
            v = run("verify", "--decode", *[os.path.join(tmp, f"{out}-{i:05d}-of-{n:05d}.tfrecord")
                                             for i in range(n)])
            check(v.returncode == 0, f"{cmd}: verify --decode accepts the shards")

        # convert --to jsonl
        run("convert", src, "-o", os.path.join(tmp, "j/z"), "--to", "jsonl", "--quiet", "--no-manifest")
        jl = open(os.path.join(tmp, "j/z-00000-of-00001.jsonl")).read().splitlines()
        check(jl == lines, "convert --to jsonl writes the lines cat prints")

        # convert --to avro, read by python3-avro
        run("convert", src, "-o", os.path.join(tmp, "a/w"), "--to", "avro", "--quiet", "--no-manifest")
        with open(os.path.join(tmp, "a/w-00000-of-00001.avro"), "rb") as f:
            reader = avro.datafile.DataFileReader(f, avro.io.DatumReader())
            schema = reader.datum_reader.writers_schema
            data = list(reader)
        check(len(data) == len(records), "python3-avro reads every record")
        back = [from_avro(d, schema, r) for d, r in zip(data, originals)]
        bad = [i for i, (a, b) in enumerate(zip(back, originals)) if not same(a, b)]
        check(not bad, f"--to avro: FeatureLists as arrays of arrays, equal to the originals "
                       f"(first differing: {bad[:3]})")
        if bad:
            print("  got ", back[bad[0]], "\n  want", originals[bad[0]])

        # stat --feature-spec
        p = run("stat", "--feature-spec", "-", srcgz)
        got = json.loads(p.stdout)
        want = expected_spec(originals)
        if not check(spec_equal(got, want), "stat --feature-spec: the parse_sequence_example spec"):
            print("  got ", json.dumps(got, sort_keys=True), "\n  want", json.dumps(want, sort_keys=True))
        p = run("convert", src, "-o", os.path.join(tmp, "s/v"), "--quiet", "--feature-spec",
                os.path.join(tmp, "s/spec.json"))
        check(json.load(open(os.path.join(tmp, "s/spec.json"))) == got,
              "convert --feature-spec writes the spec stat --feature-spec writes")

    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
