#!/usr/bin/python3
"""An output set in object storage: the earlier-set check, --force
replacing exactly the earlier set, and the lock object (shardtool-convert(1)
SAFETY, "Object storage").

s3rver behind the SigV4-checking proxy (which honours If-None-Match: * on
PutObject, as S3 does), the fault proxy in front of that for the kill and
the lost race, and the GCS server of servers.py (ifGenerationMatch=0).
What is in the bucket is always read straight from the server, not through
shardtool:

  - a second run with another --shards is refused before any input is read,
    and leaves the bucket as it was;
  - --force leaves exactly the new set under the prefix: every object of
    the earlier set gone (its manifest, its shards, a stray shard of its
    name pattern), objects of other names (train-notes.txt, trainer-...,
    train/...) untouched;
  - a lock object that stands refuses a second run, naming it; a lock
    created by another run between the look and the conditional write (the
    server answers 412) does too; a lock of a process that no longer exists
    on this host is taken over, one of another host only with --force;
  - verify --manifest s3://... names a shard of the pattern that the
    manifest does not list;
  - SIGKILL while the new set is being written leaves the earlier set whole,
    byte for byte, and the next --force run takes the dead run's lock over.

usage: test_output_set_remote.py SHARDTOOL SOURCE_ROOT
exit 77 when s3rver cannot be started."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rtest  # noqa: E402
import servers  # noqa: E402
import test_resume_kill  # noqa: E402
import test_s3  # noqa: E402

KEY, SECRET = test_s3.KEY, test_s3.SECRET
BUCKET = "test"
TOKEN = "ya29.outputSetTOKEN"


def shard_names(prefix, n, ext=".tfrecord"):
    return ["%s-%05d-of-%05d%s" % (prefix, i, n, ext) for i in range(n)]


def main():
    exe, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    s3bin = test_s3.s3rver_bin()
    if not s3bin:
        print("s3rver is not installed and cannot be (npm ci in tests/remote)")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-output-set-remote-")
    started = []
    env = rtest.clean_env({"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET})
    try:
        try:
            srv = test_s3.S3rver(s3bin, os.path.join(tmp, "s3rver"))
            started.append(srv)
        except rtest.Failure as e:
            print("cannot start s3rver: %s" % e)
            return rtest.SKIP
        proxy = servers.SigV4Proxy(srv.port, {KEY: SECRET}, max_keys=3)
        started.append(proxy)
        killer = test_resume_kill.Killer()
        hooks = {"hook": None}

        def fail_when(method, path):
            if hooks["hook"] is not None:
                return hooks["hook"](method, path)
            return killer(method, path)
        fault = servers.FaultProxy(proxy.port, ["ok"], fail_when=fail_when)
        started.append(fault)
        gcs = servers.GcsServer(token=TOKEN, page_size=2)
        started.append(gcs)
        return run_cases(exe, tmp, env, srv, proxy, fault, killer, hooks, gcs)
    finally:
        for s in reversed(started):
            s.stop()
        shutil.rmtree(env["HOME"], ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


def run_cases(exe, tmp, env, srv, proxy, fault, killer, hooks, gcs):
    res = rtest.Results("remote-output-set")
    st, body = srv.request("PUT", "/" + BUCKET)
    if st != 200:
        raise rtest.Failure("cannot create the bucket: %d %s" % (st, body))
    direct = "http://127.0.0.1:%d" % proxy.port
    through_fault = "http://127.0.0.1:%d" % fault.port
    src = os.path.join(tmp, "rows.csv")
    with open(src, "w") as f:
        f.write("id,name,score\n")
        for i in range(3000):
            f.write("%d,name%d,%d.5\n" % (i, i, i % 97))
    src2 = os.path.join(tmp, "rows2.csv")
    with open(src2, "w") as f:
        f.write("id,name,score\n")
        for i in range(500):
            f.write("%d,other%d,%d.25\n" % (i, i, i % 13))

    def objects(prefix):
        """{name under prefix: bytes} of every object in the bucket."""
        out, token = {}, None
        while True:
            q = "list-type=2&prefix=" + prefix + ("&continuation-token=" + token if token else "")
            st, listing = srv.request("GET", "/" + BUCKET, q)
            if st != 200:
                raise rtest.Failure("listing %s: %d" % (prefix, st))
            text = listing.decode()
            for key in re.findall(r"<Key>([^<]*)</Key>", text):
                st, data = srv.request("GET", "/%s/%s" % (BUCKET, key))
                out[key[len(prefix):]] = data
            m = re.search(r"<NextContinuationToken>([^<]*)</NextContinuationToken>", text)
            if "<IsTruncated>true</IsTruncated>" not in text or not m:
                return out
            token = m.group(1)

    def put(key, data):
        st, body = srv.request("PUT", "/%s/%s" % (BUCKET, key), body=data)
        if st != 200:
            raise rtest.Failure("PUT %s: %d %s" % (key, st, body))

    def run(args, endpoint=direct, timeout=120):
        """(exit status, stdout and stderr together)."""
        p = subprocess.run([exe] + args + ["--endpoint", endpoint], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=env, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace")

    def ok(args, endpoint=direct):
        rc, err = run(args, endpoint)
        if rc:
            raise rtest.Failure("%s: exit %d: %s" % (" ".join(args), rc, err.strip()[-800:]))
        return err

    def url(prefix):
        return "s3://%s/%strain" % (BUCKET, prefix)

    def dead_pid():
        p = subprocess.Popen(["true"])
        p.wait()
        return p.pid

    host = socket.gethostname()
    foreign = {"train-notes.txt": b"notes, not a shard\n", "trainer-00000-of-00001.tfrecord": b"another set",
               "train/keep.txt": b"below the prefix\n"}

    # ---- the earlier set -------------------------------------------------------

    def refuse_earlier():
        p = "refuse/"
        ok(["convert", src, "-o", url(p), "--shards", "8", "-q"])
        before = objects(p)
        if sorted(before) != sorted(shard_names("train", 8) + ["train.manifest.json"]):
            raise rtest.Failure("the first run wrote %s" % sorted(before))
        rc, err = run(["convert", src2, "-o", url(p), "--shards", "4"])
        if rc != 2 or "earlier run" not in err or "--force" not in err or "train.manifest.json" not in err \
                and "train-0000" not in err:
            raise rtest.Failure("a second set over the first: exit %d: %s" % (rc, err.strip()))
        if "records" in err:
            raise rtest.Failure("the refusal came after reading the input: %s" % err.strip())
        after = objects(p)
        if after != before:
            raise rtest.Failure("the refused run changed the bucket: %s" %
                                sorted(set(after) ^ set(before)))
    res.check("a second set under an s3 prefix is refused before any input is read, the bucket untouched",
              refuse_earlier)

    def no_head_per_shard():
        # The set lists the prefix under its lock and refuses any object of
        # its names, so no shard (nor its index) asks for its own name again
        # before writing: no HEAD of a shard through the fault proxy, which
        # logs every request.  --force asks for none either; without a
        # listing that found them free the check stands (refuse_earlier).
        p = "heads/"
        del fault.log[:]
        ok(["convert", src, "-o", url(p), "--shards", "4", "--index", "-q"], through_fault)
        names = objects(p)
        want = shard_names("train", 4) + [n + ".idx" for n in shard_names("train", 4)] + ["train.manifest.json"]
        if sorted(names) != sorted(want):
            raise rtest.Failure("the run wrote %s" % sorted(names))
        heads = [(m, path) for m, path, _ in fault.log if m == "HEAD" and "/heads/train-" in path]
        if heads:
            raise rtest.Failure("%d requests for shard names the listing had found free: %s" % (len(heads), heads))
        lists = [path for m, path, _ in fault.log if m == "GET" and "list-type=2" in path]
        if not lists:
            raise rtest.Failure("no listing of the prefix: %s" % fault.log[:8])
    res.check("shards in object storage are created without a HEAD each: the set's listing found them free",
              no_head_per_shard)

    def force_replaces():
        p = "force/"
        ok(["convert", src, "-o", url(p), "--shards", "8", "-q"])
        for name, data in foreign.items():
            put(p + name, data)
        # A stray shard of the set's name pattern that its manifest does not list.
        put(p + "train-00009-of-00010.tfrecord", b"stray")
        err = ok(["convert", src2, "-o", url(p), "--shards", "4", "--force"])
        after = objects(p)
        want = sorted(shard_names("train", 4) + ["train.manifest.json"] + list(foreign))
        if sorted(after) != want:
            raise rtest.Failure("after --force the prefix holds %s, not %s" % (sorted(after), want))
        for name, data in foreign.items():
            if after[name] != data:
                raise rtest.Failure("%s was changed" % name)
        if "removed 9 objects of the earlier output set" not in err:
            raise rtest.Failure("--force does not say what it removed: %s" % err.strip())
        ok(["verify", "-q", "--manifest", url(p) + ".manifest.json"])
    res.check("--force replaces the earlier s3 set: exactly its objects go, others of other names stay",
              force_replaces)

    def force_keeps_its_inputs():
        # Re-sharding a set in place: its objects are this run's inputs, so
        # --force keeps them, and the note names them (no manifest does).
        p = "reshape/"
        ok(["convert", src, "-o", url(p), "--shards", "4", "-q"])
        old = ["s3://%s/%s%s" % (BUCKET, p, n) for n in shard_names("train", 4)]
        err = ok(["convert"] + old + ["-o", url(p), "--shards", "2", "--force"])
        after = objects(p)
        want = sorted(shard_names("train", 4) + shard_names("train", 2) + ["train.manifest.json"])
        if sorted(after) != want:
            raise rtest.Failure("after re-sharding in place the prefix holds %s, not %s" % (sorted(after), want))
        if ("kept 4 objects of the earlier output set that were this run's inputs (%s, ...)" % old[0] not in err
                or "the new manifest does not list them" not in err):
            raise rtest.Failure("--force does not name the inputs it kept: %s" % err.strip())
    res.check("--force re-sharding an s3 set in place keeps its inputs and names them", force_keeps_its_inputs)

    def verify_unlisted():
        p = "verify/"
        ok(["convert", src, "-o", url(p), "--shards", "2", "-q"])
        ok(["verify", "-q", "--manifest", url(p) + ".manifest.json"])
        put(p + "train-00003-of-00004.tfrecord", b"left by an earlier run")
        put(p + "train-notes.txt", b"not a shard")
        rc, err = run(["verify", "--manifest", url(p) + ".manifest.json"])
        if rc == 0 or "unlisted shard" not in err or "train-00003-of-00004.tfrecord" not in err:
            raise rtest.Failure("verify --manifest with an unlisted shard: exit %d: %s" % (rc, err.strip()))
        if "train-notes.txt" in err:
            raise rtest.Failure("an object of another name is reported: %s" % err.strip())
    res.check("verify --manifest s3://... reports a shard that the manifest does not list", verify_unlisted)

    # ---- the lock ----------------------------------------------------------------

    def lock_conflict():
        p = "locked/"
        lock = ("%d@%s othertag %d\n" % (os.getpid(), host, 0)).encode()  # a live process of this host
        put(p + "train.lock", lock)
        for extra in ([], ["--force"]):
            rc, err = run(["convert", src, "-o", url(p), "--shards", "2"] + extra)
            if rc != 2 or url(p) + ".lock" not in err or "pid %d" % os.getpid() not in err:
                raise rtest.Failure("a run while the lock stands%s: exit %d: %s" %
                                    (" (--force)" if extra else "", rc, err.strip()))
        after = objects(p)
        if after != {"train.lock": lock}:
            raise rtest.Failure("the refused runs changed the bucket: %s" % sorted(after))
    res.check("a lock object of a live run refuses a second run (with --force too), naming it", lock_conflict)

    def lost_race():
        p = "race/"
        other = b"7@another-host racetag 0\n"

        def create_first(method, path):
            # Another run creates the lock between this run's look and its
            # conditional write: the write must fail (412), not replace it.
            if method == "PUT" and path.split("?")[0].endswith("/race/train.lock"):
                hooks["hook"] = None
                put(p + "train.lock", other)
            return None
        hooks["hook"] = create_first
        n_before = len(proxy.conditional_puts)
        try:
            rc, err = run(["convert", src, "-o", url(p), "--shards", "2"], through_fault)
        finally:
            hooks["hook"] = None
        if rc != 2 or url(p) + ".lock" not in err or "another-host" not in err or "--force" not in err:
            raise rtest.Failure("a run that lost the race for the lock: exit %d: %s" % (rc, err.strip()))
        if len(proxy.conditional_puts) == n_before:
            raise rtest.Failure("the lock was not written with If-None-Match: *")
        if objects(p) != {"train.lock": other}:
            raise rtest.Failure("the lock was replaced or outputs written: %s" % sorted(objects(p)))
    res.check("the lock is a conditional write: a lock created first by another run stands (412)", lost_race)

    def lock_faults():
        # The lock's conditional write through faults: a 503 is retried; an
        # answer lost after the write took effect makes the retry find the
        # key taken (412), by this run's own lock, which it then holds.
        for fault_name in ("503", "lost-answer"):
            p = "lockfault-%s/" % fault_name
            seen = []

            def once(method, path, fault_name=fault_name, p=p, seen=seen):
                if method == "PUT" and path.split("?")[0].endswith("/" + p + "train.lock") and not seen:
                    seen.append(path)
                    return fault_name
                return None
            hooks["hook"] = once
            try:
                rc, err = run(["convert", src, "-o", url(p), "--shards", "2"], through_fault)
            finally:
                hooks["hook"] = None
            if not seen or rc:
                raise rtest.Failure("%s on the lock's write: exit %d, fault %s: %s" %
                                    (fault_name, rc, seen, err.strip()))
            got = objects(p)
            if sorted(got) != sorted(shard_names("train", 2) + ["train.manifest.json"]):
                raise rtest.Failure("%s on the lock's write: the prefix holds %s" % (fault_name, sorted(got)))
    res.check("the lock's write through the fault proxy: a 503 and a lost answer are retried, the lock kept",
              lock_faults)

    def stale_lock():
        p = "stale/"
        lock = b"4242@elsewhere.example deadtag 1000\n"
        put(p + "train.lock", lock)
        rc, err = run(["convert", src, "-o", url(p), "--shards", "2"])
        if rc != 2 or url(p) + ".lock" not in err or "elsewhere.example" not in err or "--force" not in err:
            raise rtest.Failure("a lock of another host without --force: exit %d: %s" % (rc, err.strip()))
        err = ok(["convert", src, "-o", url(p), "--shards", "2", "--force"])
        if "took over the lock" not in err:
            raise rtest.Failure("--force took the lock over without saying so: %s" % err.strip())
        got = objects(p)
        if sorted(got) != sorted(shard_names("train", 2) + ["train.manifest.json"]):
            raise rtest.Failure("after the takeover the prefix holds %s" % sorted(got))
        # A lock of a process that is gone from this host: taken over as is.
        p = "stale-here/"
        put(p + "train.lock", ("%d@%s deadtag 1000\n" % (dead_pid(), host)).encode())
        err = ok(["convert", src, "-o", url(p), "--shards", "2"])
        if "took over the lock of a run that is no longer running" not in err:
            raise rtest.Failure("a dead local run's lock: %s" % err.strip())
        if "train.lock" in objects(p):
            raise rtest.Failure("the lock is left after the run")
    res.check("a stale lock: another host's taken over with --force, a dead process's of this host by itself",
              stale_lock)

    def unconditional_store():
        # A store that ignores If-None-Match: the lock is looked for first,
        # so a lock that stands is still refused (shardtool-convert(1)
        # SAFETY, "A store without conditional writes").
        plain = servers.SigV4Proxy(srv.port, {KEY: SECRET}, conditional=False)
        try:
            p = "plain/"
            lock = b"11@elsewhere.example t 0\n"
            put(p + "train.lock", lock)
            rc, err = run(["convert", src, "-o", url(p), "--shards", "2"], "http://127.0.0.1:%d" % plain.port)
            if rc != 2 or url(p) + ".lock" not in err or objects(p) != {"train.lock": lock}:
                raise rtest.Failure("a store without conditional writes: exit %d: %s" % (rc, err.strip()))
            ok(["convert", src, "-o", url("plain2/"), "--shards", "2", "-q"], "http://127.0.0.1:%d" % plain.port)
            if sorted(objects("plain2/")) != sorted(shard_names("train", 2) + ["train.manifest.json"]):
                raise rtest.Failure("a run on a store without conditional writes: %s" % sorted(objects("plain2/")))
        finally:
            plain.stop()
    res.check("a store without conditional writes: a standing lock is still refused", unconditional_store)

    # ---- SIGKILL -----------------------------------------------------------------

    def killed():
        p = "killed/"
        ok(["convert", src, "-o", url(p), "--shards", "2", "-q"])
        put(p + "train-notes.txt", b"notes")
        before = objects(p)
        for label, pick in (("the first shard upload",
                             lambda m, path: m in ("PUT", "POST") and "/killed/train-0" in path),
                            ("the manifest upload",
                             lambda m, path: m == "PUT" and path.split("?")[0].endswith("/killed/train.manifest.json"))):
            killer.arm(pick)
            proc = subprocess.Popen([exe, "convert", src2, "-o", url(p), "--shards", "3", "--force", "-q",
                                     "--endpoint", through_fault], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, env=env)
            killer.proc = proc
            killer.started.set()
            _, err = proc.communicate(timeout=120)
            fired = killer.fired
            killer.arm(None)
            if fired is None or proc.returncode != -signal.SIGKILL:
                raise rtest.Failure("the kill at %s never came (exit %d): %s" %
                                    (label, proc.returncode, err.decode()[-500:]))
            now = objects(p)
            for name, data in before.items():
                if now.get(name) != data:
                    raise rtest.Failure("killed at %s: %s of the earlier set is %s" %
                                        (label, name, "gone" if name not in now else "changed"))
        err = ok(["convert", src2, "-o", url(p), "--shards", "3", "--force"])
        if "took over the lock of a run that is no longer running" not in err:
            raise rtest.Failure("the killed run's lock was not taken over: %s" % err.strip())
        got = objects(p)
        want = sorted(shard_names("train", 3) + ["train.manifest.json", "train-notes.txt"])
        if sorted(got) != want:
            raise rtest.Failure("after the kill and a --force run the prefix holds %s" % sorted(got))
        ok(["verify", "-q", "--manifest", url(p) + ".manifest.json"])
    res.check("SIGKILL while a --force run writes leaves the earlier s3 set whole; the next run takes over",
              killed)

    # ---- GCS ---------------------------------------------------------------------

    genv = rtest.clean_env({"STORAGE_EMULATOR_HOST": "127.0.0.1:%d" % gcs.port,
                            "GOOGLE_OAUTH_ACCESS_TOKEN": TOKEN})

    def grun(args):
        p = subprocess.run([exe] + args, capture_output=True, env=genv, timeout=120)
        return p.returncode, p.stderr.decode("utf-8", "replace")

    def gobjects(prefix):
        with gcs.lock:
            return {k[len(prefix):]: v[0] for (b, k), v in gcs.objects.items() if b == "bkt" and k.startswith(prefix)}

    def gcs_set():
        p = "set/"
        gurl = "gs://bkt/set/train"
        rc, err = grun(["convert", src, "-o", gurl, "--shards", "3", "-q"])
        if rc:
            raise rtest.Failure("first gcs run: %s" % err)
        gcs.store("bkt", p + "train-notes.txt", b"notes")
        before = gobjects(p)
        rc, err = grun(["convert", src2, "-o", gurl, "--shards", "2"])
        if rc != 2 or "earlier run" not in err or gobjects(p) != before:
            raise rtest.Failure("a second gcs set: exit %d: %s" % (rc, err.strip()))
        if not gcs.conditional_puts or not gcs.conditional_puts[-1].endswith("set/train.lock"):
            raise rtest.Failure("the gcs lock was not written with ifGenerationMatch=0: %s" % gcs.conditional_puts)
        rc, err = grun(["convert", src2, "-o", gurl, "--shards", "2", "--force"])
        want = sorted(shard_names("train", 2) + ["train.manifest.json", "train-notes.txt"])
        if rc or sorted(gobjects(p)) != want:
            raise rtest.Failure("gcs --force: exit %d, objects %s: %s" % (rc, sorted(gobjects(p)), err.strip()))
        p, gurl = "glock/", "gs://bkt/glock/train"
        gcs.store("bkt", p + "train.lock", b"9@elsewhere.example t 0\n")
        rc, err = grun(["convert", src2, "-o", gurl, "--shards", "2"])
        if rc != 2 or "gs://bkt/glock/train.lock" not in err or "elsewhere.example" not in err:
            raise rtest.Failure("a gcs run while the lock stands: exit %d: %s" % (rc, err.strip()))
        rc, err = grun(["convert", src2, "-o", gurl, "--shards", "2", "--force"])
        if rc or "took over the lock" not in err or "train.lock" in gobjects(p):
            raise rtest.Failure("gcs --force over another host's lock: exit %d: %s" % (rc, err.strip()))
    res.check("gcs: an earlier set refused, replaced with --force, the lock a conditional write", gcs_set)
    return res.finish()


if __name__ == "__main__":
    rtest.main_guard(main)
