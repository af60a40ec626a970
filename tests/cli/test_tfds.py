#!/usr/bin/env python3
"""convert --tfds: prepared TFDS directories, checked against readers that
are not ours.

tensorflow_datasets itself cannot be installed here (it is not packaged in
Debian, and the tests use no PyPI), so the validator is protobuf's own
json_format: dataset_info.json and features.json are parsed strictly (an
unknown field fails) into messages compiled by protoc at test time from
tests/support/tfds_metadata.proto, which follows TFDS's dataset_info.proto
and feature.proto field names and numbers.  Besides:

  - a features.json shaped as TFDS's guide "Load external tfrecord with
    TFDS" shows one (FeaturesDict of Image, ClassLabel, Sequence of Tensor)
    parses with the same messages, and ours has its structure;
  - every shard's records are read by a reader of the test's own (TFRecord
    framing and CRCs in Python; ArrayRecord chunks by
    tests/support/riegeli_files.py) and parsed as tf.train.Example by
    protobuf from TensorFlow's example.proto: each record has every feature
    features.json declares, of its dtype and shape;
  - shardLengths and numBytes against those records and the files' sizes;
  - two splits in one directory, a split run killed at each commit step
    leaves dataset_info.json as it was once rolled back, --force, a split
    whose features differ, verify catching a shardLengths or numBytes lie,
    a missing shard and an unlisted one, stat's report, hostile column
    names (never a pythonClassName), and the refusals;
  - for --to tfrecord and --to arrayrecord.

Usage: test_tfds.py SHARDTOOL SOURCE_ROOT  (Debian's python3: protobuf)
Prints "N passed, M failed".
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

ST = SRC = None
T = EX = R = None  # compiled TFDS messages, example.proto, the Riegeli reader
results = {"passed": 0, "failed": 0}
CLASSES = {
    "tensorflow_datasets.core.features.features_dict.FeaturesDict",
    "tensorflow_datasets.core.features.tensor_feature.Tensor",
    "tensorflow_datasets.core.features.text_feature.Text",
}
TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def st(*args, env=None, data=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([ST] + [str(a) for a in args], capture_output=True, env=e, input=data)


def said(blob):
    """The last line a command printed, for a check's description."""
    lines = blob.decode(errors="replace").strip().splitlines()
    return lines[-1][-240:] if lines else ""


def parse_strict(path, message):
    from google.protobuf import json_format
    with open(path) as f:
        text = f.read()
    msg = message()
    json_format.Parse(text, msg)  # no ignore_unknown_fields: an unknown member fails
    return msg


# ---- independent readers of the shards ----

def tfrecord_payloads(path):
    sys.path.insert(0, os.path.join(SRC, "tests"))
    from tfrecord_frames import crc32c, masked
    data = open(path, "rb").read()
    out, at = [], 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (len_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        assert masked(crc32c(header)) == len_crc, "length crc"
        payload = data[at + 12:at + 12 + length]
        (data_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        assert masked(crc32c(payload)) == data_crc, "data crc"
        out.append(payload)
        at += 16 + length
    return out


def arrayrecord_payloads(path):
    chunks = R.read_chunks(open(path, "rb").read())
    records = [c for c in chunks if c.type == ord("r")][:-2]  # less the footer and the postscript
    return [p for c in records for p in R.simple_records(c)]


def payloads(path, fmt):
    return tfrecord_payloads(path) if fmt == "tfrecord" else arrayrecord_payloads(path)


def example_values(feature):
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None, []
    return kind, list(getattr(feature, kind).value)


# ---- inputs ----

def write_rows(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def table(n, start=0):
    return [{"id": start + i, "name": "row %d é" % (start + i), "score": (start + i) / 4,
             "vec": [start + i, 2 * i, 3], "tags": ["t%d" % k for k in range(i % 3)]} for i in range(n)]


FORMATS = [("tfrecord", "tfrecord", []), ("arrayrecord", "array_record", ["--arrayrecord-codec", "none"])]


def convert(d, inp, split, to, extra=(), env=None, name="mydata"):
    _, _, codec = next(f for f in FORMATS if f[0] == to)
    return st("convert", inp, "--tfds", d, "--name", name, "--split", split, "--to", to, *codec, *extra, env=env)


# ---- the checks ----

def walk_classes(doc, found):
    """Every Feature's pythonClassName, by the message structure (a column
    named "pythonClassName" is a key of a features map, not a class)."""
    found.append(doc.get("pythonClassName"))
    for child in doc.get("featuresDict", {}).get("features", {}).values():
        walk_classes(child, found)
    if "sequence" in doc:
        walk_classes(doc["sequence"]["feature"], found)


def guide_example():
    """features.json as TFDS's guide shapes it: the messages must take it."""
    doc = {
        "pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
        "featuresDict": {"features": {
            "image": {"pythonClassName": "tensorflow_datasets.core.features.image_feature.Image",
                      "image": {"shape": {"dimensions": ["256", "256", "3"]}, "dtype": "uint8",
                                "encodingFormat": "png"}},
            "label": {"pythonClassName": "tensorflow_datasets.core.features.class_label_feature.ClassLabel",
                      "classLabel": {"numClasses": "2"}},
            "objects": {"pythonClassName": "tensorflow_datasets.core.features.sequence_feature.Sequence",
                        "sequence": {"feature": {
                            "pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
                            "featuresDict": {"features": {"camera/K": {
                                "pythonClassName": "tensorflow_datasets.core.features.tensor_feature.Tensor",
                                "tensor": {"shape": {"dimensions": ["3"]}, "dtype": "float32",
                                           "encoding": "none"}}}}},
                            "length": "-1"}},
        }}}
    from google.protobuf import json_format
    msg = T.Feature()
    json_format.Parse(json.dumps(doc), msg)
    check(msg.features_dict.features["image"].image.shape.dimensions == [256, 256, 3] and
          msg.features_dict.features["label"].class_label.num_classes == 2 and
          msg.features_dict.features["objects"].sequence.feature.features_dict.features["camera/K"].tensor.dtype
          == "float32", "a features.json shaped as TFDS's guide shows parses with the test's messages")
    bad = dict(doc, pythonClassNam="x")
    try:
        json_format.Parse(json.dumps(bad), T.Feature())
        check(False, "an unknown member fails the strict parse")
    except json_format.ParseError:
        check(True, "an unknown member fails the strict parse (the validator can fail)")


def layout(d, to, ff):
    base = os.path.join(d, "mydata", "1.0.0")
    inp = os.path.join(d, "train.jsonl")
    rows = table(40)
    write_rows(inp, rows)
    r = convert(d, inp, "train", to, ["--shards", "3"])
    check(r.returncode == 0, "%s: convert --tfds --split train succeeds (%s)" % (to, said(r.stderr)))
    names = sorted(os.listdir(base))
    shards = ["mydata-train.%s-%05d-of-00003" % (ff, i) for i in range(3)]
    check(names == sorted(shards + ["dataset_info.json", "features.json", "mydata-train.manifest.json"]),
          "%s: the directory holds the TFDS-named shards, dataset_info.json, features.json and the manifest: %s"
          % (to, names))
    info = parse_strict(os.path.join(base, "dataset_info.json"), T.DatasetInfo)
    feats = parse_strict(os.path.join(base, "features.json"), T.Feature)
    check(True, "%s: dataset_info.json and features.json parse strictly with json_format" % to)
    check(info.name == "mydata" and info.version == "1.0.0" and info.file_format == ff and info.module_name,
          "%s: name, version, fileFormat %s, moduleName" % (to, ff))
    check(len(info.splits) == 1 and info.splits[0].name == "train" and info.splits[0].filepath_template == TEMPLATE,
          "%s: one split, train, with TFDS's default filepathTemplate" % to)
    raw = json.load(open(os.path.join(base, "dataset_info.json")))
    check(all(isinstance(x, str) for x in raw["splits"][0]["shardLengths"]) and
          isinstance(raw["splits"][0]["numBytes"], str), "%s: int64 values written as strings, as proto3 JSON does" % to)
    got = [payloads(os.path.join(base, s), to) for s in shards]
    check(list(info.splits[0].shard_lengths) == [len(g) for g in got] and sum(len(g) for g in got) == len(rows),
          "%s: shardLengths %s are the records the test's own reader counts" % (to, list(info.splits[0].shard_lengths)))
    check(info.splits[0].num_bytes == sum(os.path.getsize(os.path.join(base, s)) for s in shards),
          "%s: numBytes is the shards' size on disk" % to)
    f = feats.features_dict.features
    check(feats.python_class_name.endswith("features_dict.FeaturesDict") and sorted(f) ==
          ["id", "name", "score", "tags", "vec"], "%s: a FeaturesDict of the five columns" % to)
    want = {"id": ("tensor", [], "int64"), "score": ("tensor", [], "float32"), "vec": ("tensor", [3], "int64"),
            "tags": ("tensor", [-1], "string"), "name": ("text", None, None)}
    for col, (kind, shape, dtype) in want.items():
        ok = f[col].WhichOneof("content") == kind
        if kind == "tensor":
            ok = ok and list(f[col].tensor.shape.dimensions) == shape and f[col].tensor.dtype == dtype
        check(ok, "%s: %s is %s %s %s" % (to, col, kind, shape if shape is not None else "", dtype or ""))
    classes = []
    walk_classes(json.load(open(os.path.join(base, "features.json"))), classes)
    check(set(classes) <= CLASSES, "%s: only tensorflow_datasets.core.features classes: %s" % (to, sorted(set(classes))))
    # Every record decodes as TFDS would: each feature present, of its dtype, of its shape.
    kinds = {"int64": "int64_list", "float32": "float_list", "string": "bytes_list"}
    bad = 0
    for payload in (p for g in got for p in g):
        ex = EX.Example.FromString(payload)
        for col, (kind, shape, dtype) in want.items():
            k, vals = example_values(ex.features.feature[col]) if col in ex.features.feature else (None, None)
            if kind == "text":
                bad += k != "bytes_list" or len(vals) != 1
                continue
            if k is None and shape == [-1]:
                continue
            bad += k != kinds[dtype] or (shape == [] and len(vals) != 1) or (shape == [3] and len(vals) != 3)
    check(bad == 0, "%s: every record, parsed by protobuf, has each feature as features.json declares it" % to)
    return base


def two_splits(d, to, ff, base):
    test_in = os.path.join(d, "test.jsonl")
    write_rows(test_in, table(10, start=100))
    before = json.load(open(os.path.join(base, "dataset_info.json")))
    r = convert(d, test_in, "test", to, ["--shards", "2"])
    check(r.returncode == 0, "%s: a second split into the same directory (%s)" % (to, said(r.stderr)))
    info = parse_strict(os.path.join(base, "dataset_info.json"), T.DatasetInfo)
    after = json.load(open(os.path.join(base, "dataset_info.json")))
    check([s.name for s in info.splits] == ["train", "test"] and list(info.splits[1].shard_lengths) == [5, 5],
          "%s: dataset_info.json gains split test (5 + 5 records)" % to)
    check(after["splits"][0] == before["splits"][0], "%s: split train's entry is untouched" % to)
    r = convert(d, test_in, "test", to)
    check(r.returncode == 2 and b"--force" in r.stderr, "%s: a split written again is refused without --force" % to)
    write_rows(test_in, table(7, start=200))
    r = convert(d, test_in, "test", to, ["--force"])
    after2 = json.load(open(os.path.join(base, "dataset_info.json")))
    check(r.returncode == 0 and [s["name"] for s in after2["splits"]] == ["train", "test"] and
          after2["splits"][1]["shardLengths"] == ["7"] and after2["splits"][0] == before["splits"][0],
          "%s: --force replaces split test in place (7 records, one shard), train untouched" % to)
    check(not any(n.startswith("mydata-test.%s-0000" % ff) and n.endswith("-of-00002") for n in os.listdir(base)),
          "%s: --force removed the earlier test shards (of-00002)" % to)
    r = st("verify", base)
    check(r.returncode == 0 and b"dataset_info.json: OK (2 splits" in r.stdout,
          "%s: verify of the directory: every shard and dataset_info.json agree (%s)" % (to, said(r.stdout)))
    r = st("cat", base)
    check(r.returncode == 0 and len(r.stdout.splitlines()) == 47,
          "%s: cat of the directory reads the shards only (40 + 7 records), not the JSON metadata" % to)
    r = st("stat", base)
    check(r.returncode == 0 and b"TFDS dataset mydata 1.0.0 (%s)" % ff.encode() in r.stdout and
          b"train" in r.stdout and b"Text" in r.stdout, "%s: stat reports the dataset's splits and features" % to)
    r = st("stat", "--json", base)
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    tf = doc.get("tfds", [{}])[0]
    check([(s["name"], s["shards"], s["examples"]) for s in tf.get("splits", [])] == [("train", 3, 40), ("test", 1, 7)]
          and {f["name"]: f["class"] for f in tf.get("features", [])}.get("name") == "Text",
          "%s: stat --json: tfds splits and features" % to)


def features_differ(d, to, base):
    other = os.path.join(d, "other.jsonl")
    write_rows(other, [{"id": i, "name": "x", "score": 1.5, "vec": [1, 2], "tags": ["a"] * (i % 2 + 1)}
                       for i in range(4)])
    before = open(os.path.join(base, "dataset_info.json"), "rb").read()
    r = convert(d, other, "validation", to)
    check(r.returncode == 2 and b"'vec'" in r.stderr and b"features.json" in r.stderr and
          open(os.path.join(base, "dataset_info.json"), "rb").read() == before and
          not any(n.startswith("mydata-validation") for n in os.listdir(base)),
          "%s: a split whose features differ is refused naming the column, nothing written (%s)" %
          (to, said(r.stderr)))
    r = convert(d, other, "validation", to, ["--force"])
    feats = parse_strict(os.path.join(base, "features.json"), T.Feature)
    check(r.returncode == 0 and list(feats.features_dict.features["vec"].tensor.shape.dimensions) == [2] and
          b"train, test" in r.stderr, "%s: --force replaces features.json and names the splits to convert again" % to)


def killed(d, to, ff):
    """A split run killed at each step of its commit: once the next run of that
    split rolls back, dataset_info.json is byte for byte the one before."""
    for point in ["journal", "manifest", "commit"]:
        root = os.path.join(d, "kill-" + point)
        os.makedirs(root)
        base = os.path.join(root, "mydata", "1.0.0")
        a, b = os.path.join(root, "a.jsonl"), os.path.join(root, "b.jsonl")
        write_rows(a, table(6))
        write_rows(b, table(4, start=50))
        convert(root, a, "train", to)
        before = open(os.path.join(base, "dataset_info.json"), "rb").read()
        r = convert(root, b, "test", to, env={"SHARDTOOL_TEST_KILL_AT": point})
        check(r.returncode == -signal.SIGKILL, "%s: split test killed at %s" % (to, point))
        r = convert(root, b, "validation", to)
        check(r.returncode == 2 and b"mydata-test.journal" in r.stderr,
              "%s: another split is refused while test's commit is unfinished (%s)" % (to, point))
        # The next run of test rolls back, then fails (its features differ):
        # nothing of either run is left.
        write_rows(b, [{"other": 1}])
        r = convert(root, b, "test", to)
        check(r.returncode == 2 and b"rolled back" in r.stderr and
              open(os.path.join(base, "dataset_info.json"), "rb").read() == before and
              not any(n.startswith("mydata-test") for n in os.listdir(base)) and
              not any(n.startswith(".tmp-st") for n in os.listdir(base)),
              "%s: killed at %s: rolled back, dataset_info.json as it was, no test shard, no temporary file" %
              (to, point))


def lies(d, to, ff):
    root = os.path.join(d, "lies")
    base = os.path.join(root, "mydata", "1.0.0")
    a = os.path.join(root, "a.jsonl")
    os.makedirs(root)
    write_rows(a, table(12))
    convert(root, a, "train", to, ["--shards", "3"])
    info_path = os.path.join(base, "dataset_info.json")
    good = json.load(open(info_path))

    def with_info(change):
        doc = json.loads(json.dumps(good))
        change(doc)
        with open(info_path, "w") as f:
            json.dump(doc, f, indent=2)

    with_info(lambda doc: doc["splits"][0]["shardLengths"].__setitem__(1, "5"))
    r = st("verify", base)
    shard1 = "mydata-train.%s-00001-of-00003" % ff
    check(r.returncode == 1 and b"split train" in r.stdout and shard1.encode() in r.stdout and b"shardLengths" in
          r.stdout, "%s: verify catches a shardLengths lie, naming split and shard (%s)" % (to, said(r.stdout)))
    with_info(lambda doc: doc["splits"][0].__setitem__("numBytes", "7"))
    r = st("verify", "--json", base)
    doc = json.loads(r.stdout)
    check(r.returncode == 1 and not doc["ok"] and any("numBytes" in p["problem"] and p["split"] == "train"
                                                      for p in doc["tfds"][0]["problems"]),
          "%s: verify --json catches a numBytes lie" % to)
    with_info(lambda doc: None)
    moved = os.path.join(root, "moved")
    os.rename(os.path.join(base, shard1), moved)
    r = st("verify", base)
    check(r.returncode == 1 and (shard1 + ": DAMAGED: split train: missing").encode() in r.stdout,
          "%s: verify catches a missing shard" % to)
    os.rename(moved, os.path.join(base, shard1))
    # A truncated shard is damaged, and so is the directory: dataset_info.json
    # is never called OK beside it.
    whole = open(os.path.join(base, shard1), "rb").read()
    with open(os.path.join(base, shard1), "wb") as f:
        f.write(whole[:len(whole) - 3])
    r = st("verify", base)
    check(r.returncode == 1 and b"dataset_info.json: OK" not in r.stdout and
          b"dataset_info.json: DAMAGED: split train: 1 of its 3 shards is damaged" in r.stdout,
          "%s: a truncated shard: dataset_info.json is not called OK (%s)" % (to, said(r.stdout)))
    r = st("verify", "--json", base)
    doc = json.loads(r.stdout)
    check(r.returncode == 1 and not doc["tfds"][0]["ok"] and
          any("damaged" in p["problem"] for p in doc["tfds"][0]["problems"]),
          "%s: verify --json: the directory of a truncated shard is not ok" % to)
    with open(os.path.join(base, shard1), "wb") as f:
        f.write(whole)
    shutil.copy(os.path.join(base, shard1), os.path.join(base, "mydata-train.%s-00003-of-00004" % ff))
    r = st("verify", base)
    check(r.returncode == 1 and b"does not list it" in r.stdout, "%s: verify names a shard the split does not list" % to)
    os.unlink(os.path.join(base, "mydata-train.%s-00003-of-00004" % ff))
    with_info(lambda doc: doc["splits"][0].__setitem__("filepathTemplate", "../../{SPLIT}-{SHARD_INDEX}"))
    r = st("verify", base)
    check(r.returncode == 1 and b"outside the directory" in r.stdout,
          "%s: a filepathTemplate leading out of the directory is a problem, never opened" % to)
    # A lying list of 300,000 shards: refused within limits, the missing ones
    # named a few at a time.
    with_info(lambda doc: doc["splits"][0].__setitem__("shardLengths", ["1"] * 300000))
    # No address-space limit for a sanitizer build (AddressSanitizer maps
    # terabytes of shadow memory), as tests/hostile/ does.
    limit = "" if b"__asan_init" in open(ST, "rb").read() else "ulimit -v 1000000; "
    r = subprocess.run(["sh", "-c", limit + "exec timeout 120 \"$0\" verify \"$1\"", ST, base],
                       capture_output=True)
    check(r.returncode == 1 and r.stdout.count(b"missing") == 11 and b"299990 more" in r.stdout,
          "%s: a dataset_info.json listing 300,000 shards: ten named, the rest counted, under %stimeout"
          % (to, "ulimit -v and " if limit else ""))
    with_info(lambda doc: None)
    check(st("verify", base).returncode == 0, "%s: the true dataset_info.json verifies again" % to)


def hostile_names(d, to):
    root = os.path.join(d, "hostile")
    os.makedirs(root)
    a = os.path.join(root, "a.jsonl")
    names = ["tensorflow_datasets.evil.Class", "pythonClassName", 'quote"d', "new\nline", "../up", "{SPLIT}", "é"]
    write_rows(a, [{n: i for n in names} for i in range(3)])
    r = convert(root, a, "train", to)
    base = os.path.join(root, "mydata", "1.0.0")
    check(r.returncode == 0, "%s: hostile column names convert (%s)" % (to, said(r.stderr)))
    feats = parse_strict(os.path.join(base, "features.json"), T.Feature)
    classes = []
    walk_classes(json.load(open(os.path.join(base, "features.json"))), classes)
    check(sorted(feats.features_dict.features) == sorted(names) and set(classes) <= CLASSES,
          "%s: hostile names are only keys of the features map; pythonClassName stays TFDS's own" % to)


def tasks_combine(d, to, ff):
    """--task I/N into a TFDS directory, then combine: the tasks' features
    join (lists of another length in each task become [-1]), and
    dataset_info.json lists the split's N*S shards."""
    root = os.path.join(d, "tasks")
    os.makedirs(root)
    base = os.path.join(root, "mydata", "1.0.0")
    inputs = []
    for k in range(3):
        p = os.path.join(root, "part%d.jsonl" % k)
        write_rows(p, [{"id": 10 * k + i, "name": "r%d" % i, "v": [i] * (k + 1)} for i in range(10)])
        inputs.append(p)
    for k in range(3):
        r = st("convert", *inputs, "--tfds", root, "--name", "mydata", "--split", "train", "--to", to,
               *next(f for f in FORMATS if f[0] == to)[2], "--task", "%d/3" % k, "--shards", "2", "--resume", "-q")
        check(r.returncode == 0, "%s: task %d of 3 into the TFDS directory (%s)" % (to, k, said(r.stderr)))
    check(not os.path.exists(os.path.join(base, "dataset_info.json")),
          "%s: the tasks write no dataset_info.json (combine does)" % to)
    r = st("combine", os.path.join(base, "mydata-train"))
    check(r.returncode == 0, "%s: combine of the tasks (%s)" % (to, said(r.stderr)))
    info = parse_strict(os.path.join(base, "dataset_info.json"), T.DatasetInfo)
    feats = parse_strict(os.path.join(base, "features.json"), T.Feature)
    shards = ["mydata-train.%s-%05d-of-00006" % (ff, i) for i in range(6)]
    got = [len(payloads(os.path.join(base, s), to)) for s in shards]
    check(len(info.splits) == 1 and list(info.splits[0].shard_lengths) == got and sum(got) == 30 and
          info.splits[0].num_bytes == sum(os.path.getsize(os.path.join(base, s)) for s in shards),
          "%s: combine's dataset_info.json lists the 6 shards of the 3 tasks, records and bytes as read: %s" % (to, got))
    f = feats.features_dict.features
    check(list(f["v"].tensor.shape.dimensions) == [-1] and f["name"].WhichOneof("content") == "text" and
          list(f["id"].tensor.shape.dimensions) == [],
          "%s: the tasks' features joined: v [-1] (lengths 1, 2, 3 in the three tasks), name Text, id []" % to)
    r = st("verify", base)
    check(r.returncode == 0 and b"dataset_info.json: OK" in r.stdout, "%s: verify of the combined split" % to)
    # Task manifests whose features cannot join (one edited to say float32
    # where the other says int64: convert itself refuses inputs of two
    # kinds) are refused, naming the column, and nothing is written.
    bad = os.path.join(d, "tasks-bad")
    os.makedirs(bad)
    parts = []
    for k in range(2):
        p = os.path.join(bad, "p%d.jsonl" % k)
        write_rows(p, [{"id": i} for i in range(4)])
        parts.append(p)
    for k in range(2):
        st("convert", *parts, "--tfds", bad, "--name", "mydata", "--split", "train", "--to", to,
           *next(f for f in FORMATS if f[0] == to)[2], "--task", "%d/2" % k, "--shards", "1", "-q")
    bad_base = os.path.join(bad, "mydata", "1.0.0")
    m = os.path.join(bad_base, "mydata-train-task00001-of-00002.manifest.json")
    doc = json.load(open(m))
    doc["tfds"]["features"]["featuresDict"]["features"]["id"]["tensor"]["dtype"] = "float32"
    json.dump(doc, open(m, "w"), indent=2)
    r = st("combine", os.path.join(bad_base, "mydata-train"))
    check(r.returncode != 0 and b"'id'" in r.stderr and not os.path.exists(os.path.join(bad_base, "dataset_info.json")),
          "%s: combine refuses task features that do not join, naming the column (%s)" % (to, said(r.stderr)))

# ---- --image and --label ----

def frame(payload):
    sys.path.insert(0, os.path.join(SRC, "tests"))
    from tfrecord_frames import crc32c, masked
    h = struct.pack("<Q", len(payload))
    return h + struct.pack("<I", masked(crc32c(h))) + payload + struct.pack("<I", masked(crc32c(payload)))


def encoded(fmt, size, mode):
    import io
    from PIL import Image
    b = io.BytesIO()
    Image.new(mode, size, 0).save(b, fmt)
    return b.getvalue()


def image_records(path, images, labels=None):
    with open(path, "wb") as f:
        for i, img in enumerate(images):
            ex = EX.Example()
            ex.features.feature["image"].bytes_list.value.append(img)
            ex.features.feature["label"].int64_list.value.append(labels[i] if labels else i % 3)
            ex.features.feature["id"].int64_list.value.append(i)
            f.write(frame(ex.SerializeToString()))


def images_labels(d, to, ff):
    from PIL import Image
    import io
    root = os.path.join(d, "images")
    os.makedirs(root)
    names = os.path.join(root, "names.txt")
    with open(names, "w") as f:
        f.write("cat\ndog\nbird\n")
    cases = [
        ("same", [encoded("PNG", (28, 20), "L")] * 5, [20, 28, 1], "uint8", "png"),
        ("sizes", [encoded("JPEG", (16 + i, 9), "RGB") for i in range(4)], [-1, -1, 3], "uint8", "jpeg"),
        ("mixed", [encoded("PNG", (8, 8), "RGBA"), encoded("JPEG", (8, 8), "L")], [8, 8, -1], "uint8", ""),
        ("deep", [encoded("PNG", (5, 7), "I;16")] * 3, [7, 5, 1], "uint16", "png"),
    ]
    for name, imgs, shape, dtype, fmt in cases:
        inp = os.path.join(root, name + ".tfrecord")
        image_records(inp, imgs)
        r = convert(root, inp, name, to, ["--image", "image", "--label", "label=" + names], name=name)
        base = os.path.join(root, name, "1.0.0")
        ok = r.returncode == 0
        feats = parse_strict(os.path.join(base, "features.json"), T.Feature) if ok else None
        img = feats.features_dict.features["image"] if ok else None
        check(ok and img.python_class_name.endswith("image_feature.Image") and
              list(img.image.shape.dimensions) == shape and img.image.dtype == dtype and
              img.image.encoding_format == fmt,
              "%s: --image, %s: Image %s %s %r (%s)" % (to, name, shape, dtype, fmt, said(r.stderr)))
        if not ok:
            continue
        # The test's own reading of every image in the shards, by PIL.
        shard = os.path.join(base, "%s-%s.%s-00000-of-00001" % (name, name, ff))
        dims = set()
        for payload in payloads(shard, to):
            ex = EX.Example.FromString(payload)
            im = Image.open(io.BytesIO(ex.features.feature["image"].bytes_list.value[0]))
            dims.add((im.size[1], im.size[0], len(im.getbands())))
        want = [shape[i] if all(d[i] == shape[i] for d in dims) else -1 for i in range(3)]
        check(want == shape, "%s: %s: the shape agrees with PIL's reading of every image: %s" % (to, name, sorted(dims)))
        r = st("verify", "--payloads", base)
        check(r.returncode == 0, "%s: %s: verify --payloads of the directory passes (%s)" % (to, name, said(r.stdout)))
        lab = feats.features_dict.features["label"]
        check(lab.python_class_name.endswith("class_label_feature.ClassLabel") and lab.class_label.num_classes == 3 and
              open(os.path.join(base, "label.labels.txt")).read() == "cat\ndog\nbird\n",
              "%s: %s: --label label=names.txt: ClassLabel of 3, label.labels.txt beside features.json" % (to, name))
    inp = os.path.join(root, "bad.tfrecord")
    image_records(inp, [encoded("PNG", (4, 4), "L"), b"not an image at all", encoded("PNG", (4, 4), "L")])
    r = convert(root, inp, "bad", to, ["--image", "image"], name="bad")
    check(r.returncode == 1 and b"record 1" in r.stderr and b"--image image" in r.stderr and
          not os.path.exists(os.path.join(root, "bad", "1.0.0", "dataset_info.json")),
          "%s: a value that is not an image is refused, naming record and column (%s)" % (to, said(r.stderr)))
    cut = encoded("PNG", (4, 4), "L")[:20]
    image_records(inp, [cut])
    r = convert(root, inp, "bad", to, ["--image", "image"], name="bad")
    check(r.returncode == 1 and b"cut inside its header" in r.stderr, "%s: a PNG cut in its header is refused" % to)
    image_records(inp, [encoded("PNG", (4, 4), "L")] * 3, labels=[0, 1, 5])
    r = convert(root, inp, "bad", to, ["--label", "label=" + names], name="bad")
    check(r.returncode == 2 and b"0 to 5" in r.stderr and b"3 classes" in r.stderr,
          "%s: a label beyond the class count is refused (%s)" % (to, said(r.stderr)))
    r = convert(root, inp, "bad", to, ["--label", "label=3"], name="bad")
    check(r.returncode == 2, "%s: --label label=3 with a value 5 is refused too" % to)
    r = convert(root, inp, "bad", to, ["--label", "label=6"], name="bad2")
    feats = parse_strict(os.path.join(root, "bad2", "1.0.0", "features.json"), T.Feature) if r.returncode == 0 else None
    check(feats is not None and feats.features_dict.features["label"].class_label.num_classes == 6 and
          not os.path.exists(os.path.join(root, "bad2", "1.0.0", "label.labels.txt")),
          "%s: --label label=6: numClasses only, no labels file" % to)


def image_shapes(d, to, ff):
    """verify --payloads DIR holds each Image feature's images to the shape
    and encodingFormat features.json declares: a shard replaced by records
    whose (valid) JPEG has another size, or whose image is a PNG, is
    damage naming the file, record, feature and both shapes."""
    from PIL import Image
    import io
    root = os.path.join(d, "shapes")
    os.makedirs(root)
    inp = os.path.join(root, "in.tfrecord")
    image_records(inp, [encoded("JPEG", (16, 9), "RGB")] * 6)
    r = st("convert", inp, "--tfds", root, "--name", "shapes", "--split", "train", "--to", to,
           *next(f for f in FORMATS if f[0] == to)[2], "--image", "image", "--shards", "2", "-q")
    base = os.path.join(root, "shapes", "1.0.0")
    img = parse_strict(os.path.join(base, "features.json"), T.Feature).features_dict.features["image"].image \
        if r.returncode == 0 else None
    ok = img is not None and list(img.shape.dimensions) == [9, 16, 3] and img.encoding_format == "jpeg"
    check(ok, "%s: --image of 16x9 JPEGs: Image [9, 16, 3] jpeg (%s)" % (to, said(r.stderr)))
    if not ok:
        return
    r = st("verify", "--payloads", base)
    check(r.returncode == 0, "%s: the intact directory passes verify --payloads (%s)" % (to, said(r.stdout)))
    victim = os.path.join(base, "shapes-train.%s-00001-of-00002" % ff)
    keep = open(victim, "rb").read()
    wider = encoded("JPEG", (20, 9), "RGB")
    Image.open(io.BytesIO(wider)).load()  # a valid JPEG, by PIL
    for label, images, want in [
            ("a 20x9 JPEG", [encoded("JPEG", (16, 9), "RGB")] * 2 + [wider],
             [b"record 2", b"feature 'image'", b"[9, 20, 3]", b"[9, 16, 3]", b"features.json"]),
            ("a 16x9 PNG", [encoded("PNG", (16, 9), "RGB")] + [encoded("JPEG", (16, 9), "RGB")] * 2,
             [b"record 0", b"feature 'image'", b"is a png", b"encodingFormat jpeg"])]:
        src = os.path.join(root, "bad.tfrecord")
        image_records(src, images)
        made = os.path.join(root, "bad-" + to, "b")
        shutil.rmtree(os.path.dirname(made), ignore_errors=True)
        r = st("convert", "-q", src, "--to", to, *next(f for f in FORMATS if f[0] == to)[2], "-o", made)
        shard = [f for f in os.listdir(os.path.dirname(made)) if f.startswith("b-")][0]
        shutil.copyfile(os.path.join(os.path.dirname(made), shard), victim)
        r = st("verify", "--payloads", base)
        line = next((l for l in r.stdout.splitlines() if l.startswith(victim.encode() + b": DAMAGED")), b"")
        check(r.returncode == 1 and all(w in line for w in want),
              "%s: a shard holding %s fails verify --payloads, naming file, record, feature and both: %s"
              % (to, label, line.decode()[-300:]))
        r = st("verify", "--payloads", victim)
        check(r.returncode == 0, "%s: the shard alone (no features.json to hold it to) is intact" % to)
    # Records TFDS cannot decode as the Image: no image, two, not an image.
    good = encoded("JPEG", (16, 9), "RGB")
    for label, values, want in [("no 'image' feature", None, b"has no feature 'image'"),
                                ("two images", [good, good], b"several values"),
                                ("bytes that are no image", [b"plain text, not an image"], b"image header cannot be read (not a JPEG or PNG")]:
        src = os.path.join(root, "bad.tfrecord")
        with open(src, "wb") as f:
            for i in range(3):
                ex = EX.Example()
                ex.features.feature["id"].int64_list.value.append(i)
                if i != 1:
                    ex.features.feature["image"].bytes_list.value.append(good)
                elif values is not None:
                    ex.features.feature["image"].bytes_list.value.extend(values)
                f.write(frame(ex.SerializeToString()))
        made = os.path.join(root, "bad-" + to, "b")
        shutil.rmtree(os.path.dirname(made), ignore_errors=True)
        st("convert", "-q", src, "--to", to, *next(f for f in FORMATS if f[0] == to)[2], "-o", made)
        shard = [f for f in os.listdir(os.path.dirname(made)) if f.startswith("b-")][0]
        shutil.copyfile(os.path.join(os.path.dirname(made), shard), victim)
        r = st("verify", "--payloads", base)
        line = next((l for l in r.stdout.splitlines() if l.startswith(victim.encode() + b": DAMAGED")), b"")
        check(r.returncode == 1 and b"record 1" in line and want in line,
              "%s: a shard with a record of %s fails verify --payloads: %s" % (to, label, line.decode()[-200:]))
    with open(victim, "wb") as f:
        f.write(keep)
    r = st("verify", "--payloads", base)
    check(r.returncode == 0, "%s: with the shard put back, verify --payloads passes again" % to)


def label_refusals(d):
    names = os.path.join(d, "dup.txt")
    with open(names, "w") as f:
        f.write("a\nb\na\n")
    inp = os.path.join(d, "r.jsonl")
    write_rows(inp, table(3))
    for args, want in [(["--label", "id=" + names], b"twice"),
                       (["--label", "../x=" + names], b"letters, digits"),
                       (["--label", "id"], b"COL=FILE"),
                       (["--image", "name", "--label", "name=3"], b"one feature")]:
        r = st("convert", inp, "--tfds", os.path.join(d, "lr"), "--name", "n", "--split", "s", *args)
        check(r.returncode == 2 and want in r.stderr, "refused: %s (%s)" % (" ".join(args), said(r.stderr)))
    r = st("convert", inp, "-o", os.path.join(d, "plain"), "--image", "name")
    check(r.returncode == 2 and b"--image is for --tfds" in r.stderr, "--image without --tfds is refused")


def refusals(d):
    a = os.path.join(d, "r.jsonl")
    write_rows(a, table(3))
    cases = [
        (["-o", os.path.join(d, "x"), "--tfds", d, "--name", "n", "--split", "s"], b"either -o"),
        (["--tfds", d, "--name", "n", "--split", "s", "--compression", "gzip"], b"uncompressed"),
        (["--tfds", d, "--name", "n", "--split", "s", "--to", "parquet"], b"--to parquet"),
        (["--tfds", d, "--name", "../n", "--split", "s"], b"--name"),
        (["--tfds", d, "--name", "n", "--split", "a-b"], b"--split"),
        (["--tfds", d, "--name", "n", "--split", "s", "--version", "1.0"], b"X.Y.Z"),
        (["--tfds", d, "--split", "s"], b"--name NAME"),
        (["--split", "s", "-o", os.path.join(d, "y")], b"--split is for --tfds"),
    ]
    for args, want in cases:
        r = st("convert", a, *args)
        check(r.returncode == 2 and want in r.stderr, "refused: %s (%s)" % (" ".join(args[-4:]), said(r.stderr)))
    missing = os.path.join(d, "missing.jsonl")
    write_rows(missing, [{"id": 1, "x": 2}, {"id": 2}])
    r = st("convert", missing, "--tfds", os.path.join(d, "m"), "--name", "n", "--split", "s")
    check(r.returncode == 2 and b"'x' is missing from 1 of the 2 records" in r.stderr and
          not os.path.exists(os.path.join(d, "m", "n", "1.0.0", "dataset_info.json")),
          "a scalar missing from some records is refused, naming it (TFDS decodes one from every record)")
    nested = os.path.join(d, "nested.jsonl")
    write_rows(nested, [{"id": 1, "steps": [[1, 2], [3]]}])
    r = st("convert", nested, "--tfds", os.path.join(d, "q"), "--name", "n", "--split", "s")
    check(r.returncode == 2 and b"FeatureList" in r.stderr, "a FeatureList (SequenceExample) is refused: TFDS reads Examples")


def main():
    global ST, SRC, T, EX, R
    ST, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["protoc", "--python_out=" + d, "-I" + os.path.join(SRC, "tests", "support"),
                        "tfds_metadata.proto"], check=True)
        subprocess.run(["protoc", "--python_out=" + d, "-I" + os.path.join(SRC, "formats", "example"),
                        "example.proto"], check=True)
        sys.path.insert(0, d)
        sys.path.insert(0, os.path.join(SRC, "tests", "support"))
        import tfds_metadata_pb2
        import example_pb2
        import riegeli_files
        T, EX, R = tfds_metadata_pb2, example_pb2, riegeli_files
        guide_example()
        for to, ff, _ in FORMATS:
            w = os.path.join(d, to)
            os.makedirs(w)
            base = layout(w, to, ff)
            two_splits(w, to, ff, base)
            features_differ(w, to, base)
            killed(w, to, ff)
            lies(w, to, ff)
            hostile_names(w, to)
            tasks_combine(w, to, ff)
            images_labels(w, to, ff)
            image_shapes(w, to, ff)
        refusals(d)
        label_refusals(d)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
