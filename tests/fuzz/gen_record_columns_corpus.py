#!/usr/bin/python3
"""Writes the seed corpus of fuzz_record_columns: runs of serialized
Examples (each a 2-byte little-endian length, then the record) in the forms
writers write, and the forms the walk must decline or get right: varints of
every length (negative int64s take 10 bytes), packed and unpacked lists,
bytes values of 0..40 bytes, names across 16 bytes, a feature missing, in
another order, of another kind or twice, a SequenceExample, and cut or
flipped bytes of those, drawn by a fixed seed.

usage: gen_record_columns_corpus.py DIR"""
import os
import random
import struct
import sys


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


def field(num, wire, payload):
    tag = varint(num << 3 | wire)
    if wire == 2:
        return tag + varint(len(payload)) + payload
    return tag + payload


def feature(kind, values, packed=True):
    if kind == "int64":
        if packed:
            body = field(1, 2, b"".join(varint(v) for v in values))
        else:
            body = b"".join(field(1, 0, varint(v)) for v in values)
        return field(3, 2, body)
    if kind == "float":
        if packed:
            body = field(1, 2, b"".join(struct.pack("<f", v) for v in values))
        else:
            body = b"".join(field(1, 5, struct.pack("<f", v)) for v in values)
        return field(2, 2, body)
    return field(1, 2, b"".join(field(1, 2, v) for v in values))


def example(features):
    """features: [(name, kind, values, packed)]"""
    entries = b"".join(field(1, 2, field(1, 2, name) + field(2, 2, feature(kind, vals, packed)))
                       for name, kind, vals, packed in features)
    return field(1, 2, entries)


def sequence_example(context, lists):
    """context as example(); lists: [(name, kind, [step values])]"""
    fl = b"".join(field(1, 2, field(1, 2, name) + field(2, 2, b"".join(field(1, 2, feature(kind, st, True))
                                                                        for st in steps)))
                  for name, kind, steps in lists)
    return example(context) + field(2, 2, fl)


def run(records):
    return b"".join(struct.pack("<H", len(r)) + r for r in records)


def table_row(rng, i, names):
    return [(names[0], "int64", [i * rng.choice([1, 127, 128, 16383, 1 << 20, 1 << 40, -1])], True),
            (names[1], "float", [rng.random() * 100], rng.random() < 0.8),
            (names[2], "bytes", [bytes(rng.randrange(256) for _ in range(rng.randrange(41)))], True),
            (names[3], "int64", [rng.randrange(-(1 << 62), 1 << 62) for _ in range(rng.randrange(4))],
             rng.random() < 0.5)]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261130)
    name_sets = [[b"id", b"score", b"name", b"tags"],
                 [b"a" * 15, b"b" * 16, b"c" * 17, b"d" * 30],
                 [b"", b"x", b"\x00y", b"z" * 127]]
    seeds = []
    for names in name_sets:
        rows = [example(table_row(rng, i, names)) for i in range(20)]
        seeds.append(rows)
        # a feature missing, another order, another kind, a name twice
        odd = list(rows)
        f = table_row(rng, 99, names)
        odd[5] = example(f[:2] + f[3:])
        odd[9] = example([f[1], f[0]] + f[2:])
        odd[12] = example([(names[0], "bytes", [b"not a number"], True)] + f[1:])
        odd[15] = example(f + [f[0]])
        seeds.append(odd)
    # packed and unpacked floats and int64s of every varint length
    widths = [example([(b"v", "int64", [(1 << (7 * k)) - 1 for k in range(1, 10)] + [-1, -(1 << 63)], p),
                       (b"f", "float", [0.5, -2.0, 1e30], p)]) for p in (True, False)]
    seeds.append(widths * 5)
    seeds.append([example([(b"e", "bytes", [], True), (b"n", "int64", [], True)])] * 8)
    seeds.append([sequence_example([(b"id", "int64", [1], True)], [(b"s", "int64", [[1, 2], [3]])])] * 3
                 + [b"", b"\x0a", b"\x0a\x00"])
    files = []
    for rows in seeds:
        files.append(run(rows))
    # cut and flipped bytes of the seeds, and records spliced across runs
    for k in range(300):
        base = bytearray(rng.choice(files[:len(seeds)]))
        op = rng.randrange(4)
        if op == 0 and base:
            base[rng.randrange(len(base))] ^= 1 << rng.randrange(8)
        elif op == 1 and base:
            del base[rng.randrange(len(base)):]
        elif op == 2:
            rows = rng.choice(seeds)
            r = bytearray(rng.choice(rows))
            if r:
                r[rng.randrange(len(r))] = rng.randrange(256)
            base += struct.pack("<H", len(r)) + r
        else:
            for _ in range(3):
                if base:
                    base[rng.randrange(len(base))] = rng.randrange(256)
        files.append(bytes(base))
    for k, data in enumerate(files):
        with open(os.path.join(out, "seed-%03d" % k), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
