#!/usr/bin/python3
"""Many outputs uploading at once, through faults: `convert -o s3://...
--shards 6` of a 38 MB TFRecord (every shard a multipart upload of two
parts) to s3rver behind the SigV4-checking proxy, with the fault proxy
failing part uploads (answers cut after the part was stored, connections
reset, 503 with Retry-After, 500) and resetting the first request that
completes an upload.

  - the objects equal the shards of the same convert between local files,
    byte for byte, and the manifest lists them;
  - the run ends with no upload left open (s3rver's uploads directory is
    empty: every upload completed or aborted);
  - a refused CreateMultipartUpload (sent with the first part, its answer
    not waited for while the next parts fill) fails the run with a message
    naming the object, and leaves no object and no open upload;
  - the writer does not wait for CreateMultipartUpload's answer, and the
    uploads of the shards are completed side by side, not one after
    another: a proxy in front holds each CreateMultipartUpload, and each
    CompleteMultipartUpload, until a second one of its kind arrives (or
    5 s pass), and counts how many were in flight at once.  Sent one by
    one, waiting for each answer, no second one can come while the first
    is held, and the count stays 1.

usage: test_upload_many.py SHARDTOOL SOURCE_ROOT
exit 77 when s3rver cannot be started."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rtest  # noqa: E402
import servers  # noqa: E402
import test_s3  # noqa: E402

KEY, SECRET = test_s3.KEY, test_s3.SECRET
BUCKET = "test"
SHARDS = 6
PART_FAULTS = ["ok", "cut", "ok", "reset", "503", "ok", "500", "ok"]


class _HoldHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _handle(self):
        p = self.server.owner
        body = servers._read_body(self)
        kind = None
        if self.command == "POST" and "uploadId=" in self.path:
            kind = "complete"
        elif self.command == "POST" and self.path.endswith("?uploads"):
            kind = "create"
        if kind:
            with p.cond:
                p.arrived[kind] += 1
                p.in_flight[kind] += 1
                p.most[kind] = max(p.most[kind], p.in_flight[kind])
                p.cond.notify_all()
                p.cond.wait_for(lambda: p.arrived[kind] >= 2, timeout=5)
        try:
            status, hdrs, data = servers._forward(p.upstream, self.command, self.path,
                                                  list(self.headers.items()), body)
        finally:
            if kind:
                with p.cond:
                    p.in_flight[kind] -= 1
        servers._reply(self, status, hdrs, data, self.command == "HEAD")

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


class HoldUploads(servers._Base):
    """Passes everything on; holds each request that creates a multipart
    upload until a second one has arrived (at most 5 s), and so each one
    that completes an upload; counts how many of each kind were in flight
    at once."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.cond = threading.Condition()
        self.arrived = {"create": 0, "complete": 0}
        self.in_flight = {"create": 0, "complete": 0}
        self.most = {"create": 0, "complete": 0}
        super().__init__(_HoldHandler)


def main():
    exe, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    s3bin = test_s3.s3rver_bin()
    if not s3bin:
        print("s3rver is not installed and cannot be (npm ci in tests/remote)")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-remote-upload-many-")
    started = []
    env = None
    try:
        try:
            srv = test_s3.S3rver(s3bin, os.path.join(tmp, "s3rver"))
        except rtest.Failure as e:
            print("cannot start s3rver: %s" % e)
            return rtest.SKIP
        started.append(srv)
        sig = servers.SigV4Proxy(srv.port, {KEY: SECRET})
        started.append(sig)
        count = {"part": 0, "complete": 0}

        def faults(method, path):
            if method == "PUT" and "partNumber=" in path:
                n = count["part"]
                count["part"] += 1
                return PART_FAULTS[n % len(PART_FAULTS)]
            if method == "POST" and "uploadId=" in path:
                count["complete"] += 1
                return "reset" if count["complete"] == 1 else None
            return None
        fp = servers.FaultProxy(sig.port, ["ok"], fail_when=faults)
        started.append(fp)
        hold = HoldUploads(fp.port)
        started.append(hold)
        st, answer = srv.request("PUT", "/" + BUCKET)
        if st != 200:
            raise rtest.Failure("cannot create the bucket: %d %s" % (st, answer[:200]))
        env = rtest.clean_env({"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET,
                               "AWS_REGION": "us-east-1"})
        res = rtest.Results("upload-many")

        mnist = os.path.join(root, "tests", "data", "tfrecord", "tfx", "mnist", "mnist.tfrecord")
        big = os.path.join(tmp, "mnist-x12.tfrecord")
        with open(mnist, "rb") as f:
            m = f.read()
        with open(big, "wb") as f:
            f.write(m * 12)
        local = os.path.join(tmp, "local")
        os.makedirs(local)

        def run(args):
            p = subprocess.run([exe] + args, capture_output=True, env=env, timeout=600)
            if p.returncode != 0:
                raise rtest.Failure("shardtool %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                                  p.stderr.decode()[-2000:]))
            return p

        def many_at_once():
            run(["convert", big, "-o", local + "/train", "--shards", str(SHARDS), "-q"])
            run(["convert", big, "-o", "s3://%s/many/train" % BUCKET, "--shards", str(SHARDS),
                 "--chunk-size", "1M", "--retries", "8", "--endpoint", "http://127.0.0.1:%d" % hold.port, "-q"])
            names = sorted(n for n in os.listdir(local) if n.endswith(".tfrecord"))
            if len(names) != SHARDS:
                raise rtest.Failure("the local run wrote %s" % sorted(os.listdir(local)))
            for n in names:
                with open(os.path.join(local, n), "rb") as f:
                    want = f.read()
                if len(want) <= 5 << 20:
                    raise rtest.Failure("%s is %d bytes: not a multipart upload" % (n, len(want)))
                st, got = srv.request("GET", "/%s/many/%s" % (BUCKET, n))
                if st != 200 or got != want:
                    raise rtest.Failure("s3://%s/many/%s differs from the local shard (HTTP %d, %d bytes, "
                                        "%d expected)" % (BUCKET, n, st, len(got), len(want)))
            st, body = srv.request("GET", "/%s/many/train.manifest.json" % BUCKET)
            if st != 200:
                raise rtest.Failure("no manifest (HTTP %d)" % st)
            listed = [os.path.basename(s["path"]) for s in json.loads(body)["shards"]]
            if listed != names:
                raise rtest.Failure("the manifest lists %s, expected %s" % (listed, names))
            seen = set(fp.seen)
            for f in ("cut", "reset", "503", "500"):
                if f not in seen:
                    raise rtest.Failure("fault %s was never served: %s" % (f, sorted(seen)))
            uploads = os.path.join(tmp, "s3rver", BUCKET, "._S3rver_uploads")  # parts of open uploads
            left = os.listdir(uploads) if os.path.isdir(uploads) else []
            if left:
                raise rtest.Failure("multipart uploads left open: %s" % left)
            print("parts %d, completes %d (one reset); in flight at once: %d creates, %d completes"
                  % (count["part"], count["complete"], hold.most["create"], hold.most["complete"]))
            if hold.most["create"] < 2:
                raise rtest.Failure("each upload was created only once the one before was (at most %d "
                                    "CreateMultipartUpload in flight)" % hold.most["create"])
            if hold.most["complete"] < 2:
                raise rtest.Failure("the uploads were completed one after another (at most %d in flight)"
                                    % hold.most["complete"])
        res.check("%d shards uploaded at once through faults equal a local convert, created and completed "
                  "side by side" % SHARDS, many_at_once)

        def create_refused():
            # CreateMultipartUpload is sent with the first part and not
            # waited for; the parts filled meanwhile wait for its answer.
            # Refused, the run fails naming the object, and nothing is left.
            def refuse_create(method, path):
                return "500" if method == "POST" and path.endswith("?uploads") else None
            bad = servers.FaultProxy(sig.port, ["ok"], fail_when=refuse_create)
            started.append(bad)
            p = subprocess.run([exe, "convert", big, "-o", "s3://%s/refused/train" % BUCKET, "--shards", "2",
                                "--chunk-size", "1M", "--retries", "0", "--endpoint",
                                "http://127.0.0.1:%d" % bad.port], capture_output=True, env=env, timeout=600)
            err = p.stderr.decode()
            if p.returncode != 1:
                raise rtest.Failure("exit %d (1 expected): %s" % (p.returncode, err[-2000:]))
            if "500" not in err or "s3://%s/refused/train-0000" % BUCKET not in err:
                raise rtest.Failure("the message does not name the object and the HTTP status: %s" % err)
            if not any(m == "POST" and f == "500" for m, _, f in bad.log):
                raise rtest.Failure("no CreateMultipartUpload was refused: %s" % bad.log)
            st, body = srv.request("GET", "/" + BUCKET, "list-type=2&prefix=refused/")
            if b"<Key>" in body:
                raise rtest.Failure("objects under refused/: %s" % body[:500])
            uploads = os.path.join(tmp, "s3rver", BUCKET, "._S3rver_uploads")
            if os.path.isdir(uploads) and os.listdir(uploads):
                raise rtest.Failure("multipart uploads left open: %s" % os.listdir(uploads))
        res.check("a refused CreateMultipartUpload fails the run, naming the object; nothing is left",
                  create_refused)

        def six_parts_at_most():
            # shardtool-convert(1): an object being uploaded holds at most
            # six parts (four in flight, the one being filled, a sent one's
            # buffer kept for the next).  Against a store that answers each
            # request 0.3 s late the convert fills parts far faster than
            # they go: a writer that queued them would hold the whole
            # 120 MB shard.  Peak RSS of the upload against the same convert
            # into a local file: at most six 5 MiB parts more, plus room for
            # curl, TLS-less sockets and the allocator.
            huge = os.path.join(tmp, "mnist-x40.tfrecord")
            with open(huge, "wb") as f:
                for _ in range(40):
                    f.write(m)
            slow = servers.FaultProxy(sig.port, ["ok"], delay_seconds=0.3)
            started.append(slow)

            def peak_kb(args):
                # VmHWM of the process itself, read until it exits: the
                # rusage of a child would start from this test's own size,
                # which a fork hands on across exec.
                p = subprocess.Popen([exe] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
                errs = []
                reader = threading.Thread(target=lambda: errs.append(p.stderr.read()))
                reader.start()
                peak = 0
                while p.poll() is None:
                    try:
                        with open("/proc/%d/status" % p.pid) as f:
                            for line in f:
                                if line.startswith("VmHWM:"):
                                    peak = max(peak, int(line.split()[1]))
                    except (OSError, ValueError):
                        pass
                    time.sleep(0.01)
                reader.join()
                if p.returncode != 0:
                    raise rtest.Failure("shardtool %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                                      b"".join(errs).decode()[-2000:]))
                return peak
            here = peak_kb(["convert", huge, "-o", os.path.join(tmp, "one", "x"), "-q"])
            there = peak_kb(["convert", huge, "-o", "s3://%s/slow/x" % BUCKET, "--chunk-size", "5M",
                             "--endpoint", "http://127.0.0.1:%d" % slow.port, "-q"])
            more = (there - here) / 1024.0
            print("peak RSS: local %.1f MiB, through the slow store %.1f MiB (%.1f MiB more; six parts are 30)"
                  % (here / 1024.0, there / 1024.0, more))
            # A sanitizer build keeps freed parts in its quarantine: its RSS
            # says nothing of what the upload holds (the bytes are still
            # compared below).
            with open(exe, "rb") as f:
                sanitized = b"__asan_init" in f.read()
            if sanitized:
                print("note: sanitizer build: peak RSS is not checked")
            elif more > 6 * 5 + 30:
                raise rtest.Failure("the upload held %.1f MiB more than a local convert: more than six 5 MiB "
                                    "parts" % more)
            st, got = srv.request("GET", "/%s/slow/x-00000-of-00001.tfrecord" % BUCKET)
            with open(os.path.join(tmp, "one", "x-00000-of-00001.tfrecord"), "rb") as f:
                if st != 200 or got != f.read():
                    raise rtest.Failure("the slowly uploaded shard differs from the local one (HTTP %d)" % st)
        res.check("an upload to a slow store holds at most six parts (peak RSS against a local convert)",
                  six_parts_at_most)
        return res.finish()
    finally:
        if env:
            shutil.rmtree(env["HOME"], ignore_errors=True)
        for s in reversed(started):
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    rtest.main_guard(main)
