#!/usr/bin/python3
"""Reading WebDataset tar shards, checked against Python's tarfile.

    test_wds_read.py SHARDTOOL DATA_DIR

The expected samples come from an independent reader: Python's tarfile
lists the members, and the WebDataset rules (the key is the directory part
plus the file name up to the first '.' of its last component; a sample is
a run of adjacent members with one key) and the default mapping (cls ->
int64, txt -> bytes, json objects -> their members, npy -> numpy.load's
values, .gz inflated, anything else -> its bytes) are applied here in
Python, then compared with `shardtool cat --key-feature __key__`.

Inputs: the webdataset project's own test shards (tests/data/webdataset,
see PROVENANCE.md), tars made here by GNU tar (--format=pax, gnu, ustar
with names past 100 bytes) and by tarfile (PAX and GNU formats, non-ASCII
and long names), .npy members of many dtypes and shapes, a reordered tar
and a duplicated key (verify: exit 1 naming the member and the offset that
tarfile gives), split of WebDataset (the same members, byte for byte, in
.tar shards that GNU tar lists) with --skip-corrupt listing the sample it
skips, and convert to TFRecord and back through cat.

Prints "N passed, M failed"; exits 1 on any failure.
"""
import base64
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

import numpy as np

ST = None
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def run(*args, ok=True):
    p = subprocess.run([ST] + list(args), capture_output=True)
    if ok and p.returncode != 0:
        print("  command failed: %s\n  %s" % (" ".join(args), p.stderr.decode("utf-8", "replace")))
    return p


# ---- the independent side: tarfile plus the WebDataset rules -----------------

def split_name(name):
    last = name.rsplit("/", 1)[-1]
    dot = last.index(".")
    cut = len(name) - len(last) + dot
    return name[:cut], name[cut + 1:]


def tar_samples(path):
    """[(key, [(field, bytes, header offset)])] in archive order."""
    samples = []
    with tarfile.open(path) as tf:
        for m in tf:
            if m.isdir():
                continue
            key, field = split_name(m.name)
            data = tf.extractfile(m).read()
            if samples and samples[-1][0] == key:
                samples[-1][1].append((field, data, m.offset))
            else:
                samples.append((key, [(field, data, m.offset)]))
    return samples


def json_value(v):
    """A JSON value as cat prints a feature's values: a list."""
    if isinstance(v, list):
        return v
    if isinstance(v, bool):
        return [int(v)]
    return [v]


def expected_features(key, members):
    context, lists = {"__key__": [key.encode()]}, {}
    for field, data, _ in members:
        if field.endswith(".gz") and field != "gz":
            data = gzip.decompress(data)
            field = field[:-3]
        name, _, ext = field.rpartition(".")
        name = name or ext
        if ext == "cls":
            context[name] = [int(data.strip())]
        elif ext == "json":
            obj = json.loads(data)
            if not isinstance(obj, dict):
                obj = {name: obj}
            for k, v in obj.items():
                if isinstance(v, list) and v and isinstance(v[0], list):
                    lists[k] = v
                else:
                    context[k] = [x.encode() if isinstance(x, str) else x for x in json_value(v)]
        elif ext == "npy":
            a = np.load(io.BytesIO(data))
            vals = a.astype(np.float32) if a.dtype.kind == "f" else a.astype(np.int64)
            if a.ndim == 2:
                lists[name] = [[float(x) if a.dtype.kind == "f" else int(x) for x in row] for row in vals]
            else:
                context[name] = [float(x) if a.dtype.kind == "f" else int(x) for x in vals.reshape(-1)]
        else:
            context[name] = [data]
    return context, lists


def cat_values(vals):
    out = []
    for v in vals:
        if isinstance(v, dict) and "base64" in v:
            out.append(base64.b64decode(v["base64"]))
        elif isinstance(v, str):
            out.append(v.encode())
        else:
            out.append(v)
    return out


def cat_samples(path, *extra):
    p = run("cat", "--key-feature", "__key__", *extra, path)
    rows = []
    for line in p.stdout.decode().splitlines():
        rec = json.loads(line)
        if "context" in rec:
            ctx = {k: cat_values(v) for k, v in rec["context"].items()}
            lists = {k: [cat_values(s) for s in v] for k, v in rec["feature_lists"].items()}
        else:
            ctx, lists = {k: cat_values(v) for k, v in rec.items()}, {}
        rows.append((ctx, lists))
    return p.returncode, rows


def close(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return np.float32(a) == np.float32(b) or (np.isnan(a) and np.isnan(b))
    return a == b


def same_as_tarfile(path, what, *extra):
    want = [expected_features(k, m) for k, m in tar_samples(path)]
    rc, got = cat_samples(path, *extra)
    ok = rc == 0 and len(got) == len(want)
    bad = None
    for i, (w, g) in enumerate(zip(want, got)):
        if set(w[0]) != set(g[0]) or set(w[1]) != set(g[1]) or \
                not all(close(w[0][k], g[0][k]) for k in w[0]) or not all(close(w[1][k], g[1][k]) for k in w[1]):
            ok, bad = False, (i, w, g)
            break
    check(ok, "%s: %d samples as tarfile reads them%s" % (what, len(want), "" if not bad else
                                                           ": sample %d: want %r, got %r" % (bad[0], str(bad[1])[:300],
                                                                                             str(bad[2])[:300])))
    return want


# ---- the cases -------------------------------------------------------------------

def corpus(data):
    expect = {"sample.tgz": (90, {"cls", "png"}), "testgz.tar": (1000, {"txt.gz"}),
              "compressed.tar": (3, {"txt.gz"}), "mpdata.tar": (100, {"mp"}), "tendata.tar": (100, {"ten"})}
    for name, (count, fields) in sorted(expect.items()):
        path = os.path.join(data, name)
        samples = tar_samples(path)
        check(len(samples) == count and {f for _, m in samples for f, _, _ in m} == fields,
              "%s: tarfile sees %d samples of %s" % (name, count, sorted(fields)))
        same_as_tarfile(path, name)
        p = run("verify", "--decode", path)
        check(p.returncode == 0 and b"%d records" % count in p.stdout, "%s: verify --decode OK, %d samples: %s"
              % (name, count, p.stdout.decode().strip()))
        p = run("stat", "--json", path)
        details = json.loads(p.stdout)["files"][0]["details"] if p.returncode == 0 else {}
        check(details.get("samples") == count and set(details.get("members_by_field", {})) == fields,
              "%s: stat --json: samples and fields" % name)
    # Keys with a directory part (compressed/0001), beside a directory member.
    rc, rows = cat_samples(os.path.join(data, "compressed.tar"))
    check([r[0]["__key__"][0] for r in rows] == [b"compressed/0001", b"compressed/0002", b"compressed/0003"],
          "compressed.tar: keys keep their directory part")


def write_tree(root, files):
    for name, data in files:
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def gnu_tar(tmp):
    deep = "d" * 60 + "/" + "e" * 60  # a directory part past 100 bytes in all
    files = []
    for i in range(5):
        key = "%s/sample_%03d_%s" % (deep, i, "k" * 30)
        files += [(key + ".cls", b"%d\n" % i), (key + ".txt", b"text %d" % i),
                  (key + ".meta.json", json.dumps({"n": i, "w": [i * 0.5, 2.25]}).encode())]
    src = os.path.join(tmp, "src")
    write_tree(src, files)
    names = sorted(n for n, _ in files)
    # --sort=name keeps each sample's members adjacent.
    for fmt in ("pax", "gnu", "ustar"):
        out = os.path.join(tmp, "gnu-%s.tar" % fmt)
        subprocess.run(["tar", "--format=" + fmt, "--sort=name", "--owner=0", "--group=0", "-C", src, "-cf", out]
                       + names, check=True)
        same_as_tarfile(out, "GNU tar --format=%s, names of %d bytes" % (fmt, len(names[0])))
        p = run("verify", "--decode", out)
        check(p.returncode == 0, "GNU tar --format=%s: verify --decode OK" % fmt)
    gz = os.path.join(tmp, "gnu-pax.tar.gz")
    with open(os.path.join(tmp, "gnu-pax.tar"), "rb") as f, open(gz, "wb") as g:
        g.write(gzip.compress(f.read()))
    same_as_tarfile(gz, "GNU tar pax, gzip-compressed (.tar.gz)")


def add(tf, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def python_tarfile(tmp):
    long_dir = "verzeichnis_" + "x" * 120
    for fmt, label in ((tarfile.PAX_FORMAT, "PAX"), (tarfile.GNU_FORMAT, "GNU")):
        path = os.path.join(tmp, "py-%s.tar" % label)
        with tarfile.open(path, "w", format=fmt, encoding="utf-8") as tf:
            for i, key in enumerate(["données/clé_%02d" % n for n in range(3)] + ["%s/%03d" % (long_dir, n) for n in range(3)]
                                    + ["ключ/образец_%d" % n for n in range(2)]):
                add(tf, key + ".label.cls", b" %d " % (i - 3))
                add(tf, key + ".txt", ("héllo %d ✓" % i).encode())
                add(tf, key + ".jpg", b"\xff\xd8\xff\xe0" + bytes(range(256)) * 3)
                add(tf, key + ".body.txt.gz", gzip.compress(b"inner %d" % i))
                add(tf, key + ".bin", bytes([i]) * 700)
        same_as_tarfile(path, "tarfile %s format, non-ASCII and long names" % label)
        p = run("verify", "--decode", path)
        check(p.returncode == 0, "tarfile %s: verify --decode OK (jpg magic)" % label)


def npy_members(tmp):
    path = os.path.join(tmp, "npy.tar")
    rng = np.random.default_rng(7)
    arrays = {
        "i8": np.array([-2 ** 63, 2 ** 63 - 1, 0], dtype="<i8"),
        "f4": np.array([1.5, -0.0, np.inf, 3.4e38], dtype="<f4"),
        "f8": np.array([0.5, 1e10, 0.1, 3.141592653589793, 16777217.0], dtype="<f8"),
        "i4": np.array([-5, 7], dtype="<i4"),
        "i2": np.array([-300], dtype="<i2"),
        "i1": np.array([-1, 127], dtype="i1"),
        "u1": np.array([255, 0], dtype="u1"),
        "u2": np.array([65535], dtype="<u2"),
        "u4": np.array([4294967295], dtype="<u4"),
        "u8": np.array([2 ** 63 - 1], dtype="<u8"),
        "b": np.array([True, False, True]),
        "f2": np.array([0.5, -2, 65504], dtype="<f2"),
        "be4": np.array([1, -2, 3], dtype=">i4"),
        "bef8": np.array([0.25, -8], dtype=">f8"),
        "scalar": np.array(42, dtype="<i8"),
        "empty": np.zeros((0,), dtype="<f4"),
        "grid": rng.integers(-9, 9, size=(3, 4)).astype("<i8"),
        "fgrid": np.asfortranarray(rng.random((2, 5)).astype("<f4")),
    }
    with tarfile.open(path, "w") as tf:
        for s in range(2):
            for name, a in arrays.items():
                if name == "fgrid" and s == 0:
                    add(tf, "s%d.%s.npy" % (s, name), npy(a))
                elif name != "fgrid":
                    add(tf, "s%d.%s.npy" % (s, name), npy(a if s == 0 else a[::-1].copy() if a.ndim else a))
    same_as_tarfile(path, ".npy members of %d dtypes and shapes" % len(arrays))
    p = run("convert", "--to", "jsonl", "--strict-float", path, "-o", os.path.join(tmp, "npy-strict", "x"), ok=False)
    check(p.returncode != 0 and b"f8" in p.stderr and b"strict-float" in p.stderr,
          "float64 pi narrowed: refused with --strict-float, naming the member: %s" % p.stderr.decode()[:200])
    p = run("convert", "--to", "jsonl", path, "-o", os.path.join(tmp, "npy-plain", "x"), ok=False)
    check(p.returncode == 0 and b"f8" in p.stderr, "float64 narrowed: convert says so, naming the feature: %s"
          % p.stderr.decode()[:300])
    notes = p.stderr.decode()
    check("column 'i4': 4 values" in notes and "widened" in notes and "column 'i8'" not in notes,
          "other dtypes: a note names the widened feature and its count: %s"
          % [l for l in notes.splitlines() if "'i4'" in l][:1])
    big = os.path.join(tmp, "npy-u8.tar")
    with tarfile.open(big, "w") as tf:
        add(tf, "a.u.npy", npy(np.array([2 ** 63], dtype="<u8")))
    p = run("cat", big, ok=False)
    check(p.returncode != 0 and b"a.u.npy" in p.stderr and b"offset" in p.stderr,
          "uint64 past int64 refused naming the member: %s" % p.stderr.decode()[:200])


def json_twice(tmp):
    path = os.path.join(tmp, "twice.tar")
    with tarfile.open(path, "w") as tf:
        add(tf, "k.label.cls", b"1")
        add(tf, "k.json", b'{"label": 2}')
    p = run("cat", path, ok=False)
    check(p.returncode != 0 and b"'label'" in p.stderr and b"k.json" in p.stderr,
          "a feature arriving twice (member and JSON key) is refused naming it: %s" % p.stderr.decode()[:200])


def reorder_and_duplicates(tmp):
    src = os.path.join(tmp, "py-PAX.tar")
    with tarfile.open(src) as tf:
        members = [(m, tf.extractfile(m).read()) for m in tf]
    # Reordered: the first sample's last member moved to the end.
    moved = members[4]
    path = os.path.join(tmp, "reordered.tar")
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
        for m, data in members[:4] + members[5:] + [moved]:
            tf.addfile(m, io.BytesIO(data))
    with tarfile.open(path) as tf:
        last = tf.getmembers()[-1]
    p = run("verify", path, ok=False)
    out = p.stdout.decode()
    check(p.returncode == 1 and "DAMAGED" in out and last.name in out and "offset %d" % last.offset in out,
          "reordered tar: verify exit 1 naming %s at offset %d: %s" % (last.name, last.offset, out.strip()[:300]))
    p = run("cat", path, ok=False)
    check(p.returncode != 0 and b"adjacent" in p.stderr, "reordered tar: cat refuses it")

    dup = os.path.join(tmp, "duplicate.tar")
    with tarfile.open(dup, "w") as tf:
        for key in ("a", "b", "a", "c"):
            add(tf, key + ".txt", key.encode())
    with tarfile.open(dup) as tf:
        third = tf.getmembers()[2]
    p = run("verify", dup, ok=False)
    out = p.stdout.decode()
    check(p.returncode == 1 and "a.txt" in out and "offset %d" % third.offset in out and "key 'a'" in out,
          "duplicated key: verify exit 1 naming a.txt at offset %d: %s" % (third.offset, out.strip()[:300]))

    # split --skip-corrupt: the sample met again is skipped and listed.
    out_prefix = os.path.join(tmp, "skipped", "x")
    p = run("split", "--skip-corrupt", "-v", dup, "-o", out_prefix)
    err = p.stderr.decode()
    check(p.returncode == 0 and "skipped" in err and "a.txt" in err, "split --skip-corrupt lists the skipped "
          "sample: %s" % [l for l in err.splitlines() if "skipped" in l][:2])
    rc, rows = cat_samples(out_prefix + "-00000-of-00001.tar")
    check(rc == 0 and [r[0]["__key__"][0] for r in rows] == [b"a", b"b", b"c"],
          "split --skip-corrupt keeps the other samples: %r" % [r[0].get("__key__") for r in rows])


def split_copies(tmp, data):
    inputs = [os.path.join(data, "testgz.tar"), os.path.join(data, "sample.tgz"), os.path.join(tmp, "py-GNU.tar")]
    prefix = os.path.join(tmp, "split", "s")
    p = run("split", *inputs, "-o", prefix, "--shards", "3")
    shards = sorted(os.path.join(tmp, "split", f) for f in os.listdir(os.path.join(tmp, "split")) if f.endswith(".tar"))
    check(p.returncode == 0 and len(shards) == 3, "split of three WebDataset inputs into 3 .tar shards")

    def members(paths):
        got = []
        for path in paths:
            with tarfile.open(path) as tf:
                got += [(m.name, tf.extractfile(m).read()) for m in tf if not m.isdir()]
        return sorted(got)

    check(members(inputs) == members(shards), "split: the same members, byte for byte, as tarfile reads them")
    listed = sum(len(subprocess.run(["tar", "-tf", s], capture_output=True, check=True).stdout.splitlines())
                 for s in shards)
    check(listed == len(members(inputs)), "split: GNU tar lists every member of the shards")
    for s in shards:
        with open(s, "rb") as f:
            check(f.read()[-1024:] == b"\0" * 1024, "%s ends with the end-of-archive marker" % os.path.basename(s))
        p = run("verify", "--decode", s)
        check(p.returncode == 0, "verify --decode %s" % os.path.basename(s))


def convert_round(tmp, data):
    src = os.path.join(data, "sample.tgz")
    prefix = os.path.join(tmp, "conv", "c")
    run("convert", "--key-feature", "__key__", src, "-o", prefix)
    rc1, a = cat_samples(src)
    p = run("cat", prefix + "-00000-of-00001.tfrecord")
    b = [json.loads(l) for l in p.stdout.decode().splitlines()]
    check(rc1 == 0 and len(a) == len(b) and all({k: cat_values(v) for k, v in r.items()} == x[0]
                                                for r, x in zip(b, a)),
          "convert WebDataset -> TFRecord: cat gives the same samples, keys included")


def python_reader(data):
    """The library's reader (Python module) with key_feature, as cat reads it."""
    lib = os.path.join(os.path.dirname(os.path.dirname(ST)), "lib", "libshardtool.so")
    pkg = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "python")
    if not os.path.exists(lib):
        print("skip python reader: no %s" % lib)
        return
    code = ("import shardtool, sys, json\n"
            "r = shardtool.Reader([sys.argv[1]], decode=True, key_feature='__key__')\n"
            "print(json.dumps([[x['__key__'][0].decode(), int(x['cls'][0])] for x in r]))\n")
    env = dict(os.environ, SHARDTOOL_LIBRARY=lib, PYTHONPATH=os.path.abspath(pkg))
    with open(lib, "rb") as f:
        if b"__asan_init" in f.read():
            # python3 itself is not built with the sanitizer: its runtime
            # must come first, as the api tests preload it.
            asan = subprocess.run(["cc", "-print-file-name=libasan.so"], capture_output=True, text=True)
            env["LD_PRELOAD"] = asan.stdout.strip()
            env["ASAN_OPTIONS"] = "detect_leaks=0"
    path = os.path.join(data, "sample.tgz")
    p = subprocess.run([sys.executable, "-c", code, path], capture_output=True, env=env)
    got = json.loads(p.stdout) if p.returncode == 0 else p.stderr.decode()[:300]
    want = [[k, int(dict((f, d) for f, d, _ in m)["cls"])] for k, m in tar_samples(path)]
    check(got == want, "Python Reader(key_feature='__key__') reads sample.tgz as tarfile does: %s" % str(got)[:120])


def main():
    global ST
    ST = os.path.abspath(sys.argv[1])
    data = os.path.join(os.path.abspath(sys.argv[2]), "webdataset")
    tmp = tempfile.mkdtemp(prefix="wds-read-")
    try:
        corpus(data)
        gnu_tar(tmp)
        python_tarfile(tmp)
        npy_members(tmp)
        json_twice(tmp)
        reorder_and_duplicates(tmp)
        split_copies(tmp, data)
        convert_round(tmp, data)
        python_reader(data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
