#!/usr/bin/python3
"""A server that stops answering is a bounded wait, and never a silent one.

shardtool(1) states the longest a request to a server that sends nothing
more can take before the command gives up:

    (retries + 1) x (connect-timeout + stall-time) + backoff

where backoff is the sum, over the retries, of min(15, 0.2 x 2^(k-1))
seconds (longer only when the server asks with Retry-After).  Against
three servers on 127.0.0.1, with --retries R --stall-time 1
--connect-timeout 1, each command must

  - fail (a non-zero status) in less than that bound, measured here;
  - say every retry on a line of its own by default (no -v), prefixed
    "shardtool CMD:", as curl --retry does: R lines "retry k/R";
  - say nothing of them with -q, but still the final error.

The servers:
  silent    accepts and never answers (not a byte)
  headers   answers HEAD, and a GET with its headers and the first bytes of
            the body (206 to a Range), then stalls
  backlog   a listening socket whose accept queue is full: the connection
            is never made (the connect timeout)

usage: test_stall.py SHARDTOOL [-v]"""

import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

BODY = b"id,x\n" + b"".join(b"%d,%d\n" % (i, i * 7) for i in range(20000))


def backoff(retries):
    return sum(min(15.0, 0.2 * 2 ** (k - 1)) for k in range(1, retries + 1))


def bound(retries, connect, stall):
    return (retries + 1) * (connect + stall) + backoff(retries)


class RawServer:
    """mode "silent" or "headers"; connections are held open until stop()."""

    def __init__(self, mode):
        self.mode = mode
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held = []
        self.stopped = False
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(c)
            if self.mode == "headers":
                threading.Thread(target=self.answer, args=(c,), daemon=True).start()

    def answer(self, c):
        """HEAD: whole headers.  GET: headers and 10 bytes, then silence
        (the connection stays open; a kept-alive HEAD connection may be
        followed by a GET)."""
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = c.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                method = lines[0].split()[0]
                rng = None
                for l in lines[1:]:
                    if l.lower().startswith("range:"):
                        m = re.match(r"\s*bytes=(\d+)-(\d*)", l.split(":", 1)[1])
                        if m:
                            a = int(m.group(1))
                            b = int(m.group(2)) if m.group(2) else len(BODY) - 1
                            rng = (a, min(b, len(BODY) - 1))
                if rng:
                    part = BODY[rng[0]:rng[1] + 1]
                    status = "206 Partial Content"
                    extra = "Content-Range: bytes %d-%d/%d\r\n" % (rng[0], rng[1], len(BODY))
                else:
                    part, status, extra = BODY, "200 OK", ""
                hdr = ("HTTP/1.1 %s\r\nContent-Type: text/csv\r\nAccept-Ranges: bytes\r\n%s"
                       "Content-Length: %d\r\nETag: \"v1\"\r\n\r\n" % (status, extra, len(part))).encode()
                if method == "HEAD":
                    c.sendall(hdr)
                    continue
                c.sendall(hdr + part[:10])
                while not self.stopped:  # the stall
                    time.sleep(0.2)
                return
        except OSError:
            return

    def stop(self):
        self.stopped = True
        self.sock.close()
        for c in self.held:
            c.close()


class BacklogServer:
    """Listens with a full accept queue: new connections are never made."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(0)
        self.port = self.sock.getsockname()[1]
        self.fill = []
        for _ in range(4):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", self.port))
            except BlockingIOError:
                pass
            self.fill.append(c)
        time.sleep(0.2)

    def stop(self):
        for c in self.fill:
            c.close()
        self.sock.close()


def main():
    shardtool = sys.argv[1]
    verbose = "-v" in sys.argv[2:]
    failures = []
    servers = {"silent": RawServer("silent"), "headers": RawServer("headers"), "backlog": BacklogServer()}
    connect, stall = 1, 1
    runs = [
        ("silent", "convert", 2, False),
        ("silent", "cat", 1, False),
        ("headers", "convert", 2, False),
        ("headers", "stat", 2, False),
        ("backlog", "convert", 1, False),
        ("silent", "convert", 2, True),
    ]
    measured = []
    out_dir = tempfile.mkdtemp()
    for name, cmd, retries, quiet in runs:
        url = "http://127.0.0.1:%d/data.csv" % servers[name].port
        argv = [shardtool, cmd, "--retries", str(retries), "--stall-time", str(stall),
                "--connect-timeout", str(connect)]
        if cmd == "convert":
            argv += ["-o", "%s/%s-%d/train" % (out_dir, name, len(measured))]
        if quiet:
            argv.append("-q")
        argv.append(url)
        limit = bound(retries, connect, stall)
        label = "%s%s against the %s server (bound %.1f s)" % (cmd, " -q" if quiet else "", name, limit)
        t0 = time.monotonic()
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        took = time.monotonic() - t0
        measured.append("%s: %.2f s" % (label, took))
        notices = [l for l in p.stderr.splitlines() if re.search(r"; retry \d+/%d in [0-9.]+ s" % retries, l)]
        # Never connected (the backlog) is an input not there: exit 2 in
        # every command, as a refused connection.  A server that took it
        # and stalled fails a convert (1); cat, stat and verify say 2 for
        # any input they cannot read.
        want_rc = 2 if name == "backlog" or cmd != "convert" else 1
        if p.returncode != want_rc:
            failures.append("%s: exit %s, want %d" % (label, p.returncode, want_rc))
        if took >= limit:
            failures.append("%s: took %.2f s, more than the stated bound" % (label, took))
        want = 0 if quiet else retries
        if len(notices) < want or (quiet and notices):
            failures.append("%s: %d retry notices, want %s: %r"
                            % (label, len(notices), want if quiet else "at least %d" % want, p.stderr))
        for l in notices:
            if not l.startswith("shardtool %s: " % cmd):
                failures.append("%s: notice without 'shardtool %s:': %s" % (label, cmd, l))
        if name != "backlog" and notices and "--stall-time" not in notices[0]:
            failures.append("%s: the notice does not point to --stall-time: %s" % (label, notices[0]))
        if name == "backlog" and notices and "--connect-timeout" not in notices[0]:
            failures.append("%s: the notice does not point to --connect-timeout: %s" % (label, notices[0]))
        if verbose:
            sys.stderr.write("%s:\n%s" % (label, p.stderr))
        if "gave up" not in p.stderr:
            failures.append("%s: no final 'gave up' error: %r" % (label, p.stderr))
    for s in servers.values():
        s.stop()
    shutil.rmtree(out_dir, ignore_errors=True)
    for m in measured:
        print(m)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
