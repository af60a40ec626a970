#!/usr/bin/env python3
"""Damaged Parquet pages read with row groups split into units.

Usage: test_parquet_damage.py SHARDTOOL PARQUET_DUMP [NAME_SUBSTRING...]

A row group cut into several units is read through one checkpoint scan
per column chunk (formats/parquet/checkpoint.c) and decompressed pages
kept once per row group (chunk_cache.c).  The inputs here are small
Parquet files that shardtool writes itself (uncompressed and snappy,
data pages v1 and v2, a dictionary, optional and list columns) and three
DuckDB wrote (tests/fuzz/corpus/parquet_nested/one_page_*: one page per
chunk, lists of lists, no page CRC; marked_pages: snappy pages over 128
KiB that units decompress in pieces), damaged page by page with
tests/support/parquet_pages.py: sizes and counts near 2^31 or negative,
unknown page types, truncated pages, level streams whose length or runs
claim billions of entries, a footer claiming billions of values, and a
sweep of bit flips over a page's first bytes (with and without the page
CRC made to match).

Each is read under an address-space limit (RLIMIT_AS, what `ulimit -v`
sets; left out for sanitizer builds) and a time limit, by

  - parquet_dump with tiny units (--unit-rows), the units sharing the
    chunks and with --share-max 0 (each unit reads its own pages) on
    three threads, and as one unit per row group;
  - shardtool cat and convert --jobs 2 on a file whose row group the
    reader's own limits cut into units (200,000 rows).

Damage must end the run with exit status 1 and a message (naming the file,
for shardtool), never a crash, a hang, "out of memory" or exit 0; a flip
that the page CRC does not catch may read (nothing can tell it), but
never crash.  The undamaged files read under the same limits must give
the same records in every way of reading.
Prints one line per case and "N passed, M failed".
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import parquet_pages as pp  # noqa: E402
import run_hostile  # noqa: E402
import thrift_compact as tc  # noqa: E402

# A correct reader of these files needs far less: a unit holds at most
# 24 MiB of decoded rows, a page at most 256 MiB (--max-record-size), and
# a claim above that is refused before anything is allocated.
MEMORY_LIMIT = 768 << 20
TIMEOUT = 30
BIG = (1 << 31) - 1
# Snappy pages of more than 64 KiB are read in pieces by the units:
# segments decompressed once and shared (the default below 8 MiB), or each
# unit decompressing its own (--mark-always 0); either way through a
# mapping that faults on any byte the unit did not ask for
# (--sparse-map-min 0).  Row groups as small as these keep such pages
# whole by default; --whole-max 0 has them read in pieces.
DUMP_WAYS = [["--unit-rows", "300"],
             ["--unit-rows", "300", "--share-max", "0", "--jobs", "3", "--mark-always", "0", "--sparse-map-min", "0",
              "--whole-max", "0"],
             ["--unit-rows", "300", "--jobs", "2", "--sparse-map-min", "0", "--whole-max", "0"],
             []]
# DuckDB's files of the fuzz corpus (tests/fuzz/corpus/parquet_nested): one
# data page per column chunk, no page CRC; marked_pages' pages of strings
# and of a list of lists are over 128 KiB.
DUCKDB_ROWS = {"one_page_V1": 400, "one_page_V2": 400, "marked_pages": 3000}
DUCKDB = list(DUCKDB_ROWS)


def ways_for(fname):
    if fname in DUCKDB:  # units of 37 rows start inside the one page
        return [[a.replace("300", "37") for a in w] for w in DUMP_WAYS]
    return DUMP_WAYS
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)
    return cond


def small_rows():
    """4000 rows: an optional int, a list with empty and missing lists, text."""
    out = []
    for i in range(4000):
        rec = {"id": i, "tags": [(i * 7 + k) % 100 for k in range(i % 5)], "name": "n%d" % (i * 7919 % 100003)}
        if i % 3:
            rec["opt"] = i % 11
        if i % 13 == 5:
            del rec["tags"]  # a null list (row 0 has every column but opt: their order)
        out.append(json.dumps(rec))
    return "\n".join(out) + "\n"


def big_rows(n):
    """n rows of small dictionary-encoded values: a little over 1 MiB of
    Parquet that the reader's own limits cut into units."""
    out = []
    for i in range(n):
        tags = ",".join(str((i + k) % 7) for k in range(i % 3))
        out.append('{"id":%d,"tags":[%s]%s}' % (i % 50, tags, ',"opt":%d' % (i % 11) if i % 3 else ""))
    return "\n".join(out) + "\n"


class Inputs:
    def __init__(self, st, tmp):
        self.st, self.tmp = st, tmp
        self.files = {}

    def make(self, name, text_fn, *opts):
        src = os.path.join(self.tmp, name + ".jsonl")
        with open(src, "w") as f:
            f.write(text_fn())
        out = os.path.join(self.tmp, "made", name)
        r = subprocess.run([self.st, "convert", src, "-o", out, "--to", "parquet", "--no-manifest", "-q", *opts],
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit("cannot write %s: %s" % (name, r.stderr))
        with open(out + "-00000-of-00001.parquet", "rb") as f:
            self.files[name] = f.read()
        return self.files[name]


def write(tmp, name, data):
    path = os.path.join(tmp, "bad", name + ".parquet")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def at(column, index, fn):
    """A mutation of page `index` of chunk `column` (row group 0)."""
    def m(page):
        if page.column == column and page.index == index:
            fn(page)
    return m


def header(fid, value, sub=None):
    return lambda p: p.set(fid, value, sub)


def body(fn):
    def m(p):
        p.body = fn(p.body)
    return m


def varint(n):
    out = bytearray()
    tc.put_varint(out, n)
    return bytes(out)


def v1_stream(fn, which=0):
    """A v1 page body with its `which`-th length-prefixed level stream
    (0: repetition levels when the column has them) replaced by fn(it)."""
    def f(b):
        pos = 0
        for _ in range(which):
            pos += 4 + struct.unpack_from("<I", b, pos)[0]
        n = struct.unpack_from("<I", b, pos)[0]
        s = fn(b[pos + 4:pos + 4 + n])
        return b[:pos] + struct.pack("<I", len(s)) + s + b[pos + 4 + n:]
    return f


def truncated_claiming_more(p):
    p.body = p.body[:len(p.body) // 2]
    p.keep_sizes = True


# (name, mutation).  Page 1 of chunk 1 is the first data page of `tags`
# (page 0 is its dictionary); page 0 of chunk 0 is `id`'s only page.
PAGE_DAMAGE = [
    ("uncompressed-size-2^31", at(1, 1, header(pp.PH_UNCOMPRESSED, BIG))),
    ("uncompressed-size-negative", at(1, 1, header(pp.PH_UNCOMPRESSED, -1))),
    ("compressed-size-2^31", at(1, 1, header(pp.PH_COMPRESSED, BIG))),
    ("compressed-size-negative", at(1, 1, header(pp.PH_COMPRESSED, -5))),
    ("page-type-unknown", at(1, 1, header(pp.PH_TYPE, 99))),
    ("page-type-index", at(1, 1, header(pp.PH_TYPE, 1))),
    ("dictionary-values-2^31", at(1, 0, header(1, BIG, pp.PH_DICTIONARY))),
    ("dictionary-size-2^31", at(1, 0, header(pp.PH_UNCOMPRESSED, BIG))),
    ("truncated-page", at(1, 1, body(lambda b: b[:len(b) // 2]))),
    ("truncated-page-claiming-more", at(1, 1, truncated_claiming_more)),
]
V1_DAMAGE = [
    ("num-values-2^31", at(1, 1, header(1, BIG, pp.PH_DATA_V1))),
    ("num-values-negative", at(1, 1, header(1, -1, pp.PH_DATA_V1))),
    ("num-values-0", at(1, 1, header(1, 0, pp.PH_DATA_V1))),
    ("id-num-values-plus-1", at(0, 0, header(1, 4001, pp.PH_DATA_V1))),
    ("id-num-values-minus-1", at(0, 0, header(1, 3999, pp.PH_DATA_V1))),
]
V2_DAMAGE = [
    ("v2-num-values-2^31", at(1, 1, header(1, BIG, pp.PH_DATA_V2))),
    # (counts the reader does not need: refused, or read as the file is)
    ("v2-num-rows-2^31 (ignorable)", at(1, 1, header(3, BIG, pp.PH_DATA_V2))),
    ("v2-num-nulls-2^31 (ignorable)", at(1, 1, header(2, BIG, pp.PH_DATA_V2))),
    ("v2-def-bytes-2^31", at(1, 1, header(5, BIG, pp.PH_DATA_V2))),
    ("v2-rep-bytes-2^31", at(1, 1, header(6, BIG, pp.PH_DATA_V2))),
    ("v2-rep-bytes-negative", at(1, 1, header(6, -1, pp.PH_DATA_V2))),
]
# Level streams of the uncompressed v1 file (CRC made to match).
LEVEL_DAMAGE = [
    ("rep-length-2^31", at(1, 1, body(lambda b: struct.pack("<I", BIG) + b[4:]))),
    ("def-length-2^31", at(1, 1, body(v1_stream(lambda s: s, 1)))),  # replaced below
    # a repetition-level run of 2^31 zeros: every value a row of its own,
    # twice the rows the row group has (read as its first 4000 rows and
    # exit 0 until the last unit checked for rows past the end)
    ("rep-run-2^31", at(1, 1, body(v1_stream(lambda s: varint(BIG << 1) + b"\0")))),
    ("rep-bitpacked-2^28-groups", at(1, 1, body(v1_stream(lambda s: varint(((1 << 28) << 1) | 1) + s)))),
    ("rep-empty", at(1, 1, body(v1_stream(lambda s: b"")))),
    ("def-empty", at(0, 0, body(v1_stream(lambda s: b"")))),
]


# DuckDB's files: `s` has a dictionary (page 0) and one data page (page 1)
# like ours; `lol`, a list of lists, is chunk 2, one page of 1332 values.
DUCKDB_DAMAGE = [
    ("lol-num-values-2^31", at(2, 0, header(1, BIG, pp.PH_DATA_V1))),
    ("lol-num-values-0", at(2, 0, header(1, 0, pp.PH_DATA_V1))),
    ("lol-num-values-plus-1", at(2, 0, header(1, 1333, pp.PH_DATA_V1))),
    ("lol-uncompressed-size-2^31", at(2, 0, header(pp.PH_UNCOMPRESSED, BIG))),
    ("lol-uncompressed-size-plus-1", at(2, 0, lambda p: p.set(pp.PH_UNCOMPRESSED, p.get(pp.PH_UNCOMPRESSED) + 1))),
    ("lol-truncated", at(2, 0, body(lambda b: b[:len(b) // 2]))),
]

# marked_pages: `lt` (chunk 1) is one PLAIN page of strings, `lol` (chunk 2)
# one page of a list of lists, both snappy and over 128 KiB, so the second
# and third ways read them in pieces (page_marks.h, shared_segments.h).
MARKED_DAMAGE = [
    ("lt-uncompressed-size-plus-1", at(1, 0, lambda p: p.set(pp.PH_UNCOMPRESSED, p.get(pp.PH_UNCOMPRESSED) + 1))),
    ("lt-uncompressed-size-2^31", at(1, 0, header(pp.PH_UNCOMPRESSED, BIG))),
    ("lt-truncated", at(1, 0, body(lambda b: b[:len(b) // 2]))),
    ("lt-truncated-claiming-more", at(1, 0, truncated_claiming_more)),
    ("lol-num-values-plus-1", at(2, 0, header(1, 52091, pp.PH_DATA_V1))),
    ("lol-num-values-2^31", at(2, 0, header(1, BIG, pp.PH_DATA_V1))),
    ("lol-truncated", at(2, 0, body(lambda b: b[:len(b) // 2]))),
]


def def_length_huge(b):
    rep = struct.unpack_from("<I", b, 0)[0]
    return b[:4 + rep] + struct.pack("<I", BIG) + b[8 + rep:]


LEVEL_DAMAGE[1] = ("def-length-2^31", at(1, 1, body(def_length_huge)))


def dump_run(ctx, path, way):
    rc, out, err, cpu = ctx.run(["--count", *way, path], timeout=TIMEOUT)
    return rc, out, err.decode(errors="replace"), cpu


def refused(rc, err, path=None):
    """Exit 1 with a message, not an allocation failure."""
    return rc == 1 and err.strip() and "out of memory" not in err and (path is None or path in err)


def describe(rc, err):
    return "exit %s: %s" % ("timeout" if rc is None else rc, err.strip()[-240:])


def test_clean(dump, tools, inputs, tmp, big_path):
    """The undamaged files read alike every way, under the limits."""
    for name, data in inputs.files.items():
        if name in ("big", "big-v2", "medium"):
            continue
        path = write(tmp, "clean-" + name, data)
        rc, whole, err, _ = dump.run(["--canonical", path], timeout=TIMEOUT)
        same = rc == 0 and whole.count(b"\n") == DUCKDB_ROWS.get(name, 4000)
        for way in ways_for(name)[:2]:
            r2, split, e2, _ = dump.run(["--canonical", *way, path], timeout=TIMEOUT)
            same = same and r2 == 0 and split == whole
        check(same, "%s: read whole and in units (shared and not), the same records" % name)
    for cmd in (["cat"], ["convert", "--jobs", "2", "-q", "-o", os.path.join(tmp, "clean-out", "x")]):
        rc, out, err, _ = tools.run(cmd + [big_path], timeout=TIMEOUT)
        ok = rc == 0 and (cmd[0] != "cat" or out.count(b"\n") == 200000)
        check(ok, "big file: %s under the limit (%s)" % (cmd[0], describe(rc, err.decode(errors="replace"))))


_clean = {}


def clean_records(dump, inputs, tmp, fname):
    if fname not in _clean:
        _clean[fname] = dump.run(["--canonical", write(tmp, "clean-" + fname, inputs.files[fname])],
                                 timeout=TIMEOUT)[1]
    return _clean[fname]


def test_page_damage(dump, tools, inputs, tmp, only):
    cases = []
    for fname in ("v1", "v2", "snappy-v1", "snappy-v2"):
        cases += [(fname, n, m) for n, m in PAGE_DAMAGE]
    cases += [("v1", n, m) for n, m in V1_DAMAGE + LEVEL_DAMAGE] + [("snappy-v1", n, m) for n, m in V1_DAMAGE]
    cases += [("v2", n, m) for n, m in V2_DAMAGE] + [("snappy-v2", n, m) for n, m in V2_DAMAGE]
    for fname in ("one_page_V1", "one_page_V2"):
        cases += [(fname, n, m) for n, m in PAGE_DAMAGE + V1_DAMAGE[:3] + DUCKDB_DAMAGE]
    cases += [("marked_pages", n, m) for n, m in MARKED_DAMAGE]
    for fname, name, mutate in cases:
        label = "%s %s" % (fname, name)
        if only and not any(o in label for o in only):
            continue
        path = write(tmp, "%s-%s" % (fname, name.split()[0]), pp.rewrite(inputs.files[fname], mutate))
        bad = []
        for way in ways_for(fname):
            rc, out, err, _ = dump.run(["--canonical", *way, path], timeout=TIMEOUT)
            err = err.decode(errors="replace")
            if "(ignorable)" in name and rc == 0 and out == clean_records(dump, inputs, tmp, fname):
                continue
            if not refused(rc, err):
                bad.append("parquet_dump %s: %s" % (" ".join(way) or "(one unit)", describe(rc, err)))
        check(not bad, "%s: refused every way (%s)" % (label, "; ".join(bad)[:600]))


def test_big_damage(tools, inputs, tmp, only):
    """shardtool itself on the file its own limits cut into units: the
    damage in a page in the middle of `tags` and in its last page."""
    data = inputs.files["big"]
    tag_pages = [p.index for p in pp.pages(data) if p.column == 1]
    mid, last = tag_pages[len(tag_pages) // 2], tag_pages[-1]
    cases = [("uncompressed-size-2^31", at(1, mid, header(pp.PH_UNCOMPRESSED, BIG))),
             ("compressed-size-2^31", at(1, mid, header(pp.PH_COMPRESSED, BIG))),
             ("num-values-2^31", at(1, mid, header(1, BIG, pp.PH_DATA_V1))),
             ("num-values-0", at(1, mid, header(1, 0, pp.PH_DATA_V1))),
             ("rep-run-2^31 in the last page", at(1, last, body(v1_stream(lambda s: varint(BIG << 1) + b"\0")))),
             ("truncated last page", at(1, last, body(lambda b: b[:len(b) // 2]))),
             ("rep-length-2^31", at(1, mid, body(lambda b: struct.pack("<I", BIG) + b[4:])))]
    v2 = inputs.files["big-v2"]
    v2_pages = [p.index for p in pp.pages(v2) if p.column == 1 and p.type == pp.DATA_PAGE_V2]
    v2_mid = v2_pages[len(v2_pages) // 2]
    cases += [("v2 num-rows-1 (or read as it is)", at(1, v2_mid, header(3, 1, pp.PH_DATA_V2))),
              ("v2 num-rows-2^31 (or read as it is)", at(1, v2_mid, header(3, BIG, pp.PH_DATA_V2)))]
    clean_cat = tools.run(["cat", write(tmp, "big-v2-clean", v2)], timeout=TIMEOUT)[1]
    split_seen = False
    for name, mutate in cases:
        if only and not any(o in "big " + name for o in only):
            continue
        path = write(tmp, "big-" + name.replace(" ", "-"), pp.rewrite(v2 if name.startswith("v2") else data, mutate))
        bad = []
        for cmd in (["cat"], ["convert", "--jobs", "2", "-q", "-f", "-o", os.path.join(tmp, "big-out", "x")]):
            rc, out, err, _ = tools.run(cmd + [path], timeout=TIMEOUT)
            err = err.decode(errors="replace")
            if name.startswith("v2") and rc == 0 and (cmd[0] != "cat" or out == clean_cat):
                continue
            if not refused(rc, err, path):
                bad.append("%s: %s" % (cmd[0], describe(rc, err)))
            # "rows N to 200000" with N > 0: the row group was cut into units.
            split_seen |= "to 200000:" in err and "rows 0 to 200000" not in err
        check(not bad, "big %s: cat and convert exit 1 naming the file (%s)" % (name, "; ".join(bad)[:600]))
    if not only:
        check(split_seen, "the big file's row group is read in several units (an error names rows N to 200000)")


def test_footer_claim(tools, inputs, tmp, only):
    """A footer claiming 2^62 values for `tags`: the reader cuts the row
    group into one-row units.  They must read the same rows, in time
    linear in the rows (the scan skipped from a window's start for each
    checkpoint, and each unit decoded a whole window of levels: minutes)."""
    if only and not any(o in "footer-claim" for o in only):
        return
    data = inputs.files["medium"]

    def claim(meta):
        tc.field(pp.column_meta(meta, 0, 1), pp.CM_NUM_VALUES)[2] = 1 << 62
    path = write(tmp, "footer-claim", pp.rewrite(data, footer_mutate=claim))
    clean = write(tmp, "footer-clean", data)
    start = time.monotonic()
    rc, out, err, cpu = tools.run(["cat", path], timeout=120)
    secs = time.monotonic() - start
    rc0, out0, _, _ = tools.run(["cat", clean], timeout=TIMEOUT)
    check(rc == 0 and rc0 == 0 and out == out0,
          "footer claiming 2^62 values: the same 60,000 records (%s)" % describe(rc, err.decode(errors="replace")))
    # Sanitized builds (unoptimized, instrumented) run several times slower.
    bound = 3 if not run_hostile.sanitized(tools.st) else 25
    check(cpu < bound, "footer claiming 2^62 values: 60,000 one-row units in %.1f s CPU, %.1f s wall "
                       "(bound %d s CPU; took 9 s before the scan and the units were made linear)" % (cpu, secs, bound))


def test_flips(dump, inputs, tmp, only):
    """Every bit of the first 24 bytes of `tags`' data page (its level
    streams) flipped, one at a time."""
    if only and not any(o in "flips" for o in only):
        return
    for fname, target in (("v1", (1, 1)), ("v2", (1, 1)), ("one_page_V1", (2, 0))):
        data = inputs.files[fname]
        crashes, unnoticed = [], []
        for byte in range(24):
            for bit in range(8):
                def flip(p, byte=byte, bit=bit):
                    b = bytearray(p.body)
                    b[byte] ^= 1 << bit
                    p.body = bytes(b)
                for fix_crc in (False, True):
                    path = write(tmp, "flip-%s-%d-%d-%d" % (fname, byte, bit, fix_crc),
                                 pp.rewrite(data, at(*target, flip), fix_crc=fix_crc))
                    way = ways_for(fname)[(byte + bit) % 2]
                    rc, _, err, _ = dump_run(dump, path, way)
                    if rc not in (0, 1) or (rc == 1 and not err.strip()) or "out of memory" in err:
                        crashes.append("%d.%d crc %s: %s" % (byte, bit, "fixed" if fix_crc else "stale",
                                                              describe(rc, err)))
                    elif not fix_crc and rc != 1 and fname not in DUCKDB:  # DuckDB writes no CRC
                        unnoticed.append("%d.%d" % (byte, bit))
                    os.unlink(path)
        check(not crashes, "%s: 192 bit flips in the level bytes, CRC fixed or not: exit 0 or 1, never a crash, "
                           "hang or allocation failure (%s)" % (fname, "; ".join(crashes[:3])))
        check(not unnoticed, "%s: every flip with a stale CRC is refused (%s)" % (fname, unnoticed[:10]))


def main():
    st, dump_exe = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    only = sys.argv[3:]
    limit = not run_hostile.sanitized(st)
    # Threads' malloc arenas each reserve 64 MiB of address space.
    os.environ["MALLOC_ARENA_MAX"] = "2"
    with tempfile.TemporaryDirectory() as tmp:
        inputs = Inputs(st, tmp)
        for name, opts in (("v1", ["--parquet-codec", "uncompressed"]),
                           ("v2", ["--parquet-codec", "uncompressed", "--page-version", "2"]),
                           ("snappy-v1", []), ("snappy-v2", ["--page-version", "2"])):
            inputs.make(name, small_rows, *opts)
        for name in DUCKDB:
            with open(os.path.join(HERE, "..", "fuzz", "corpus", "parquet_nested", name + ".parquet"), "rb") as f:
                inputs.files[name] = f.read()
        inputs.make("big", lambda: big_rows(200000), "--parquet-codec", "uncompressed")
        inputs.make("big-v2", lambda: big_rows(200000), "--parquet-codec", "uncompressed", "--page-version", "2")
        inputs.make("medium", lambda: big_rows(60000), "--parquet-codec", "uncompressed")
        big_path = write(tmp, "big", inputs.files["big"])
        dump = run_hostile.Ctx(dump_exe, tmp, limit, MEMORY_LIMIT)
        tools = run_hostile.Ctx(st, tmp, limit, MEMORY_LIMIT)
        if not only:
            test_clean(dump, tools, inputs, tmp, big_path)
        test_page_damage(dump, tools, inputs, tmp, only)
        test_big_damage(tools, inputs, tmp, only)
        test_footer_claim(tools, inputs, tmp, only)
        test_flips(dump, inputs, tmp, only)
    print("%d passed, %d failed%s" % (results["passed"], results["failed"],
                                      "" if limit else " (no memory limit: sanitizer build)"))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
