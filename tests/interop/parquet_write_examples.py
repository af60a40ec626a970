#!/usr/bin/python3
"""Writes the TFRecords the Parquet writer's interop test converts, with
python3-protobuf (an independent encoder):

    parquet_write_examples.py PROTO_DIR OUT_DIR

OUT_DIR/examples.tfrecord: Examples with every kind, scalars and lists of
varying lengths (empty ones too), features missing from some records,
bytes that are not UTF-8, int64 extremes, NaN and infinities.
OUT_DIR/sequences.tfrecord: SequenceExamples: context features and
FeatureLists with empty steps, steps with no kind, no steps, and lists
missing from some records.  Exit 77 without python3-protobuf."""
import os
import struct
import subprocess
import sys
import tempfile

try:
    import google.protobuf  # noqa: F401
except ImportError:
    print("python3-protobuf is not installed: skipped")
    sys.exit(77)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def write(path, messages):
    with open(path, "wb") as f:
        for m in messages:
            payload = m.SerializeToString()
            header = struct.pack("<Q", len(payload))
            f.write(header + struct.pack("<I", masked(crc32c(header))) + payload +
                    struct.pack("<I", masked(crc32c(payload))))


def main():
    proto_dir, out = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp()
    subprocess.run(["protoc", "--proto_path=" + proto_dir, "--python_out=" + tmp, "example.proto"], check=True)
    sys.path.insert(0, tmp)
    import example_pb2 as pb

    words = ["alpha", "βeta", "gamma ✓", "", "delta"]
    examples = []
    for i in range(300):
        e = pb.Example()
        f = e.features.feature
        f["id"].int64_list.value.append(i)
        if i % 7:
            f["score"].float_list.value.append((i * 0.37) - 20.5)
        f["name"].bytes_list.value.append(words[i % len(words)].encode())
        if i % 3 == 0:
            f["blob"].bytes_list.value.append(bytes([i % 256, 0xff, 0x00, 0xc3]))
        elif i % 3 == 1:
            f["blob"].bytes_list.value.append(b"plain")
        f["ints"].int64_list.value.extend(range(i % 4))          # lengths 0..3
        if i % 5 != 4:
            f["floats"].float_list.value.extend([0.5 * k - i for k in range(i % 3 + 1)])
        f["tags"].bytes_list.value.extend([w.encode() for w in words[: i % 3]])
        if i % 11 == 0:
            f["extreme"].int64_list.value.append([-(2**63), 2**63 - 1, 0, -1][i // 11 % 4])
        special = [float("nan"), float("inf"), float("-inf"), -0.0, 3.4e38, 1e-45]
        f["special"].float_list.value.append(special[i % len(special)])
        examples.append(e)
    write(os.path.join(out, "examples.tfrecord"), examples)

    sequences = []
    for i in range(120):
        s = pb.SequenceExample()
        c = s.context.feature
        c["user"].int64_list.value.append(i)
        if i % 4:
            c["country"].bytes_list.value.append(["de", "fr", "jp"][i % 3].encode())
        fl = s.feature_lists.feature_list
        if i % 6 != 5:
            clicks = fl["clicks"]
            for step in range(i % 5):
                feat = clicks.feature.add()
                if (i + step) % 4 == 3:
                    continue  # a step with no kind, as TFX writes missing values
                feat.int64_list.value.extend(range(step + i % 2))  # some empty
        words_list = fl["words"]
        for step in range(i % 3):
            words_list.feature.add().bytes_list.value.extend(w.encode() for w in words[step: step + 2])
        if i % 2:
            fl["weights"].feature.add().float_list.value.extend([0.25 * i, -1.5])
        sequences.append(s)
    write(os.path.join(out, "sequences.tfrecord"), sequences)


if __name__ == "__main__":
    main()
