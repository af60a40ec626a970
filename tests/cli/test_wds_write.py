#!/usr/bin/python3
"""convert --to webdataset, read back by tools that are not shardtool.

  - GNU tar and bsdtar list and extract every shard with status 0 and
    nothing on stderr, and their extracted files hold the bytes Python's
    tarfile reads for each member;
  - Python's tarfile and numpy.load decode every member by the mapping of
    shardtool-convert(1) (WebDataset output), independently of shardtool,
    and give the records `shardtool cat` prints for the input: a mixed JSON
    lines table (images made by PIL, non-UTF-8 bytes, lists, absent
    features, an empty record), the bench table, TFRecord files with
    SequenceExamples, MNIST, Parquet with nested lists; every .npy is
    byte for byte what numpy.save writes for the array it holds;
  - keys: the record's number (round robin over --shards, and under
    --shuffle), --key (a non-ASCII key goes in a pax header), and the
    refusals ('.', '/', empty, duplicate) naming the record, leaving nothing;
  - feature names with '/' and '%' written escaped (%2F, %25);
  - a 150-byte feature name (pax) listed whole by GNU tar, bsdtar, tarfile;
  - --index: DALI's v1.2 index against the data offsets GNU tar's block
    numbers give; PREFIX.wids.json against the files;
  - the same bytes with --jobs 1, 2 and 4; --mtime;
  - --shard-size, --task + combine, --resume after a kill at each commit
    point, --force replacing a set, .wids.json left out of directory
    listings, and gs:// output (the GCS server of tests/remote/servers.py).
Run with Debian's python3 (numpy, PIL).  Prints "N passed, M failed".
"""
import base64
import io
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile

import numpy as np
from PIL import Image

ST = SOURCE = None
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)
    return cond


def st(*args, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([ST] + [str(a) for a in args], capture_output=True, env=e)


def shards_of(prefix, n=None):
    d, base = os.path.split(prefix)
    names = sorted(f for f in os.listdir(d or ".") if f.startswith(base + "-") and f.endswith(".tar"))
    return [os.path.join(d, f) for f in names]


# ---- the mapping, read back independently --------------------------------------

def tag_float(text):
    return ("f", struct.unpack("<f", struct.pack("<f", float(text)))[0])


def json_value(v):
    """One value of cat's JSON (or a .json member) as (kind, value)."""
    if isinstance(v, tuple):
        return v
    if isinstance(v, bool):
        raise ValueError("bool")
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, str):
        return ("b", v.encode())
    if isinstance(v, dict) and set(v) == {"base64"}:
        return ("b", base64.b64decode(v["base64"]))
    raise ValueError(repr(v))


def json_feature(values):
    if values is None:
        return None
    if values and isinstance(values[0], list) or (values and values[0] is None):
        return ["list"] + [json_feature(step) for step in values]
    return [json_value(v) for v in values]


def parse_json(text):
    return json.loads(text, parse_float=tag_float)


def cat_records(path, extra=()):
    r = st("cat", *extra, path)
    assert r.returncode == 0, r.stderr
    out = []
    for line in r.stdout.decode().splitlines():
        rec = parse_json(line)
        if "context" in rec and "feature_lists" in rec:
            feats = {k: json_feature(v) for k, v in rec["context"].items()}
            for k, v in rec["feature_lists"].items():
                feats[k] = ["list"] + [json_feature(s) for s in v]
        else:
            feats = {k: json_feature(v) for k, v in rec.items()}
        out.append(feats)
    return out


def npy_feature(data, name, problems):
    arr = np.load(io.BytesIO(data), allow_pickle=False)
    again = io.BytesIO()
    np.save(again, arr)
    if again.getvalue() != data:
        problems.append(f"{name}: not the bytes numpy.save writes for its array")
    if arr.dtype == np.dtype("<i8"):
        kind, conv = "i", int
    elif arr.dtype == np.dtype("<f4"):
        kind, conv = "f", float
    else:
        problems.append(f"{name}: dtype {arr.dtype}")
        return None
    if arr.ndim == 1:
        return [(kind, conv(x)) for x in arr]
    return ["list"] + [[(kind, conv(x)) for x in row] for row in arr]


def sample_features(members, problems):
    """{feature: values} of one sample's members [(field, bytes)]."""
    feats = {}
    for field, data in members:
        if field == "json":
            for k, v in parse_json(data.decode()).items():
                feats[k] = json_feature(v)
            continue
        name, ext = field.rsplit(".", 1)
        if ext == "cls":
            feats[name] = [("i", int(data.decode()))]
        elif ext in ("txt", "bin", "jpg", "png", "webp"):
            feats[name] = [("b", data)]
            if ext == "txt":
                data.decode()  # must be UTF-8
            want = {"jpg": b"\xff\xd8\xff", "png": b"\x89PNG\r\n\x1a\n", "webp": b"RIFF"}.get(ext)
            if want and not data.startswith(want):
                problems.append(f"{name}.{ext}: magic {data[:8]!r}")
        elif ext == "npy":
            feats[name] = npy_feature(data, field, problems)
        elif ext == "json":
            obj = parse_json(data.decode())
            if list(obj) != [name]:
                problems.append(f"{field}: keys {list(obj)}")
            feats[name] = json_feature(obj.get(name))
        else:
            problems.append(f"{field}: unknown extension")
    return feats


def read_samples(shard, problems):
    """[(key, [(field, bytes)])] in order, by Python's tarfile."""
    samples = []
    with tarfile.open(shard) as t:
        for m in t:
            if not m.isfile():
                problems.append(f"{m.name}: not a regular file")
                continue
            key, field = m.name.split(".", 1)
            if m.mode != 0o644 or m.uid or m.gid:
                problems.append(f"{m.name}: mode {oct(m.mode)} uid {m.uid} gid {m.gid}")
            data = t.extractfile(m).read()
            if samples and samples[-1][0] == key:
                samples[-1][1].append((field, data))
            else:
                samples.append((key, [(field, data)]))
    return samples


def normal(feats):
    """A FeatureList of no steps is written as an empty list, which reads
    back as a feature with no kind: one of the cases shardtool-convert(1)
    lists as not coming back (the only one these inputs hold)."""
    return {k: [] if v == ["list"] else v for k, v in feats.items()}


def tools_agree(shard, label):
    """GNU tar and bsdtar list and extract the shard quietly, with the bytes
    tarfile reads."""
    ok = True
    with tempfile.TemporaryDirectory() as g, tempfile.TemporaryDirectory() as b:
        for cmd in (["tar", "-tvf", shard], ["tar", "-xf", shard, "-C", g],
                    ["bsdtar", "-tvf", shard], ["bsdtar", "-xf", shard, "-C", b]):
            r = subprocess.run(cmd, capture_output=True)
            if r.returncode != 0 or r.stderr:
                ok = check(False, f"{label}: {' '.join(cmd[:2])}: status {r.returncode}, {r.stderr[:300]!r}")
        with tarfile.open(shard) as t:
            for m in t:
                data = t.extractfile(m).read()
                for d, tool in ((g, "GNU tar"), (b, "bsdtar")):
                    p = os.path.join(d, m.name)
                    if not os.path.isfile(p) or open(p, "rb").read() != data:
                        ok = check(False, f"{label}: {tool} extracted {m.name} differently")
                        return False
    return ok


def check_set(src, prefix, nshards, label, cat_args=(), key=None):
    """Every shard read by the tools, every sample decoded back to cat's record."""
    shards = shards_of(prefix)
    if not check(len(shards) == nshards, f"{label}: {nshards} shards ({len(shards)})"):
        return
    all_ok = all(tools_agree(s, f"{label} {os.path.basename(s)}") for s in shards)
    check(all_ok, f"{label}: GNU tar and bsdtar list and extract every shard quietly, same bytes as tarfile")
    problems = []
    per_shard = [read_samples(s, problems) for s in shards]
    want = cat_records(src, cat_args)
    got = []
    i = 0
    while True:  # round robin: record i in shard i mod n
        s = per_shard[i % nshards]
        if i // nshards >= len(s):
            break
        got.append(s[i // nshards])
        i += 1
    check(len(got) == len(want) and sum(map(len, per_shard)) == len(want),
          f"{label}: {len(want)} samples ({len(got)})")
    bad = 0
    for i, ((k, members), rec) in enumerate(zip(got, want)):
        if key is None and k != "%010d" % i:
            problems.append(f"sample {i}: key {k}")
        if key is not None:
            kv = rec.pop(key)
            text = kv[0][1].decode() if kv[0][0] == "b" else str(kv[0][1])
            if k != text:
                problems.append(f"sample {i}: key {k}, column {text}")
        feats = sample_features(members, problems)
        if normal(feats) != normal(rec):
            bad += 1
            if bad <= 3:
                problems.append(f"sample {i}: {feats!r:.300} != {rec!r:.300}")
    check(not problems, f"{label}: tarfile + numpy.load give cat's records, kinds and keys"
          + ("" if not problems else ": " + "; ".join(problems[:5])))


# ---- inputs ---------------------------------------------------------------------

def image_bytes(fmt, seed):
    im = Image.new("RGB", (8 + seed % 5, 6), (seed * 40 % 256, 90, 200))
    b = io.BytesIO()
    im.save(b, format=fmt)
    return b.getvalue()


def b64(data):
    return {"base64": base64.b64encode(data).decode()}


def make_mixed(path, n=60):
    rng = random.Random(7)
    with open(path, "w") as f:
        for i in range(n):
            rec = {"id": i, "label": rng.randrange(-5, 1000)}
            if i % 7 != 3:
                rec["score"] = rng.uniform(-1, 1)
            rec["vec"] = [rng.uniform(-10, 10) for _ in range(rng.randrange(0, 5))]
            if i % 3:
                rec["ids"] = [rng.randrange(-2**62, 2**62) for _ in range(rng.choice([2, 3, 4]))]
            rec["text"] = rng.choice(["plain", "caf\u00e9 \u2615", "", "two\nlines"])
            rec["blob"] = b64(bytes([0xff, 0xfe, i % 256, 0x80]))
            rec["img"] = b64(image_bytes(["JPEG", "PNG", "WEBP"][i % 3], i))
            tags = ["a", "b\u00e9"] if i % 4 else ["x", b64(b"\xc3\x28")]
            rec["tags"] = tags
            rec["none"] = []
            if i == 11:
                rec = {}
            f.write(json.dumps(rec) + "\n")


def main():
    global ST, SOURCE
    ST, SOURCE = os.path.abspath(sys.argv[1]), sys.argv[2]
    data = os.path.join(SOURCE, "tests", "data")
    tmp = tempfile.mkdtemp(prefix="st-wds-")
    try:
        run(tmp, data)
    except Exception as e:  # a missing output: a failure, not a crash
        check(False, f"stopped: {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


def convert(*args, env=None):
    return st("convert", "-q", *args, env=env)


def run(tmp, data):
    mixed = os.path.join(tmp, "mixed.jsonl")
    make_mixed(mixed)
    table = os.path.join(tmp, "table.csv")
    subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "gen_table.py"), table, "3000"], check=True)

    inputs = [
        ("mixed", mixed, 2),
        ("bench table", table, 3),
        ("events (SequenceExample)", os.path.join(data, "tfrecord/sequence/events.tfrecord"), 2),
        ("clicks_context", os.path.join(data, "tfrecord/sequence/clicks_context.tfrecord"), 1),
        ("clicks_float", os.path.join(data, "tfrecord/sequence/clicks_float.tfrecord"), 2),
        ("mnist", os.path.join(data, "tfrecord/tfx/mnist/mnist.tfrecord"), 3),
        ("alltypes_plain.parquet", os.path.join(data, "parquet/alltypes_plain.parquet"), 2),
        ("nested_lists.parquet", os.path.join(data, "parquet/nested_lists.snappy.parquet"), 1),
        ("null_list.parquet", os.path.join(data, "parquet/null_list.parquet"), 1),
    ]
    for label, src, n in inputs:
        prefix = os.path.join(tmp, "out", label.split()[0].replace(".", "_"), "s")
        r = convert(src, "--to", "webdataset", "-o", prefix, "--shards", n)
        if check(r.returncode == 0, f"{label}: convert --to webdataset ({r.stderr.decode()[:300]})"):
            check_set(src, prefix, n, label)

    # --wds-member json: one KEY.json per sample holding cat's line
    prefix = os.path.join(tmp, "json", "s")
    r = convert(mixed, "--to", "wds", "-o", prefix, "--wds-member", "json")
    problems = []
    samples = read_samples(shards_of(prefix)[0], problems) if r.returncode == 0 else []
    lines = st("cat", mixed).stdout.decode().splitlines()
    check(r.returncode == 0 and len(samples) == len(lines) and
          all(len(m) == 1 and m[0][0] == "json" and m[0][1].decode() == line
              for (k, m), line in zip(samples, lines)),
          "--wds-member json: one KEY.json per sample, cat's JSON line")

    # --key: the column's value is the key, not a member; non-ASCII keys in pax
    keyed = os.path.join(tmp, "keyed.jsonl")
    with open(keyed, "w") as f:
        for i in range(5):
            f.write(json.dumps({"k": f"cl\u00e9-{i}" if i % 2 else f"plain{i}", "v": i}) + "\n")
    prefix = os.path.join(tmp, "keyed", "s")
    r = convert(keyed, "--to", "wds", "-o", prefix, "--key", "k")
    if check(r.returncode == 0, "--key k: converted"):
        check_set(keyed, prefix, 1, "--key k (non-ASCII keys)", key="k")
        shard = shards_of(prefix)[0]
        gnu = subprocess.run(["tar", "-tf", shard], capture_output=True).stdout.decode().split()
        bsd = subprocess.run(["bsdtar", "-tf", shard], capture_output=True).stdout.decode().split()
        want = [f"cl\u00e9-{i}.v.cls" if i % 2 else f"plain{i}.v.cls" for i in range(5)]
        check(gnu == want and bsd == want, f"non-ASCII key names listed by GNU tar and bsdtar ({gnu})")
        raw = open(shard, "rb").read()
        check(raw[156:157] == b"x" or b"././@PaxHeader" in raw[:512 * 4], "a pax header carries the non-ASCII name")
    r = convert(keyed, "--to", "wds", "-o", os.path.join(tmp, "keyed2", "s"), "--key", "v")
    check(r.returncode == 0 and tarfile.open(shards_of(os.path.join(tmp, "keyed2", "s"))[0]).getnames()[0] == "0.k.txt",
          "--key of an int64 column: its decimal text")

    # keys refused, naming the record, nothing left behind
    for n, (what, keys) in enumerate((("a '.'", ["a", "b.c", "d"]), ("a '/'", ["a", "b/c"]), ("empty", ["a", ""]),
                                      ("a duplicate", ["a", "b", "a"]))):
        src = os.path.join(tmp, "bad-keys.jsonl")
        with open(src, "w") as f:
            for k in keys:
                f.write(json.dumps({"k": k, "v": 1}) + "\n")
        d = os.path.join(tmp, "bad", str(n))
        r = convert(src, "--to", "wds", "-o", os.path.join(d, "s"), "--key", "k")
        err = r.stderr.decode()
        bad_record = len(keys) - 1 if what == "a duplicate" else [i for i, k in enumerate(keys)
                                                                 if "." in k or "/" in k or not k][0]
        left = [f for f in os.listdir(d)] if os.path.isdir(d) else []
        check(r.returncode != 0 and f"record {bad_record}" in err and not left,
              f"a key with {what} refused naming record {bad_record}, nothing left ({err.strip()[:200]}; {left})")

    # pax: a 150-byte feature name
    long_name = "f" * 150
    src = os.path.join(tmp, "long.jsonl")
    with open(src, "w") as f:
        f.write(json.dumps({long_name: "v", "short": 1}) + "\n")
    prefix = os.path.join(tmp, "long", "s")
    r = convert(src, "--to", "wds", "-o", prefix)
    if check(r.returncode == 0, "150-byte feature name: converted"):
        shard = shards_of(prefix)[0]
        name = f"0000000000.{long_name}.txt"
        gnu = subprocess.run(["tar", "-tf", shard], capture_output=True).stdout.decode().split()
        bsd = subprocess.run(["bsdtar", "-tf", shard], capture_output=True).stdout.decode().split()
        check(gnu[0] == name and bsd[0] == name and tarfile.open(shard).getnames()[0] == name,
              "a 161-byte member name is listed whole by GNU tar, bsdtar and tarfile (pax path)")
        check_set(src, prefix, 1, "150-byte feature name")

    # '/' would split the key: escaped as %2F, and '%' as %25
    # (tests/cli/test_wds_names.py has the round trips)
    src = os.path.join(tmp, "slash.jsonl")
    with open(src, "w") as f:
        f.write(json.dumps({"image/encoded": "x", "a%b": "y"}) + "\n")
    r = convert(src, "--to", "wds", "-o", os.path.join(tmp, "slash", "s"))
    names = tarfile.open(shards_of(os.path.join(tmp, "slash", "s"))[0]).getnames() if r.returncode == 0 else []
    check(names == ["0000000000.image%2Fencoded.txt", "0000000000.a%25b.txt"],
          f"a feature name with '/' or '%' is written escaped: {names} {r.stderr[-200:]!r}")

    # --index: DALI's index against GNU tar's block numbers; wids.json
    prefix = os.path.join(tmp, "idx", "s")
    r = convert(mixed, "--to", "wds", "-o", prefix, "--shards", 2, "--index")
    if check(r.returncode == 0, "--index: converted"):
        check_indexes(prefix, 2)

    # the same bytes with any --jobs
    outs = []
    for jobs in (1, 2, 4):
        p = os.path.join(tmp, f"jobs{jobs}", "s")
        r = convert(table, mixed, "--to", "wds", "-o", p, "--shards", 3, "--index", "--jobs", jobs)
        d = os.path.dirname(p)
        outs.append({f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))
                     if not f.endswith(".manifest.json")} if r.returncode == 0 else {})
    check(outs[0] == outs[1] == outs[2] and len(outs[0]) == 7,
          f"--jobs 1, 2 and 4: the same shards, indexes and wids.json ({sorted(outs[0])})")

    # --shuffle: every record once, its key its number in the input
    prefix = os.path.join(tmp, "shuffled", "s")
    r = convert(mixed, "--to", "wds", "-o", prefix, "--shards", 2, "--shuffle", "--seed", 3)
    problems = []
    want = cat_records(mixed)
    keys = []
    for s in shards_of(prefix):
        for k, members in read_samples(s, problems):
            keys.append(k)
            if sample_features(members, problems) != want[int(k)]:
                problems.append(f"sample {k} is not record {int(k)}")
    check(r.returncode == 0 and sorted(keys) == ["%010d" % i for i in range(len(want))] and
          keys != sorted(keys) and not problems,
          f"--shuffle: each sample's key is its record's number in the input ({problems[:3]})")

    # --mtime
    for args, want_mtime in (((), 0), (("--mtime", "1700000000"), 1700000000)):
        prefix = os.path.join(tmp, f"mtime{want_mtime}", "s")
        r = convert(mixed, "--to", "wds", "-o", prefix, *args)
        mt = {m.mtime for m in tarfile.open(shards_of(prefix)[0])} if r.returncode == 0 else None
        check(mt == {want_mtime}, f"--mtime {want_mtime}: every member's mtime ({mt})")
    r = convert(mixed, "--to", "tfrecord", "-o", os.path.join(tmp, "tfr", "s"), "--mtime", "5")
    check(r.returncode == 2 and b"--to webdataset" in r.stderr, "--mtime with --to tfrecord: a usage error")

    for part in (check_shard_size, check_tasks, check_resume, check_force, check_listing, check_gcs):
        try:
            part(tmp, mixed)
        except Exception as e:
            check(False, f"{part.__name__}: {type(e).__name__}: {e}")


def check_indexes(prefix, n):
    shards = shards_of(prefix)
    wids = json.load(open(prefix + ".wids.json"))
    check(wids.get("__kind__") == "wids-shard-index-v1" and wids.get("wids_version") == 1 and
          [s["url"] for s in wids["shardlist"]] == [os.path.basename(s) for s in shards] and
          [s["filesize"] for s in wids["shardlist"]] == [os.path.getsize(s) for s in shards] and
          [s["nsamples"] for s in wids["shardlist"]] == [len(read_samples(s, [])) for s in shards],
          "PREFIX.wids.json: wids-shard-index-v1, each shard's url, nsamples and filesize")
    for shard in shards:
        # the data offsets as DALI's wds2idx takes them from GNU tar: the
        # next entry's block number x 512, less the size, down to a block
        blocks = subprocess.run(["tar", "--list", "--block-number", "-f", shard], capture_output=True,
                                text=True).stdout.splitlines()
        verbose = subprocess.run(["tar", "--list", "-v", "-f", shard], capture_output=True,
                                 text=True).stdout.splitlines()
        gnu = {}
        for line, nxt, v in zip(blocks, blocks[1:], verbose):
            name = line[line.index(":") + 2:]
            size = int(v.split()[2])
            off = int(nxt[nxt.index("block") + 6:nxt.index(":")]) * 512 - size
            gnu[name] = (off - off % 512, size)
        lines = open(shard + ".idx").read().splitlines()
        head = lines[0].split()
        ok = head[0] == "v1.2" and int(head[1]) == len(lines) - 1 == len(read_samples(shard, []))
        ours = {}
        for line in lines[1:]:
            parts = line.split()
            ok = ok and len(parts) % 4 == 0
            for i in range(0, len(parts), 4):
                ext, off, size, name = parts[i:i + 4]
                ok = ok and name.split(".", 1)[1] == ext
                ours[name] = (int(off), int(size))
        raw = open(shard, "rb").read()
        with tarfile.open(shard) as t:
            ok = ok and all(raw[ours[m.name][0]:ours[m.name][0] + m.size] == t.extractfile(m).read() for m in t)
        check(ok and ours == gnu and len(ours) > 0,
              f"{os.path.basename(shard)}.idx: 'v1.2 N', per sample 'ext offset size name', offsets as "
              f"GNU tar's block numbers give ({len(ours)} members)")


def check_shard_size(tmp, mixed):
    prefix = os.path.join(tmp, "sized", "s")
    limit = 48 * 1024
    r = convert(mixed, "--to", "wds", "-o", prefix, "--shard-size", limit)
    shards = shards_of(prefix)
    sizes = [os.path.getsize(s) for s in shards]
    counts = [len(read_samples(s, [])) for s in shards]
    ends = all(open(s, "rb").read()[-1024:] == bytes(1024) for s in shards)
    check(r.returncode == 0 and len(shards) > 2 and all(sz <= limit for sz, c in zip(sizes, counts) if c > 1) and
          sum(counts) == 60 and ends and sizes[0] > limit * 0.6,
          f"--shard-size {limit}: tar bytes on disk under it, end blocks included ({sizes})")


def check_tasks(tmp, mixed):
    prefix = os.path.join(tmp, "tasks", "s")
    for i in range(2):
        r = convert(mixed, "--to", "wds", "-o", prefix, "--shards", 2, "--task", f"{i}/2")
        check(r.returncode == 0, f"--task {i}/2 ({r.stderr.decode()[:200]})")
    check(not os.path.exists(prefix + ".wids.json"), "tasks write no PREFIX.wids.json of their own")
    r = st("combine", "-q", prefix)
    shards = shards_of(prefix)
    keys = [k for s in shards for k, _ in read_samples(s, [])]
    check(r.returncode == 0 and len(shards) == 4 and len(keys) == len(set(keys)) == 60,
          f"combine: 4 shards, 60 samples, every key once ({r.stderr.decode()[:200]})")
    check_indexes_wids_only(prefix)


def check_indexes_wids_only(prefix):
    shards = shards_of(prefix)
    try:
        wids = json.load(open(prefix + ".wids.json"))
    except OSError:
        wids = {"shardlist": []}
    check([(s["url"], s["nsamples"], s["filesize"]) for s in wids["shardlist"]] ==
          [(os.path.basename(s), len(read_samples(s, [])), os.path.getsize(s)) for s in shards],
          f"{os.path.basename(prefix)}.wids.json lists every shard with its samples and size")


def set_files(d):
    return {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))}


def check_resume(tmp, mixed):
    ref = os.path.join(tmp, "resume-ref", "s")
    convert(mixed, "--to", "wds", "-o", ref, "--shards", 3, "--index")
    want = set_files(os.path.dirname(ref))
    for point in ("journal", "manifest", "commit"):
        d = os.path.join(tmp, "resume-" + point)
        prefix = os.path.join(d, "s")
        r1 = convert(mixed, "--to", "wds", "-o", prefix, "--shards", 3, "--index",
                     env={"SHARDTOOL_TEST_KILL_AT": point})
        r2 = convert(mixed, "--to", "wds", "-o", prefix, "--shards", 3, "--index", "--resume")
        got = {f: b for f, b in set_files(d).items() if not f.startswith(".")}
        # the manifest names the prefix given: compare it without its inputs' paths
        same = sorted(got) == sorted(want) and all(got[f] == want[f] for f in got if not f.endswith(".json")) and \
            json.load(open(prefix + ".wids.json"))["shardlist"] == json.loads(want["s.wids.json"])["shardlist"]
        check(r1.returncode < 0 and r2.returncode == 0 and same,
              f"killed at '{point}', then --resume: the set of a clean run ({sorted(got)})")


def check_force(tmp, mixed):
    d = os.path.join(tmp, "force")
    prefix = os.path.join(d, "s")
    convert(mixed, "--to", "wds", "-o", prefix, "--shards", 3, "--index")
    r0 = convert(mixed, "--to", "wds", "-o", prefix, "--shards", 2)
    r = convert(mixed, "--to", "wds", "-o", prefix, "--shards", 2, "--force")
    names = sorted(os.listdir(d))
    check(r0.returncode != 0 and r.returncode == 0 and
          names == ["s-00000-of-00002.tar", "s-00001-of-00002.tar", "s.manifest.json", "s.wids.json"],
          f"without --force an earlier set is refused; --force replaces shards, indexes and wids.json ({names})")
    check_indexes_wids_only(prefix)


def check_listing(tmp, mixed):
    d = os.path.join(tmp, "listing")
    os.makedirs(d)
    shutil.copy(mixed, os.path.join(d, "data.jsonl"))
    shutil.copy(os.path.join(tmp, "force", "s.wids.json"), os.path.join(d, "other.wids.json"))
    r = st("convert", "-v", d, "-o", os.path.join(tmp, "listing-out", "s"))
    err = r.stderr.decode()
    check(r.returncode == 0 and "60 records" in err and "wids" in err,
          f"a directory's .wids.json is no input (skipped, -v says so) ({err[:300]})")


def check_gcs(tmp, mixed):
    """gs:// output through the GCS server of tests/remote/servers.py: the
    shards, the manifest and PREFIX.wids.json as objects; --force leaves
    exactly the new set."""
    sys.path.insert(0, os.path.join(SOURCE, "tests", "remote"))
    import servers
    gcs = servers.GcsServer(token="ya29.wdsTOKEN", page_size=2)
    try:
        env = {"STORAGE_EMULATOR_HOST": "127.0.0.1:%d" % gcs.port, "GOOGLE_OAUTH_ACCESS_TOKEN": "ya29.wdsTOKEN"}
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS"):
            os.environ.pop(k, None)

        def objects():
            with gcs.lock:
                return {k[len("w/"):]: v[0] for (b, k), v in gcs.objects.items() if b == "bkt" and k.startswith("w/")}
        r1 = convert(mixed, "--to", "wds", "-o", "gs://bkt/w/train", "--shards", 3, env=env)
        first = objects()
        r2 = convert(mixed, "--to", "wds", "-o", "gs://bkt/w/train", "--shards", 2, "--force", env=env)
        second = objects()
        want = ["train-00000-of-00002.tar", "train-00001-of-00002.tar", "train.manifest.json", "train.wids.json"]
        wids = json.loads(second.get("train.wids.json", b"{}"))
        local = os.path.join(tmp, "gcs-local", "train")
        convert(mixed, "--to", "wds", "-o", local, "--shards", 2)
        same = all(second.get(os.path.basename(s)) == open(s, "rb").read() for s in shards_of(local))
        check(r1.returncode == 0 and "train.wids.json" in first and r2.returncode == 0 and sorted(second) == want
              and [s["filesize"] for s in wids.get("shardlist", [])] == [len(second[n]) for n in want[:2]] and same,
              f"gs:// output: shards byte for byte the local ones, manifest and wids.json; --force leaves "
              f"exactly the new set ({sorted(second)}; {(r1.stderr + r2.stderr).decode()[:200]})")
    finally:
        gcs.stop()


if __name__ == "__main__":
    sys.exit(main())
