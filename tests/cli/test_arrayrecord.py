#!/usr/bin/env python3
"""ArrayRecord through the CLI, checked against readers that are not ours:

  - google/array_record's own test files (tests/data/arrayrecord) read record
    for record (bytes, count, order), verified, stat'ed, read by --at;
  - a Riegeli reader written here from the format's specification
    (tests/support/riegeli_files.py, its own HighwayHash) walks every file we
    write: block headers, chunk headers, both hashes, padding; the footer and
    postscript records are parsed by protobuf's decoder, from a .proto that
    follows upstream's field numbers, compiled by protoc at test time;
  - that writer, fed Google's record and footer, makes Google's file byte
    for byte, and fed ours, makes ours (codec none): same layout, block
    headers, padding chunks and postscript placement;
  - TFRecord -> ArrayRecord -> TFRecord gives the same bytes for every codec
    and group sizes 1 and 7;
  - sharding (--shards, --shard-size, --records-per-shard, --task + combine),
    split by whole chunks, cat --at, and the options' refusals;
  - verify of a file through its memory map and through read(2): the same
    report, intact, with bits flipped anywhere, and cut short.

Usage: test_arrayrecord.py SHARDTOOL SOURCE_ROOT  (Debian's python3: protobuf)
Prints "N passed, M failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ST = SRC = None
L = None  # the compiled layout protos
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def st(*args, data=None):
    return subprocess.run([ST] + [str(a) for a in args], capture_output=True, input=data)


def raw_records(blob):
    """cat --format raw's output: varint-length-prefixed payloads."""
    out, at = [], 0
    while at < len(blob):
        n, at = R.read_varint(blob, at)
        out.append(blob[at:at + n])
        at += n
    return out


def cat_raw(*paths):
    r = st("cat", "--format", "raw", *paths)
    return raw_records(r.stdout) if r.returncode == 0 else None


def footer_of(path):
    """(metadata, entries, postscripts, chunks) by the independent reader."""
    with open(path, "rb") as f:
        buf = f.read()
    chunks = R.read_chunks(buf)
    records_chunks = [c for c in chunks if c.type == ord("r")]
    footer, post = records_chunks[-2], records_chunks[-1]
    ps = [L.RiegeliPostscript.FromString(r) for r in R.simple_records(post)]
    meta = entries = None
    if footer.data[0] == 0:
        recs = R.simple_records(footer)
        meta = L.RiegeliFooterMetadata.FromString(recs[0])
        entries = [L.ArrayRecordFooter.FromString(r) for r in recs[1:]]
    return buf, chunks, footer, post, ps, meta, entries


def google_files(d):
    g = os.path.join(SRC, "tests", "data", "arrayrecord")
    a = os.path.join(g, "digits.array_record-00000-of-00002")
    b = os.path.join(g, "digits.array_record-00001-of-00002")
    check(cat_raw(a) == [b"0", b"1", b"2", b"3", b"4"] and cat_raw(b) == [b"5", b"6", b"7", b"8", b"9"],
          "Google's two digits shards read record for record: 5 one-byte records each, in order")
    check(cat_raw(a, b) == [str(i).encode() for i in range(10)], "both shards in a row: 0..9")
    r = st("verify", a, b)
    check(r.returncode == 0 and b"2 intact" in r.stdout, "verify passes Google's files (%s)" % r.stdout[-80:])
    r = st("verify", "--decode", a)
    check(r.returncode == 1 and b"not an Example" in r.stdout + r.stderr,
          "verify --decode says the digits are not Examples")
    r = st("stat", "--json", a)
    det = json.loads(r.stdout)["files"][0]["details"] if r.returncode == 0 else {}
    check(det.get("group_size") == 1 and det.get("data_chunks") == 5 and det.get("footer_offset") == 284 and
          det.get("postscript_offset") == 65536 and det.get("codec") == "none" and
          "group_size:1" in det.get("writer_options", ""),
          "stat shows the footer: group size 1, 5 chunks, footer at 284, postscript at 65536 (%s)" % det)
    outs = [st("cat", "--format", "raw", "--at", i, a).stdout for i in range(5)]
    check([raw_records(o) for o in outs] == [[str(i).encode()] for i in range(5)], "cat --at 0..4 of shard 0")
    r = st("cat", "--at", "5", a)
    check(r.returncode == 2 and b"holds 5 records" in r.stderr, "cat --at 5 past the end is refused (%s)" % r.stderr)
    with open(a, "rb") as f:
        r = st("cat", "--format", "raw", "-", data=f.read())
    check(raw_records(r.stdout) == [b"0", b"1", b"2", b"3", b"4"], "read from standard input, in order")

    # The independent writer makes Google's file from its records and footer.
    buf, chunks, footer, post, ps, meta, entries = footer_of(a)
    w = R.Writer()
    w.signature()
    for i in range(5):
        w.simple([str(i).encode()])
    w.simple([meta.SerializeToString()] + [e.SerializeToString() for e in entries])
    w.pad_to_block()
    w.simple([p.SerializeToString() for p in ps])
    w.pad_to_block()
    check(bytes(w.out) == buf, "the test's writer remakes Google's file byte for byte")
    check(ps[0].magic == R.MAGIC and ps[0].footer_offset == 284 and len(ps) == 3, "Google's postscript parsed")


def table(d, rows):
    csv = os.path.join(d, "t.csv")
    with open(csv, "w") as f:
        f.write("id,x,name,vals\n")
        for i in range(rows):
            f.write('%d,%r,n%05d,"[%d, %d]"\n' % (i, i * 0.5, i, i, i * 3))
    tf = os.path.join(d, "tf", "t")
    r = st("convert", csv, "-o", tf, "--shards", "1", "-q")
    assert r.returncode == 0, r.stderr
    return tf + "-00000-of-00001.tfrecord"


def round_trips(d, tfr):
    ref = cat_raw(tfr)
    with open(tfr, "rb") as f:
        tf_bytes = f.read()
    for codec in ("none", "zstd", "brotli", "snappy"):
        for group in (1, 7):
            out = os.path.join(d, "ar_%s_%d" % (codec, group), "t")
            r = st("convert", tfr, "--to", "arrayrecord", "--arrayrecord-codec", codec, "--arrayrecord-group-size",
                   group, "-o", out, "--shards", "1", "-q")
            ar = out + "-00000-of-00001.array_record"
            if r.returncode != 0:
                check(False, "%s/%d: convert (%s)" % (codec, group, r.stderr[-200:]))
                continue
            back = os.path.join(d, "back_%s_%d" % (codec, group), "t")
            r2 = st("convert", ar, "-o", back, "--shards", "1", "-q")
            with open(back + "-00000-of-00001.tfrecord", "rb") as f:
                same = r2.returncode == 0 and f.read() == tf_bytes
            check(same, "%s, group size %d: TFRecord -> ArrayRecord -> TFRecord gives the same bytes" % (codec, group))
            v = st("verify", "--decode", ar)
            check(v.returncode == 0, "%s/%d: verify --decode passes" % (codec, group))
            if codec in ("zstd", "none"):
                # chunks are compressed on the worker threads: the file is the same at any --jobs
                same_jobs = []
                for jobs in (1, 3):
                    o = os.path.join(d, "jobs%d_%s_%d" % (jobs, codec, group), "t")
                    r = st("convert", tfr, "--to", "arrayrecord", "--arrayrecord-codec", codec,
                           "--arrayrecord-group-size", group, "-o", o, "--shards", "1", "-q", "--jobs", jobs)
                    with open(o + "-00000-of-00001.array_record", "rb") as f1, open(ar, "rb") as f2:
                        same_jobs.append(r.returncode == 0 and f1.read() == f2.read())
                check(all(same_jobs), "%s/%d: the same bytes with --jobs 1, 3 and the default" % (codec, group))
            if codec == "zstd" and shutil.which("zstd"):
                # zstd's own program reads every chunk's values (frames concatenated: one stream)
                data = [c for c in R.read_chunks(open(ar, "rb").read()) if c.type == ord("r")][:-2]
                frames = b""
                for c in data:
                    sizes_size, at = R.read_varint(c.data, 1)
                    _, at = R.read_varint(c.data, at + sizes_size)
                    frames += c.data[at:]
                z = subprocess.run(["zstd", "-d", "-c"], input=frames, capture_output=True)
                check(z.returncode == 0 and z.stdout == b"".join(ref),
                      "zstd/%d: the zstd program decompresses every chunk's values to the records (%s)"
                      % (group, z.stderr[-200:]))
            try:
                buf, chunks, footer, post, ps, meta, entries = footer_of(ar)
                data = [c for c in chunks if c.type == ord("r")][:-2]
                layout = (len(buf) % R.BLOCK == 0 and post.offset == len(buf) - R.BLOCK and
                          all(p.footer_offset == footer.offset and p.magic == R.MAGIC for p in ps) and len(ps) == 3 and
                          chunks[-1].type == ord("p") and all(c.num_records == group for c in data[:-1]) and
                          sum(c.num_records for c in data) == len(ref) and data[0].data[0] == {
                              "none": 0, "zstd": ord("z"), "brotli": ord("b"), "snappy": ord("s")}[codec])
                check(layout, "%s/%d: the independent reader finds every hash and block header right, the postscript "
                              "alone in the last block, the footer where it points, groups of %d" % (codec, group, group))
                if codec == "none":
                    recs = [x for c in data for x in R.simple_records(c)]
                    check(recs == ref, "%s/%d: its records are the TFRecord payloads, in order" % (codec, group))
                    md = meta.array_record_metadata
                    check(md.version == 1 and md.num_chunks == len(data) and md.num_records == len(ref) and
                          [(e.chunk_offset, e.num_records, e.decoded_data_size) for e in entries] ==
                          [(c.offset, c.num_records, c.decoded_size) for c in data] and
                          md.writer_options.startswith("group_size:%d," % group),
                          "%s/%d: protobuf parses the footer: version 1, every chunk's offset, records and size"
                          % (codec, group))
                    # The same writer, given our records and footer, makes our bytes.
                    w = R.Writer()
                    w.signature()
                    for c in data:
                        w.simple(R.simple_records(c))
                    w.simple([meta.SerializeToString()] + [e.SerializeToString() for e in entries])
                    w.pad_to_block()
                    w.simple([p.SerializeToString() for p in ps])
                    w.pad_to_block()
                    check(bytes(w.out) == buf, "%s/%d: the layout is Google's writer's, byte for byte" % (codec, group))
            except (ValueError, IndexError) as e:
                check(False, "%s/%d: the independent reader: %s" % (codec, group, e))
            # cat --at against the records in order
            picks = [0, len(ref) // 2, len(ref) - 1, group, group - 1]
            got = [raw_records(st("cat", "--format", "raw", "--at", i, ar).stdout) for i in picks]
            check(got == [[ref[i]] for i in picks], "%s/%d: cat --at finds records %s" % (codec, group, picks))


def sharding(d, tfr):
    ref = sorted(cat_raw(tfr))
    out = os.path.join(d, "sh", "t")
    r = st("convert", tfr, "--to", "arrayrecord", "-o", out, "--shards", "3", "-q")
    shards = sorted(os.path.join(d, "sh", n) for n in os.listdir(os.path.join(d, "sh")) if n.endswith(".array_record"))
    check(r.returncode == 0 and len(shards) == 3 and sorted(cat_raw(*shards)) == ref,
          "--shards 3: three ArrayRecord shards holding every record once")
    v = st("verify", "--manifest", out + ".manifest.json")
    check(v.returncode == 0, "verify --manifest of ArrayRecord shards (%s)" % v.stdout[-120:])
    out = os.path.join(d, "sz", "t")
    r = st("convert", tfr, "--to", "arrayrecord", "-o", out, "--shard-size", "200KiB", "-q")
    files = sorted(os.path.join(d, "sz", n) for n in os.listdir(os.path.join(d, "sz")) if n.endswith(".array_record"))
    sizes = [os.path.getsize(f) for f in files]
    check(r.returncode == 0 and len(files) > 1 and max(sizes) <= 200 << 10 and sorted(cat_raw(*files)) == ref,
          "--shard-size 200KiB: %d shards, each within the size (%s)" % (len(files), sizes))
    out = os.path.join(d, "rp", "t")
    r = st("convert", tfr, "--to", "arrayrecord", "--arrayrecord-group-size", "7", "-o", out,
           "--records-per-shard", "1000", "-q")
    files = sorted(os.path.join(d, "rp", n) for n in os.listdir(os.path.join(d, "rp")) if n.endswith(".array_record"))
    counts = [len(cat_raw(f)) for f in files]
    check(r.returncode == 0 and all(c <= 1000 for c in counts) and sum(counts) == len(ref) and
          st("verify", *files).returncode == 0, "--records-per-shard 1000 with groups of 7: %s" % counts)
    # two tasks and combine
    out = os.path.join(d, "tk", "t")
    rs = [st("convert", tfr, "--to", "arrayrecord", "-o", out, "--shards", "2", "--task", "%d/2" % t, "-q")
          for t in range(2)]
    c = st("combine", out, "-q")
    files = sorted(os.path.join(d, "tk", n) for n in os.listdir(os.path.join(d, "tk")) if n.endswith(".array_record"))
    check(all(x.returncode == 0 for x in rs) and c.returncode == 0 and len(files) == 4 and
          sorted(cat_raw(*files)) == ref and st("verify", "--manifest", out + ".manifest.json").returncode == 0,
          "--task 0/2 and 1/2, then combine: 4 shards, every record once (%s)" % c.stderr[-200:])
    # split by whole chunks
    src = os.path.join(d, "ar_zstd_7", "t-00000-of-00001.array_record")
    out = os.path.join(d, "sp", "t")
    r = st("split", src, "-o", out, "--shards", "3", "-q")
    files = sorted(os.path.join(d, "sp", n) for n in os.listdir(os.path.join(d, "sp")) if n.endswith(".array_record"))
    check(r.returncode == 0 and len(files) == 3 and sorted(cat_raw(*files)) == ref and
          st("verify", "--decode", *files).returncode == 0,
          "split --shards 3 copies whole chunks of 7 into three verified shards (%s)" % r.stderr[-200:])
    try:
        chunks = R.read_chunks(open(files[1], "rb").read())
        check(all(c.num_records in (0, 7) for c in chunks[:-4]), "split's shards keep the chunks of 7")
    except ValueError as e:
        check(False, "split's shards: the independent reader: %s" % e)
    out = os.path.join(d, "sp2", "t")
    r = st("split", src, src.replace("ar_zstd_7", "ar_none_7"), "-o", out, "--shards", "2", "-q")
    check(r.returncode == 2 and b"group size" in r.stderr,
          "split refuses a short chunk that would not end the output (%s)" % r.stderr[-160:])


def chunk_kinds(path):
    """(compression type byte, records) of every data chunk, by the independent reader."""
    blob = open(path, "rb").read()
    return [(c.data[0], c.num_records) for c in R.read_chunks(blob)[:-4] if c.num_records]


def resume_other_codec(d, tfr):
    """--resume keeps a shard only when the options that shaped its bytes are
    this run's: a changed codec or group size rewrites every shard, so no set
    mixes codecs or group sizes."""
    for first, then, what in ((["--arrayrecord-codec", "none"], [], "codec none, then the default zstd"),
                              (["--arrayrecord-group-size", "7"], [], "group size 7, then 1"),
                              ([], ["--arrayrecord-codec", "snappy"], "zstd, then snappy"),
                              ([], ["--compression-level", "9"], "zstd level 3, then 9")):
        out = os.path.join(d, "rs-" + what.replace(" ", "_").replace(",", ""), "t")
        a = st("convert", tfr, "--to", "arrayrecord", "-o", out, "--shards", "3", "-q", *first)
        b = st("convert", tfr, "--to", "arrayrecord", "-o", out, "--shards", "3", "-q", "--resume", *then)
        ref = out.replace("rs-", "ref-")
        c = st("convert", tfr, "--to", "arrayrecord", "-o", ref, "--shards", "3", "-q", *then)
        names = ["t-%05d-of-00003.array_record" % i for i in range(3)]
        same = all(open(os.path.join(os.path.dirname(out), n), "rb").read() ==
                   open(os.path.join(os.path.dirname(ref), n), "rb").read() for n in names)
        kinds = {k for n in names for k in chunk_kinds(os.path.join(os.path.dirname(out), n))}
        check(a.returncode == 0 and b.returncode == 0 and c.returncode == 0 and same,
              "--resume after %s: every shard is the second run's (chunks %s; %s)" % (what, sorted(kinds),
                                                                                    b.stderr[-160:]))


def refusals(d, tfr):
    r = st("convert", tfr, "--arrayrecord-codec", "zstd", "-o", os.path.join(d, "x", "t"))
    check(r.returncode == 2 and b"--to arrayrecord" in r.stderr, "--arrayrecord-codec without --to arrayrecord")
    r = st("convert", tfr, "--to", "arrayrecord", "--compression", "gzip", "-o", os.path.join(d, "x", "t"))
    check(r.returncode == 2 and b"--arrayrecord-codec" in r.stderr, "--compression gzip is refused for ArrayRecord")
    r = st("convert", tfr, "--to", "arrayrecord", "--arrayrecord-group-size", "0", "-o", os.path.join(d, "x", "t"))
    check(r.returncode == 2, "--arrayrecord-group-size 0 is refused")
    r = st("cat", "--at", "1", tfr)
    check(r.returncode == 2 and b"not one" in r.stderr, "cat --at on a TFRecord file says what --at reads")
    # A transposed chunk (as ArrayRecord's transpose:true writes): its hashes
    # and footer entry are checked, its records refused with a message.
    w = R.Writer()
    w.signature()
    at = w.chunk(ord("t"), b"\x00opaque transposed data", 2, 10)
    meta = L.RiegeliFooterMetadata()
    meta.array_record_metadata.version = 1
    meta.array_record_metadata.num_chunks = 1
    meta.array_record_metadata.num_records = 2
    entry = L.ArrayRecordFooter(chunk_offset=at, decoded_data_size=10, num_records=2)
    footer_at = w.simple([meta.SerializeToString(), entry.SerializeToString()])
    w.pad_to_block()
    w.simple([L.RiegeliPostscript(footer_offset=footer_at, magic=R.MAGIC).SerializeToString()] * 3)
    w.pad_to_block()
    p = os.path.join(d, "transposed.array_record")
    with open(p, "wb") as f:
        f.write(w.out)
    v = st("verify", p)
    check(v.returncode == 0 and b"transposed" in v.stdout and b"2 records" in v.stdout,
          "verify: a transposed chunk is intact but noted as not decoded (%s)" % v.stdout[-300:])
    r = st("cat", "--format", "raw", p)
    check(r.returncode != 0 and b"transposed chunk ('t')" in r.stderr and b"byte offset 64" in r.stderr,
          "cat refuses a transposed chunk, naming it (%s)" % r.stderr[-200:])
    r = st("cat", "--at", "1", p)
    check(r.returncode != 0 and b"transposed" in r.stderr, "cat --at refuses it too (%s)" % r.stderr[-200:])


def mapped_and_read(d):
    """A file of 1 MiB or more is verified through a memory map, lent to the
    chunk reader in windows of 8 MiB (the reader gathers a chunk across a
    window's end); flipped bits anywhere (data, chunk and block headers, the
    window's edges, footer, postscript) and cuts give the same report as the
    same file read with read(2) (SHARDTOOL_MMAP=0)."""
    import random
    rnd = random.Random(29)
    csv = os.path.join(d, "wide.csv")
    with open(csv, "w") as f:
        f.write("id,s\n")
        for i in range(1100):
            f.write("%d,%s\n" % (i, "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6000 + i * 7 % 5000))))
    out = os.path.join(d, "wide", "w")
    r = st("convert", csv, "--to", "arrayrecord", "--arrayrecord-codec", "none", "-o", out, "--shards", "1", "-q")
    check(r.returncode == 0, "a 9 MB ArrayRecord file written (%s)" % r.stderr.decode()[:200])
    path = out + "-00000-of-00001.array_record"
    with open(path, "rb") as f:
        intact = f.read()
    window = 8 << 20
    check(len(intact) > window + 4 * 65536, "the file spans more than one window (%d bytes)" % len(intact))

    def both(data, what):
        with open(path, "wb") as f:
            f.write(data)
        m = st("verify", "--jobs", "1", path)
        r = subprocess.run([ST, "verify", "--jobs", "1", path], capture_output=True,
                           env=dict(os.environ, SHARDTOOL_MMAP="0"))
        check(m.stdout == r.stdout and m.returncode == r.returncode,
              "mapped and read(2) agree, %s: %s" % (what, m.stdout.decode().strip()[:160]))
        return m

    m = both(intact, "intact")
    check(m.returncode == 0 and b"1100 records" in m.stdout, "intact through the map: %s" % m.stdout.decode().strip())
    n = len(intact)
    for at in (70, 100, 5000, 65536 + 3, 3 * 65536 + 30, window - 1, window, window + 1, window + 65536 + 10,
               n // 2, n - 65536 - 200, n - 65536 + 20, n - 65536 + 300):
        damaged = bytearray(intact)
        damaged[at] ^= 0x01
        m = both(bytes(damaged), "flip at %d" % at)
        check(m.returncode == 1 and b"DAMAGED" in m.stdout, "flip at %d found: %s" % (at, m.stdout.decode().strip()[:160]))
    for cut in ((1 << 20) + 1, window - 3, window + 7, n - 1):
        m = both(intact[:cut], "cut at %d" % cut)
        check(m.returncode == 1, "cut at %d found: %s" % (cut, m.stdout.decode().strip()[:160]))


def main():
    global ST, SRC, R, L
    ST, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    sys.path.insert(0, os.path.join(SRC, "tests", "support"))
    import riegeli_files
    R = riegeli_files
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["protoc", "--python_out=" + d, "-I" + os.path.join(SRC, "tests", "support"),
                        "arrayrecord_layout.proto"], check=True)
        sys.path.insert(0, d)
        import arrayrecord_layout_pb2
        L = arrayrecord_layout_pb2
        google_files(d)
        tfr = table(d, 3000)
        round_trips(d, tfr)
        sharding(d, tfr)
        resume_other_codec(d, tfr)
        refusals(d, tfr)
        mapped_and_read(d)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
