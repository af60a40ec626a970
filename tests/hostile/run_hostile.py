#!/usr/bin/env python3
"""Hostile inputs: resource cases that must fail or finish, never hang.

Usage: run_hostile.py SHARDTOOL [NAME_SUBSTRING...]

Each case runs shardtool under a wall-clock limit and an address-space
limit (RLIMIT_AS, as `ulimit -v` sets it; left out for AddressSanitizer
builds, whose shadow memory needs more), so that a regression fails the
suite instead of hanging it or eating the machine.  Signal cases send one
SIGTERM or SIGINT once the command is under way and require it to say
"interrupted" and die by that signal within SIGNAL_GRACE seconds.

Cases (see tests/hostile/README.md for why each exists):

  header-1m-columns        a 1,000,000-column CSV header (--max-columns)
  header-over-limit        the same header without it: refused at once
  header-4000-duplicates   4,000 copies of one name (was cubic: ~1 min)
  symlink-loop-dir         a directory whose subdirectory links back up
  fifo-in-dir              a FIFO beside a CSV inside an input directory
  binary-8-bytes           \\xff\\xff\\xff\\xffPAR1 is not read as CSV
  sigterm-header           SIGTERM during 1M-column header work
  sigterm-symlink-loop     SIGTERM while walking a symlink loop then waiting
  sigterm-fifo-open        SIGTERM while open() waits on a FIFO (cat)
  sigint-fifo-convert      SIGINT while convert's reader thread waits on one
  sigterm-stdin-silent     SIGTERM while a silent pipe on stdin is read
  sigint-remote-silent     SIGINT while an http server sends nothing more
  wide-record-200k         one JSON line of 200,000 keys to Parquet and TFRecord
  payload-bomb-header      a PNG claiming 100,000 x 100,000 pixels: refused unread
  payload-bomb-inflate     a real 12,000 x 12,000 PNG of zeros (432 MB of pixels
                           from 420 KB): decoded a row at a time under 384 MiB
  payload-bomb-jpeg-gif    JPEG 65,500 x 65,500 and GIF 65,535 x 65,535 headers

Prints one line per case and "N passed, M failed"; exits 1 on any failure.
The whole suite takes well under 30 seconds.  To add a case, write a
function taking a Ctx and returning None (pass) or a message (fail), and
add it to CASES.
"""
import http.server
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

MEMORY_LIMIT = 2 << 30    # bytes of address space per command
SIGNAL_GRACE = 1.5        # seconds from the signal to the exit (asked: ~1 s)
SIGNAL_DELAY = 0.4        # seconds before the signal is sent


class Ctx:
    def __init__(self, st, tmp, limit_memory, memory_limit=MEMORY_LIMIT):
        self.st = st
        self.tmp = tmp
        self.limit_memory = limit_memory
        self.memory_limit = memory_limit

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def _limits(self):
        if self.limit_memory:
            resource.setrlimit(resource.RLIMIT_AS, (self.memory_limit, self.memory_limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def run(self, args, timeout, stdin=subprocess.DEVNULL):
        """(returncode, stdout, stderr, cpu seconds); returncode None on timeout.
        CPU time, not wall time, is what a case may bound: a loaded CI
        machine stretches the wall clock, not the work."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.Popen([self.st] + args, stdin=stdin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=self._limits)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            return None, out, err, cpu_since(before)
        return p.returncode, out, err, cpu_since(before)

    def signal_during(self, args, sig=signal.SIGTERM, stdin=subprocess.DEVNULL,
                      delay=SIGNAL_DELAY):
        """Starts args, sends sig after delay; None when it exited in time."""
        p = subprocess.Popen([self.st] + args, stdin=stdin, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, preexec_fn=self._limits)
        time.sleep(delay)
        finished_before = p.poll() is not None
        if not finished_before:
            p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=SIGNAL_GRACE)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            return "still running %.1f s after %s" % (SIGNAL_GRACE, signal.Signals(sig).name)
        if finished_before:
            return None  # done before the signal: nothing to stop
        if p.returncode == 0:
            return "exit 0 after %s (an interrupted run must fail)" % signal.Signals(sig).name
        # The tool cleans up, says "interrupted", then dies by the same
        # signal (status 128+N, as gzip and git do).  Death by the signal
        # without the message would be its default action: no cleanup.
        if b"interrupted" not in err:
            return "no 'interrupted' message: killed by the signal's default action (%d)" % p.returncode
        if p.returncode != -sig:
            return "exit %d after %s; expected death by the signal" % (p.returncode, signal.Signals(sig).name)
        return None


def cpu_since(before):
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_header(path, names):
    with open(path, "w") as f:
        f.write(",".join(names))
        f.write("\n")


def wide_csv(ctx):
    path = ctx.path("wide.csv")
    if not os.path.exists(path):
        write_header(path, ("c%d" % i for i in range(1000000)))
    return path


def case_header_1m_columns(ctx):
    # About 2 s of CPU in a plain build, three times that under the
    # sanitizers: the bound tells linear work from the pairwise comparison
    # of names this case was written for (minutes), not one build's speed.
    cpu_bound = 5 if ctx.limit_memory else 20
    rc, out, err, cpu = ctx.run(["stat", "--max-columns", "1000000", wide_csv(ctx)], timeout=4 * cpu_bound)
    if rc is None:
        return "no answer in %d s (the names were compared pairwise once)" % (4 * cpu_bound)
    if rc != 0:
        return "exit %s: %s" % (rc, err.decode(errors="replace")[:200])
    if cpu > cpu_bound:
        return "took %.1f s of CPU (a plain build takes about 2 s)" % cpu
    return None


def case_header_over_limit(ctx):
    rc, _, err, secs = ctx.run(["stat", wide_csv(ctx)], timeout=10)
    # A damaged or over-limit input is status 1 in every command, as in convert (shardtool(1)).
    if rc != 1 or b"--max-columns" not in err:
        return "exit %s, %r: a header over the default limit must be refused naming --max-columns" % (
            rc, err[:200])
    return None


def case_header_4000_duplicates(ctx):
    path = ctx.path("dups.csv")
    with open(path, "w") as f:
        f.write(",".join(["a"] * 4000) + "\n" + ",".join(["1"] * 4000) + "\n")
    rc, out, err, secs = ctx.run(["cat", path], timeout=10)
    if rc is None:
        return "no answer in 10 s"
    if rc != 0 or b'"a_3999":[1]' not in out:
        return "exit %s: %s" % (rc, err.decode(errors="replace")[:200])
    return None


def loop_dir(ctx):
    d = ctx.path("loop")
    if not os.path.isdir(d):
        os.makedirs(os.path.join(d, "sub"))
        with open(os.path.join(d, "sub", "x.csv"), "w") as f:
            f.write("a\n1\n")
        os.symlink("..", os.path.join(d, "sub", "up"))
        os.symlink(".", os.path.join(d, "sub", "self"))
    return d


def case_symlink_loop_dir(ctx):
    rc, out, err, _ = ctx.run(["cat", loop_dir(ctx)], timeout=10)
    if rc is None:
        return "no answer in 10 s (a symlink loop walked for ever)"
    if rc != 0 or out != b'{"a":[1]}\n':
        return "exit %s, stdout %r: %s" % (rc, out[:100], err.decode(errors="replace")[:200])
    return None


def fifo_dir(ctx):
    d = ctx.path("withfifo")
    if not os.path.isdir(d):
        os.makedirs(d)
        with open(os.path.join(d, "x.csv"), "w") as f:
            f.write("a\n1\n")
        os.mkfifo(os.path.join(d, "pipe"))
        socket.socket(socket.AF_UNIX).bind(os.path.join(d, "sock"))
    return d


def case_fifo_in_dir(ctx):
    rc, out, err, _ = ctx.run(["cat", "-v", fifo_dir(ctx)], timeout=10)
    if rc is None:
        return "no answer in 10 s (opened the FIFO and waited for a writer)"
    if rc != 0 or out != b'{"a":[1]}\n' or b"a FIFO" not in err:
        return "exit %s, stdout %r, stderr %r" % (rc, out[:100], err[:300])
    return None


def case_binary_8_bytes(ctx):
    path = ctx.path("scrap")
    with open(path, "wb") as f:
        f.write(b"\xff\xff\xff\xffPAR1")
    for cmd in ("cat", "stat"):
        rc, out, err, _ = ctx.run([cmd, path], timeout=10)
        if rc in (None, 0) or path.encode() not in err:
            return "%s: exit %s (%r): binary data read as text" % (cmd, rc, err[:200])
    return None


def case_sigterm_header(ctx):
    return ctx.signal_during(["stat", "--max-columns", "1000000", wide_csv(ctx)], delay=0.2)


def case_sigterm_symlink_loop(ctx):
    # After the walk, "-" waits on a pipe that never speaks: a walk that
    # never ends, or a read that ignores the signal, both fail.
    r, w = os.pipe()
    try:
        return ctx.signal_during(["cat", "--from", "csv", loop_dir(ctx), "-"], stdin=r)
    finally:
        os.close(r)
        os.close(w)


def case_sigterm_fifo_open(ctx):
    fifo = ctx.path("lonely.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    return ctx.signal_during(["cat", "--from", "csv", fifo])


def case_sigint_fifo_convert(ctx):
    fifo = ctx.path("lonely2.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    return ctx.signal_during(["convert", "-q", "--from", "csv", fifo, "-o", ctx.path("o", "t")],
                             sig=signal.SIGINT)


def case_sigterm_stdin_silent(ctx):
    r, w = os.pipe()
    try:
        return ctx.signal_during(["convert", "-q", "--from", "csv", "-", "-o", ctx.path("o2", "t")],
                                 stdin=r)
    finally:
        os.close(r)
        os.close(w)


class _SilentHandler(http.server.BaseHTTPRequestHandler):
    """Answers with the headers of a large object, then sends nothing."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", str(64 << 20))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", '"silent"')
        self.end_headers()

    def do_GET(self):
        self.do_HEAD()
        self.wfile.flush()
        self.server.stop.wait(30)


def case_sigint_remote_silent(ctx):
    # A server that stops sending after its headers: one SIGINT must end
    # cat, stat and verify at once, not after the stall timeout or never.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SilentHandler)
    server.daemon_threads = True
    server.stop = threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/x.tfrecord" % server.server_address[1]
    try:
        for cmd in (["cat", url], ["stat", url], ["verify", url]):
            problem = ctx.signal_during(cmd, sig=signal.SIGINT, delay=0.6)
            if problem:
                return "%s: %s" % (cmd[0], problem)
        return None
    finally:
        server.stop.set()
        server.shutdown()
        server.server_close()


def case_earlier_set_100k(ctx):
    """An earlier set of 100,000 shards (the most --shards allows) is found
    and refused in linear time, not by comparing every name with every other."""
    d = ctx.path("earlier")
    os.makedirs(d)
    for i in range(100000):
        open(os.path.join(d, "x-%05d-of-100000.tfrecord" % i), "w").close()
    src = ctx.path("one.csv")
    with open(src, "w") as f:
        f.write("a\n1\n")
    rc, _, err, secs = ctx.run(["convert", src, "-o", os.path.join(d, "x")], timeout=30)
    if rc is None:
        return "no answer in 30 s"
    if rc != 2 or b"100000 files of that set" not in err:
        return "exit %s: %s" % (rc, err.decode(errors="replace")[:200])
    if secs > 5:
        return "%.1f s of CPU to find the earlier set" % secs
    return None


def case_lossy_100k_columns(ctx):
    """100,000 float columns whose every value changes when narrowed: the
    per-column notes are kept by name in linear time."""
    path = ctx.path("lossy.csv")
    n = 100000
    with open(path, "w") as f:
        f.write(",".join("c%d" % i for i in range(n)) + "\n")
        f.write(",".join(["3.14159265358979"] * n) + "\n")
    rc, _, err, secs = ctx.run(["convert", path, "-o", ctx.path("lossy", "x")], timeout=60)
    if rc is None:
        return "no answer in 60 s"
    if rc != 0 or err.count(b"changed when narrowed") != n:
        return "exit %s: %s" % (rc, err.decode(errors="replace")[-200:])
    if secs > 8:
        return "%.1f s of CPU for the per-column notes" % secs
    return None


def case_wide_record_200k(ctx):
    """One JSON line of 200,000 keys (3 MB): convert to Parquet and to
    TFRecord in linear time and bounded memory (a pairwise name check and a
    schema search per column took 2.2 GB and four minutes), every value
    read back."""
    n = 200000
    path = ctx.path("wide.jsonl")
    with open(path, "w") as f:
        f.write("{" + ",".join('"k%06d":%d' % (i, i) for i in range(n)) + "}\n")
    want = {"k%06d" % i: [i] for i in range(n)}
    # A sanitized build runs several times slower: five times the bound
    # still tells linear (2 s) from the quadratic four minutes.
    cpu_bound = 10 if ctx.limit_memory else 50
    for fmt, ext in (("parquet", "parquet"), ("tfrecord", "tfrecord")):
        prefix = ctx.path("wide-" + fmt, "w")
        rc, _, err, secs = ctx.run(["convert", "-q", "--to", fmt, path, "-o", prefix, "-s", "1"],
                                   timeout=6 * cpu_bound)
        if rc is None:
            return "--to %s: no answer in %d s" % (fmt, 6 * cpu_bound)
        if rc != 0:
            return "--to %s: exit %s: %s" % (fmt, rc, err.decode(errors="replace")[-200:])
        if secs > cpu_bound:
            return "--to %s: %.1f s of CPU for 200,000 features (bound %d; linear: about 2)" % (fmt, secs,
                                                                                             cpu_bound)
        rc, out, err, _ = ctx.run(["cat", prefix + "-00000-of-00001." + ext], timeout=60)
        if rc != 0 or json.loads(out) != want:
            return "--to %s: the record read back differs (exit %s: %s)" % (
                fmt, rc, err.decode(errors="replace")[-200:])
    return None


# ---- payloads (verify --payloads, convert --check-payloads, stat) ------------------

PAYLOAD_MEMORY = 384 << 20   # well under what any of these images would take whole


def payload_shard(ctx, name, values):
    """A TFRecord shard of one record per value, feature "image"."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
    import example_shards
    path = ctx.path(name)
    example_shards.write_tfrecord(path, ({"image": [v]} for v in values))
    return path


def png(width, height, rows=None):
    """An RGB PNG of width x height whose IDAT inflates to `rows` rows of
    zeros (all of them by default), compressed a row at a time."""
    import struct
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    z = zlib.compressobj(9)
    row = bytes(1 + 3 * width)
    idat = b"".join(z.compress(row) for _ in range(height if rows is None else rows)) + z.flush()
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", idat) + chunk(b"IEND", b""))


def payload_run(ctx, args, timeout=30):
    limited = Ctx(ctx.st, ctx.tmp, ctx.limit_memory, PAYLOAD_MEMORY)
    return limited.run(args, timeout)


def case_payload_bomb_header(ctx):
    """A PNG header claiming 100,000 x 100,000 pixels (30 GB as RGB) over a
    few rows of data: verify, convert and stat say what it is without
    allocating it, under 384 MiB of address space."""
    shard = payload_shard(ctx, "bomb.tfrecord", [png(100000, 100000, rows=2)])
    rc, out, err, secs = payload_run(ctx, ["verify", "--payloads", shard])
    if rc != 1 or b"payload too large" not in out or b"100000x100000" not in out:
        return "verify: exit %s: %s" % (rc, (out + err).decode(errors="replace")[-300:])
    rc, out, err, _ = payload_run(ctx, ["verify", "--payloads", "--max-pixels", "20000000000", shard])
    if rc != 1 or b"bad payload" not in out:
        return "verify --max-pixels 2e10 (decoded a row at a time): exit %s: %s" % (
            rc, (out + err).decode(errors="replace")[-300:])
    rc, _, err, _ = payload_run(ctx, ["convert", "-q", "--check-payloads", "--skip-corrupt", shard,
                                      "-o", ctx.path("bomb-out", "x")])
    if rc != 0:
        return "convert --check-payloads --skip-corrupt: exit %s: %s" % (rc, err.decode(errors="replace")[-300:])
    rc, out, err, _ = payload_run(ctx, ["stat", shard])
    if rc != 0 or b"100000x100000" not in out:
        return "stat: exit %s: %s" % (rc, (out + err).decode(errors="replace")[-300:])
    if secs > 2:
        return "%.1f s of CPU to refuse a header" % secs
    return None


def case_payload_bomb_inflate(ctx):
    """A real decompression bomb within --max-pixels: 12,000 x 12,000 RGB
    (432 MB of pixels) from a 420 KB PNG.  Every row is inflated and
    checked into a one-row buffer, under 384 MiB of address space."""
    shard = payload_shard(ctx, "inflate.tfrecord", [png(12000, 12000)])
    rc, out, err, secs = payload_run(ctx, ["verify", "--payloads", shard], timeout=60)
    if rc != 0 or b"1 payload: 1 png" not in out:
        return "verify: exit %s: %s" % (rc, (out + err).decode(errors="replace")[-300:])
    if secs > 20:
        return "%.1f s of CPU for 432 MB of zeros" % secs
    rc, out, _, _ = payload_run(ctx, ["verify", "--payloads", "--max-pixels", "1000000", shard])
    if rc != 1 or b"payload too large" not in out:
        return "--max-pixels 1000000: exit %s: %s" % (rc, out.decode(errors="replace")[-300:])
    return None


def case_payload_bomb_jpeg_gif(ctx):
    """The largest headers JPEG and GIF can write, over tiny images."""
    import struct
    jpeg = bytes.fromhex("ffd8ffdb004300" + "01" * 64 + "ffc0000b080001000101011100"
                         "ffc4001f0000010501010101010100000000000000000102030405060708090a0b"
                         "ffda0008010100003f00" + "00" * 16 + "ffd9")
    at = jpeg.index(b"\xff\xc0") + 5
    jpeg = jpeg[:at] + struct.pack(">HH", 65500, 65500) + jpeg[at + 4:]
    gif = b"GIF89a" + struct.pack("<HH", 65535, 65535) + b"\x00\x00\x00" + \
        b"\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00\x3b"
    shard = payload_shard(ctx, "headers.tfrecord", [jpeg, gif])
    rc, out, err, secs = payload_run(ctx, ["verify", "--payloads", shard])
    if rc != 1 or out.count(b"payload too large") != 2:
        return "verify: exit %s: %s" % (rc, (out + err).decode(errors="replace")[-400:])
    if b"65500x65500" not in out or b"65535x65535" not in out:
        return "the sizes are not named: %s" % out.decode(errors="replace")[-400:]
    return None


CASES = [
    ("header-1m-columns", case_header_1m_columns),
    ("header-over-limit", case_header_over_limit),
    ("header-4000-duplicates", case_header_4000_duplicates),
    ("symlink-loop-dir", case_symlink_loop_dir),
    ("fifo-in-dir", case_fifo_in_dir),
    ("binary-8-bytes", case_binary_8_bytes),
    ("sigterm-header", case_sigterm_header),
    ("sigterm-symlink-loop", case_sigterm_symlink_loop),
    ("sigterm-fifo-open", case_sigterm_fifo_open),
    ("sigint-fifo-convert", case_sigint_fifo_convert),
    ("sigterm-stdin-silent", case_sigterm_stdin_silent),
    ("sigint-remote-silent", case_sigint_remote_silent),
    ("earlier-set-100k", case_earlier_set_100k),
    ("lossy-100k-columns", case_lossy_100k_columns),
    ("wide-record-200k", case_wide_record_200k),
    ("payload-bomb-header", case_payload_bomb_header),
    ("payload-bomb-inflate", case_payload_bomb_inflate),
    ("payload-bomb-jpeg-gif", case_payload_bomb_jpeg_gif),
]


def sanitized(binary):
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def main():
    st = os.path.abspath(sys.argv[1])
    only = sys.argv[2:]
    limit_memory = not sanitized(st)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Ctx(st, tmp, limit_memory)
        for name, fn in CASES:
            if only and not any(o in name for o in only):
                continue
            start = time.monotonic()
            problem = fn(ctx)
            secs = time.monotonic() - start
            if problem:
                failed += 1
                print("FAIL %-24s %s" % (name, problem))
            else:
                passed += 1
                print("ok   %-24s %.2f s" % (name, secs))
    print("%d passed, %d failed%s" % (passed, failed,
                                      "" if limit_memory else " (no memory limit: sanitizer build)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
