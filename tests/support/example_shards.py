"""tf.train.Example records of bytes features, framed as TFRecord, in plain
Python (protobuf wire format by hand): for the payload tests and bench,
which put real image and audio files into shards.  The CRC32C comes from
python3-crcmod's C extension when present (fast enough for gigabytes),
else from tfrecord_frames.py."""

import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tfrecord_frames  # noqa: E402

try:
    import crcmod.predefined
    _crc32c = crcmod.predefined.mkCrcFun("crc-32c")
except ImportError:  # pragma: no cover
    _crc32c = tfrecord_frames.crc32c


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, data):
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def example(features):
    """features: {name: [bytes, ...]} -> a serialized tf.train.Example."""
    entries = b""
    for name, values in features.items():
        bytes_list = b"".join(_field(1, v) for v in values)
        feature = _field(1, bytes_list)
        entries += _field(1, _field(1, name.encode()) + _field(2, feature))
    return _field(1, entries)


def frame(payload):
    head = struct.pack("<Q", len(payload))
    m = tfrecord_frames.masked
    return head + struct.pack("<I", m(_crc32c(head))) + payload + struct.pack("<I", m(_crc32c(payload)))


def write_tfrecord(path, records):
    """records: iterable of {name: [bytes]}; returns each record's offset."""
    offsets = []
    with open(path, "wb") as f:
        for r in records:
            offsets.append(f.tell())
            f.write(frame(example(r)))
    return offsets
