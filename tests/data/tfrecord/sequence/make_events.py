#!/usr/bin/python3
"""Writes events.tfrecord and events.tfrecord.gz: five tf.train.SequenceExample
records serialized by python3-protobuf from TensorFlow's example.proto
(formats/example/example.proto), for the SequenceExample golden cases.

    /usr/bin/python3 make_events.py SOURCE_ROOT OUT_DIR

They hold a context (user: int64 always one value; score: float, missing
from one record; tag: bytes, missing from one record) and three FeatureLists:
clicks (int64, one value per step; zero steps in one record), tokens (bytes,
varying lengths, an empty step, a step with no kind, absent from one record)
and emb (float, two values per step, absent from one record).  Serialized
with deterministic=True (map keys sorted) and gzip with mtime 0, so the files
are the same on every run.

Also clicks_context.tfrecord (a context feature 'clicks' of bytes beside a
FeatureList 'clicks' of int64: two names that must not be confused) and
clicks_float.tfrecord (FeatureList 'clicks' of float: a kind that disagrees
with events.tfrecord's), and damaged_step.tfrecord: a SequenceExample whose
one step holds a packed Int64List cut inside a varint (well framed, CRCs
right: only decoding finds the damage).
"""
import gzip
import os
import struct
import subprocess
import sys
import tempfile


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def masked(c):
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(payload):
    head = struct.pack("<Q", len(payload))
    return (head + struct.pack("<I", masked(crc32c(head))) + payload +
            struct.pack("<I", masked(crc32c(payload))))


RECORDS = [
    ({"user": 1, "score": 0.5, "tag": b"a"},
     {"clicks": [[3], [4], [5]], "tokens": [[b"x", b"y"], [], [b"z"]], "emb": [[1, 2], [3, 4]]}),
    ({"user": 2, "tag": b"b"},
     {"clicks": [[7]], "tokens": [None, [b"q"]], "emb": [[5, 6]]}),
    ({"user": 3, "score": 1.5, "tag": b"c"},
     {"clicks": [], "emb": [[0, 0], [1, 1], [2, 2]]}),
    ({"user": 4, "score": 2.5},
     {"clicks": [[1], [2]], "tokens": [[b"a", b"b", b"c"]]}),
    ({"user": 5, "score": 3.5, "tag": b"e"},
     {"clicks": [[9]], "tokens": [[b"w"]], "emb": [[7, 8]]}),
]
KINDS = {"user": "int64", "score": "float", "tag": "bytes",
         "clicks": "int64", "tokens": "bytes", "emb": "float"}


def fill(feature, kind, values):
    """values None: a Feature with no kind set (as TFX writes missing values)."""
    if values is None:
        return
    lst = getattr(feature, kind + "_list")
    lst.SetInParent()
    lst.value.extend(values)


def write(path, pb, records, kinds):
    data = b""
    for context, lists in records:
        se = pb.SequenceExample()
        for name, v in context.items():
            fill(se.context.feature[name], kinds[name], [v])
        for name, steps in lists.items():
            fl = se.feature_lists.feature_list[name]
            fl.SetInParent()
            for step in steps:
                fill(fl.feature.add(), kinds["[]" + name] if "[]" + name in kinds else kinds[name], step)
        data += frame(se.SerializeToString(deterministic=True))
    with open(path, "wb") as f:
        f.write(data)
    return data


def varint(n):
    out = b""
    while True:
        c, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([c])
        out += bytes([c | 0x80])


def ld(field, body):
    return varint(field << 3 | 2) + varint(len(body)) + body


def damaged_step():
    step = ld(3, ld(1, b"\x80"))  # Feature.int64_list, packed value cut short
    entry = ld(1, b"clicks") + ld(2, ld(1, step))
    return frame(ld(2, ld(1, entry)))  # SequenceExample.feature_lists


def main():
    source, out = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["protoc", "--proto_path=" + os.path.join(source, "formats", "example"),
                        "--python_out=" + tmp, "example.proto"], check=True)
        sys.path.insert(0, tmp)
        import example_pb2 as pb
        data = write(os.path.join(out, "events.tfrecord"), pb, RECORDS, KINDS)
        write(os.path.join(out, "clicks_context.tfrecord"), pb,
              [({"clicks": b"ten"}, {"clicks": [[10], [11]]})], {"clicks": "bytes", "[]clicks": "int64"})
        write(os.path.join(out, "clicks_float.tfrecord"), pb,
              [({"user": 6}, {"clicks": [[0.5]]})], {"user": "int64", "clicks": "float"})
    with open(os.path.join(out, "damaged_step.tfrecord"), "wb") as f:
        f.write(damaged_step())
    with open(os.path.join(out, "events.tfrecord.gz"), "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as g:
            g.write(data)


if __name__ == "__main__":
    main()
