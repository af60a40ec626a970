#!/usr/bin/python3
"""The Python module (python/shardtool) against the command line and
independent readers, run by Debian's python3 with its python3-torch and
python3-numpy.

  - every format the command line reads (TFRecord plain, gzip and
    SequenceExample, CSV, TSV, JSON lines, Parquet, Avro): shardtool.open's
    records are `shardtool cat --format tfrecord`'s, and decode=True gives
    what python3-protobuf decodes from them;
  - a DataLoader over ShardDataset with num_workers 0, 2 and 4: each
    epoch's multiset of records is cat's, for 8 shards, 3 shards, one
    shard, and gzip shards (dealt by units), with and without both shuffles;
    the same seed and epoch give the same order, another epoch another;
  - two, three and five "ranks" (processes with RANK / WORLD_SIZE) see
    disjoint shares whose union is every record, also with more ranks than
    shards;
  - a damaged shard raises with its name (through workers too), or is
    skipped and counted with skip_corrupt=True;
  - batches from workers through the slots they share with the main
    process: the same values when batches are let go, kept, or kept past
    the slots; a batch wider than a slot; turned off;
  - misuse raises, shardtool.verify reports as `shardtool verify`, collate
    stacks and pads;
  - shardtool.verify_manifest reports each shard of an intact set and of a
    damaged one (a bad CRC, a missing shard, an unlisted one) with the line
    `shardtool verify --manifest` prints, and its counts and status;
  - shardtool.convert writes the shards `shardtool convert` writes with the
    same options (cmp), reports the manifest's counts, calls progress with
    records never decreasing up to the total, and refuses an existing set
    with the command line's message unless force=True; also with the
    options of --to webdataset and arrayrecord, a TFDS directory (--image,
    --label) and --check-payloads --skip-corrupt, whose bad values raise
    with the command line's words.

usage: test_module.py SHARDTOOL LIBSHARDTOOL"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import pytest_support as ps
from pytest_support import check

EXE = os.path.abspath(sys.argv[1])
LIBRARY = os.path.abspath(sys.argv[2])
os.environ["SHARDTOOL_LIBRARY"] = LIBRARY
sys.path.insert(0, os.path.join(ps.ROOT, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

# Under AddressSanitizer (tests/meson.build sets SHARDTOOL_TEST_START_METHOD):
# DataLoader workers start from a fresh forkserver, since a fork of a
# process whose other threads hold the sanitizer's allocator lock deadlocks.
if os.environ.get("SHARDTOOL_TEST_START_METHOD"):
    import torch.multiprocessing
    torch.multiprocessing.set_start_method(os.environ["SHARDTOOL_TEST_START_METHOD"], force=True)

from torch.utils.data import DataLoader  # noqa: E402

import shardtool  # noqa: E402
from shardtool.torch import ShardDataset, collate  # noqa: E402

DATA = os.path.join(ps.ROOT, "tests", "data")
tool = ps.Tool(EXE)


def raw_collate(samples):
    return samples


def loader_records(ds, workers, batch_size=7):
    out = []
    for batch in DataLoader(ds, batch_size=batch_size, num_workers=workers, collate_fn=raw_collate):
        out.extend(batch)
    return out


def formats_match(tmp, pb2):
    csv = os.path.join(DATA, "csv", "arrow-testing", "aggregate_test_100.csv")
    tsv = os.path.join(tmp, "table.tsv")
    tool.ok(["convert", "--to", "tsv", "-o", os.path.join(tmp, "tsvout"), csv])
    shutil.copy(os.path.join(tmp, "tsvout-00000-of-00001.tsv"), tsv)
    jsonl = os.path.join(tmp, "rows.jsonl")
    with open(jsonl, "w") as f:
        for i in range(50):
            f.write(json.dumps({"id": i, "name": "row %d" % i, "score": i / 4, "tags": ["a"] * (i % 3)}) + "\n")
    inputs = {
        "tfrecord": os.path.join(DATA, "tfrecord", "tfx", "mnist", "mnist.tfrecord"),
        "tfrecord-gzip": os.path.join(DATA, "tfrecord", "tfx", "penguin", "Split-train",
                                      "data_tfrecord-00000-of-00001.gz"),
        "sequence": os.path.join(DATA, "tfrecord", "sequence", "events.tfrecord"),
        "sequence-gzip": os.path.join(DATA, "tfrecord", "sequence", "events.tfrecord.gz"),
        "csv": csv,
        "tsv": tsv,
        "jsonl": jsonl,
        "parquet": os.path.join(DATA, "parquet", "tfx", "chicago_taxi_data.parquet"),
        "parquet-nested": os.path.join(DATA, "parquet", "nested_lists.snappy.parquet"),
        "avro": os.path.join(DATA, "avro", "tfx", "chicago_taxi_data.avro"),
        "avro-deflate": os.path.join(DATA, "avro", "weather-deflate.avro"),
    }
    for label, path in inputs.items():
        want = tool.cat_records([path])
        got = list(shardtool.open(path))
        check(len(want) > 0, "%s: cat gives records" % label)
        check(got == want, "%s: shardtool.open gives cat's records (%d, cat %d)" % (label, len(got), len(want)))
        decoded = list(shardtool.open(path, decode=True))
        check(len(decoded) == len(want), "%s: decode=True gives as many records" % label)
        bad = [i for i, (d, raw) in enumerate(zip(decoded, want))
               if not ps.same_view(ps.module_view(d), ps.protobuf_view(pb2, raw))]
        check(not bad, "%s: decoded records are python3-protobuf's (first differing: %s)" % (label, bad[:3]))
    # Feature specs: stat --feature-spec's document.
    for label in ("csv", "sequence", "parquet", "tfrecord-gzip", "jsonl"):
        want = json.loads(tool.ok(["stat", "--feature-spec", "-", inputs[label]]))
        got = shardtool.feature_spec(inputs[label])
        check(got == want, "%s: feature_spec is stat --feature-spec's: %s / %s" % (label, got, want))
    check(shardtool.feature_spec(csv, columns=["c1", "c2"]) ==
          json.loads(tool.ok(["stat", "--feature-spec", "-", "--columns", "c1,c2", csv])),
          "feature_spec takes the reader's options")
    # The command line's input options, through the same names.
    for flags, kw in ((["--columns", "c1,c3", "--type", "c3=bytes"], {"columns": ["c1", "c3"], "types": {"c3": "bytes"}}),
                      (["--exclude", "c1", "--empty", "empty"], {"exclude": ["c1"], "empty": "empty"}),
                      (["--no-header", "--skip-bad-rows"], {"no_header": True, "skip_bad_rows": True}),
                      (["--header", "a,b,c,d,e,f,g,h,i,j,k,l,m"], {"header": "a,b,c,d,e,f,g,h,i,j,k,l,m"})):
        want = tool.cat_records(flags + [csv])
        got = list(shardtool.open(csv, **kw))
        check(got == want, "options %s: cat's records (%d, cat %d)" % (kw, len(got), len(want)))
    tsv_semicolon = os.path.join(tmp, "semi.txt")
    with open(tsv_semicolon, "w") as f:
        f.write("x;y\n1;a\n2;b\n")
    check(list(shardtool.open(tsv_semicolon, format="csv", delimiter=";")) ==
          tool.cat_records(["--from", "csv", "--delimiter", ";", tsv_semicolon]), "delimiter ';' as cat's")
    for kw, what in (({"types": {"c1": "int32"}}, "a bad --type kind"), ({"nested": "flatten"}, "a bad nested mode"),
                     ({"delimiter": "ab"}, "a two-character delimiter")):
        try:
            shardtool.open(csv, **kw)
            check(False, "%s is refused" % what)
        except shardtool.Error as e:
            check(e.code_name == "EUSAGE", "%s is EUSAGE: %s" % (what, e))
    # The kinds are NumPy's: int64, float32, object arrays of bytes.
    rec = next(iter(shardtool.open(inputs["sequence"], decode=True)))
    check(rec["user"].dtype == np.int64 and rec["score"].dtype == np.float32 and rec["tag"].dtype == object,
          "decoded dtypes are int64, float32 and object: %r" % rec)
    check(isinstance(rec["clicks"], list) and all(a.dtype == np.int64 for a in rec["clicks"]),
          "a FeatureList decodes to a list of arrays: %r" % rec["clicks"])
    check(rec["user"].flags.writeable, "decoded arrays are writable (torch.from_numpy takes them)")


def make_shards(tmp, csv_rows=3000):
    """A table converted to 8, 3 and 1 TFRecord shards, and to 3 gzip shards."""
    csv = os.path.join(tmp, "table.csv")
    with open(csv, "w") as f:
        f.write("id,name,value,flag\n")
        for i in range(csv_rows):
            f.write("%d,item-%d,%f,%d\n" % (i, i * 7 % 1000, i * 0.25, i % 2))
    sets = {}
    for label, extra in (("8", ["--shards", "8"]), ("3", ["--shards", "3"]), ("1", ["--shards", "1"]),
                         ("gz", ["--shards", "3", "--compression", "gzip"])):
        d = os.path.join(tmp, "set-" + label)
        os.makedirs(d)
        tool.ok(["convert", "--to", "tfrecord", "-o", os.path.join(d, "train")] + extra + [csv])
        sets[label] = d
    return csv, sets


def dataloader_epochs(sets):
    for label, d in sets.items():
        want = ps.multiset(tool.cat_records([d]))
        for workers in (0, 2, 4):
            ds = ShardDataset(d, decode=False)
            got = loader_records(ds, workers)
            check(ps.multiset(got) == want,
                  "set %s, %d workers: one epoch is cat's records (%d of %d)" % (label, workers, len(got),
                                                                                  sum(want.values())))
        # Shuffled: the same multiset every epoch; the same seed and epoch
        # give the same order, another epoch another.
        ds = ShardDataset(d, decode=False, shuffle_shards=True, shuffle_buffer=100, seed=5)
        orders = []
        for epoch in (0, 0, 1):
            ds.set_epoch(epoch)
            got = loader_records(ds, 2)
            check(ps.multiset(got) == want, "set %s shuffled, epoch %d: every record once" % (label, epoch))
            orders.append(got)
        check(orders[0] == orders[1], "set %s: the same seed and epoch give the same order" % label)
        check(orders[0] != orders[2], "set %s: another epoch gives another order" % label)
        check(orders[0] != tool.cat_records([d]), "set %s: the shuffled order is not cat's" % label)


def decoded_batches(sets):
    ds = ShardDataset(sets["3"], decode=True)
    n = 0
    for batch in DataLoader(ds, batch_size=64, num_workers=2, collate_fn=collate):
        check(batch["id"].dtype == torch.int64 and batch["id"].shape[1] == 1,
              "collate stacks int64 scalars into (batch, 1): %s" % (batch["id"].shape,))
        check(batch["value"].dtype == torch.float32, "collate keeps float32")
        check(isinstance(batch["name"], np.ndarray) and batch["name"].dtype == object
              and batch["name"].shape == (batch["id"].shape[0], 1), "collate gives bytes as an object array")
        n += batch["id"].shape[0]
    check(n == 3000, "decoded DataLoader over 3 shards gives 3000 records, got %d" % n)
    # Whole batches cut in C: the same values as collate's, batch for batch.
    by_records = list(DataLoader(ShardDataset(sets["3"]), batch_size=100, num_workers=0, collate_fn=collate))
    by_batches = list(DataLoader(ShardDataset(sets["3"], batch_size=100), batch_size=None, num_workers=0))
    check(len(by_records) == len(by_batches) == 30, "30 batches of 100 both ways")
    for a, b in zip(by_records, by_batches):
        same = a.keys() == b.keys() and all(
            (torch.equal(a[k], b[k]) if isinstance(a[k], torch.Tensor) else np.array_equal(a[k], b[k]))
            for k in a)
        if not check(same, "ShardDataset(batch_size=100) gives collate's batches"):
            break
    n = sum(b["id"].shape[0] for b in DataLoader(ShardDataset(sets["gz"], batch_size=64), batch_size=None,
                                                  num_workers=2))
    check(n == 3000, "batches through 2 workers: 3000 records, got %d" % n)
    # Two kinds in one feature would be cast into one: refused, naming it.
    for mixed in ([{"x": np.array([1])}, {"x": np.array([0.5], np.float32)}],
                  [{"x": np.array([0.5], np.float32)}, {"x": np.array([1])}],
                  [{"x": np.array([b"a"], dtype=object)}, {"x": np.array([1])}, {"x": np.array([0.5], np.float32)}],
                  [{"x": np.array([1, 2])}, {"x": np.array([0.5], np.float32)}]):
        try:
            collate(mixed)
            check(False, "collate refuses int64 and float32 in one feature")
        except ValueError as e:
            check("'x'" in str(e) and "float32" in str(e) and "int64" in str(e),
                  "collate names the feature and both kinds: %s" % e)
    empty_then_int = collate([{"x": np.empty(0, dtype=object)}, {"x": np.array([7])}])
    check(empty_then_int["x"].dtype == torch.int64 and empty_then_int["x"].tolist() == [[0], [7]],
          "an empty list takes the kind of the others: %r" % empty_then_int)
    grid = np.arange(20).reshape(10, 2)
    strided = collate([{"x": grid[:, 0]}, {"x": grid[:, 1]}, {"x": grid[:, 0].copy()}])
    check(strided["x"].tolist() == [list(range(0, 20, 2)), list(range(1, 20, 2)), list(range(0, 20, 2))],
          "collate stacks strided and contiguous arrays alike: %r" % strided)
    halves = collate([{"x": np.array([0.5, 1], np.float32)}, {"x": np.array([2, 3.5], np.float32)}])
    check(halves["x"].dtype == torch.float32 and halves["x"].tolist() == [[0.5, 1], [2, 3.5]],
          "collate stacks float32 pairs: %r" % halves)
    padded = collate([{"x": np.array([1, 2, 3])}, {"x": np.array([4])}, {}])
    check(padded["x"].tolist() == [[1, 2, 3], [4, 0, 0], [0, 0, 0]] and padded["x/length"].tolist() == [3, 1, 0],
          "collate pads ragged lists and gives their lengths: %r" % padded)
    # Records as the reader cuts them (rows of its columns, which collate
    # takes a slice at a time) against copies of them (joined one by one):
    # windows spanning the reader's batches, out of order, and with one
    # value replaced, which must not be taken from the column.
    read = list(ShardDataset(sets["3"]))
    last = read[-100:]
    check(shardtool.torch._rows_taken([r["id"] for r in last]) is not None,
          "collate takes the last records' ids as rows of their column")
    changed = [dict(r) for r in last]
    changed[5]["id"] = np.array([-1])
    for label, window in (("0-700", read[:700]), ("700-2500", read[700:2500]), ("2500-", read[2500:]),
                          ("reversed", last[::-1]), ("every other", last[::2]), ("one replaced", changed)):
        got = collate(window)
        want = collate([{k: v.copy() for k, v in r.items()} for r in window])
        same = got.keys() == want.keys() and all(
            got[k].dtype == want[k].dtype and (torch.equal(got[k], want[k]) if isinstance(got[k], torch.Tensor)
                                               else np.array_equal(got[k], want[k]))
            for k in got)
        check(same, "collate of the reader's records (%s) is collate of copies of them" % label)
    check(collate(changed)["id"][5].tolist() == [-1], "collate keeps a replaced value")
    # A ragged, partly absent table, batched in C, against the records one by one.
    jsonl = os.path.join(os.path.dirname(sets["3"]), "ragged.jsonl")
    with open(jsonl, "w") as f:
        for i in range(500):
            row = {"id": i, "vals": [i * 0.5] * (i % 4), "words": ["w%d" % j for j in range(i % 3)]}
            if i % 5 == 0:
                del row["vals"]
            f.write(json.dumps(row) + "\n")
    records = list(shardtool.open(jsonl, decode=True))
    want = collate(records)
    got = next(shardtool.open(jsonl, batch_size=500))
    check(sorted(want) == sorted(got) and all(
        (np.array_equal(np.asarray(want[k]), np.asarray(got[k])) if not isinstance(want[k], list)
         else want[k] == got[k]) for k in want),
          "batch_size=500 over ragged, absent and bytes features is collate of the records: %s / %s"
          % (sorted(want), sorted(got)))


def offsets_rows(batch):
    """The records of a batch of bytes_layout="offsets", cut apart by this
    test's own reading of the layout: [{name: (kind, values)}] with
    FeatureLists as {name: [(kind, values), ...]}; a feature with no values
    (absent, or an empty list: the layout gives both a length of 0) and a
    FeatureList of no steps are left out, as offsets_ref leaves them."""
    b = {k: (v.numpy() if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}
    for k, v in b.items():
        check(isinstance(v, np.ndarray) and v.dtype != object,
              "offsets layout: %s is an array of numbers, not Python objects (%s)" % (k, type(v)))
    names = [k for k in b if "/" not in k]
    n = None
    for k in names:
        n = len(b[k + "/length"]) if k + "/length" in b else len(b[k])
        break
    rows = [dict() for _ in range(n or 0)]

    def kind_of(name):
        if name + "/offsets" in b:
            return "bytes"
        return {"int64": "int64", "float32": "float"}[str(b[name].dtype)]

    def values(name, kind, lo, hi):
        if kind != "bytes":
            return b[name][lo:hi].tolist()
        off = b[name + "/offsets"]
        return [b[name][off[j]:off[j + 1]].tobytes() for j in range(lo, hi)]

    for name in names:
        kind = kind_of(name)
        if name + "/step_length" in b:
            steps = np.concatenate([[0], np.cumsum(b[name + "/length"])])
            ends = np.concatenate([[0], np.cumsum(b[name + "/step_length"])])
            for i in range(n):
                got = [(kind, values(name, kind, ends[s], ends[s + 1])) for s in range(steps[i], steps[i + 1])]
                if got:
                    rows[i][name] = got
        elif kind == "bytes":
            ends = np.concatenate([[0], np.cumsum(b[name + "/length"])])
            for i in range(n):
                if ends[i + 1] > ends[i]:
                    rows[i][name] = (kind, values(name, kind, ends[i], ends[i + 1]))
        else:
            arr = b[name]
            lengths = b[name + "/length"] if name + "/length" in b else [arr.shape[1]] * n
            for i in range(n):
                if lengths[i]:
                    rows[i][name] = (kind, arr[i, :lengths[i]].tolist())
    return rows


def offsets_ref(pb2, payload):
    """protobuf_view of a record without its empty features and FeatureLists,
    an empty step's kind (it has none in a batch) as the FeatureList's."""
    out = {}
    for k, v in ps.protobuf_view(pb2, payload).items():
        if isinstance(v, list):
            kinds = {kind for kind, vals in v if vals}
            if v:
                kind = kinds.pop() if kinds else None
                out[k] = [(kind, vals) for _, vals in v]
        elif v[1]:
            out[k] = v
    return out


def same_rows(got, want):
    """offsets_rows against offsets_ref: a FeatureList all of whose steps
    are empty has no kind to compare."""
    if got.keys() != want.keys():
        return False
    for k, w in want.items():
        g = got[k]
        if isinstance(w, list):
            if [vals for _, vals in g] != [vals for _, vals in w]:
                return False
            if w[0][0] is not None and any(kind != w[0][0] for kind, _ in g):
                return False
        elif g != w:
            return False
    return True


def check_offset_batches(path, want, sizes, label):
    """Batches of each size, bytes_layout="offsets", give `want` (rows as
    offsets_ref made them from python3-protobuf's parse)."""
    for size in sizes:
        got = []
        for batch in shardtool.open(path, batch_size=size, bytes_layout="offsets"):
            got.extend(offsets_rows(batch))
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if not same_rows(g, w)]
        check(len(got) == len(want) and not bad,
              "%s, batches of %d: python3-protobuf's values (%d of %d records; first differing %s: %s / %s)"
              % (label, size, len(got), len(want), bad[:3],
                 got[bad[0]] if bad else None, want[bad[0]] if bad else None))


def offsets_layout(tmp, sets, pb2):
    """Batches with bytes_layout="offsets": every value as python3-protobuf
    decodes the record (int64, float32, bytes, ragged and empty lists,
    absent features, FeatureLists with empty steps), batch sizes 1, 7 and
    500; and through DataLoader workers, where each batch crosses as one
    buffer, the same records as read in one process."""
    jsonl = os.path.join(tmp, "layout.jsonl")
    with open(jsonl, "w") as f:
        for i in range(300):
            row = {"id": i, "ints": list(range(i % 4)), "vals": [i * 0.5] * (i % 3),
                   "words": ["w%d" % j * (j + 1) for j in range(i % 3)], "one": "x%d" % i}
            if i % 5 == 0:
                del row["vals"]
            if i % 7 == 0:
                del row["one"]
            f.write(json.dumps(row) + "\n")
    inputs = {"jsonl": jsonl,
              "sequence": os.path.join(DATA, "tfrecord", "sequence", "events.tfrecord"),
              "sequence-gzip": os.path.join(DATA, "tfrecord", "sequence", "events.tfrecord.gz"),
              "mnist": os.path.join(DATA, "tfrecord", "tfx", "mnist", "mnist.tfrecord"),
              "shards": sets["3"]}
    for label, path in inputs.items():
        want = [offsets_ref(pb2, r) for r in tool.cat_records([path])]
        check_offset_batches(path, want, (1, 7, 500), "%s, bytes_layout='offsets'" % label)
    # A FeatureList and its steps: the counts the layout gives.
    seq = inputs["sequence"]
    batch = next(shardtool.open(seq, batch_size=1000, bytes_layout="offsets"))
    lists = [k[:-len("/step_length")] for k in batch if k.endswith("/step_length")]
    check(lists, "the sequence file gives FeatureLists in the offsets layout: %s" % sorted(batch))
    for name in lists:
        check(int(batch[name + "/step_length"].sum()) == len(batch[name]) or name + "/offsets" in batch,
              "%s: the steps' lengths add up to its values" % name)
    # Through workers: the same records, every value a tensor.
    for label in ("sequence", "shards"):
        path = inputs[label]
        want = ps.multiset(repr(sorted(r.items())) for r in (offsets_ref(pb2, p) for p in tool.cat_records([path])))
        for workers in (0, 2):
            got = []
            for batch in DataLoader(ShardDataset(path, batch_size=16, bytes_layout="offsets"), batch_size=None,
                                    num_workers=workers):
                check(all(isinstance(v, torch.Tensor) for v in batch.values()),
                      "%s, %d workers: every value of an offsets batch is a tensor" % (label, workers))
                got.extend(repr(sorted(r.items())) for r in offsets_rows(batch))
            check(ps.multiset(got) == want, "%s, %d workers, offsets layout: every record once, python3-protobuf's "
                  "values (%d of %d)" % (label, workers, len(got), sum(want.values())))
    # Batches of more than 512 KiB cross as one tensor in shared memory
    # (smaller ones through the worker's pipe): the same values.
    wide = os.path.join(tmp, "wide.jsonl")
    with open(wide, "w") as f:
        for i in range(400):
            f.write(json.dumps({"id": i, "v": [i * 1000 + j for j in range(600)], "s": "r%d" % i}) + "\n")
    got = {}
    for batch in DataLoader(ShardDataset(wide, batch_size=400), batch_size=None, num_workers=2):
        check(batch["v"].shape[1] == 600 and batch["v"].numel() * 8 > 512 << 10,
              "a wide batch holds more than 512 KiB: %s" % (tuple(batch["v"].shape),))
        for i, row in zip(batch["id"][:, 0].tolist(), batch["v"].tolist()):
            got[i] = row
    check(sorted(got) == list(range(400)) and all(got[i] == [i * 1000 + j for j in range(600)] for i in got),
          "wide batches through 2 workers: every record's values (%d records)" % len(got))
    # The objects layout through workers: the batches of one process.
    def rows(batch):
        if "name/offsets" in batch:
            return [repr(sorted(r.items())) for r in offsets_rows(batch)]
        n = len(batch["id"])
        return [repr([(k, (v[i].tolist() if hasattr(v[i], "tolist") else v[i])) for k, v in sorted(batch.items())])
                for i in range(n)]
    for ds_kw in ({"batch_size": 64}, {"batch_size": 64, "bytes_layout": "offsets"}):
        one = ps.multiset(r for b in DataLoader(ShardDataset(sets["3"], **ds_kw), batch_size=None, num_workers=0)
                          for r in rows(b))
        two = ps.multiset(r for b in DataLoader(ShardDataset(sets["3"], **ds_kw), batch_size=None, num_workers=2)
                          for r in rows(b))
        check(one == two and sum(one.values()) == 3000,
              "%s: 2 workers give the rows of one process (%d, %d)" % (ds_kw, sum(one.values()), sum(two.values())))
    # A batch dict changed after it was made pickles as the dict it is.
    import pickle
    b = next(iter(ShardDataset(sets["3"], batch_size=4)))
    b["extra"] = torch.zeros(2)
    again = pickle.loads(pickle.dumps(b))
    check(again.keys() == b.keys() and torch.equal(again["extra"], b["extra"]) and torch.equal(again["id"], b["id"]),
          "a changed batch pickles whole: %s" % sorted(again))
    for bad in ("tensors", None):
        try:
            shardtool.open(jsonl, batch_size=4, bytes_layout=bad)
            check(False, "bytes_layout=%r is refused" % bad)
        except ValueError as e:
            check("bytes_layout" in str(e), "bytes_layout=%r: %s" % (bad, e))


RANK_SCRIPT = r"""
import os, sys, pickle
sys.path.insert(0, sys.argv[1])
if os.environ.get("SHARDTOOL_TEST_START_METHOD"):
    import torch.multiprocessing
    torch.multiprocessing.set_start_method(os.environ["SHARDTOOL_TEST_START_METHOD"], force=True)
from shardtool.torch import ShardDataset
from torch.utils.data import DataLoader
ds = ShardDataset(sys.argv[2], decode=False, shuffle_shards=True, seed=3)
records = []
for batch in DataLoader(ds, batch_size=5, num_workers=int(sys.argv[3]), collate_fn=list):
    records.extend(batch)
sys.stdout.buffer.write(pickle.dumps(records))
"""


def ranks(sets):
    import pickle
    for label in ("8", "3", "1", "gz"):
        d = sets[label]
        want = ps.multiset(tool.cat_records([d]))
        for world, workers in ((2, 0), (3, 2), (5, 1)):
            union = ps.multiset([])
            shares = []
            for rank in range(world):
                env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world))
                p = subprocess.run([sys.executable, "-c", RANK_SCRIPT, os.path.join(ps.ROOT, "python"), d,
                                    str(workers)], capture_output=True, env=env)
                if not check(p.returncode == 0, "rank %d of %d: exit %d: %s" % (rank, world, p.returncode,
                                                                                p.stderr.decode()[-800:])):
                    return
                share = pickle.loads(p.stdout)
                shares.append(ps.multiset(share))
                union += ps.multiset(share)
            check(union == want, "set %s, %d ranks x %d workers: the ranks' union is every record once"
                  % (label, world, workers))
            check(sum(1 for s in shares if s) >= min(world, 2),
                  "set %s, %d ranks: the records are spread over the ranks (%s)"
                  % (label, world, [sum(s.values()) for s in shares]))


DIST_SCRIPT = r"""
import os, sys, pickle
sys.path.insert(0, sys.argv[1])
if os.environ.get("SHARDTOOL_TEST_START_METHOD"):
    import torch.multiprocessing
    torch.multiprocessing.set_start_method(os.environ["SHARDTOOL_TEST_START_METHOD"], force=True)
import torch.distributed as dist
for k in ("RANK", "WORLD_SIZE"):
    os.environ.pop(k, None)
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[3], rank=int(sys.argv[4]), world_size=2)
from shardtool.torch import ShardDataset
from torch.utils.data import DataLoader
records = []
for batch in DataLoader(ShardDataset(sys.argv[2], decode=False), batch_size=5, num_workers=2, collate_fn=list):
    records.extend(batch)
dist.destroy_process_group()
sys.stdout.buffer.write(pickle.dumps(records))
"""


def distributed_ranks(sets):
    """Two ranks of an initialized torch.distributed group (gloo over
    loopback), with no RANK / WORLD_SIZE in the environment."""
    if os.environ.get("SHARDTOOL_TEST_SANITIZED"):
        # gloo throws C++ exceptions that a sanitizer runtime preloaded into
        # python3 cannot intercept (a CHECK failure in __cxa_throw): this
        # part is Python only (where the rank comes from) and runs in the
        # plain build.
        print("note: torch.distributed ranks are left to the plain build under %s"
              % os.environ["SHARDTOOL_TEST_SANITIZED"])
        return
    import pickle
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    d = sets["3"]
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    procs = [subprocess.Popen([sys.executable, "-c", DIST_SCRIPT, os.path.join(ps.ROOT, "python"), d, port, str(r)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for r in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    if not all(check(p.returncode == 0, "torch.distributed rank %d: %s" % (i, o[1].decode()[-800:]))
               for i, (p, o) in enumerate(zip(procs, outs))):
        return
    shares = [ps.multiset(pickle.loads(o[0])) for o in outs]
    check(shares[0] + shares[1] == ps.multiset(tool.cat_records([d])) and shares[0] and shares[1],
          "two torch.distributed ranks read disjoint shares whose union is every record (%s)"
          % [sum(s.values()) for s in shares])


def damage(tmp, sets):
    d = os.path.join(tmp, "damaged")
    shutil.copytree(sets["3"], d)
    shard = sorted(p for p in os.listdir(d) if "-00001-of-" in p and not p.endswith(".json"))[0]
    path = os.path.join(d, shard)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(path, "wb").write(bytes(data))
    expect = tool.run(["cat", "--format", "tfrecord", path])
    check(expect.returncode != 0, "cat fails on the damaged shard")
    # The records of the units before the damaged one come first, then the error.
    before = []
    try:
        for raw in shardtool.open(path):
            before.append(raw)
    except shardtool.Error:
        pass
    before = len(before)
    for kw in ({"decode": True}, {"batch_size": 64}):
        got = []
        try:
            for rec in shardtool.open(path, **kw):
                got.append(rec)
            check(False, "%s: a damaged shard raises" % kw)
        except shardtool.Error as e:
            check(shard in str(e) and "crc" in str(e) and e.code_name == "EDATA",
                  "%s: the error names the damaged shard and the crc, after the records before it: %s" % (kw, e))
        n = len(got) if "batch_size" not in kw else sum(len(b["id"]) for b in got)
        check(n == before, "%s: the records before the damage come first (%d, raw reader %d)" % (kw, n, before))
    for workers in (0, 2):
        try:
            loader_records(ShardDataset(d, decode=False), workers)
            check(False, "%d workers: a damaged shard raises" % workers)
        except Exception as e:  # DataLoader re-raises a worker's error as its own class
            check(shard in str(e) and "crc" in str(e),
                  "%d workers: the error names the damaged shard and the crc: %s" % (workers, e))
    skipped_set = os.path.join(tmp, "skipped")
    os.makedirs(skipped_set)
    tool.ok(["split", "--skip-corrupt", "--shards", "1", "-o", os.path.join(skipped_set, "all"), d])
    want = tool.cat_records([skipped_set])
    ds = ShardDataset(d, decode=False, skip_corrupt=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = loader_records(ds, 0)
    check(ps.multiset(got) == ps.multiset(want), "skip_corrupt gives split --skip-corrupt's records")
    check(ds.skipped >= 1 and any("skipped %d damaged" % ds.skipped in str(w.message) for w in caught),
          "skip_corrupt counts the skipped record and warns: %d, %s" % (ds.skipped, [str(w.message) for w in caught]))
    report = shardtool.verify(path)
    line = tool.run(["verify", path]).stdout.decode().strip()
    check(not report.ok and report.message == line, "verify's report is the command line's line: %r / %r"
          % (report.message, line))
    intact = [p for p in os.listdir(sets["1"]) if p.endswith(".tfrecord")][0]
    report = shardtool.verify(os.path.join(sets["1"], intact))
    check(report.ok and report.records == 3000 and report.format == "tfrecord",
          "verify of an intact shard: ok, 3000 records: %r" % report)


def verify_manifest_lines(manifest, *extra):
    """verify --manifest's exit status and lines (standard error's without "shardtool verify: ")."""
    p = subprocess.run([EXE, "verify"] + list(extra) + ["--manifest", manifest], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    prefix = "shardtool verify: "
    return p.returncode, [l[len(prefix):] if l.startswith(prefix) else l
                          for l in p.stdout.decode(errors="replace").splitlines()]


def manifests(tmp, sets):
    for label in ("3", "gz"):
        m = os.path.join(sets[label], "train.manifest.json")
        report = shardtool.verify_manifest(m)
        status, lines = verify_manifest_lines(m)
        ours = [f.message for f in report.files] + [report.message]
        check(status == 0 and report.ok and ours == lines, "set %s: verify_manifest's lines are verify --manifest's:"
              "\n%s\n%s" % (label, "\n".join(ours), "\n".join(lines)))
        check(len(report.files) == 3 and all(f.ok and f.format == "tfrecord" and f.path in f.message
                                             for f in report.files) and
              report.records == 3000 and report.damaged == 0 and report.unreadable == 0,
              "set %s: three intact shards, 3000 records: %r" % (label, report))
    m = os.path.join(sets["3"], "train.manifest.json")
    report = shardtool.verify_manifest(_PathLike(m), max_imbalance=0.5)
    status, lines = verify_manifest_lines(m, "--max-imbalance", "0.5")
    check(report.ok and report.balance and report.balance in lines and status == 0,
          "max_imbalance: the balance line is verify's: %r / %r" % (report.balance, lines))
    uneven = os.path.join(tmp, "uneven")
    tool.ok(["convert", "--records-per-shard", "1200", "-q", "-o", os.path.join(uneven, "train"), sets["3"]])
    m = os.path.join(uneven, "train.manifest.json")
    report = shardtool.verify_manifest(m, max_imbalance=0.1)
    status, lines = verify_manifest_lines(m, "--max-imbalance", "0.1")
    check(not report.ok and status == 1 and report.files[-1].damage["kind"] == "uneven shards" and
          report.files[-1].path == m and not report.balance and
          [f.message for f in report.files] + [report.message] == lines,
          "1200, 1200 and 600 records: uneven shards, as verify says: %r / %r" % (report.files[-1:], lines))

    # A damaged set: a bad CRC in one shard, another missing, an unlisted one beside them.
    d = os.path.join(tmp, "damaged-set")
    shutil.copytree(sets["3"], d)
    names = sorted(p for p in os.listdir(d) if p.endswith(".tfrecord"))
    path = os.path.join(d, names[1])
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(path, "wb").write(bytes(data))
    os.remove(os.path.join(d, names[2]))
    shutil.copy(os.path.join(d, names[0]), os.path.join(d, "train-00000-of-00004.tfrecord"))
    m = os.path.join(d, "train.manifest.json")
    report = shardtool.verify_manifest(m)
    status, lines = verify_manifest_lines(m)
    ours = [f.message for f in report.files] + [report.message]
    check(status == 1 and not report.ok and ours == lines, "damaged set: verify_manifest's lines are verify's:"
          "\n%s\n%s" % ("\n".join(ours), "\n".join(lines)))
    kinds = [f.damage["kind"] if f.damage else None for f in report.files]
    check(kinds == [None, "data crc", "manifest mismatch", "unlisted shard"] and report.damaged == 3 and
          [f.ok for f in report.files] == [True, False, False, False] and not bool(report),
          "damaged set: an intact shard, a bad CRC, a missing shard, an unlisted one: %r" % kinds)
    check(report.files[3].path == os.path.join(d, "train-00000-of-00004.tfrecord"),
          "the unlisted shard's path: %r" % report.files[3].path)

    missing = os.path.join(tmp, "no-such.manifest.json")
    status, lines = verify_manifest_lines(missing)
    try:
        shardtool.verify_manifest(missing)
        check(False, "a missing manifest raises")
    except shardtool.Error as e:
        check(e.code_name == "ENOTFOUND" and lines and str(e) == lines[0] and status == 2,
              "a missing manifest is ENOTFOUND with verify's message: %s / %r" % (e, lines))
    try:
        shardtool.verify_manifest(path)
        check(False, "a shard given as the manifest raises")
    except shardtool.Error as e:
        check(e.code_name == "EDATA" and "not a manifest" in str(e), "a shard is not a manifest: %s" % e)
    try:
        shardtool.verify_manifest(m, max_imbalance=-1)
        check(False, "a negative max_imbalance raises")
    except ValueError:
        pass


class _PathLike:
    def __init__(self, p):
        self.p = p

    def __fspath__(self):
        return self.p


def misuse(tmp):
    for args, kw, what in (([os.path.join(tmp, "missing.tfrecord")], {}, "a missing file"),
                           ([tmp], {"format": "nosuch"}, "an unknown format"),
                           ([os.path.join(tmp, "set-1")], {"share": (3, 2)}, "a share index past the count")):
        try:
            list(shardtool.open(args, **kw))
            check(False, "%s raises" % what)
        except (shardtool.Error, ValueError) as e:
            check(str(e) != "", "%s raises with a message: %s" % (what, e))
    try:
        list(shardtool.open(os.path.join(tmp, "missing.tfrecord")))
    except shardtool.Error as e:
        check(e.code_name == "ENOTFOUND" and "missing.tfrecord" in str(e), "a missing file is ENOTFOUND: %s" % e)
    r = shardtool.open(os.path.join(tmp, "set-1"))
    r.close()
    r.close()
    check(list(r) == [], "a closed reader iterates nothing")


def converts(tmp):
    csv = os.path.join(DATA, "csv", "tfx", "chicago_taxi_data.csv")
    for to, ext, extra, kw in (("tfrecord", "tfrecord", [], {}),
                               ("parquet", "parquet", [], {}),
                               ("jsonl", "jsonl.gz", ["--compression", "gzip", "--shuffle", "--seed", "7"],
                                {"compression": "gzip", "shuffle": True, "seed": 7})):
        cli_prefix = os.path.join(tmp, "convert-cli-" + to, "part")
        py_prefix = os.path.join(tmp, "convert-py-" + to, "part")
        tool.ok(["convert", csv, "-o", cli_prefix, "--to", to, "--shards", "3"] + extra)
        seen = []
        report = shardtool.convert([csv], py_prefix, to=to, shards=3, progress=seen.append, **kw)
        for i in range(3):
            name = "-%05d-of-00003.%s" % (i, ext)
            with open(cli_prefix + name, "rb") as a, open(py_prefix + name, "rb") as b:
                check(a.read() == b.read(), "convert --to %s: shard %d is the command line's" % (to, i))
        with open(report["manifest"]) as f:
            m = json.load(f)
        check(report["manifest"] == py_prefix + ".manifest.json", "the report's manifest: %r" % report)
        check(report["records"] == 10000 == sum(s["records"] for s in m["shards"]) and
              report["shards"] == len(m["shards"]) == 3, "the report's counts are the manifest's: %r" % report)
        records = [p["records"] for p in seen]
        check(records and records == sorted(records) and records[-1] == report["records"],
              "progress calls: %r" % records[-5:])
        try:
            shardtool.convert([csv], py_prefix, to=to, shards=3, **kw)
            check(False, "an existing set is refused")
        except shardtool.Error as e:
            cli = tool.run(["convert", csv, "-o", cli_prefix, "--to", to, "--shards", "3"] + extra)
            want = cli.stderr.decode().splitlines()[0][len("shardtool convert: "):].replace(cli_prefix, "P")
            check(e.code_name == "EUSAGE" and str(e).replace(py_prefix, "P") == want,
                  "an existing set: %r vs %r" % (str(e), want))
        again = shardtool.convert([csv], py_prefix, to=to, shards=3, force=True, **kw)
        check(again["records"] == 10000, "force=True replaces the set: %r" % again)
    # The formats' own options, and the manifest's and feature spec's paths.
    cli_dir, py_dir = os.path.join(tmp, "convert-opts-cli"), os.path.join(tmp, "convert-opts-py")
    tool.ok(["convert", csv, "-o", os.path.join(cli_dir, "p"), "--to", "parquet", "--parquet-codec", "gzip",
             "--compression-level", "3", "--row-group-size", "100000", "--manifest",
             os.path.join(cli_dir, "side", "m.json"), "--feature-spec", os.path.join(cli_dir, "side", "f.json")])
    shardtool.convert([csv], os.path.join(py_dir, "p"), to="parquet", parquet_codec="gzip", compression_level=3,
                      row_group_size=100000, manifest=os.path.join(py_dir, "side", "m.json"),
                      feature_spec=os.path.join(py_dir, "side", "f.json"))
    for name in ("p-00000-of-00001.parquet", os.path.join("side", "f.json")):
        with open(os.path.join(cli_dir, name), "rb") as a, open(os.path.join(py_dir, name), "rb") as b:
            check(a.read() == b.read(), "convert(parquet_codec=..., ...): %s is the command line's" % name)
    stat = json.loads(tool.ok(["stat", "--json", os.path.join(py_dir, "p-00000-of-00001.parquet")]))
    check("GZIP" in json.dumps(stat).upper(), "parquet_codec='gzip' is the file's codec")
    # An exception in progress stops the run, which removes what it wrote,
    # and is raised again.
    stopped = os.path.join(tmp, "convert-stopped")
    calls = []

    def stop(p):
        calls.append(p["records"])
        raise KeyboardInterrupt

    try:
        shardtool.convert([csv] * 1, os.path.join(stopped, "p"), shards=2, progress=stop)
        check(False, "an exception in progress is raised again")
    except KeyboardInterrupt:
        pass
    check(len(calls) == 1, "progress is not called after it raised: %d calls" % len(calls))
    check(not os.path.exists(stopped) or not os.listdir(stopped),
          "a stopped run leaves nothing: %r" % (os.listdir(stopped) if os.path.exists(stopped) else None))
    try:
        shardtool.convert([csv], os.path.join(tmp, "convert-bad", "x"), to="nosuch")
        check(False, "an unknown output format raises")
    except shardtool.Error as e:
        check(e.code_name == "EUSAGE" and "nosuch" in str(e), "an unknown output format: %s" % e)
    # jobs is bounded as --jobs is, in the command line's words (100000
    # threads were started, and a count past INT_MAX wrapped negative).
    cli = tool.run(["convert", csv, "-o", os.path.join(tmp, "convert-jobs-cli", "x"), "--jobs", "100000"])
    try:
        shardtool.convert([csv], os.path.join(tmp, "convert-jobs", "x"), jobs=100000)
        check(False, "jobs=100000 raises")
    except shardtool.Error as e:
        want = cli.stderr.decode().splitlines()[0][len("shardtool convert: "):]
        check(cli.returncode == 2 and e.code_name == "EUSAGE" and str(e) == want,
              "jobs=100000: %r vs %r" % (str(e), want))


def same_bytes(a, b):
    return os.path.exists(a) and os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read()


def shared_slots(tmp, sets):
    """Batches from DataLoader workers cross through slots the worker
    shares with the main process (shardtool._slots): the values are those
    of one process whether each batch is let go at once, every other one is
    kept (its slot must not be written again while it is held) or all are
    kept (the slots run out and batches come the ordinary way); a batch
    larger than a slot makes a new ring; shared_slots=0 turns them off."""
    from shardtool import _slots
    layout = {"batch_size": 16, "bytes_layout": "offsets"}

    def offsets_rows(batch):
        return [repr(sorted(r.items())) for r in globals()["offsets_rows"](batch)]
    want = ps.multiset(r for b in DataLoader(ShardDataset(sets["3"], **layout), batch_size=None, num_workers=0)
                       for r in offsets_rows(b))

    def through(keep, window=None, **kw):
        """Batches of 2 workers; those `keep` chooses are held and read
        last, or once `window` later batches went through."""
        held, rows, slotted = [], [], 0
        for i, b in enumerate(DataLoader(ShardDataset(sets["3"], **dict(layout, **kw)), batch_size=None,
                                         num_workers=2)):
            slotted += isinstance(b._packed[0], _slots.MainSlot)
            if keep(i):
                held.append((i, b))
            else:
                rows.extend(offsets_rows(b))
            while window is not None and held and held[0][0] <= i - window:
                rows.extend(offsets_rows(held.pop(0)[1]))
        for _, b in held:
            rows.extend(offsets_rows(b))
        return ps.multiset(rows), slotted, i + 1

    got, slotted, n = through(lambda i: False)
    check(got == want and slotted == n, "each batch let go at once: every record once, all %d batches through "
          "slots (%d)" % (n, slotted))
    got, slotted, n = through(lambda i: i % 2 == 0, window=2)
    check(got == want and slotted == n, "every other batch kept while two more go through: the kept ones "
          "unchanged, all %d through slots (%d)" % (n, slotted))
    got, slotted, n = through(lambda i: True)
    check(got == want and 0 < slotted <= 2 * 6 < n, "every batch kept: the values of one process; %d of %d "
          "batches through the 2 workers' 6 slots each, the rest the ordinary way" % (slotted, n))
    got, slotted, n = through(lambda i: False, shared_slots=0)
    check(got == want and slotted == 0, "shared_slots=0: no slot used (%d), the same records" % slotted)
    # A narrow first batch sizes the slots; a wide one later needs a new ring.
    grow = os.path.join(tmp, "grow.jsonl")
    with open(grow, "w") as f:
        for i in range(800):
            f.write(json.dumps({"id": i, "v": [i * 1000 + j for j in range(1 if i < 400 else 600)]}) + "\n")
    rings, got = set(), {}
    for b in DataLoader(ShardDataset(grow, batch_size=400), batch_size=None, num_workers=1):
        check(isinstance(b._packed[0], _slots.MainSlot), "a batch of %d bytes comes through a slot"
              % (b["v"].numel() * 8))
        rings.add(b._packed[0].ring.key)
        for i, row in zip(b["id"][:, 0].tolist(), b["v"].tolist()):
            got[i] = row[:1 if i < 400 else 600]
    check(len(rings) == 2 and sorted(got) == list(range(800))
          and all(got[i] == [i * 1000 + j for j in range(1 if i < 400 else 600)] for i in got),
          "a batch wider than the first one's slots: a second ring, every value (%d rings)" % len(rings))
    # A process forked from the main one that lets go of its copy of a
    # batch hands nothing back: with one slot, held here, every later batch
    # comes the ordinary way and the held one keeps its values.
    loader = iter(DataLoader(ShardDataset(sets["3"], shared_slots=1, **layout), batch_size=None, num_workers=1))
    first = next(loader)
    rows_before = offsets_rows(first)
    pid = os.fork()
    if pid == 0:
        import gc
        first = None
        gc.collect()
        os._exit(0)
    os.waitpid(pid, 0)
    later = list(loader)
    check(isinstance(first._packed[0], _slots.MainSlot) and later
          and not any(isinstance(b._packed[0], _slots.MainSlot) for b in later)
          and offsets_rows(first) == rows_before,
          "a forked process letting go of a batch hands no slot back (%d later batches)" % len(later))
    del first, later, loader
    # A batch of a slot pickled again in the main process: a copy of it.
    import pickle
    b = next(iter(DataLoader(ShardDataset(sets["3"], **layout), batch_size=None, num_workers=1)))
    again = pickle.loads(pickle.dumps(b))
    check(isinstance(b._packed[0], _slots.MainSlot) and again.keys() == b.keys()
          and all(torch.equal(again[k], b[k]) for k in b), "a slot's batch pickles again as a copy")


def batch_column_order(tmp, pb2):
    """Batches cut in C from records written by python3-protobuf whose
    features come in different orders, are absent from some records, and
    hold bytes values of 0-19 bytes: every value as python3-protobuf reads
    it, batch sizes 1, 7, 64 and 200.  A feature that is int64 in some
    records of a batch and float in another is refused, naming it and both
    kinds; in batches of its own kind it reads."""
    sys.path.insert(0, os.path.join(ps.ROOT, "tests", "support"))
    import example_shards
    d = os.path.join(tmp, "column-order")
    os.makedirs(d)
    mixed = os.path.join(d, "mixed.tfrecord")
    with open(mixed, "wb") as f:
        for i in range(200):
            ex = pb2.Example()
            names = ["id", "f", "s", "k"] if i % 2 else ["k", "s", "f", "id"]
            for name in names:
                feat = ex.features.feature
                if name == "id":
                    feat["id"].int64_list.value.append(i)
                elif name == "f" and i % 7:
                    feat["f"].float_list.value.extend([i * 0.25] * (i % 3))
                elif name == "s":
                    feat["s"].bytes_list.value.extend([b"%d" % i + b"x" * (i % 20), b"y" * (i % 9)][:1 + i % 2])
                elif name == "k" and i % 11:
                    feat["k"].int64_list.value.extend(range(i % 4))
            f.write(example_shards.frame(ex.SerializeToString()))
    want = [offsets_ref(pb2, r) for r in tool.cat_records([mixed])]
    check(len(want) == 200, "cat reads the 200 records written by python3-protobuf")
    check_offset_batches(mixed, want, (1, 7, 64, 200), "features in changing order")
    kinds = os.path.join(d, "kinds.tfrecord")
    with open(kinds, "wb") as f:
        for i in range(3):
            ex = pb2.Example()
            ex.features.feature["id"].int64_list.value.append(i)
            if i < 2:
                ex.features.feature["k"].int64_list.value.append(i + 5)
            else:
                ex.features.feature["k"].float_list.value.append(0.5)
            f.write(example_shards.frame(ex.SerializeToString()))
    try:
        list(shardtool.open(kinds, batch_size=3))
        check(False, "a feature int64 and float in one batch is refused")
    except shardtool.Error as e:
        check("'k'" in str(e) and "int64" in str(e) and "float" in str(e) and e.code_name == "EDATA",
              "a feature int64 and float in one batch: EDATA naming it and both kinds: %s" % e)
    two = [{k: v.tolist() for k, v in b.items()} for b in shardtool.open(kinds, batch_size=2)]
    check(two == [{"id": [[0], [1]], "k": [[5], [6]]}, {"id": [[2]], "k": [[0.5]]}],
          "the same feature int64 in one batch and float in the next: %s" % two)


def unpacked_pb2(tmp):
    """formats/example/example.proto with its numeric lists unpacked
    ([packed = false]: one tag per value), compiled by protoc: the other
    encoding of the same messages, which every protobuf parser reads."""
    text = open(os.path.join(ps.ROOT, "formats", "example", "example.proto")).read()
    text = text.replace("package shardtool;", "package shardtool_unpacked;")
    check(text.count("[packed = true]") == 2, "example.proto packs FloatList and Int64List")
    d = os.path.join(tmp, "unpacked-proto")
    os.makedirs(d)
    with open(os.path.join(d, "example_unpacked.proto"), "w") as f:
        f.write(text.replace("[packed = true]", "[packed = false]"))
    subprocess.run(["protoc", "--proto_path=" + d, "--python_out=" + d, "example_unpacked.proto"], check=True)
    sys.path.insert(0, d)
    import example_unpacked_pb2
    return example_unpacked_pb2


def batch_wire_forms(tmp, pb2):
    """Batches of records written by python3-protobuf in the forms a batch
    reads straight from the wire format and in those it leaves to the
    general decoder, mixed in one batch: int64 and float lists packed and
    unpacked (and both in one record), varints of every length up to 10
    bytes (negative values and the int64 extremes), empty lists, bytes of 0-300 bytes, records of over
    127 bytes, features in the first record's order, in another order, one
    absent from a record (first, middle or last), a name the batch has not
    seen, a name of over 16 bytes; every value as python3-protobuf parses
    the record, batch sizes 1, 5, 64 and 300.  A feature whose kind differs
    after others of its record went in is refused as before, the records
    before it kept."""
    sys.path.insert(0, os.path.join(ps.ROOT, "tests", "support"))
    import example_shards
    unpacked = unpacked_pb2(tmp)
    d = os.path.join(tmp, "wire-forms")
    os.makedirs(d)

    def varint(n):
        out = b""
        while True:
            b = n & 0x7F
            n >>= 7
            if n:
                out += bytes([b | 0x80])
            else:
                return out + bytes([b])

    def entry(name, kind, values, pack):
        """One Features message of one map entry, serialized by
        python3-protobuf (packed or not); Features messages concatenated
        are one whose entries come in that order."""
        feats = (pb2 if pack else unpacked).Features()
        feat = feats.feature[name]
        if kind == "int64":
            feat.int64_list.value.extend(values)
            feat.int64_list.SetInParent()
        elif kind == "float":
            feat.float_list.value.extend(values)
            feat.float_list.SetInParent()
        else:
            feat.bytes_list.value.extend(values)
            feat.bytes_list.SetInParent()
        return feats.SerializeToString()

    long_name = "a_feature_name_of_over_sixteen_bytes"
    extremes = [0, 1, -1, 127, 128, -128, 2 ** 31, -2 ** 31, 2 ** 63 - 1, -2 ** 63, 300, -300,
                2 ** 49 - 1, 2 ** 49, 2 ** 56 - 1, 2 ** 56]  # varints of 7, 8, 8 and 9 bytes
    payloads = []
    for i in range(300):
        feats = [("id", "int64", [i]),
                 ("ints", "int64", [extremes[(i + j) % len(extremes)] for j in range(i % 5)]),
                 ("vals", "float", [i * 0.25 - j for j in range(i % 4)]),
                 ("words", "bytes", [b"w" * ((i + j) % 20) for j in range(i % 3)]),
                 (long_name, "bytes", [bytes(range(i % 7)) * (1 + (i % 50 == 3) * 40)]),
                 ("last", "float", [float(i)])]
        if i % 37 == 5:
            feats[1], feats[3] = feats[3], feats[1]      # another order
        if i % 41 == 7:
            feats.reverse()
        for gone, every in ((0, 43), (2, 13), (5, 17)):  # absent: first, middle, last
            if i % every == every - 1:
                feats = [f for f in feats if f[0] != ("id", "ints", "vals", "words", long_name, "last")[gone]]
        if i % 53 == 11:
            feats.insert(2, ("new_%d" % i, "int64", [i, -i]))  # a name the batch has not seen
        if i % 19 == 4:
            feats = [(n, k, []) if n in ("ints", "vals") else (n, k, v) for n, k, v in feats]  # empty lists
        body = b"".join(entry(n, k, v, pack=(i + j) % 3 != 0) for j, (n, k, v) in enumerate(feats))
        payloads.append(b"\x0a" + varint(len(body)) + body)
    check(any(len(p) > 127 for p in payloads) and any(len(p) < 128 for p in payloads),
          "the records are of one-byte and longer lengths")
    # The test's premise: python3-protobuf writes the two encodings.
    one = unpacked.Int64List(value=[1, 2]).SerializeToString()
    check(one == b"\x08\x01\x08\x02" and pb2.Int64List(value=[1, 2]).SerializeToString() == b"\x0a\x02\x01\x02",
          "python3-protobuf writes unpacked and packed int64 lists: %r" % one)
    path = os.path.join(d, "forms.tfrecord")
    with open(path, "wb") as f:
        for payload in payloads:
            f.write(example_shards.frame(payload))
    want = [offsets_ref(pb2, r) for r in payloads]
    check(any(len(w) == 6 for w in want) and any("id" not in w for w in want), "the records vary")
    check_offset_batches(path, want, (1, 5, 64, 300), "features in wire forms")

    # A kind that differs on a record's last feature, after its first went
    # in: refused with the message of before, the records before it kept.
    kinds = os.path.join(d, "kinds-last.tfrecord")
    with open(kinds, "wb") as f:
        for i in range(4):
            body = entry("id", "int64", [i], True) + entry("k", "int64" if i != 2 else "float", [i + 5], True)
            f.write(example_shards.frame(b"\x0a" + varint(len(body)) + body))
    got = []
    try:
        for batch in shardtool.open(kinds, batch_size=4):
            got.append({k: v.tolist() for k, v in batch.items()})
        check(False, "a feature int64 and float in one batch is refused")
    except shardtool.Error as e:
        check(str(e).endswith("record 2: feature 'k' is float here and int64 in record 0 of the same batch: read "
                              "these records one at a time, or as serialized bytes") and e.code_name == "EDATA",
              "the kind of a record's last feature differs: EDATA naming the record, the feature, both kinds: %s"
              % e)
    check(got == [{"id": [[0], [1]], "k": [[5], [6]]}], "the records before the error come first: %s" % got)


def converts_format_options(tmp, pb2):
    """convert(to="webdataset", key=..., mtime=...), arrayrecord_codec and
    arrayrecord_group_size, tfds=DIR with image and label, check_payloads
    with skip_corrupt: the command line's shards, manifest options and TFDS
    files; bad values raise Error with the command line's words."""
    sys.path.insert(0, os.path.join(ps.ROOT, "tests", "support"))
    import example_shards
    import tarfile
    d = os.path.join(tmp, "convert-formats")
    os.makedirs(d)
    keyed = os.path.join(d, "keyed.csv")
    with open(keyed, "w") as f:
        f.write("k,text,n\n")
        for i in range(17):
            f.write("key%02d,row %d,%d\n" % (16 - i, i, i * 3))
    corpus = os.path.join(ps.ROOT, "tests", "fuzz", "corpus", "payload")
    good, trunc = (open(os.path.join(corpus, n), "rb").read() for n in ("tiny.jpg", "damaged-trunc.jpg"))
    images = os.path.join(d, "images.tfrecord")
    with open(images, "wb") as f:
        for i in range(5):
            ex = pb2.Example()
            ex.features.feature["image"].bytes_list.value.append(trunc if i == 2 else good)
            ex.features.feature["label"].int64_list.value.append(i % 2)
            f.write(example_shards.frame(ex.SerializeToString()))
    names = os.path.join(d, "names.txt")
    with open(names, "w") as f:
        f.write("cat\ndog\n")
    csv = os.path.join(DATA, "csv", "tfx", "chicago_taxi_data.csv")

    def options(manifest):
        with open(manifest) as f:
            m = json.load(f)
        return m.get("options"), m.get("skipped"), m.get("tfds"), [s.get("records") for s in m["shards"]]

    cases = (
        ("webdataset", keyed, "tar", ["--key", "k", "--mtime", "1234567890", "--wds-member", "json"],
         {"key": "k", "mtime": 1234567890, "wds_member": "json"}),
        ("arrayrecord", csv, "array_record",
         ["--arrayrecord-codec", "brotli", "--compression-level", "4", "--arrayrecord-group-size", "7"],
         {"arrayrecord_codec": "brotli", "compression_level": 4, "arrayrecord_group_size": 7}),
        ("tfrecord", images, "tfrecord", ["--check-payloads", "--skip-corrupt"],
         {"check_payloads": True, "skip_corrupt": True}),
    )
    for n, (to, inp, ext, cli_args, kw) in enumerate(cases):
        cli_prefix, py_prefix = os.path.join(d, "cli%d" % n, "p"), os.path.join(d, "py%d" % n, "p")
        tool.ok(["convert", inp, "-o", cli_prefix, "--to", to, "--shards", "2"] + cli_args)
        report = shardtool.convert([inp], py_prefix, to=to, shards=2, **kw)
        for i in range(2):
            name = "-%05d-of-00002.%s" % (i, ext)
            check(same_bytes(cli_prefix + name, py_prefix + name), "convert(%r): shard %d is the command line's" %
                  (kw, i))
        check(options(cli_prefix + ".manifest.json") == options(report["manifest"]),
              "convert(%r): the manifest's options are the command line's" % (kw,))
    # The keys, members and times as Python's tarfile reads them.
    keys, members, times = set(), set(), set()
    for i in range(2):
        with tarfile.open(os.path.join(d, "py0", "p-%05d-of-00002.tar" % i)) as t:
            for m in t.getmembers():
                keys.add(m.name.split(".", 1)[0])
                members.add(m.name.split(".", 1)[1])
                times.add(m.mtime)
    check(keys == {"key%02d" % i for i in range(17)} and members == {"json"} and times == {1234567890},
          "key='k', wds_member='json', mtime: tarfile reads %r %r %r" % (sorted(keys)[:2], members, times))
    _, skipped, _, records = options(os.path.join(d, "py2", "p.manifest.json"))
    check(sum(records) == 4 and skipped and skipped["count"] == 1 and skipped["listed"][0]["index"] == 2,
          "skip_corrupt: record 2 left out and listed: %r %r" % (records, skipped))

    # A split of a TFDS directory (records 2 has a good image here: two epochs of the same one).
    clean = os.path.join(d, "clean.tfrecord")
    with open(clean, "wb") as f:
        for i in range(4):
            ex = pb2.Example()
            ex.features.feature["image"].bytes_list.value.append(good)
            ex.features.feature["label"].int64_list.value.append(i % 2)
            f.write(example_shards.frame(ex.SerializeToString()))
    cli_root, py_root = os.path.join(d, "tfds-cli"), os.path.join(d, "tfds-py")
    tool.ok(["convert", clean, "--tfds", cli_root, "--name", "pets", "--split", "train", "--image", "image",
             "--label", "label=" + names, "--to", "arrayrecord"])
    report = shardtool.convert([clean], tfds=py_root, name="pets", split="train", image=["image"],
                               label={"label": names}, to="arrayrecord")
    cli_dir, py_dir = os.path.join(cli_root, "pets", "1.0.0"), os.path.join(py_root, "pets", "1.0.0")
    listed = sorted(os.listdir(cli_dir))
    check(report["manifest"] == os.path.join(py_dir, "pets-train.manifest.json") and
          listed == sorted(os.listdir(py_dir)) and "features.json" in listed and "label.labels.txt" in listed,
          "tfds=: the files of the command line's: %r %r" % (listed, report))
    for name in listed:
        if name.endswith(".manifest.json"):
            check(options(os.path.join(cli_dir, name)) == options(os.path.join(py_dir, name)),
                  "tfds=: the manifest's options and tfds member are the command line's")
        else:
            check(same_bytes(os.path.join(cli_dir, name), os.path.join(py_dir, name)),
                  "tfds=: %s is the command line's" % name)
    with open(os.path.join(py_dir, "dataset_info.json")) as f:
        info = json.load(f)
    check(info.get("fileFormat") == "array_record" and info["splits"][0]["name"] == "train",
          "tfds=: dataset_info.json: %r" % info)

    # Bad values: the command line's words.
    bad = (
        (["--key", "k"], {"key": "k"}),
        (["--to", "webdataset", "--mtime", "8589934592"], {"to": "webdataset", "mtime": 8589934592}),
        (["--to", "arrayrecord", "--arrayrecord-codec", "brotli", "--compression-level", "12"],
         {"to": "arrayrecord", "arrayrecord_codec": "brotli", "compression_level": 12}),
        (["--arrayrecord-group-size", "7"], {"arrayrecord_group_size": 7}),
        (["--skip-corrupt"], {"skip_corrupt": True}),
        (["--name", "pets"], {"name": "pets"}),
        (["--tfds", os.path.join(d, "bad"), "--name", "pets", "--split", "a-b"],
         {"tfds": os.path.join(d, "bad"), "name": "pets", "split": "a-b", "output": None}),
        (["--tfds", os.path.join(d, "bad"), "--name", "pets", "--split", "train", "--label", "label=3",
          "--image", "label"],
         {"tfds": os.path.join(d, "bad"), "name": "pets", "split": "train", "label": ["label=3"],
          "image": "label", "output": None}),
    )
    for n, (cli_args, kw) in enumerate(bad):
        prefix = os.path.join(d, "bad%d" % n, "p")
        with_prefix = "output" not in kw
        cli = tool.run(["convert", clean] + (["-o", prefix] if with_prefix else []) + cli_args)
        lines = cli.stderr.decode().splitlines()
        want = lines[0][len("shardtool convert: "):] if lines else None
        kw = dict(kw)
        output = kw.pop("output", prefix)
        try:
            shardtool.convert([clean], output, **kw)
            check(False, "convert(%r) is refused" % kw)
        except shardtool.Error as e:
            check(cli.returncode == 2 and e.code_name == "EUSAGE" and str(e) == want,
                  "convert(%r): %r, the command line's %r" % (kw, str(e), want))
    for kw in ({"mtime": -1}, {"arrayrecord_group_size": 0}, {"check_payloads": "pixels"}, {"max_pixels": 0}):
        try:
            shardtool.convert([clean], os.path.join(d, "bad-py", "p"), **kw)
            check(False, "convert(%r) raises ValueError" % kw)
        except ValueError:
            pass


def splits(tmp):
    """shardtool.split against `shardtool split`: into the same prefix (an
    Avro shard's sync marker comes from its name), the command's output
    moved aside first, every file byte for byte the command's."""
    tfx = os.path.join(DATA, "tfrecord", "tfx", "external", "tfrecord")
    avro_copy = os.path.join(tmp, "split-in", "weather-again.avro")
    os.makedirs(os.path.dirname(avro_copy))
    shutil.copyfile(os.path.join(DATA, "avro", "weather.avro"), avro_copy)
    kinds = (("tfrecord", sorted(os.path.join(tfx, f) for f in os.listdir(tfx) if f.endswith(".gz")), 3),
             ("avro", [os.path.join(DATA, "avro", "weather.avro"), avro_copy], 2),
             ("webdataset", [os.path.join(DATA, "webdataset", "tendata.tar")], 2))
    for kind, inputs, shards in kinds:
        base = os.path.join(tmp, "split-" + kind)
        prefix = os.path.join(base, "out", "part")
        tool.ok(["split"] + inputs + ["-o", prefix, "--shards", str(shards)])
        os.rename(os.path.join(base, "out"), os.path.join(base, "cli"))
        seen = []
        report = shardtool.split(inputs, prefix, shards=shards, progress=seen.append)
        names = sorted(os.listdir(os.path.join(base, "cli")))
        check(names == sorted(os.listdir(os.path.join(base, "out"))) and len(names) == shards + 1,
              "split %s: the same files" % kind)
        for name in names:
            check(same_bytes(os.path.join(base, "cli", name), os.path.join(base, "out", name)),
                  "split %s: %s is the command line's" % (kind, name))
        with open(report["manifest"]) as f:
            m = json.load(f)
        check(report["format"] == kind and report["manifest"] == prefix + ".manifest.json", "report %r" % report)
        check(report["records"] == sum(s["records"] for s in m["shards"]) > 0 and
              report["shards"] == len(m["shards"]) == shards, "the report's counts are the manifest's: %r" % report)
        records = [p["records"] for p in seen]
        check(records and records == sorted(records) and records[-1] == report["records"],
              "split %s progress calls: %r" % (kind, records[-5:]))
        try:
            shardtool.split(inputs, prefix, shards=shards)
            check(False, "split %s: an existing set is refused" % kind)
        except shardtool.Error as e:
            cli = tool.run(["split"] + inputs + ["-o", prefix, "--shards", str(shards)])
            want = cli.stderr.decode().splitlines()[0][len("shardtool split: "):]
            check(e.code_name == "EUSAGE" and str(e) == want, "split %s, an existing set: %r vs %r" % (kind, str(e), want))
        check(shardtool.split(inputs, prefix, shards=shards, force=True)["records"] == report["records"],
              "split %s: force=True replaces the set" % kind)
    mix = [os.path.join(DATA, "avro", "weather.avro"), os.path.join(DATA, "tfrecord", "sequence", "events.tfrecord")]
    try:
        shardtool.split(mix, os.path.join(tmp, "split-mix", "p"))
        check(False, "split of a mix raises")
    except shardtool.Error as e:
        cli = tool.run(["split"] + mix + ["-o", os.path.join(tmp, "split-mix", "p")])
        want = cli.stderr.decode().splitlines()[0][len("shardtool split: "):]
        check(e.code_name == "EUSAGE" and str(e) == want, "split of a mix: %r vs %r" % (str(e), want))
    stopped = os.path.join(tmp, "split-stopped")

    def stop(p):
        raise KeyboardInterrupt

    try:
        shardtool.split(kinds[0][1], os.path.join(stopped, "p"), shards=2, progress=stop)
        check(False, "split: an exception in progress is raised again")
    except KeyboardInterrupt:
        pass
    check(not os.path.exists(stopped) or not os.listdir(stopped),
          "a stopped split leaves nothing: %r" % (os.listdir(stopped) if os.path.exists(stopped) else None))


def main():
    tmp = tempfile.mkdtemp(prefix="st-python-")
    try:
        check(shardtool.version() == tool.ok(["version"]).decode().split()[1],
              "shardtool.version() is the command line's")
        pb2 = ps.example_pb2(tmp)
        formats_match(tmp, pb2)
        _, sets = make_shards(tmp)
        dataloader_epochs(sets)
        decoded_batches(sets)
        offsets_layout(tmp, sets, pb2)
        shared_slots(tmp, sets)
        batch_column_order(tmp, pb2)
        batch_wire_forms(tmp, pb2)
        ranks(sets)
        distributed_ranks(sets)
        damage(tmp, sets)
        manifests(tmp, sets)
        misuse(tmp)
        converts(tmp)
        converts_format_options(tmp, pb2)
        splits(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ps.finish("python-module")


if __name__ == "__main__":
    sys.exit(main())
