#!/usr/bin/python3
"""Example / SequenceExample interop against python3-protobuf.

    example_interop.py EXAMPLE_DUMP EXAMPLE_PROTO

1. python3-protobuf (an independent encoder) serializes many random
   Examples and SequenceExamples; a hand-written encoder adds unpacked and
   mixed lists, map entries with the value first, and unknown fields (their
   meaning taken from python3-protobuf's own parse).  example_dump decodes
   each with st_example_decode and prints st_record_to_json's JSON line, which
   is compared value by value with what the protobuf objects hold.
2. example_dump re-encodes every record with st_example_encode and
   python3-protobuf parses the result, which must equal the original.
3. A few damaged payloads that python3-protobuf also refuses must come out
   as errors.

Exit 77 (skipped) when /usr/bin/python3 lacks google.protobuf or protoc is
missing.
"""
import base64
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
from fractions import Fraction

try:
    import google.protobuf  # noqa: F401
    from google.protobuf.message import DecodeError
except ImportError:
    print("SKIP: python3-protobuf is not installed", file=sys.stderr)
    sys.exit(77)

if len(sys.argv) != 3:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
DUMP, PROTO = sys.argv[1], sys.argv[2]
PROTOC = shutil.which("protoc")
if not PROTOC:
    print("SKIP: protoc (protobuf-compiler) is not installed", file=sys.stderr)
    sys.exit(77)

rng = random.Random(20240607)
failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 20:
        print("FAIL:", msg, file=sys.stderr)


# ---- values -------------------------------------------------------------

def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


SPECIAL_FLOATS = [0.0, -0.0, f32(1), f32(0x007FFFFF), f32(0x00800000), f32(0x7F7FFFFF),
                  f32(0xFF7FFFFF), math.inf, -math.inf, math.nan, f32(0x3DCCCCCD),
                  1.5, -2.25, 100.0, 1e20, f32(0x4B800000)]
SPECIAL_INTS = [0, 1, -1, 127, 128, -128, 2**31 - 1, -2**31, 2**63 - 1, -2**63, 2**56, -2**56]


def rand_float():
    r = rng.random()
    if r < 0.3:
        return rng.choice(SPECIAL_FLOATS)
    if r < 0.6:
        return f32(f32_bits(rng.uniform(-1000, 1000)))
    return f32(rng.getrandbits(32))


def rand_int():
    r = rng.random()
    if r < 0.3:
        return rng.choice(SPECIAL_INTS)
    if r < 0.6:
        return rng.randint(-1000, 1000)
    return rng.randint(-2**63, 2**63 - 1)


def rand_bytes():
    r = rng.random()
    if r < 0.15:
        return b""
    if r < 0.45:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 40)))
    if r < 0.55:
        # almost text: valid UTF-8 with one bad sequence spliced in
        bad = rng.choice([b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xff", b"\xe2\x82"])
        return "ok\u00e9".encode() + bad + b"tail"
    return rand_text().encode("utf-8")


def rand_text(max_len=12):
    alphabet = ("abcxyz_/.:- 0123456789\"\\\t\n\x01\x1f\x7f"
                "\u00e9\u00df\u4e2d\u6587\u20ac\U0001F600\u2028\ufeff")
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len)))


def rand_name(used):
    while True:
        n = rand_text(10) if rng.random() < 0.9 else ""
        if n not in used:
            used.add(n)
            return n


# ---- building messages with python3-protobuf -------------------------------

def fill_feature(feat):
    kind = rng.choice(["none", "int64", "float", "bytes", "int64", "float", "bytes"])
    count = rng.choice([0, 1, 1, 2, 3, 5, 20])
    if kind == "none":
        return  # the map access that made `feat` already created the entry
    lst = getattr(feat, kind + "_list")
    lst.SetInParent()
    for _ in range(count):
        lst.value.append(rand_int() if kind == "int64" else
                         rand_float() if kind == "float" else rand_bytes())


def build_features(pb_features):
    used = set()
    for _ in range(rng.choice([0, 1, 2, 4, 8, 15])):
        name = rand_name(used)
        fill_feature(pb_features.feature[name])  # the access creates the entry


def random_example(ex_pb2):
    ex = ex_pb2.Example()
    if rng.random() < 0.9:
        ex.features.SetInParent()
        build_features(ex.features)
    return ex


def random_sequence(ex_pb2):
    seq = ex_pb2.SequenceExample()
    if rng.random() < 0.8:
        seq.context.SetInParent()
        build_features(seq.context)
    seq.feature_lists.SetInParent()
    used = set()
    for _ in range(rng.choice([0, 1, 2, 3])):
        fl = seq.feature_lists.feature_list[rand_name(used)]
        for _ in range(rng.choice([0, 1, 2, 5])):
            fill_feature(fl.feature.add())
    return seq


# ---- a hand-written encoder for what python3-protobuf never writes --------

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def ld(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def unknown_field():
    num = rng.choice([4, 5, 9, 99, 12345])
    wt = rng.choice([0, 1, 2, 5])
    if wt == 0:
        return varint(num << 3) + varint(rand_int())
    if wt == 1:
        return varint(num << 3 | 1) + os.urandom(8)
    if wt == 5:
        return varint(num << 3 | 5) + os.urandom(4)
    return ld(num, os.urandom(rng.randint(0, 5)))


def maybe_unknown():
    return unknown_field() if rng.random() < 0.2 else b""


def odd_list(kind):
    """A list message with packed, unpacked and mixed runs of values."""
    out = b""
    for _ in range(rng.choice([0, 1, 2, 3])):
        vals = [rand_int() if kind == 3 else rand_float() if kind == 2 else rand_bytes()
                for _ in range(rng.choice([0, 1, 3]))]
        if kind == 1:
            out += b"".join(ld(1, v) for v in vals)
        elif rng.random() < 0.5:  # unpacked
            for v in vals:
                out += (varint(1 << 3) + varint(v)) if kind == 3 else \
                       (varint(1 << 3 | 5) + struct.pack("<f", v))
        else:  # packed run
            body = b"".join(varint(v) if kind == 3 else struct.pack("<f", v) for v in vals)
            out += ld(1, body)
        out += maybe_unknown()
    return out


def odd_feature():
    if rng.random() < 0.15:
        return maybe_unknown()
    kind = rng.choice([1, 2, 3])
    out = maybe_unknown() + ld(kind, odd_list(kind)) + maybe_unknown()
    if rng.random() < 0.1:  # oneof: a later member replaces, the same one merges
        other = rng.choice([1, 2, 3])
        out = ld(other, odd_list(other)) + out
    if rng.random() < 0.1:
        out += ld(kind, odd_list(kind))
    return out


def odd_entry(name, value):
    key = ld(1, name.encode("utf-8"))
    val = ld(2, value)
    parts = [key, val] if rng.random() < 0.5 else [val, key]
    if rng.random() < 0.1:
        parts = [val]  # no key: the empty name
    return ld(1, maybe_unknown() + b"".join(parts) + maybe_unknown())


def odd_features():
    used = set()
    return b"".join(odd_entry(rand_name(used), odd_feature())
                    for _ in range(rng.choice([0, 1, 3, 6])))


def odd_example():
    return maybe_unknown() + ld(1, odd_features()) + maybe_unknown()


def odd_sequence():
    used = set()
    lists = b""
    for _ in range(rng.choice([0, 1, 2])):
        steps = b"".join(ld(1, odd_feature()) for _ in range(rng.choice([0, 1, 3])))
        lists += odd_entry(rand_name(used), steps)
    return ld(2, lists) + maybe_unknown() + ld(1, odd_features())


# ---- expected values and comparison ------------------------------------------

class Num(str):
    """A JSON number kept as its text."""


def load_json(line):
    def pairs(items):
        keys = [k for k, _ in items]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate keys in %r" % keys)
        return dict(items)
    return json.loads(line, parse_int=Num, parse_float=Num, parse_constant=lambda c: "BAD " + c,
                      object_pairs_hook=pairs)


def text_to_f32(text):
    """Exact decimal -> float32 (round half to even), without double rounding."""
    exact = Fraction(text)
    near = f32_bits(float(text)) if abs(float(text)) < 3.5e38 else None
    if near is None:
        return None
    best = None
    for bits in (near - 1, near, near + 1):
        if bits < 0 or bits > 0xFFFFFFFF:
            continue
        c = f32(bits)
        if math.isnan(c) or math.isinf(c):
            continue
        d = abs(Fraction(c) - exact)
        if best is None or d < best[0] or (d == best[0] and bits % 2 == 0):
            best = (d, bits)
    res = f32(best[1])
    if res == 0 and text.lstrip().startswith("-"):
        res = -0.0
    return res


def same_float(expected, got):
    if math.isnan(expected):
        return got == "NaN"
    if math.isinf(expected):
        return got == ("Infinity" if expected > 0 else "-Infinity")
    if not isinstance(got, Num):
        return False
    value = text_to_f32(got)
    return value is not None and f32_bits(value) == f32_bits(expected)


def expected_bytes(b):
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(b).decode("ascii")}


def check_values(where, feat, got, step=False):
    kind = feat.WhichOneof("kind")
    if kind is None and step:
        # A step with no list set prints as null, apart from an empty step.
        if got is not None:
            fail("%s: no list set, got %r (expected null)" % (where, got))
        return
    if not isinstance(got, list):
        return fail("%s: not a list: %r" % (where, got))
    if kind is None:
        if got != []:
            fail("%s: no list set, got %r" % (where, got))
        return
    vals = list(getattr(feat, kind).value)
    if len(vals) != len(got):
        return fail("%s: %d values, got %d" % (where, len(vals), len(got)))
    for i, (e, g) in enumerate(zip(vals, got)):
        ok = True
        if kind == "int64_list":
            ok = isinstance(g, Num) and all(c in "-0123456789" for c in g) and int(g) == e
        elif kind == "float_list":
            ok = same_float(e, g)
        else:
            ok = expected_bytes(e) == g
        if not ok:
            fail("%s[%d]: expected %r, got %r" % (where, i, e, g))


def check_features(where, features, got):
    if not isinstance(got, dict):
        return fail("%s: not an object: %r" % (where, got))
    if set(features.feature.keys()) != set(got.keys()):
        return fail("%s: names %r, got %r" % (where, sorted(features.feature.keys()), sorted(got)))
    for name, feat in features.feature.items():
        check_values("%s[%r]" % (where, name), feat, got[name])


def check_record(where, msg, got):
    if set(got) == {"error"}:
        return fail("%s: decode error %s" % (where, got["error"]))
    if msg.DESCRIPTOR.name == "Example":
        return check_features(where, msg.features, got)
    if set(got) != {"context", "feature_lists"}:
        return fail("%s: SequenceExample keys %r" % (where, sorted(got)))
    check_features(where + ".context", msg.context, got["context"])
    lists = msg.feature_lists.feature_list
    gl = got["feature_lists"]
    if set(lists.keys()) != set(gl.keys()):
        return fail("%s: feature_lists %r, got %r" % (where, sorted(lists.keys()), sorted(gl)))
    for name, fl in lists.items():
        steps = gl[name]
        if len(steps) != len(fl.feature):
            fail("%s.%r: %d steps, got %d" % (where, name, len(fl.feature), len(steps)))
            continue
        for s, step in enumerate(fl.feature):
            check_values("%s.%r[%d]" % (where, name, s), step, steps[s], step=True)


def canonical(msg):
    """Names and values of a parsed message, floats by bit pattern (NaN as one)."""
    def feat(f):
        kind = f.WhichOneof("kind")
        if kind is None:
            return ("none",)
        vals = list(getattr(f, kind).value)
        if kind == "float_list":
            vals = ["nan" if math.isnan(v) else f32_bits(v) for v in vals]
        return (kind, vals)

    def feats(fs):
        return {k: feat(v) for k, v in fs.feature.items()}

    if msg.DESCRIPTOR.name == "Example":
        return feats(msg.features)
    return (feats(msg.context),
            {k: [feat(s) for s in v.feature] for k, v in msg.feature_lists.feature_list.items()})


# ---- the run ------------------------------------------------------------------

def write_records(path, payloads):
    with open(path, "wb") as f:
        for p in payloads:
            f.write(struct.pack("<I", len(p)))
            f.write(p)


def read_records(path):
    data = open(path, "rb").read()
    out, off = [], 0
    while off < len(data):
        (n,) = struct.unpack_from("<I", data, off)
        out.append(data[off + 4: off + 4 + n])
        off += 4 + n
    return out


def main():
    tmp = tempfile.mkdtemp(prefix="example_interop.")
    try:
        proto_dir = os.path.dirname(os.path.abspath(PROTO))
        subprocess.run([PROTOC, "--proto_path=" + proto_dir, "--python_out=" + tmp,
                        os.path.abspath(PROTO)], check=True)
        sys.path.insert(0, tmp)
        import example_pb2 as ex_pb2

        cases = []  # (parsed message, payload)
        for i in range(1500):
            msg = random_sequence(ex_pb2) if i % 4 == 3 else random_example(ex_pb2)
            cases.append((msg, msg.SerializeToString()))
        for i in range(600):
            payload = odd_sequence() if i % 3 == 2 else odd_example()
            msg = ex_pb2.SequenceExample() if i % 3 == 2 else ex_pb2.Example()
            msg.ParseFromString(payload)  # the independent reading of the odd bytes
            cases.append((msg, payload))

        # Damaged payloads that python3-protobuf refuses too.
        good = ex_pb2.Example()
        good.features.feature["k"].int64_list.value.extend([1, 300, -5])
        good.features.feature["s"].bytes_list.value.append(b"text")
        gb = good.SerializeToString()
        damaged = [gb[:n] for n in (1, 3, len(gb) - 1)] + [b"\x0a\x05\x00", b"\x0b",
                                                        b"\x0a\x80", b"\x80"]
        for d in damaged:
            try:
                ex_pb2.Example().ParseFromString(d)
                raise SystemExit("python3-protobuf accepted damaged payload %r" % d)
            except DecodeError:
                pass

        inp = os.path.join(tmp, "in.bin")
        write_records(inp, [p for _, p in cases] + damaged)
        run = subprocess.run([DUMP, "json", inp], capture_output=True)
        if run.returncode != 0:
            fail("example_dump json exited %d: %s" % (run.returncode, run.stderr.decode()[:2000]))
        # split on newlines only: str.splitlines() also splits at U+2028 etc.
        lines = run.stdout.decode("utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) != len(cases) + len(damaged):
            fail("example_dump printed %d lines for %d records" % (len(lines), len(cases) + len(damaged)))
        for i, ((msg, _), line) in enumerate(zip(cases, lines)):
            try:
                got = load_json(line)
            except ValueError as e:
                fail("record %d: invalid JSON (%s): %r" % (i, e, line[:200]))
                continue
            check_record("record %d" % i, msg, got)
        for j, line in enumerate(lines[len(cases):]):
            got = load_json(line)
            if set(got) != {"error"} or "at byte" not in got["error"]:
                fail("damaged payload %d: expected an error, got %r" % (j, line[:200]))

        # Reverse direction: our encoder, python3-protobuf's parser.
        inp2 = os.path.join(tmp, "good.bin")
        outp = os.path.join(tmp, "reencoded.bin")
        write_records(inp2, [p for _, p in cases])
        run = subprocess.run([DUMP, "reencode", inp2, outp], capture_output=True)
        if run.returncode != 0:
            fail("example_dump reencode exited %d: %s" % (run.returncode, run.stderr.decode()[:2000]))
        back = read_records(outp)
        if len(back) != len(cases):
            fail("reencode wrote %d records for %d" % (len(back), len(cases)))
        for i, ((msg, _), payload) in enumerate(zip(cases, back)):
            again = type(msg)()
            try:
                again.ParseFromString(payload)
            except DecodeError as e:
                fail("re-encoded record %d: python3-protobuf cannot parse it: %s" % (i, e))
                continue
            if canonical(again) != canonical(msg):
                fail("re-encoded record %d differs:\n  %r\n  %r" % (i, canonical(msg), canonical(again)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    if failures:
        print("%d failures" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("ok: %d records each way, %d damaged payloads" % (len(cases), len(damaged)))


main()
