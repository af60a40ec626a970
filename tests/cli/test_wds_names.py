#!/usr/bin/python3
"""Feature names with '/', '%', '.' and other characters through WebDataset.

TensorFlow's usual feature names hold '/' ("image/encoded",
"image/class/label"), which in a member name KEY.FIELD.EXT would move the
key; convert --to webdataset writes '/' as %2F and '%' as %25 in the field
(shardtool-convert(1), WebDataset output) and the reader undoes exactly
those two.  Checked here, against readers that are not shardtool's:

  - a TFRecord file made by this test with protobuf (TensorFlow's
    example.proto, compiled by protoc at test time) and framed in Python
    (tests/tfrecord_frames.py): a real JPEG made by PIL in "image/encoded",
    "image/class/label" int64, "a%b", "a.b", a name that looks like an
    escape ("x%2Fy"), names beginning or ending in '.', non-ASCII, a float
    list and a bytes list (.npy and .json members);
  - Python's tarfile lists the escaped member names, and reading the tar
    the webdataset way (the key up to the first '.' of the file name, the
    last extension off, urllib's percent-decoding) gives one key per
    sample and the source's feature names; the JPEG member is the bytes PIL
    wrote and PIL opens it;
  - TFRecord -> WebDataset -> TFRecord gives the same Examples, compared
    as protobuf messages parsed from both files (and with --wds-member json,
    whose JSON keys are the names as they are);
  - cat, stat (features and members_by_field's "feature") and
    verify --decode show the names unescaped;
  - a tar written by Python's tarfile with '%' that is not an escape
    ("50%off", "x%41") reads those names as they are; "%2f" and "%25" are
    decoded (under a .gz member's inner extension too), as the man page
    says, and stat's members_by_field names the feature where they are.

Usage: test_wds_names.py SHARDTOOL SOURCE_ROOT  (Debian's python3: protobuf, PIL)
Prints "N passed, M failed".
"""
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse

ST = SRC = EX = None
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)
    return cond


def st(*args):
    return subprocess.run([ST] + [str(a) for a in args], capture_output=True)


def said(blob):
    lines = blob.decode(errors="replace").strip().splitlines()
    return lines[-1][-240:] if lines else ""


def jpeg(i):
    from PIL import Image
    b = io.BytesIO()
    Image.new("RGB", (8 + i, 6), (40 * i % 256, 90, 200)).save(b, "JPEG")
    return b.getvalue()


# The names of every record, and what the writer makes of each.
NAMES = {
    "image/encoded": "image%2Fencoded.jpg",
    "image/class/label": "image%2Fclass%2Flabel.cls",
    "image/format": "image%2Fformat.txt",
    "a%b": "a%25b.txt",
    "a.b": "a.b.cls",
    "x%2Fy": "x%252Fy.txt",
    ".lead": ".lead.txt",
    "trail.": "trail..txt",
    "名前/ß": "名前%2Fß.txt",
    "box/xmin": "box%2Fxmin.npy",
    "obj/text": "obj%2Ftext.json",
}


def example(i):
    ex = EX.Example()
    f = ex.features.feature
    f["image/encoded"].bytes_list.value.append(jpeg(i))
    f["image/class/label"].int64_list.value.append(i % 3)
    f["image/format"].bytes_list.value.append(b"jpeg")
    f["a%b"].bytes_list.value.append(b"percent %d" % i)
    f["a.b"].int64_list.value.append(-i)
    f["x%2Fy"].bytes_list.value.append(b"looks escaped")
    f[".lead"].bytes_list.value.append(b"lead")
    f["trail."].bytes_list.value.append(b"trail")
    f["名前/ß"].bytes_list.value.append("wert".encode())
    f["box/xmin"].float_list.value.extend([0.25, 0.5 + i])
    f["obj/text"].bytes_list.value.extend([b"cat", b"dog"])
    return ex


def write_tfrecord(path, examples):
    sys.path.insert(0, os.path.join(SRC, "tests"))
    from tfrecord_frames import frame
    with open(path, "wb") as f:
        for ex in examples:
            f.write(frame(ex.SerializeToString()))


def read_tfrecord(path):
    """The Examples of a TFRecord file, by the framing's lengths."""
    import struct
    data = open(path, "rb").read()
    out, at = [], 0
    while at < len(data):
        n = struct.unpack_from("<Q", data, at)[0]
        out.append(EX.Example.FromString(data[at + 12:at + 12 + n]))
        at += 12 + n + 4
    return out


def webdataset_samples(shard):
    """[(key, {feature: (ext, bytes)})] read as webdataset reads a tar: the
    key up to the first '.' of the file name, then the field; the name is
    the field without its last extension, percent-decoded."""
    samples = []
    with tarfile.open(shard) as t:
        for m in t:
            d, base = os.path.split(m.name)
            key, field = base.split(".", 1)
            key = os.path.join(d, key) if d else key
            name, ext = field.rsplit(".", 1) if "." in field else (field, field)
            name = urllib.parse.unquote(name, errors="strict")
            data = t.extractfile(m).read()
            if not samples or samples[-1][0] != key:
                samples.append((key, {}))
            samples[-1][1][name] = (ext, data)
    return samples


def round_trip(d, src, want):
    wds = os.path.join(d, "wds", "s")
    r = st("convert", "-q", src, "--to", "wds", "-o", wds)
    if not check(r.returncode == 0, "TFRecord with '/' and '%%' in names -> WebDataset (%s)" % said(r.stderr)):
        return
    shard = wds + "-00000-of-00001.tar"
    names = tarfile.open(shard).getnames()
    first = {"0000000000." + NAMES[k] for k in want[0].features.feature}
    check(set(names[:len(first)]) == first, "tarfile lists the escaped member names: %s" % names[:len(first)])
    check(all("/" not in n for n in names), "no member name holds a '/' (the key cannot move)")

    samples = webdataset_samples(shard)
    check([k for k, _ in samples] == ["%010d" % i for i in range(len(want))],
          "read the webdataset way: one key per record, %s" % [k for k, _ in samples][:3])
    check(all(set(fields) == set(w.features.feature) for (_, fields), w in zip(samples, want)),
          "read the webdataset way: percent-decoded fields are the source's feature names: %s"
          % sorted(samples[0][1]))
    from PIL import Image
    ok = all(fields["image/encoded"] == ("jpg", w.features.feature["image/encoded"].bytes_list.value[0]) and
             Image.open(io.BytesIO(fields["image/encoded"][1])).size == (8 + i, 6)
             for i, ((_, fields), w) in enumerate(zip(samples, want)))
    check(ok, "the image%2Fencoded.jpg members are the JPEG bytes, opened by PIL")
    check(all(fields["image/class/label"] == ("cls", b"%d" % (i % 3)) for i, (_, fields) in enumerate(samples)),
          "image%2Fclass%2Flabel.cls holds the label as decimal text")
    obj = samples[0][1]["obj/text"]
    check(obj[0] == "json" and json.loads(obj[1]) == {"obj/text": ["cat", "dog"]},
          "a .json member's key is the name unescaped: %r" % (obj,))

    escaped = sum("%2F" in m or "%25" in m for m in NAMES.values())
    r = st("convert", shard, "--to", "tfrecord", "-o", os.path.join(d, "back-noted", "b"))
    check(r.returncode == 0 and ("note: %s: %d members (%d names)" % (shard, escaped * len(want), escaped)) in r.stderr.decode(),
          "WebDataset -> TFRecord says how many member names were unescaped: %s" % said(r.stderr))
    back = os.path.join(d, "back", "b")
    r = st("convert", "-q", shard, "--to", "tfrecord", "-o", back)
    got = read_tfrecord(back + "-00000-of-00001.tfrecord") if r.returncode == 0 else None
    check(got == want, "WebDataset -> TFRecord: the Examples protobuf parses equal the source's "
          "(%d records) %s" % (len(want), said(r.stderr)))

    r = st("cat", shard)
    rows = [json.loads(line) for line in r.stdout.decode().splitlines()] if r.returncode == 0 else []
    check(len(rows) == len(want) and all(set(x) == set(NAMES) for x in rows) and
          rows[1]["image/class/label"] == [1] and rows[1]["a%b"] == ["percent 1"] and rows[2]["a.b"] == [-2],
          "cat of the tar shows the names unescaped: %s" % sorted(rows[0]) if rows else said(r.stderr))
    r = st("stat", "--json", shard)
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    f = doc.get("files", [{}])[0]
    by_field = f.get("details", {}).get("members_by_field", {})
    check({x["name"] for x in f.get("features", [])} == set(NAMES) and
          by_field.get("image%2Fencoded.jpg", {}).get("feature") == "image/encoded" and
          "feature" not in by_field.get("a.b.cls", {"feature": 1}),
          "stat --json: features named unescaped; members_by_field names the feature of an escaped field")
    r = st("verify", "--decode", shard)
    check(r.returncode == 0, "verify --decode: OK (%s)" % said(r.stdout + r.stderr))

    js = os.path.join(d, "json", "j")
    r = st("convert", "-q", src, "--to", "wds", "--wds-member", "json", "-o", js)
    shard = js + "-00000-of-00001.tar"
    if check(r.returncode == 0, "--wds-member json: converted (%s)" % said(r.stderr)):
        with tarfile.open(shard) as t:
            m = t.getmembers()[0]
            keys = set(json.loads(t.extractfile(m).read()))
        check(m.name == "0000000000.json" and keys == set(NAMES), "--wds-member json: JSON keys are the names as "
              "they are: %s" % sorted(keys))
        back = os.path.join(d, "jback", "b")
        r = st("convert", "-q", shard, "--to", "tfrecord", "-o", back)
        got = read_tfrecord(back + "-00000-of-00001.tfrecord") if r.returncode == 0 else None
        # JSON has no JPEG: the image comes back as the same bytes (base64).
        check(got == want, "--wds-member json: WebDataset -> TFRecord gives the source's Examples %s" % said(r.stderr))


def foreign(d):
    """A tar from another tool: '%' that is no escape reads as it is."""
    shard = os.path.join(d, "foreign.tar")
    members = [("k1.50%off.txt", b"a"), ("k1.x%41.txt", b"b"), ("k1.100%25.txt", b"c"),
               ("k1.a%2fb.cls", b"7"), ("k1.%.txt", b"d"), ("k1.tail%2.txt", b"e"),
               ("k1.c%2Fd.txt.gz", gzip.compress(b"f"))]
    with tarfile.open(shard, "w", format=tarfile.PAX_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    r = st("cat", shard)
    row = json.loads(r.stdout) if r.returncode == 0 else {}
    check(row == {"50%off": ["a"], "x%41": ["b"], "100%": ["c"], "a/b": [7], "%": ["d"], "tail%2": ["e"],
                  "c/d": ["f"]},
          "another tool's tar: '%%' that is no escape kept, %%2f and %%25 decoded (.gz too): %s %s"
          % (row, said(r.stderr)))
    note = ("shardtool cat: note: %s: 3 members (3 names) had %%2F or %%25 in the name, read as '/' and '%%' "
            "(the escapes of shardtool's WebDataset output): '100%%25' is the feature '100%%'\n" % shard)
    check(r.stderr.decode() == note, "another tool's tar: one note names the file, the 3 members and the first "
          "name as written and as read: %r" % r.stderr.decode())
    r = st("cat", "-q", shard)
    check(r.returncode == 0 and r.stderr == b"", "cat -q: no note (%r)" % r.stderr)
    r = st("convert", shard, "-o", os.path.join(d, "foreign-out", "f"))
    check(r.returncode == 0 and r.stderr.decode().count("note: %s: 3 members (3 names)" % shard) == 1,
          "convert says the same note once: %s" % said(r.stderr))
    plain = os.path.join(d, "plain.tar")
    with tarfile.open(plain, "w", format=tarfile.PAX_FORMAT) as t:
        info = tarfile.TarInfo("k1.50%off.txt")
        info.size = 1
        t.addfile(info, io.BytesIO(b"a"))
    r = st("cat", plain)
    check(r.returncode == 0 and r.stderr == b"", "a tar with no escape gets no note (%r)" % r.stderr)
    r = st("stat", "--json", shard)
    by_field = json.loads(r.stdout)["files"][0]["details"]["members_by_field"] if r.returncode == 0 else {}
    check({k: v.get("feature") for k, v in by_field.items()} ==
          {"50%off.txt": None, "x%41.txt": None, "100%25.txt": "100%", "a%2fb.cls": "a/b", "%.txt": None,
           "tail%2.txt": None, "c%2Fd.txt.gz": "c/d"},
          "stat --json: members_by_field gives the feature only where an escape changes the name: %s" % by_field)


def main():
    global ST, SRC, EX
    ST, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["protoc", "--python_out=" + d, "-I" + os.path.join(SRC, "formats", "example"),
                        "example.proto"], check=True)
        sys.path.insert(0, d)
        import example_pb2
        EX = example_pb2
        want = [example(i) for i in range(5)]
        src = os.path.join(d, "names.tfrecord")
        write_tfrecord(src, want)
        round_trip(d, src, want)
        foreign(d)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
