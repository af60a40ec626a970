#!/usr/bin/env python3
"""Memory stays bounded by the largest record, whatever a command does with it.

    python3 tests/hostile/test_big_records.py path/to/shardtool

One valid tf.train.Example of RECORD_MIB MiB (a single bytes feature) is
written as a .tfrecord.gz of a few tens of KiB: the small file that makes a
tool allocate a lot.  Every command that reads it runs with a time limit and
an address-space limit (ulimit -v, a safety net so that a regression fails
here instead of swapping the machine), and its peak resident memory
(wait4's ru_maxrss) must stay within the bound shardtool(1) documents:
about twice the largest record plus a fixed overhead.  What it writes is
checked too (cat's JSON byte for byte, shards re-verified), so that the
bound is not met by writing less.

The record's CRC32C is computed here without walking 64 MiB in Python: the
payload is a short head then one byte repeated, and CRC32C over a run of
one byte is an affine map of the register, raised to the run's length by
squaring.  Plain standard-library Python; prints "N passed, M failed".
"""
import base64
import hashlib
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

RECORD_MIB = 64
RECORD = RECORD_MIB << 20
# The documented bound: 2 x the largest record + a fixed overhead.
RSS_LIMIT = 2 * RECORD + (32 << 20)
# Address space allowed: the bound plus room for threads' stacks and malloc
# arenas (capped by MALLOC_ARENA_MAX below).
AS_LIMIT = 2 * RECORD + (512 << 20)
TIMEOUT = 120
# A record of many features also costs memory per distinct feature (its
# statistics, and for Parquet a column each): shardtool(1) states at most
# about 2 KiB each, besides the bound above.
PER_FEATURE = 2 << 10
WIDE_FEATURES = 200000

ST = None
# A sanitizer build reserves terabytes of address space and keeps freed
# memory in quarantine: there the commands run (and their output is checked)
# without the memory limits.
SANITIZED = False
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


# ---- CRC32C of a head and a run of one byte ----------------------------------------------

POLY = 0x82F63B78


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (POLY if c & 1 else 0)
        t.append(c)
    return t


TABLE = _table()


def crc_raw(state, data):
    for b in data:
        state = TABLE[(state ^ b) & 0xFF] ^ (state >> 8)
    return state


def mat_vec(cols, v):
    r, i = 0, 0
    while v:
        if v & 1:
            r ^= cols[i]
        v >>= 1
        i += 1
    return r


def compose(second, first):
    """The affine map `second` after `first` (each: columns, constant)."""
    m2, b2 = second
    m1, b1 = first
    return [mat_vec(m2, c) for c in m1], mat_vec(m2, b1) ^ b2


def run_map(byte, n):
    """The register's affine map for `byte` fed n times."""
    step = ([crc_raw(1 << i, b"\0") for i in range(32)], crc_raw(0, bytes([byte])))
    result = ([1 << i for i in range(32)], 0)
    while n:
        if n & 1:
            result = compose(step, result)
        step = compose(step, step)
        n >>= 1
    return result


def crc32c(head, byte=0, n=0):
    s = crc_raw(0xFFFFFFFF, head)
    if n:
        m, b = run_map(byte, n)
        s = mat_vec(m, s) ^ b
    return s ^ 0xFFFFFFFF


def masked(c):
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def tag_len(field, length):
    return varint(field << 3 | 2) + varint(length)


def write_record(path, byte, n, name=b"data"):
    """Example{features{feature{name: bytes_list{value: [byte * n]}}}}, gzipped."""
    values = tag_len(1, n)                                 # BytesList.value
    feature = tag_len(1, len(values) + n)                  # Feature.bytes_list
    value_len = len(feature) + len(values) + n
    key = tag_len(1, len(name)) + name                     # map entry key
    entry_body = len(key) + len(tag_len(2, value_len)) + value_len
    entry = tag_len(1, entry_body) + key + tag_len(2, value_len) + feature + values
    head = tag_len(1, len(entry) + n) + entry              # Example.features
    length = struct.pack("<Q", len(head) + n)
    frame_head = length + struct.pack("<I", masked(crc32c(length))) + head
    footer = struct.pack("<I", masked(crc32c(head, byte, n)))
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    chunk = bytes([byte]) * (1 << 20)
    with open(path, "wb") as f:
        f.write(z.compress(frame_head))
        for _ in range(n >> 20):
            f.write(z.compress(chunk))
        f.write(z.compress(chunk[: n & ((1 << 20) - 1)]))
        f.write(z.compress(footer))
        f.write(z.flush())


# ---- running a command under limits ---------------------------------------------------------


def limited(as_limit=AS_LIMIT):
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))


def run(args, stdout=subprocess.DEVNULL, as_limit=AS_LIMIT):
    """(exit status, peak RSS in bytes, stderr) of shardtool args."""
    # MALLOC_PERTURB_ fills what malloc hands out, so that the peak counts
    # every byte allocated, not only the pages written (as meson's own
    # setting does; set here so that a run by hand measures the same).
    env = dict(os.environ, MALLOC_ARENA_MAX="2", MALLOC_PERTURB_="165")
    err = tempfile.TemporaryFile()
    p = subprocess.Popen([ST] + args, stdout=stdout, stderr=err, preexec_fn=lambda: limited(as_limit), env=env)
    import threading
    timer = threading.Timer(TIMEOUT, p.kill)
    timer.start()
    try:
        if stdout is subprocess.PIPE:
            digest = hashlib.md5()
            size = 0
            for block in iter(lambda: p.stdout.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
            p.stdout.close()
            run.digest, run.size = digest.hexdigest(), size
        _, status, usage = os.wait4(p.pid, 0)
    finally:
        timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    return p.returncode, usage.ru_maxrss * 1024, err.read().decode(errors="replace")


def bounded(what, args, stdout=subprocess.DEVNULL):
    rc, rss, err = run(args, stdout)
    check(rc == 0, f"{what}: exit 0" + ("" if rc == 0 else f" (got {rc}: {err.strip()[-300:]})"))
    if not SANITIZED:
        check(rss <= RSS_LIMIT,
              f"{what}: peak memory {rss >> 20} MiB within 2 x {RECORD_MIB} MiB + 32 MiB")
    return rc == 0


def bounded_wide(what, args, record, features):
    """A command on one record of `record` bytes and `features` features,
    held to 2 x the record + 32 MiB + PER_FEATURE per feature."""
    limit = 2 * record + (32 << 20) + features * PER_FEATURE
    rc, rss, err = run(args, as_limit=limit + (512 << 20))
    check(rc == 0, f"{what}: exit 0" + ("" if rc == 0 else f" (got {rc}: {err.strip()[-300:]})"))
    if not SANITIZED:
        check(rss <= limit, f"{what}: peak memory {rss >> 20} MiB within 2 x {record >> 10} KiB + 32 MiB "
                            f"+ {PER_FEATURE >> 10} KiB x {features} features ({limit >> 20} MiB)")
    return rc == 0


def wide_json(fmt, n):
    """The JSON text of {name i: [i]} for i < n, a piece at a time: this
    process stays small, since a command's peak memory (ru_maxrss) counts
    what it was forked from."""
    yield b"{"
    for start in range(0, n, 10000):
        yield ",".join('"%s":[%d]' % (fmt % i, i) for i in range(start, min(n, start + 10000))).encode()
        if start + 10000 < n:
            yield b","
    yield b"}\n"


def read_back(what, path, fmt, n):
    """cat's JSON line of the one record in path is {name i: [i]} for i < n."""
    rc, _, _ = run(["cat", path], subprocess.PIPE)
    d = hashlib.md5()
    size = 0
    for piece in wide_json(fmt, n):
        d.update(piece)
        size += len(piece)
    check(rc == 0 and (run.digest, run.size) == (d.hexdigest(), size), f"{what}: the record reads back whole")


def write_wide_tfrecord(path, n):
    """One Example of n int64 features f00000 ... each holding [i]."""
    entries = bytearray()
    for i in range(n):
        name = b"f%05d" % i
        values = varint(i)
        feature = tag_len(3, len(tag_len(1, len(values))) + len(values)) + tag_len(1, len(values)) + values
        key = tag_len(1, len(name)) + name
        entry = key + tag_len(2, len(feature)) + feature
        entries += tag_len(1, len(entry)) + entry
    payload = tag_len(1, len(entries)) + bytes(entries)
    length = struct.pack("<Q", len(payload))
    with open(path, "wb") as f:
        f.write(length + struct.pack("<I", masked(crc32c(length))) + payload +
                struct.pack("<I", masked(crc32c(payload))))
    return len(payload)


def wide_records(tmp, out):
    """Records of many small features: memory per feature stays bounded and
    the time linear (checked by the time limit: a pairwise name check took
    four minutes for 200,000)."""
    n = WIDE_FEATURES
    line = os.path.join(tmp, "wide.jsonl")
    with open(line, "wb") as f:
        for piece in wide_json("k%06d", n):
            f.write(piece)
    size = os.path.getsize(line)
    for fmt in ("parquet", "tfrecord"):
        if bounded_wide(f"convert --to {fmt} of a JSON line of {n} keys",
                        ["convert", "-q", "--to", fmt, line, "-o", f"{out}/wide-{fmt}", "-s", "1"], size, n):
            read_back(f"--to {fmt} of {n} keys", f"{out}/wide-{fmt}-00000-of-00001.{fmt}", "k%06d", n)
    k = n // 4
    record = os.path.join(tmp, "wide.tfrecord")
    size = write_wide_tfrecord(record, k)
    if bounded_wide(f"convert --to parquet of a TFRecord record of {k} features",
                    ["convert", "-q", "--to", "parquet", record, "-o", f"{out}/wide-tf", "-s", "1"], size, k):
        read_back(f"--to parquet of {k} features", f"{out}/wide-tf-00000-of-00001.parquet", "f%05d", k)


# Outputs that hold a record's encoding besides the record, each held to
# the figure shardtool(1) states: a multiple of the record, plus 32 MiB.
ENCODED_RATIO = {
    # JSON lines write a large record's text as they make it: the bound of
    # every command, though each byte becomes a six-character \u0001
    # escape (that line was held whole: 7.3 times the record).
    ("jsonl", 0x01): 2,
    ("jsonl", 0xFF): 2,     # base64
    ("csv", 0xFF): 3.5,
    ("parquet", 0x01): 6.5,
    ("avro", 0x01): 5.5,
}


def file_md5(path):
    d = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            d.update(block)
    return d.hexdigest(), os.path.getsize(path)


def encoded_outputs(paths, out):
    """convert to each output that holds the record's encoding, within its
    stated multiple of the record, and what it wrote read back whole."""
    for (fmt, byte), ratio in ENCODED_RATIO.items():
        limit = int(ratio * RECORD) + (32 << 20)
        prefix = f"{out}/enc-{fmt}-{byte:02x}"
        what = f"convert --to {fmt} of a {RECORD_MIB} MiB value of bytes 0x{byte:02x}"
        rc, rss, err = run(["convert", "-q", "--to", fmt, paths[byte], "-o", prefix, "-s", "1"],
                           as_limit=limit + (512 << 20))
        check(rc == 0, f"{what}: exit 0" + ("" if rc == 0 else f" (got {rc}: {err.strip()[-300:]})"))
        if not SANITIZED:
            check(rss <= limit, f"{what}: peak memory {rss >> 20} MiB within {ratio} x {RECORD_MIB} MiB + 32 MiB")
        if rc != 0 or fmt == "csv":
            continue   # (CSV reads its base64 back as text)
        shard = f"{prefix}-00000-of-00001.{fmt}"
        if fmt == "jsonl":
            got = file_md5(shard)
        else:
            run(["cat", shard], subprocess.PIPE)
            got = (run.digest, run.size)
        check(got == expected_json(byte, RECORD), f"{what}: the record reads back whole")
        os.remove(shard)


def expected_json(byte, n):
    """md5 and size of cat's line for the record."""
    d = hashlib.md5()
    if byte < 0x20 or (0x20 <= byte < 0x7F and byte not in (0x22, 0x5C)):
        parts = [b'{"data":["', None, b'"]}\n']
        # A control character is written as its \u escape, six bytes.
        unit = b"\\u%04x" % byte if byte < 0x20 else bytes([byte])
        run_text = unit * (1 << 20)
        total = 0
        d.update(parts[0])
        total += len(parts[0])
        left = n
        while left:
            k = min(left, 1 << 20)
            d.update(run_text[:k * len(unit)])
            total += k * len(unit)
            left -= k
        d.update(parts[2])
        total += len(parts[2])
        return d.hexdigest(), total
    head, tail = b'{"data":[{"base64":"', b'"}]}\n'
    d.update(head)
    total = len(head)
    group = base64.b64encode(bytes([byte]) * 3) * (1 << 18)   # 1 MiB of text for 768 KiB
    left = n
    while left >= 3 << 18:
        d.update(group)
        total += len(group)
        left -= 3 << 18
    rest = base64.b64encode(bytes([byte]) * left)
    d.update(rest + tail)
    total += len(rest) + len(tail)
    return d.hexdigest(), total


def main():
    global ST, SANITIZED
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ST = os.path.abspath(sys.argv[1])
    with open(ST, "rb") as f:
        SANITIZED = b"__asan_init" in f.read()
    if SANITIZED:
        print("note: sanitizer build: memory is not limited or measured")
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"12", 0x33, 1) == crc32c(b"123")
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "binary.tfrecord.gz")   # not UTF-8: base64 in JSON
        text = os.path.join(tmp, "text.tfrecord.gz")       # 'a' * N: a JSON string
        write_record(binary, 0xFF, RECORD)
        write_record(text, 0x61, RECORD)
        out = os.path.join(tmp, "out")
        os.mkdir(out)

        for path, byte, label in ((binary, 0xFF, "base64"), (text, 0x61, "text")):
            if bounded(f"cat ({label} value as JSON)", ["cat", path], subprocess.PIPE):
                want = expected_json(byte, RECORD)
                check((run.digest, run.size) == want,
                      f"cat ({label} value): the JSON line is exact ({run.size} bytes)")

        if bounded("convert -z gzip", ["convert", "-j", "2", "-z", "gzip", binary, "-o", out + "/c", "-s", "1"]):
            rc, _, err = run(["verify", "--decode", out + "/c-00000-of-00001.tfrecord.gz"])
            check(rc == 0, "convert -z gzip: the shard verifies" + ("" if rc == 0 else f" ({err.strip()})"))
        if bounded("split", ["split", binary, "-o", out + "/s", "-s", "1"]):
            with open(out + "/s-00000-of-00001.tfrecord", "rb") as f:
                copied = hashlib.md5(f.read()).hexdigest()
            with open(binary, "rb") as f:
                original = hashlib.md5(zlib.decompress(f.read(), 31)).hexdigest()
            check(copied == original, "split: the record is copied byte for byte")
        bounded("split -z gzip", ["split", "-z", "gzip", binary, "-o", out + "/t", "-s", "1"])
        bounded("stat", ["stat", binary])
        bounded("verify --decode", ["verify", "--decode", binary])
        # Three large records at once: the pipeline keeps one in flight.
        # (A copy: convert refuses one input given twice.)
        binary2 = os.path.join(tmp, "binary2.tfrecord.gz")
        shutil.copyfile(binary, binary2)
        bounded("convert of three large records",
                ["convert", "-j", "2", binary, text, binary2, "-o", out + "/m", "-s", "2"])
        bounded("cat -f tfrecord", ["cat", "--format", "tfrecord", binary])
        control = os.path.join(tmp, "control.tfrecord.gz")   # 0x01 * N: \u0001 in JSON
        write_record(control, 0x01, RECORD)
        encoded_outputs({0x01: control, 0xFF: binary}, out)
        os.remove(control)
        wide_records(tmp, out)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
