#!/usr/bin/env python3
"""ArrayRecord files that lie, refused cleanly by verify, cat, cat --at,
stat and split: each file is made by the test's own Riegeli writer
(tests/support/riegeli_files.py) with every hash valid, so that the lie
itself is what must be caught, plus a few with damaged hashes and cut
files, and zstd and snappy files written by shardtool whose compressed
values are damaged under recomputed hashes (found by verify --decode and
cat; by plain verify where a stated size is wrong).  Every command runs under an address-space limit (RLIMIT_AS, as
`ulimit -v` sets it; left out for AddressSanitizer builds) and a time limit,
and must exit 1 or 2 with a message naming the file and a byte offset -
never crash, hang, or allocate what a size field claims.

Usage: test_arrayrecord_damage.py SHARDTOOL SOURCE_ROOT
"""
import os
import resource
import struct
import subprocess
import sys
import tempfile

MEMORY_LIMIT = 2 << 30
TIME_LIMIT = 20
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def limited(st, args, asan):
    def limits():
        if not asan:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    try:
        return subprocess.run([st] + args, capture_output=True, timeout=TIME_LIMIT, preexec_fn=limits)
    except subprocess.TimeoutExpired:
        return None


def build(R, records, lie=None):
    """A whole ArrayRecord file of `records` (group size 1); `lie` edits the
    parts before they are laid out: a dict of what to falsify."""
    lie = lie or {}
    w = R.Writer()
    w.signature()
    offsets = []
    for i, rec in enumerate(records):
        offsets.append(len(w.out))
        if lie.get("chunk_records") and i == 1:
            w.simple([rec], num_records=3)
        elif lie.get("decoded_size") and i == 1:
            w.simple([rec], decoded_size=1 << 40)
        elif lie.get("group_varies") and i == 1:
            w.simple([rec, rec])  # (and its footer entry says so: only the group size is wrong)
        elif lie.get("data_size") and i == 1:
            data = b"\0" + R.varint(1) + R.varint(len(rec)) + rec
            w.chunk(ord("r"), data, 1, len(rec), end=len(w.out) + 40 + len(data), data_size=1 << 50)
        else:
            w.simple([rec])
    def pb_varint_field(n, v):
        return R.varint(n << 3) + R.varint(v)
    num_chunks = lie.get("num_chunks", len(records))
    num_records = lie.get("num_records", len(records) + (1 if lie.get("group_varies") else 0))
    meta_inner = pb_varint_field(1, 1) + pb_varint_field(2, num_chunks) + pb_varint_field(3, num_records)
    meta = R.varint(1 << 3 | 2) + R.varint(len(meta_inner)) + meta_inner
    entries = []
    for i, off in enumerate(offsets):
        if lie.get("entry_offset") and i == 2:
            off += 44
        n = 2 if lie.get("group_varies") and i == 1 else 1
        fields = [pb_varint_field(1, off), pb_varint_field(2, n * len(records[i])), pb_varint_field(3, n)]
        if lie.get("entry_fields_reversed"):
            fields.reverse()  # any field order is valid protobuf
        entries.append(b"".join(fields))
    footer_at = len(w.out)
    w.simple([meta] + entries)
    w.pad_to_block()
    magic = lie.get("magic", R.MAGIC)
    ps_footer = lie.get("footer_offset", footer_at)
    post = pb_varint_field(1, ps_footer) + pb_varint_field(2, magic)
    w.simple([post] * 3)
    w.pad_to_block()
    return bytes(w.out)


def rewrite_first_chunk(R, blob, edit):
    """The file with its first data chunk's data (at byte 64, inside the
    first block) passed through edit(bytearray), same length, and both of
    the chunk's hashes recomputed: damage no hash can see."""
    b = bytearray(blob)
    data_size = struct.unpack_from("<Q", b, 64 + 8)[0]
    data = bytearray(b[104:104 + data_size])
    edit(data)
    assert len(data) == data_size and 104 + data_size < R.BLOCK
    b[104:104 + data_size] = data
    struct.pack_into("<Q", b, 64 + 16, R.highwayhash64(bytes(data)))
    struct.pack_into("<Q", b, 64, R.highwayhash64(bytes(b[72:104])))
    return bytes(b)


def values_at(R, data):
    """Where a compressed simple chunk's values start: after the type byte,
    the sizes' length and the sizes."""
    sizes_size, at = R.read_varint(data, 1)
    return at + sizes_size


def compressed_damage(st, R, d, asan):
    """Compressed values damaged under recomputed hashes (what a faulty
    compressor would write): plain verify reads every hash and size a
    chunk states, but decompresses nothing, so what only decompression
    shows is for verify --decode; what a header states is checked by both."""
    csv = os.path.join(d, "words.csv")
    with open(csv, "w") as f:
        f.write("id,text\n")
        for i in range(4):
            f.write("%d,%s\n" % (i, "the quick brown fox jumps over the lazy dog " * 6))
    made = {}
    for codec in ("zstd", "snappy"):
        out = os.path.join(d, "words-" + codec)
        r = subprocess.run([st, "convert", csv, "--to", "arrayrecord", "--arrayrecord-codec", codec, "-o", out,
                            "--shards", "1", "-q"], capture_output=True)
        files = [os.path.join(d, f) for f in os.listdir(d) if f.startswith("words-" + codec) and f.endswith(".array_record")]
        check(r.returncode == 0 and len(files) == 1, "%s ArrayRecord file written (%s)" % (codec, r.stderr[-200:]))
        if len(files) == 1:
            with open(files[0], "rb") as f:
                made[codec] = f.read()
    cases = []
    if "zstd" in made:
        data = R.read_chunks(made["zstd"])[1].data
        v = values_at(R, data)
        _, frame = R.read_varint(data, v)
        # the frame: magic, a descriptor byte (single segment, 1..8 content size bytes), then the first block
        fhd = data[frame + 4]
        fcs = {0: 1 if fhd & 0x20 else 0, 1: 2, 2: 4, 3: 8}[fhd >> 6]
        block = frame + 5 + (0 if fhd & 0x20 else 1) + fcs
        check((data[block] >> 1) & 3 == 2, "the zstd chunk's values are a compressed block (the premise below)")

        def end_marker(b):
            b[-1] = 0  # a compressed block's bitstream ends in a byte with its end mark: never 0
        cases.append(("zstd-bitstream", rewrite_first_chunk(R, made["zstd"], end_marker), False))

        def content_size(b):
            b[frame + 5 + (0 if fhd & 0x20 else 1)] ^= 1  # the frame's content size, one off
        cases.append(("zstd-content-size", rewrite_first_chunk(R, made["zstd"], content_size), True))

        def riegeli_size(b):
            b[v] ^= 1  # Riegeli's decompressed-size prefix of the values
        cases.append(("zstd-riegeli-size", rewrite_first_chunk(R, made["zstd"], riegeli_size), True))

        # The record sizes as shardtool writes a few bytes with zstd: a frame of one raw block
        # (checked in place by plain verify): type byte, their length, their decompressed size,
        # magic, descriptor, content size, block header, then the record's size as a varint.
        check(data[0] == 0x7a and data[3:7] == b"\x28\xb5\x2f\xfd" and (data[9] >> 1) & 3 == 0,
              "the zstd chunk's record sizes are a raw zstd block (the premise below)")

        def record_size(b):
            b[12] ^= 1  # the record's size, one more than the values hold
        cases.append(("zstd-record-size", rewrite_first_chunk(R, made["zstd"], record_size), True))

        # The same, and a later chunk's data damaged too (its data hash fails): the first damage
        # in file order is the one reported, whether the first chunk is still held back when
        # the later one is read (the third data chunk) or already in the unit (the fourth).
        sized = rewrite_first_chunk(R, made["zstd"], record_size)
        for later in (3, 4):
            c = R.read_chunks(made["zstd"])[later]
            check(c.offset + 40 + 20 < R.BLOCK and len(c.data) > 20, "data chunk %d lies in the first block" % later)
            b = bytearray(sized)
            b[c.offset + 40 + 20] ^= 0x40
            cases.append(("zstd-record-size-then-hash-%d" % later, bytes(b), True))

        def sizes_block(b):
            b[9] ^= 0x10  # the raw block's length, two more than the sizes hold
        cases.append(("zstd-sizes-block", rewrite_first_chunk(R, made["zstd"], sizes_block), True))
    if "snappy" in made:
        data = R.read_chunks(made["snappy"])[1].data
        _, pre = R.read_varint(data, values_at(R, data))
        _, element = R.read_varint(data, pre)

        def preamble(b):
            b[pre] ^= 1  # snappy's own length preamble
        cases.append(("snappy-preamble", rewrite_first_chunk(R, made["snappy"], preamble), True))

        def literal_tag(b):
            b[element] = 0xfc  # the first element: a literal whose 4-byte length runs past the input
        cases.append(("snappy-element", rewrite_first_chunk(R, made["snappy"], literal_tag), False))
    for name, blob, plain_sees in cases:
        p = os.path.join(d, name + ".array_record")
        with open(p, "wb") as f:
            f.write(blob)
        r = limited(st, ["verify", "--decode", p], asan)
        check(r is not None and r.returncode == 1 and b"offset 64" in r.stdout and name.encode() in r.stdout,
              "%s: verify --decode finds it at offset 64 (%s)" % (name, r.stdout[-300:] if r else None))
        r = limited(st, ["verify", p], asan)
        if plain_sees:
            check(r is not None and r.returncode == 1 and b"offset 64" in r.stdout,
                  "%s: plain verify finds it at offset 64, undecompressed (%s)"
                  % (name, r.stdout[-300:] if r else None))
            said = {"zstd-record-size": b"record 0's size 299 runs past the 298 bytes",
                    "zstd-record-size-then-hash-3": b"record 0's size 299 runs past the 298 bytes",
                    "zstd-record-size-then-hash-4": b"record 0's size 299 runs past the 298 bytes",
                    "zstd-sizes-block": b"the record sizes do not decompress (zstd)"}.get(name)
            if said:
                check(r is not None and said in r.stdout, "%s: plain verify says why (%s)"
                      % (name, r.stdout[-300:] if r else None))
        else:
            # the documented limit: found by --decode (above) and by every reader, not by plain verify
            check(r is not None and r.returncode == 0,
                  "%s: plain verify does not decompress, so passes it (as documented) (%s)"
                  % (name, r.stdout[-300:] if r else None))
            r = limited(st, ["cat", p], asan)
            check(r is not None and r.returncode in (1, 2) and b"64" in r.stderr,
                  "%s: cat refuses it at byte offset 64 (%s)" % (name, r.stderr[-300:] if r else None))


def main():
    st, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    sys.path.insert(0, os.path.join(src, "tests", "support"))
    import riegeli_files as R
    asan = b"__asan_init" in open(st, "rb").read()
    records = [b"\x0a\x00", b"\x0a\x00", b"\x0a\x00", b"\x0a\x00"]  # empty Examples
    good = build(R, records)

    def flip(b, at):
        b = bytearray(b)
        b[at] ^= 0x40
        return bytes(b)

    def block_lie(b):
        # The postscript block's header: distances that name another chunk, hash recomputed.
        b = bytearray(b)
        at = len(b) - R.BLOCK
        body = struct.pack("<QQ", 8, 100)
        b[at:at + 24] = struct.pack("<Q", R.highwayhash64(body)) + body
        return bytes(b)

    cases = {
        "footer-num-records": (build(R, records, {"num_records": 9}), "records"),
        "footer-num-chunks": (build(R, records, {"num_chunks": 1000000}), "chunks"),
        "footer-entry-offset": (build(R, records, {"entry_offset": True}), "footer entry"),
        "chunk-record-count": (build(R, records, {"chunk_records": True}), "records"),
        "group-size-varies": (build(R, records, {"group_varies": True}), "group size"),
        "decoded-size-2^40": (build(R, records, {"decoded_size": True}), "byte offset"),
        "data-size-2^50": (build(R, records, {"data_size": True}), "byte offset"),
        "postscript-magic": (build(R, records, {"magic": 12345}), "magic"),
        "postscript-footer-offset": (build(R, records, {"footer_offset": 70}), "footer"),
        "block-header-lies": (block_lie(good), "block header"),
        "block-header-hash": (flip(good, len(good) - R.BLOCK + 3), "block header hash"),
        # (record 0's chunk is damaged: cat --at 0 must find it)
        "chunk-header-hash": (flip(good, 64 + 9), "chunk header hash"),
        "data-hash": (flip(good, 64 + 42), "data hash"),
        "cut-in-the-middle": (good[:R.BLOCK + 100], "byte offset"),
        "cut-at-a-block": (good[:R.BLOCK], "footer"),
        "signature-only": (good[:64], "footer"),
    }
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "good.array_record")
        with open(p, "wb") as f:
            f.write(good)
        r = limited(st, ["verify", "--decode", p], asan)
        check(r is not None and r.returncode == 0, "the honest file verifies (the lies below are the only change)")
        p = os.path.join(d, "reversed.array_record")
        with open(p, "wb") as f:
            f.write(build(R, records, {"entry_fields_reversed": True}))
        r = limited(st, ["verify", p], asan)
        check(r is not None and r.returncode == 0,
              "footer entries with their fields in another order verify (%s)" % (r.stdout[-200:] if r else None))
        for name, (blob, word) in cases.items():
            p = os.path.join(d, name + ".array_record")
            with open(p, "wb") as f:
                f.write(blob)
            bad = []
            at = "0" if name in ("chunk-header-hash", "data-hash") else "1"
            for args in (["verify", p], ["cat", p], ["cat", "--at", at, p], ["stat", p],
                         ["split", p, "-o", os.path.join(d, "out-" + name, "t"), "-q"]):
                r = limited(st, args, asan)
                if r is None:
                    bad.append((args[0], "timed out"))
                    continue
                text = (r.stdout + r.stderr).decode(errors="replace")
                # verify reports damage on stdout (exit 1); the others say it on stderr
                if r.returncode not in (1, 2) or name not in text:
                    bad.append((args[:2], r.returncode, text[-200:]))
                elif args[0] in ("verify", "cat") and "--at" not in args and word not in text and \
                        "byte offset" not in text and "offset" not in text:
                    bad.append((args[:2], "no place", text[-200:]))
            check(not bad, "%s: refused by verify, cat, cat --at, stat and split, naming the file (%s)"
                  % (name, bad[:2]))
        # verify names the kind and the byte offset
        r = limited(st, ["verify", os.path.join(d, "data-hash.array_record")], asan)
        check(r is not None and b"data hash" in r.stdout and b"offset 64" in r.stdout,
              "verify: 'data hash' at offset 64 (%s)" % (r.stdout if r else None))
        compressed_damage(st, R, d, asan)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
