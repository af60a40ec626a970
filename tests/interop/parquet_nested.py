#!/usr/bin/python3
"""Nested Parquet (lists of lists, maps, lists of structs, structs of lists)
converted by shardtool, checked element by element against DuckDB's own read.

    parquet_nested.py SHARDTOOL SOURCE_ROOT NODE

DuckDB (tests/interop/node_modules, driven by parquet_nested_duckdb.mjs)
writes Parquet files with LIST of LIST, MAP of scalars, MAP of lists, LIST
of STRUCT, STRUCT of LIST, LIST of MAP, three-deep lists, nulls at every
level and empty lists; `shardtool convert` turns them into TFRecords, which
python3-protobuf parses with TensorFlow's example.proto (Example and
SequenceExample, formats/example/example.proto).  DuckDB's rows are reshaped
here by the rules of man/shardtool-convert.1 (NESTED DATA, Parquet nesting)
and must equal ours: kinds, values (floats as float32), FeatureList steps,
steps with no kind for null inner lists, the row lengths of depth-3 lists,
and the note counting null elements.  The corpus's nested files are checked
the same way.  Exits 77 when DuckDB or python3-protobuf is missing.
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

try:
    import google.protobuf  # noqa: F401
except ImportError:
    print("python3-protobuf is not installed: skipped")
    sys.exit(77)

SHARDTOOL, SOURCE, NODE = (os.path.abspath(a) if i < 2 else a for i, a in enumerate(sys.argv[1:4]))
if not shutil.which(NODE):
    print("node is not installed: skipped")
    sys.exit(77)
HELPER = os.path.join(SOURCE, "tests", "interop", "parquet_nested_duckdb.mjs")
CORPUS = os.path.join(SOURCE, "tests", "data", "parquet")
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)
    return cond


def duck(*args):
    r = subprocess.run([NODE, HELPER, *args], capture_output=True, text=True)
    if r.returncode == 77:
        print(r.stdout.strip())
        sys.exit(77)
    if r.returncode:
        raise RuntimeError(f"DuckDB helper {args[0]}: {r.stderr.strip()}")
    return r.stdout


def read_tfrecords(path):
    data, out, at = open(path, "rb").read(), [], 0
    while at < len(data):
        (length,) = struct.unpack("<Q", data[at:at + 8])
        out.append(data[at + 12:at + 12 + length])
        at += 16 + length
    return out


def load_proto(tmp):
    subprocess.run(["protoc", "--proto_path=" + os.path.join(SOURCE, "formats", "example"),
                    "--python_out=" + tmp, "example.proto"], check=True)
    sys.path.insert(0, tmp)
    import example_pb2
    return example_pb2


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def feature_value(feat):
    kind = feat.WhichOneof("kind")
    if kind == "int64_list":
        return ("int64", list(feat.int64_list.value))
    if kind == "float_list":
        return ("float", [f32(v) for v in feat.float_list.value])
    if kind == "bytes_list":
        return ("bytes", [v.decode() for v in feat.bytes_list.value])
    return ("none", [])


def ours(pb2, payload, sequence):
    """One record as ({context name: (kind, values)}, {list name: [steps]})."""
    if not sequence:
        ex = pb2.Example()
        ex.ParseFromString(payload)
        return {n: feature_value(f) for n, f in ex.features.feature.items()}, {}
    se = pb2.SequenceExample()
    se.ParseFromString(payload)
    ctx = {n: feature_value(f) for n, f in se.context.feature.items()}
    lists = {n: [feature_value(f) for f in fl.feature] for n, fl in se.feature_lists.feature_list.items()}
    return ctx, lists


# ---- DuckDB's rows reshaped by the nesting rules --------------------------------------------

KIND = {"int": "int64", "bool": "int64", "float": "float", "bytes": "bytes"}


def scalar(v, t):
    if t["t"] == "bool":
        return int(v)
    if t["t"] == "int":
        return int(v)
    if t["t"] == "float":
        return f32(float(v))
    return v


def walk(v, t, by_key):
    """{suffix: (kind, depth, tree)}: the leaves under a value of type t,
    each a nested list (one level per list or map) with None for nulls."""
    if t["t"] == "struct":
        out = {}
        for name, ft in t["fields"]:
            for s, leaf in walk(None if v is None else v.get(name), ft, by_key).items():
                out["." + name + s] = leaf
        return out
    if t["t"] == "map" and by_key:
        out = {}
        for entry in v or []:
            for s, leaf in walk(entry["value"], t["value"], by_key).items():
                out["." + str(entry["key"]) + s] = leaf
        return out
    if t["t"] in ("list", "map"):
        if t["t"] == "map":
            elem = {"t": "struct", "fields": [["key", t["key"]], ["value", t["value"]]]}
            items = None if v is None else [{"key": e["key"], "value": e["value"]} for e in v]
        else:
            elem, items = t["of"], v
        shape = walk(None, elem, by_key)
        out = {}
        for s, (kind, depth, _) in shape.items():
            trees = None if items is None else [walk(e, elem, by_key)[s][2] for e in items]
            out[s] = (kind, depth + 1, trees)
        return out
    return {"": (KIND[t["t"]], 0, None if v is None else scalar(v, t))}


def expected(names, types, row, by_key=False):
    ctx, lists, nulls = {}, {}, {}

    def present(xs, name):
        kept = [x for x in xs if x is not None]
        if len(kept) != len(xs):
            nulls[name] = nulls.get(name, 0) + len(xs) - len(kept)
        return kept

    for col in names:
        for s, (kind, depth, tree) in walk(row[col], types[col], by_key).items():
            name = col + s
            if tree is None:
                continue  # null here or above: absent
            if depth == 0:
                ctx[name] = (kind, [tree])
            elif depth == 1:
                ctx[name] = (kind, present(tree, name))
            elif depth == 2:
                lists[name] = [("none", []) if inner is None else (kind, present(inner, name)) for inner in tree]
            else:
                steps, lengths = [], []
                for mid in tree:
                    if mid is None:
                        steps.append(("none", []))
                        lengths.append(("none", []))
                        continue
                    vals, lens = [], []
                    for inner in mid:
                        if inner is None:
                            nulls[name] = nulls.get(name, 0) + 1
                            lens.append(0)
                        else:
                            kept = present(inner, name)
                            vals += kept
                            lens.append(len(kept))
                    steps.append((kind, vals))
                    lengths.append(("int64", lens))
                lists[name] = steps
                lists[name + ".row_lengths"] = lengths
    return ctx, lists, nulls


def same(a, b):
    if a[0] != b[0] or len(a[1]) != len(b[1]):
        return False
    if a[0] == "float":
        return all(x == y or (x != x and y != y) for x, y in zip(a[1], b[1]))
    return a[1] == b[1]


def compare(label, pb2, ours_path, duck_json, sequence, by_key=False, extra=""):
    d = json.loads(duck_json)
    records = []
    for shard in sorted(glob.glob(ours_path + "-*.tfrecord")):
        records += read_tfrecords(shard)
    if not check(len(records) == len(d["rows"]), f"{label}: {len(records)} records, DuckDB {len(d['rows'])} rows"):
        return {}
    bad, nulls = 0, {}
    for i, (payload, row) in enumerate(zip(records, d["rows"])):
        ctx, lists, n = expected(d["names"], d["types"], row, by_key)
        for k, v in n.items():
            nulls[k] = nulls.get(k, 0) + v
        octx, olists = ours(pb2, payload, sequence)
        for what, a, b in (("context", octx, ctx), ("feature_lists", olists, lists)):
            if set(a) != set(b):
                bad += 1
                print(f"  {label} row {i} {what}: ours {sorted(a)} DuckDB {sorted(b)}")
                continue
            for k in a:
                ok = same(a[k], b[k]) if what == "context" else (
                    len(a[k]) == len(b[k]) and all(same(x, y) for x, y in zip(a[k], b[k])))
                if not ok:
                    bad += 1
                    print(f"  {label} row {i} {what} '{k}': ours {a[k]} DuckDB {b[k]}")
    check(bad == 0, f"{label}: every value equals DuckDB's{extra}")
    return nulls


def convert(src, out, *opts):
    return subprocess.run([SHARDTOOL, "convert", "--force", *opts, src, "-o", out], capture_output=True, text=True)


def null_notes(stderr):
    out = {}
    for line in stderr.splitlines():
        if "null value" in line and "note: column '" in line:
            name = line.split("note: column '")[1].split("'")[0]
            out[name] = int(line.split("': ")[1].split(" ")[0])
    return out


TABLE = """
SELECT id, lol::INTEGER[][] AS lol, sl::VARCHAR[][] AS sl, fl::DOUBLE[][] AS fl,
       m::MAP(VARCHAR, INTEGER) AS m, ml::MAP(VARCHAR, BIGINT[]) AS ml,
       los::STRUCT(p INTEGER, q VARCHAR)[] AS los, sol::STRUCT(s DOUBLE[], t VARCHAR) AS sol,
       lm::MAP(VARCHAR, INTEGER)[] AS lm, lll::INTEGER[][][] AS lll
FROM (VALUES
  (1, [[1,2],[3]], [['a','b'],[]], [[1.5],[2.25,NULL]], MAP {'a': 1, 'b': 2}, MAP {'x': [1,2], 'y': []},
      [{'p': 1, 'q': 'u'}, NULL, {'p': NULL, 'q': 'v'}], {'s': [1.5, NULL], 't': 'w'},
      [MAP {'k': 1}, MAP {}, NULL], [[[1],[2,3]],[NULL,[]],NULL,[]]),
  (2, [[], NULL, [NULL, 4]], [NULL, ['c']], NULL, MAP {'c': NULL}, MAP {'z': NULL},
      [], {'s': NULL, 't': NULL}, [], [NULL, [], [[NULL, 5]]]),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, [], [], [], MAP {}, MAP {}, [NULL], {'s': [], 't': 'x'}, [NULL], []),
  (5, [NULL], [[NULL]], [[]], MAP {'d': 4}, MAP {'q': [NULL, 7]}, [{'p': 2, 'q': NULL}], NULL,
      [MAP {'k': NULL, 'j': 3}], [[[]]])
) t(id, lol, sl, fl, m, ml, los, sol, lm, lll)
"""

# Many rows in several row groups (1000 rows each): units cut inside lists.
BIG = """
SELECT i::BIGINT AS id,
  CASE WHEN i % 7 = 0 THEN NULL ELSE list_transform(range(i % 5),
    x -> CASE WHEN x % 3 = 2 THEN NULL ELSE list_transform(range(x), y -> CASE WHEN (i + y) % 11 = 0 THEN NULL ELSE i * y END) END) END AS lol,
  CASE WHEN i % 13 = 0 THEN NULL ELSE map_from_entries(list_transform(range(i % 4),
    x -> {'k': 'k' || x, 'v': CASE WHEN (x + i) % 5 = 1 THEN NULL ELSE range(x) END})) END AS ml
FROM range(3500) t(i)
"""

# One row group of 12000 rows, every column chunk one page (DuckDB writes
# lists of lists so): dictionary and PLAIN values, nulls at every level, v1
# and v2 pages.  parquet_duckdb.js reads the same shape split into units
# that start inside the pages and checks it gives these rows.
ONE_PAGE = """
SELECT i AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE i * 3 END AS n,
  CASE WHEN i % 5 = 0 THEN NULL ELSE 'c' || (i % 13) END AS s, 'u' || i AS su,
  CASE WHEN i % 11 = 0 THEN NULL ELSE [CASE WHEN o % 4 = 3 THEN NULL ELSE
    [CASE WHEN (i + k) % 9 = 0 THEN NULL ELSE (i * o + k) % 1000 END FOR k IN range((i + o) % 6)] END
    FOR o IN range(i % 9)] END::INTEGER[][] AS lol,
  [[i * 100003 + o * 17 + k FOR k IN range((i + o) % 5)] FOR o IN range(i % 4)]::BIGINT[][] AS lolu,
  CASE WHEN i % 4 = 0 THEN NULL ELSE ['v' || ((i + k) % 50) FOR k IN range(i % 7)] END AS ls,
  [['w' || (i * 7 + k) FOR k IN range(i % 3)] FOR o IN range(i % 2)] AS slu
FROM range(12000) t(i)
"""

BY_KEY = """
SELECT MAP {'a': 1, 'b': 2} AS m, MAP {'x': [1, 2]} AS ml, 7 AS n
UNION ALL SELECT MAP {'a': 3}, MAP {'x': [], 'y': [NULL, 4]}, 8
UNION ALL SELECT NULL, NULL, 9
"""


def main():
    tmp = tempfile.mkdtemp(prefix="parquet-nested-")
    pb2 = load_proto(tmp)

    # 1. files DuckDB writes
    cases = [("table", TABLE, True, [], None), ("big", BIG, True, ["--records-per-shard", "500"], None)]
    cases += [("one page " + v, ONE_PAGE, True, [], "COMPRESSION snappy, ROW_GROUP_SIZE 100000, PARQUET_VERSION " + v)
              for v in ("V1", "V2")]
    for name, sql, sequence, opts, copy_options in cases:
        src = os.path.join(tmp, name.replace(" ", "_") + ".parquet")
        duck("write", src, sql, *([copy_options] if copy_options else []))
        out = os.path.join(tmp, name.replace(" ", "_"))
        r = convert(src, out, *opts)
        if not check(r.returncode == 0, f"{name}: converts ({r.stderr.strip()[-300:]})"):
            continue
        want = compare(name, pb2, out, duck("read", src), sequence)
        check(null_notes(r.stderr) == want, f"{name}: null notes {null_notes(r.stderr)} == {want}")
        check("empty in every row" not in r.stderr, f"{name}: no column called empty")
        if name == "table":
            # refused as plain Examples with --nested refuse
            r = convert(src, out + "-refused", "--nested", "refuse")
            check(r.returncode != 0 and "--nested sequence" in r.stderr and "--exclude" in r.stderr,
                  f"--nested refuse names the way out: {r.stderr.strip()[-200:]}")
            # and what is left once they are excluded is plain Examples
            r = convert(src, out + "-flat", "--nested", "refuse", "--exclude", "lol,sl,fl,ml,lm,lll")
            if check(r.returncode == 0, f"flat part converts with --nested refuse ({r.stderr.strip()[-200:]})"):
                d = json.loads(duck("read", src))
                keep = [n for n in d["names"] if n not in ("lol", "sl", "fl", "ml", "lm", "lll")]
                d["names"] = keep
                compare("table without nested columns", pb2, out + "-flat", json.dumps(d), False)

    # --maps by-key: col.<key>
    src = os.path.join(tmp, "bykey.parquet")
    duck("write", src, BY_KEY)
    r = convert(src, os.path.join(tmp, "bykey"), "--maps", "by-key")
    if check(r.returncode == 0, f"by-key converts ({r.stderr.strip()[-200:]})"):
        compare("by-key", pb2, os.path.join(tmp, "bykey"), duck("read", src), False, by_key=True)

    # depth 4: an error naming the column and --exclude
    src = os.path.join(tmp, "deep.parquet")
    duck("write", src, "SELECT [[[[1]]]]::INTEGER[][][][] AS deep, 1 AS n")
    r = convert(src, os.path.join(tmp, "deep"))
    check(r.returncode == 1 and "'deep" in r.stderr and "--exclude deep" in r.stderr,
          f"depth 4 refused: {r.stderr.strip()[-200:]}")

    # --strict-float names the record whose FeatureList holds the changed value
    src = os.path.join(tmp, "strict.parquet")
    duck("write", src, "SELECT i, CASE WHEN i = 3 THEN [[1.5], [16777217.0]]::DOUBLE[][] "
                       "ELSE [[1.5]]::DOUBLE[][] END AS d FROM range(5) t(i)")
    r = convert(src, os.path.join(tmp, "strict"), "--strict-float")
    check(r.returncode == 1 and "record 3, column 'd': 16777217 becomes 16777216" in r.stderr,
          f"--strict-float in a FeatureList: {r.stderr.strip()[-200:]}")

    # one page holding more than 2^24 entries (DuckDB writes a whole row
    # group's list of lists as one page): read, counted right
    src = os.path.join(tmp, "bigpage.parquet")
    duck("write", src, "SELECT [[k % 2 = 0 FOR k IN range(4)] FOR o IN range(4500000)] AS b")
    r = convert(src, os.path.join(tmp, "bigpage"))
    if check(r.returncode == 0, f"a page of 18M entries converts ({r.stderr.strip()[-200:]})"):
        r = subprocess.run([SHARDTOOL, "stat", "--json"] + glob.glob(os.path.join(tmp, "bigpage-*.tfrecord")),
                           capture_output=True, text=True)
        feats = json.loads(r.stdout)["files"][0]["features"] if r.returncode == 0 else []
        steps = [f.get("steps", {}).get("total") for f in feats if f.get("feature_list")]
        check(steps == [4500000], f"a page of 18M entries: 4.5M steps, got {steps}")

    # 2. the corpus's nested files
    for name in ["incorrect_map_schema", "nested_maps.snappy", "nested_lists.snappy", "nonnullable.impala",
                 "nullable.impala", "old_list_structure"]:
        src = os.path.join(CORPUS, name + ".parquet")
        out = os.path.join(tmp, "corpus-" + name)
        r = convert(src, out)
        if not check(r.returncode == 0, f"{name}: converts without --exclude ({r.stderr.strip()[-200:]})"):
            continue
        d = json.loads(duck("read", src))
        sequence = expected_sequence(d)
        want = compare(name, pb2, out, json.dumps(d), sequence)
        check(null_notes(r.stderr) == want, f"{name}: null notes {null_notes(r.stderr)} == {want}")
    # DuckDB cannot read this one (a MAP without values): ours is checked by hand
    out = os.path.join(tmp, "corpus-map_no_value")
    r = convert(os.path.join(CORPUS, "map_no_value.parquet"), out)
    if check(r.returncode == 0, f"map_no_value: converts ({r.stderr.strip()[-200:]})"):
        recs = [ours(pb2, p, False)[0] for p in read_tfrecords(glob.glob(out + "-*.tfrecord")[0])]
        keys = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
        check(recs == [{"my_map.key": ("int64", k), "my_map.value": ("int64", []), "my_map_no_v.key": ("int64", k),
                        "my_list": ("int64", k)} for k in keys], f"map_no_value: {recs}")
        check("column 'my_map.value': 9 null values skipped" in r.stderr, "map_no_value: note on the null values")
    # 2 GiB of keys behind 4 KiB: refused by the page size limit, nothing allocated
    r = convert(os.path.join(CORPUS, "large_string_map.brotli.parquet"), os.path.join(tmp, "bomb"))
    check(r.returncode == 1 and "larger than the limit" in r.stderr, f"large_string_map: {r.stderr.strip()[-200:]}")

    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


def expected_sequence(d):
    def depth(t):
        if t["t"] in ("list", "map"):
            inner = [t["of"]] if t["t"] == "list" else [t["key"], t["value"]]
            return 1 + max(depth(x) for x in inner)
        if t["t"] == "struct":
            return max(depth(ft) for _, ft in t["fields"])
        return 0
    return any(depth(t) >= 2 for t in d["types"].values())


if __name__ == "__main__":
    sys.exit(main())
