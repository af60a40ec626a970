#!/usr/bin/python3
"""convert -o s3://... SIGKILLed mid-upload, then run again with --resume.

s3rver behind the SigV4-checking proxy, and in front of both the fault
proxy of tests/remote/servers.py, whose fail_when hook here SIGKILLs the
running shardtool when a chosen request arrives (before it is passed on):
the first part of a multipart upload, its second part, the request that
completes the second shard, the manifest's upload.  So every kill point is
a request, never a guess in time.

After each kill, what a reader of the bucket sees is checked: every object
under the prefix (but the killed run's lock object) is a whole shard, byte for byte the one an unkilled run
writes (a multipart upload that was not completed is invisible), and the
manifest, written last, is there only once every shard is.  A plain rerun
is refused while objects are there (exit 2, naming --force); the rerun with
--resume (shardtool-convert(1): it converts again and replaces its own
earlier outputs, or keeps the shards a manifest lists as intact) succeeds,
and the objects under the prefix are then the unkilled run's, manifest
included.  TFRecord shards of two 5 MiB parts each, and Parquet shards.

usage: test_resume_kill.py SHARDTOOL SOURCE_ROOT
exit 77 when s3rver cannot be started."""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rtest  # noqa: E402
import servers  # noqa: E402
import test_s3  # noqa: E402

KEY, SECRET = test_s3.KEY, test_s3.SECRET
BUCKET = "test"


class Killer:
    """fail_when for the fault proxy: SIGKILLs the run when `pick(method,
    path)` first says so, and answers that request with a reset."""

    def __init__(self):
        self.proc = None
        self.pick = None
        self.fired = None
        self.started = threading.Event()

    def arm(self, pick):
        self.pick, self.fired, self.proc = pick, None, None
        self.started.clear()

    def __call__(self, method, path):
        if self.pick is None or self.fired is not None:
            return None
        self.started.wait(10)  # Popen has returned: the pid is known
        if self.pick(method, path):
            self.fired = "%s %s" % (method, path)
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()   # dead before the request goes anywhere
            return "reset"
        return None


def main():
    exe, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    s3bin = test_s3.s3rver_bin()
    if not s3bin:
        print("s3rver is not installed and cannot be (npm ci in tests/remote)")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-resume-kill-")
    started = []
    env = rtest.clean_env({"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET})
    try:
        try:
            srv = test_s3.S3rver(s3bin, os.path.join(tmp, "s3rver"))
            started.append(srv)
        except rtest.Failure as e:
            print("cannot start s3rver: %s" % e)
            return rtest.SKIP
        proxy = servers.SigV4Proxy(srv.port, {KEY: SECRET})
        started.append(proxy)
        killer = Killer()
        fault = servers.FaultProxy(proxy.port, ["ok"], fail_when=killer)
        started.append(fault)
        return run_cases(exe, root, tmp, env, srv, proxy, fault, killer)
    finally:
        for s in reversed(started):
            s.stop()
        shutil.rmtree(env["HOME"], ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


def run_cases(exe, root, tmp, env, srv, proxy, fault, killer):
    res = rtest.Results("remote-resume-kill")
    st, body = srv.request("PUT", "/" + BUCKET)
    if st != 200:
        raise rtest.Failure("cannot create the bucket: %d %s" % (st, body))
    direct = "http://127.0.0.1:%d" % proxy.port
    through_killer = "http://127.0.0.1:%d" % fault.port
    mnist = os.path.join(root, "tests", "data", "tfrecord", "tfx", "mnist", "mnist.tfrecord")
    big = os.path.join(tmp, "mnist-x6.tfrecord")
    with open(mnist, "rb") as f:
        m = f.read()
    with open(big, "wb") as f:
        f.write(m * 6)  # 19 MB: two shards of two 5 MiB parts and a rest each

    def objects(prefix):
        """{key: bytes} of every object a reader sees under prefix."""
        st, listing = srv.request("GET", "/" + BUCKET, "list-type=2&prefix=" + prefix)
        if st != 200:
            raise rtest.Failure("listing %s: %d" % (prefix, st))
        out = {}
        for key in re.findall(r"<Key>([^<]*)</Key>", listing.decode()):
            st, data = srv.request("GET", "/%s/%s" % (BUCKET, key))
            out[key[len(prefix):]] = data
        return out

    def run(args, endpoint, timeout=120):
        p = subprocess.run([exe] + args + ["--endpoint", endpoint], capture_output=True, env=env, timeout=timeout)
        return p.returncode, p.stderr.decode("utf-8", "replace")

    def killed_run(args, pick):
        killer.arm(pick)
        p = subprocess.Popen([exe] + args + ["--endpoint", through_killer, "-q"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=env)
        killer.proc = p
        killer.started.set()
        _, err = p.communicate(timeout=120)
        fired = killer.fired
        killer.arm(None)
        return p.returncode, err.decode("utf-8", "replace"), fired

    formats = [("tfrecord", [], ".tfrecord"), ("parquet", ["--to", "parquet", "--row-group-size", "1MiB"], ".parquet")]
    for fmt, opts, ext in formats:
        ref_prefix = "ref-%s/" % fmt
        cmd = ["convert", big, "--shards", "2"] + opts
        rc, err = run(cmd + ["-o", "s3://%s/%strain" % (BUCKET, ref_prefix), "-q"], direct)
        if rc:
            raise rtest.Failure("the unkilled %s run failed: %s" % (fmt, err))
        ref = objects(ref_prefix)
        shard_names = sorted(n for n in ref if n.endswith(ext))
        if len(shard_names) != 2 or "train.manifest.json" not in ref:
            raise rtest.Failure("the unkilled %s run wrote %s" % (fmt, sorted(ref)))

        def part(n, shard):
            return lambda method, path: method == "PUT" and "partNumber=%d&" % n in path + "&" and \
                "train-%05d-of-00002" % shard in path

        def complete(shard):
            return lambda method, path: method == "POST" and "uploadId=" in path and \
                "train-%05d-of-00002" % shard in path

        def manifest(method, path):
            return method == "PUT" and path.split("?")[0].endswith("train.manifest.json")

        def shard_put(method, path):
            return method in ("PUT", "POST") and ext in path.split("?")[0]

        points = [("the first upload request of a shard", shard_put),
                  ("the manifest's upload, every shard complete", manifest)]
        if fmt == "tfrecord":
            # Multipart uploads: their parts and the request that completes one.
            points[1:1] = [("the first part of shard 0", part(1, 0)),
                           ("the second part of shard 1", part(2, 1)),
                           ("completing shard 1", complete(1))]
        for i, (label, pick) in enumerate(points):
            prefix = "kill-%s-%d/" % (fmt, i)
            out = ["-o", "s3://%s/%strain" % (BUCKET, prefix)]

            def case(label=label, pick=pick, prefix=prefix, out=out):
                rc, err, fired = killed_run(cmd + out, pick)
                if fired is None or rc != -signal.SIGKILL:
                    raise rtest.Failure("the kill point never came (exit %d): %s" % (rc, err[-500:]))
                seen = objects(prefix)
                # The killed run's lock object stands (the next run takes it
                # over); it is no part of the set.
                seen.pop("train.lock", None)
                for name, data in seen.items():
                    if ref.get(name) != data and name != "train.manifest.json":
                        raise rtest.Failure("a partial or foreign object is visible: %s (%d bytes)" % (name, len(data)))
                if "train.manifest.json" in seen and len(set(seen) & set(shard_names)) != 2:
                    raise rtest.Failure("a manifest without all its shards: %s" % sorted(seen))
                if seen:
                    rc, err = run(cmd + out, direct)
                    if rc != 2 or "--force" not in err:
                        raise rtest.Failure("a plain rerun over the killed run's objects: exit %d: %s" % (rc, err))
                rc, err = run(cmd + out + ["--resume", "-q"], direct)
                if rc:
                    raise rtest.Failure("--resume after the kill: exit %d: %s" % (rc, err))
                got = objects(prefix)
                if got != ref:
                    diff = sorted(n for n in set(got) | set(ref) if got.get(n) != ref.get(n))
                    raise rtest.Failure("after --resume the set differs from the unkilled run's: %s" % diff)
                rc, err = run(["verify", "-q", "--manifest", "s3://%s/%strain.manifest.json" % (BUCKET, prefix)],
                              direct)
                if rc:
                    raise rtest.Failure("verify --manifest after --resume: exit %d: %s" % (rc, err))
            res.check("%s: SIGKILL at %s; --resume completes the set as an unkilled run writes it" % (fmt, label),
                      case)
    return res.finish()


if __name__ == "__main__":
    rtest.main_guard(main)
