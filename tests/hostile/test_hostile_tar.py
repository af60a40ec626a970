#!/usr/bin/env python3
"""Hostile tar shards: each is refused with a clear error, never a crash.

Usage: test_hostile_tar.py SHARDTOOL

Every case builds a small tar byte by byte (the headers below are written
here, not by a tar library, so that they can lie) and runs `cat`, `verify`
and `stat` on it under an address-space limit (RLIMIT_AS, as `ulimit -v`;
left out for sanitizer builds) and a time limit, through run_hostile.py's
Ctx.  Each must exit non-zero (verify: 1, "DAMAGED"), within the limits,
without a signal, and its message must name the file, the byte offset and
what is wrong (the case's expected words).  One more case checks that a
tar that simply ends after a complete member is read, and that verify
reports its missing end-of-archive marker; and one that bytes after the
marker are reported by verify.

Prints one line per case and "N passed, M failed"; exits 1 on any failure.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_hostile import Ctx, sanitized  # noqa: E402

BLOCK = 512
TIMEOUT = 20
MEMORY = 512 << 20


def octal(v, width):
    return (b"%0*o" % (width - 1, v)) + b"\0"


def header(name, size, typeflag=b"0", size_field=None, magic=b"ustar\x0000", checksum=None, prefix=b""):
    h = bytearray(BLOCK)
    h[0:len(name)] = name
    h[100:108] = octal(0o644, 8)
    h[108:116] = octal(0, 8)
    h[116:124] = octal(0, 8)
    h[124:136] = size_field if size_field is not None else octal(size, 12)
    h[136:148] = octal(0, 12)
    h[156:157] = typeflag
    h[257:257 + len(magic)] = magic
    h[345:345 + len(prefix)] = prefix
    h[148:156] = b" " * 8
    s = sum(h) if checksum is None else checksum
    h[148:156] = b"%06o\0 " % s
    return bytes(h)


def pad(data):
    return data + b"\0" * (-len(data) % BLOCK)


def member(name, data, **kw):
    return header(name, len(data), **kw) + pad(data)


def pax(records, typeflag=b"x"):
    body = b"".join(records)
    return header(b"PaxHeader/x", len(body), typeflag=typeflag) + pad(body)


def pax_record(key, value):
    body = b" " + key + b"=" + value + b"\n"
    n = len(body)
    while len(b"%d" % n) + len(body) != n:
        n = len(b"%d" % n) + len(body)
    return b"%d" % n + body


END = b"\0" * (2 * BLOCK)
GOOD = member(b"000.txt", b"hello") + member(b"000.cls", b"1")

# name, tar bytes, words the message must hold
CASES = [
    ("bad-checksum", GOOD + header(b"001.txt", 5, checksum=1234) + pad(b"hello") + END, "bad header checksum"),
    ("size-negative-base256", GOOD + header(b"001.txt", 0, size_field=b"\xff" * 12) + END, "negative"),
    ("size-octal-garbage", GOOD + header(b"001.txt", 0, size_field=b"00000z00012\0") + END, "not octal"),
    ("size-2^63", GOOD + header(b"001.txt", 0, size_field=b"\x80\0\0\0\x80" + b"\0" * 7) + END, "2^63"),
    ("size-minus-octal", GOOD + header(b"001.txt", 0, size_field=b"-0000000001\0") + END, "negative"),
    ("size-past-end", GOOD + header(b"001.txt", 1 << 30) + b"x" * 100, "truncated"),
    ("truncated-member", GOOD + header(b"001.txt", 4000) + b"x" * 1000, "truncated"),
    ("truncated-header", GOOD + header(b"001.txt", 5)[:300], "truncated"),
    ("pax-length-lies", GOOD + pax([b"99 path=001.txt\n"]) + member(b"x", b"1") + END, "pax"),
    ("pax-length-short", GOOD + pax([b"5 path=001.txt\n"]) + member(b"x", b"1") + END, "pax"),
    ("pax-no-newline", GOOD + pax([b"16 path=001.txtX"]) + member(b"x", b"1") + END, "newline"),
    ("pax-size-past-file", GOOD + pax([pax_record(b"size", b"99999999999")]) + member(b"001.txt", b"1") + END,
     "truncated"),
    ("pax-size-garbage", GOOD + pax([pax_record(b"size", b"12abc")]) + member(b"001.txt", b"1") + END, "size"),
    ("pax-size-2^63", GOOD + pax([pax_record(b"size", b"9223372036854775808")]) + member(b"001.txt", b"1") + END,
     "2^63"),
    ("global-pax-lies", pax([b"40 comment=x\n"], typeflag=b"g") + GOOD + END, "pax"),
    ("pax-huge", GOOD + header(b"PaxHeader/x", 1 << 40, typeflag=b"x") + END, "extended header"),
    ("dotdot-name", GOOD + member(b"../../etc/001.txt", b"x") + END, ".."),
    ("dotdot-pax-name", GOOD + pax([pax_record(b"path", b"a/../../001.txt")]) + member(b"x", b"1") + END, ".."),
    ("absolute-name", GOOD + member(b"/etc/001.txt", b"x") + END, "absolute"),
    ("absolute-long-name", GOOD + header(b"././@LongLink", 14, typeflag=b"L") + pad(b"/tmp/001.txt\0\0")
     + member(b"x", b"1") + END, "absolute"),
    ("hard-link", GOOD + header(b"001.txt", 0, typeflag=b"1") + END, "hard link"),
    ("symlink", GOOD + header(b"001.txt", 0, typeflag=b"2") + END, "symbolic link"),
    ("char-device", GOOD + header(b"001.dev", 0, typeflag=b"3") + END, "character device"),
    ("block-device", GOOD + header(b"001.dev", 0, typeflag=b"4") + END, "block device"),
    ("fifo", GOOD + header(b"001.fifo", 0, typeflag=b"6") + END, "FIFO"),
    ("empty-name", GOOD + member(b"", b"x") + END, "empty name"),
    ("lone-zero-block", GOOD + b"\0" * BLOCK + member(b"001.txt", b"x") + END, "lone zero block"),
    ("not-a-tar", b"\x01" * 300 + b"ustar\x0000" + b"\x01" * 2000, "checksum"),
    ("reordered", GOOD + member(b"001.txt", b"a") + member(b"000.json", b"{}") + END, "met before"),
    ("duplicate-field", member(b"000.txt", b"a") + member(b"000.txt", b"b") + END, "holds this field"),
    ("bad-cls", member(b"000.cls", b"12x") + END, "not a decimal integer"),
    ("npy-3d", member(b"000.npy", b"\x93NUMPY\x01\x00" + b"\x76\x00"
                      + b"{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1, 1), }".ljust(117) + b"\n"
                      + b"\0" * 8) + END, "more than 2 dimensions"),
    ("npy-size-lies", member(b"000.npy", b"\x93NUMPY\x01\x00" + b"\x76\x00"
                             + b"{'descr': '<i8', 'fortran_order': False, 'shape': (1000000000,), }".ljust(117)
                             + b"\n" + b"\0" * 8) + END, "data bytes follow"),
    ("gz-bomb", member(b"000.txt.gz", __import__("gzip").compress(b"\0" * (8 << 20))) + END, "max-record-size"),
]


def run_case(ctx, name, data, words):
    path = ctx.path(name + ".tar")
    with open(path, "wb") as f:
        f.write(data)
    extra = ["--max-record-size", "1MiB"] if name == "gz-bomb" else []
    decode = name in ("bad-cls", "npy-3d", "npy-size-lies", "gz-bomb")
    runs = [["cat"] + extra + [path], ["verify"] + (["--decode"] if decode else []) + extra + [path]]
    if not decode:
        runs.append(["stat", path])
    for args in runs:
        rc, out, err, _ = ctx.run(args, TIMEOUT)
        text = (out + err).decode("utf-8", "replace")
        if rc is None:
            return "%s: timed out" % args[0]
        if rc < 0:
            return "%s: killed by signal %d" % (args[0], -rc)
        if rc == 0:
            return "%s: exit 0 on a hostile tar: %s" % (args[0], text[:300])
        if args[0] == "verify" and (rc != 1 or "DAMAGED" not in text):
            return "verify: exit %d, not 1 with DAMAGED: %s" % (rc, text[:300])
        if words.lower() not in text.lower() or path not in text or "offset" not in text:
            return "%s: the message does not name the file, an offset and %r: %s" % (args[0], words, text[:400])
        if "Sanitizer" in text or "runtime error" in text:
            return "%s: sanitizer report: %s" % (args[0], text[:400])
    return None


def no_marker_case(ctx):
    """A tar that ends right after a complete member: read, but verify says so."""
    path = ctx.path("no-marker.tar")
    with open(path, "wb") as f:
        f.write(GOOD + member(b"001.txt", b"x"))
    rc, out, err, _ = ctx.run(["cat", path], TIMEOUT)
    if rc != 0 or out.count(b"\n") != 2:
        return "cat: exit %d, %r %r" % (rc, out, err)
    rc, out, err, _ = ctx.run(["verify", path], TIMEOUT)
    if rc != 1 or b"no end-of-archive marker" not in out + err:
        return "verify: exit %d: %r %r" % (rc, out, err)
    return None


def data_after_end_case(ctx):
    """Bytes after the end-of-archive marker: readers stop there (cat reads
    the samples before it), verify says what no reader sees."""
    path = ctx.path("after-end.tar")
    with open(path, "wb") as f:
        f.write(GOOD + END + b"\0" * 1024 + b"hidden" + b"\0" * 506)
    rc, out, err, _ = ctx.run(["cat", path], TIMEOUT)
    if rc != 0 or out.count(b"\n") != 1:
        return "cat: exit %d, %r %r" % (rc, out, err)
    rc, out, err, _ = ctx.run(["verify", path], TIMEOUT)
    if rc != 1 or b"after the end-of-archive marker" not in out or b"offset 4096" not in out:
        return "verify: exit %d: %r %r" % (rc, out, err)
    return None


def main():
    st = os.path.abspath(sys.argv[1])
    limit = not sanitized(st)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Ctx(st, tmp, limit, MEMORY)
        cases = [(n, (lambda d, w, n=n: lambda c: run_case(c, n, d, w))(d, w)) for n, d, w in CASES]
        cases.append(("no-end-marker", no_marker_case))
        cases.append(("data-after-end", data_after_end_case))
        for name, fn in cases:
            problem = fn(ctx)
            if problem:
                failed += 1
                print("FAIL %-24s %s" % (name, problem))
            else:
                passed += 1
                print("ok   %-24s" % name)
    print("%d passed, %d failed%s" % (passed, failed, "" if limit else " (no memory limit: sanitizer build)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
