"""TFRecord framing in plain Python, for the test scripts: CRC32C (the
Castagnoli polynomial, table-driven), TensorFlow's masking, and a framed
record.  Independent of shardtool's C code on purpose: the tests compare
what shardtool writes and reads against it."""

import struct


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    t = _TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(c):
    """TFRecord's masked CRC: rotated right by 15, plus a constant."""
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(payload):
    """One TFRecord record: length, its masked CRC, the payload, its masked CRC."""
    head = struct.pack("<Q", len(payload))
    return head + struct.pack("<I", masked(crc32c(head))) + payload + struct.pack("<I", masked(crc32c(payload)))
