"""What the Python module's tests share: running the command line, framing,
an independent Example decoder (python3-protobuf over example.proto), and
failure bookkeeping."""

import collections
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))  # tests/: tfrecord_frames

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr, flush=True)
    return cond


def finish(name):
    if failures:
        print("%s: %d failure(s)" % (name, len(failures)), file=sys.stderr)
        return 1
    print("%s: ok" % name)
    return 0


class Tool:
    def __init__(self, exe, env=None):
        self.exe = exe
        self.env = env

    def run(self, args, input=None):
        return subprocess.run([self.exe] + list(args), capture_output=True, input=input, env=self.env)

    def ok(self, args, input=None):
        p = self.run(args, input)
        if p.returncode != 0:
            raise RuntimeError("shardtool %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                              p.stderr.decode(errors="replace")[-1500:]))
        return p.stdout

    def cat_records(self, inputs, extra=()):
        """The payloads `shardtool cat --format tfrecord` frames, in order."""
        return frames(self.ok(["cat", "--format", "tfrecord"] + list(extra) + list(inputs)))


def frames(data):
    """Payloads of a TFRecord stream (framing only; cat checked the CRCs)."""
    out = []
    pos = 0
    while pos < len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        out.append(bytes(data[pos + 12:pos + 12 + n]))
        pos += 12 + n + 4
    return out


def multiset(records):
    return collections.Counter(records)


def example_pb2(tmp):
    """formats/example/example.proto compiled by protoc, imported."""
    proto_dir = os.path.join(ROOT, "formats", "example")
    subprocess.run(["protoc", "--proto_path=" + proto_dir, "--python_out=" + tmp, "example.proto"], check=True)
    sys.path.insert(0, tmp)
    import example_pb2 as pb2
    return pb2


def _feature_values(f):
    which = f.WhichOneof("kind")
    if which == "int64_list":
        return ("int64", list(f.int64_list.value))
    if which == "float_list":
        return ("float", [struct.unpack("<f", struct.pack("<f", v))[0] for v in f.float_list.value])
    if which == "bytes_list":
        return ("bytes", list(f.bytes_list.value))
    return ("none", [])


def protobuf_view(pb2, payload):
    """An Example or SequenceExample decoded by python3-protobuf, as
    {name: (kind, values)} with feature lists as {name: [(kind, values), ...]}."""
    seq = pb2.SequenceExample()
    seq.ParseFromString(payload)
    if len(seq.feature_lists.feature_list):
        out = {k: _feature_values(v) for k, v in seq.context.feature.items()}
        for k, fl in seq.feature_lists.feature_list.items():
            out[k] = [_feature_values(step) for step in fl.feature]
        return out
    ex = pb2.Example()
    ex.ParseFromString(payload)
    return {k: _feature_values(v) for k, v in ex.features.feature.items()}


def module_view(rec):
    """A decoded record of the module in protobuf_view's shape."""
    def one(a):
        if a.dtype == object:
            return ("bytes", list(a)) if len(a) else None
        return ({"int64": "int64", "float32": "float"}[str(a.dtype)], a.tolist())
    out = {}
    for k, v in rec.items():
        out[k] = [one(s) for s in v] if isinstance(v, list) else one(v)
    return out


def same_view(mod, ref):
    """Compares module_view and protobuf_view; an empty bytes array (None)
    matches any empty list, since an empty list has no kind in NumPy."""
    if set(mod) != set(ref):
        return False
    def eq(m, r):
        if m is None:
            return r[1] == []
        return m == r
    for k in mod:
        m, r = mod[k], ref[k]
        if isinstance(r, list):
            if not isinstance(m, list) or len(m) != len(r) or not all(eq(a, b) for a, b in zip(m, r)):
                return False
        elif not eq(m, r):
            return False
    return True
