#!/usr/bin/python3
"""Shards written by `shardtool convert` read by an independent decoder.

python3-protobuf (with formats/example/example.proto compiled by protoc)
parses every record of every shard; the framing and both masked CRC32Cs are
checked by a CRC32C written here.  Checks:
  - the Chicago taxi CSV converted by shardtool equals, value by value, what
    Python's csv module reads from the same file under the documented rules
    (int64 / float32 / bytes columns; an empty cell leaves the feature out);
  - the same rows equal the Examples TFX itself wrote from that data (the
    corpus's tfx/external TFRecords; numbers compared as float32, since TFX
    typed some columns float where the CSV holds integers);
  - JSON lines with lists, booleans, nulls and nested objects convert as the
    man page says.
Run with /usr/bin/python3 (Debian's python3-protobuf).  Exit 77 without it.
Prints "N passed, M failed".
"""
import csv
import glob
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tfrecord_frames import crc32c, masked  # noqa: E402

try:
    import google.protobuf  # noqa: F401
except ImportError:
    print("python3-protobuf is not installed: skipped")
    sys.exit(77)

results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def read_tfrecords(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    out, at = [], 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (len_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if masked(crc32c(header)) != len_crc:
            raise ValueError(f"{path}: length crc at {at}")
        payload = data[at + 12:at + 12 + length]
        (data_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if masked(crc32c(payload)) != data_crc:
            raise ValueError(f"{path}: data crc at {at}")
        out.append(payload)
        at += 16 + length
    return out


def load_proto(source, tmp):
    proto_dir = os.path.join(source, "formats", "example")
    subprocess.run(["protoc", "--proto_path=" + proto_dir, "--python_out=" + tmp, "example.proto"], check=True)
    sys.path.insert(0, tmp)
    import example_pb2
    return example_pb2


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def example_values(pb2, payload):
    ex = pb2.Example()
    ex.ParseFromString(payload)
    out = {}
    for name, feat in ex.features.feature.items():
        kind = feat.WhichOneof("kind")
        if kind == "int64_list":
            out[name] = ("int64", list(feat.int64_list.value))
        elif kind == "float_list":
            out[name] = ("float", [f32(v) for v in feat.float_list.value])
        elif kind == "bytes_list":
            out[name] = ("bytes", [v.decode() for v in feat.bytes_list.value])
        else:
            out[name] = (None, [])
    return out


def csv_expectation(path):
    """Python's reading of the CSV under the documented inference rules."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    kinds = {}
    for col in rows[0].keys():
        values = [r[col] for r in rows if r[col] != ""]
        def is_int(v):
            try:
                return str(int(v)) == v.lstrip("+") or int(v) == int(v)
            except ValueError:
                return False
        def is_num(v):
            try:
                float(v)
                return True
            except ValueError:
                return False
        kinds[col] = "int64" if all(is_int(v) for v in values) else "float" if all(is_num(v) for v in values) else "bytes"
    records = []
    for r in rows:
        rec = {}
        for col, v in r.items():
            if v == "":
                continue
            k = kinds[col]
            rec[col] = (k, [int(v)] if k == "int64" else [f32(float(v))] if k == "float" else [v])
        records.append(rec)
    return records


def numeric_key(rec):
    """A record as a comparable tuple; numbers as float32, empty Features as missing."""
    items = []
    for name, (kind, vals) in rec.items():
        if kind is None or not vals:
            continue
        items.append((name, tuple(f32(float(v)) if kind in ("int64", "float") else v for v in vals)))
    return tuple(sorted(items))


def main():
    st, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    data = os.path.join(source, "tests", "data")
    taxi = os.path.join(data, "csv", "tfx", "chicago_taxi_data.csv")
    with tempfile.TemporaryDirectory() as tmp:
        pb2 = load_proto(source, tmp)
        out = os.path.join(tmp, "taxi")
        r = subprocess.run([st, "convert", taxi, "-o", out + "/train", "--shards", "3", "--quiet"],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"convert the taxi CSV ({r.stderr.strip()[-200:]})")
        shards = sorted(glob.glob(out + "/train-*-of-00003.tfrecord"))
        payloads = [p for s in shards for p in read_tfrecords(s)]
        check(len(payloads) == 10000, f"3 shards hold 10000 framed records with valid CRCs ({len(payloads)})")
        ours = [example_values(pb2, p) for p in payloads]
        # Round robin: record i is in shard i % 3 at position i // 3.
        per_shard = [[example_values(pb2, p) for p in read_tfrecords(s)] for s in shards]
        in_order = [per_shard[i % 3][i // 3] for i in range(10000)]
        expected = csv_expectation(taxi)
        check(in_order == expected, "every value equals Python's csv reading (kinds, values, missing cells)")

        tfx = []
        for path in sorted(glob.glob(os.path.join(data, "tfrecord", "tfx", "external", "tfrecord", "*.gz"))):
            tfx.extend(example_values(pb2, p) for p in read_tfrecords(path))
        check(len(tfx) == 15000, "TFX's own Examples of the taxi data read back (15000)")
        theirs = Counter(numeric_key(r) for r in tfx)
        missing = Counter(numeric_key(r) for r in ours) - theirs
        check(sum(missing.values()) == 0,
              f"every converted row equals one of the Examples TFX wrote ({sum(missing.values())} differ)")

        # The other direction: Examples framed and encoded by Python, read by `shardtool cat`.
        written = os.path.join(tmp, "python.tfrecord")
        expected_json = []
        with open(written, "wb") as f:
            for i in range(50):
                ex = pb2.Example()
                feats = ex.features.feature
                feats["id"].int64_list.value.extend([i, -(2 ** 63) + i, 2 ** 63 - 1 - i])
                feats["x"].float_list.value.extend([i / 3.0, float("inf") if i % 7 == 0 else -0.5])
                feats["name"].bytes_list.value.append(("n%03d-é" % i).encode())
                feats["raw"].bytes_list.value.append(bytes([0xff, i]))
                feats["empty"].SetInParent()
                payload = ex.SerializeToString()
                header = struct.pack("<Q", len(payload))
                f.write(header + struct.pack("<I", masked(crc32c(header))) + payload +
                        struct.pack("<I", masked(crc32c(payload))))
                import base64
                expected_json.append({
                    "id": [i, -(2 ** 63) + i, 2 ** 63 - 1 - i],
                    "x": [f32(i / 3.0), "Infinity" if i % 7 == 0 else -0.5],
                    "name": ["n%03d-é" % i],
                    "raw": [{"base64": base64.b64encode(bytes([0xff, i])).decode()}],
                    "empty": []})
        r = subprocess.run([st, "cat", written], capture_output=True, text=True)
        got = [json.loads(line) for line in r.stdout.splitlines()]
        for g in got:
            g["x"] = [f32(v) if isinstance(v, float) else v for v in g["x"]]
        check(r.returncode == 0 and got == expected_json,
              "Examples written by python3-protobuf come out of `shardtool cat` exactly "
              "(int64 extremes, float32, Infinity, UTF-8 and binary bytes, empty Feature)")

        jsonl = os.path.join(tmp, "in.jsonl")
        with open(jsonl, "w") as f:
            f.write('{"id": 1, "tags": ["a", "b"], "score": 0.5, "ok": true, "x": null, "geo": {"lat": 1.5}}\n')
            f.write('{"id": 2, "tags": [], "score": 2, "ok": false, "geo": {"lat": -2.25}}\n')
        r = subprocess.run([st, "convert", jsonl, "-o", tmp + "/j/train", "--quiet"], capture_output=True, text=True)
        check(r.returncode == 0, f"convert JSON lines ({r.stderr.strip()[-200:]})")
        recs = [example_values(pb2, p) for p in read_tfrecords(glob.glob(tmp + "/j/train-*.tfrecord")[0])]
        check(recs[0].get("tags") == ("bytes", ["a", "b"]) and recs[0].get("ok") == ("int64", [1]) and
              "x" not in recs[0] and recs[0].get("geo.lat") == ("float", [1.5]),
              f"JSON lines: arrays, booleans, null, nested objects ({recs[0]})")
        check(recs[1].get("tags") in (("bytes", []), (None, [])) and recs[1].get("ok") == ("int64", [0]) and
              recs[1].get("score") == ("float", [2.0]),
              f"JSON lines: an empty array is present, numbers of a float column stay float ({recs[1]})")
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
