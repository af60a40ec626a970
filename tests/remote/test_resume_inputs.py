#!/usr/bin/python3
"""--resume and combine prove http(s):// and gs:// inputs by what their
server says identifies a version, not by their name:

  - an input served by nginx (http and https), converted with --resume:
    read again untouched, the run is kept as it is (no shard rewritten);
    replaced on the server by another file of the same size (other bytes,
    another modification time, so another ETag), --resume refuses, exit 1,
    naming the URL and what changed, the shards untouched, --force the way
    out;
  - a server that sends Last-Modified but no ETag (nginx's `etag off`):
    the replaced input is refused by its Last-Modified;
  - a server that sends neither ETag nor Last-Modified cannot prove a
    version: the manifest says so, and --resume converts again with a note;
  - a manifest written before these were recorded (an http input listed by
    its path only) converts again with a note, not "finished before";
  - the tasks of a distributed run over http inputs, the object replaced
    (same size) between two tasks: combine refuses, naming the input; over
    an unversioned server combine refuses too (nothing proves the tasks
    read one version);
  - a gs:// object uploaded again with the same bytes (a new generation):
    --resume refuses naming the generation; untouched, the run is kept;
  - a URL's password and signature never reach the manifest;
  - a plain run asks the server nothing more (no HEAD), --resume one HEAD,
    and over 8 inputs the HEADs are in flight together.
Each of these passed the name-only check before (--resume exited 0 keeping
the old bytes' shards, combine merged).  The shards' bytes are compared
with a local convert of the same CSV.

usage: test_resume_inputs.py SHARDTOOL [SOURCE_DIR]"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rtest  # noqa: E402
import servers  # noqa: E402

ROWS = 3000


def csv_bytes(first_id):
    """A CSV whose size does not depend on first_id (fixed-width ids)."""
    return ("id,name\n" + "".join("%08d,n%07d\n" % (first_id + k, first_id + k) for k in range(ROWS))).encode()


class Run:
    def __init__(self, st, env, tmp):
        self.st, self.env, self.tmp = st, env, tmp

    def __call__(self, *args):
        p = subprocess.run([self.st] + list(args), capture_output=True, env=self.env, timeout=120)
        return p.returncode, p.stderr.decode("utf-8", "replace")


def shards(prefix):
    d, base = os.path.split(prefix)
    return sorted(os.path.join(d, n) for n in os.listdir(d)
                  if n.startswith(base + "-") and ".manifest" not in n)


def stamps(prefix):
    return {p: (os.stat(p).st_ino, os.stat(p).st_mtime_ns) for p in shards(prefix)}


def contents(prefix):
    return [open(p, "rb").read() for p in shards(prefix)]


def local_shards(run, tmp, data, name):
    """The shards a local convert writes from these bytes."""
    src = os.path.join(tmp, "local-" + name + ".csv")
    with open(src, "wb") as f:
        f.write(data)
    prefix = os.path.join(tmp, "local-" + name, "t")
    rc, err = run("convert", src, "-o", prefix, "--shards", "2", "-q")
    if rc != 0:
        raise rtest.Failure("local convert: %s" % err)
    return contents(prefix)


def replace_same_size(path, data):
    """Another file of the same size moved over path, its time later."""
    old = os.stat(path)
    tmp = path + ".new"
    with open(tmp, "wb") as f:
        f.write(data)
    os.utime(tmp, ns=(old.st_atime_ns, old.st_mtime_ns + 5 * 10**9))
    os.rename(tmp, path)


def input_entries(prefix):
    with open(prefix + ".manifest.json") as f:
        return json.load(f)["options"]["input_files"]


def main():
    st = os.environ.get("SHARDTOOL") or os.path.abspath(sys.argv[1])
    if not rtest.nginx_binary():
        print("SKIP: no nginx")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-remote-resume-inputs-")
    res = rtest.Results("resume-inputs")
    root = os.path.join(tmp, "www")
    os.makedirs(root)
    ca, cert, key = rtest.make_ca(tmp)
    # /noetag/: Last-Modified only, as servers that send no ETag do
    web = rtest.Nginx(root, os.path.join(tmp, "nginx"), locations="location /noetag/ { etag off; }")
    tls = rtest.Nginx(root, os.path.join(tmp, "nginx-tls"), cert, key)
    bare = servers.ChangingObject([csv_bytes(0)])  # no ETag, no Last-Modified
    gcs = servers.GcsServer(token="tok")
    env = rtest.clean_env({"STORAGE_EMULATOR_HOST": "127.0.0.1:%d" % gcs.port, "GOOGLE_OAUTH_ACCESS_TOKEN": "tok"})
    run = Run(st, env, tmp)
    first = csv_bytes(0)
    other = csv_bytes(500000)
    want_first = local_shards(run, tmp, first, "first")
    want_other = local_shards(run, tmp, other, "other")
    try:
        for scheme, server, extra in (("http", web, []), ("https", tls, ["--cacert", ca])):
            def replaced_on_server(scheme=scheme, server=server, extra=extra):
                name = scheme + ".csv"
                path = os.path.join(root, name)
                with open(path, "wb") as f:
                    f.write(first)
                url = server.url(name, scheme)
                prefix = os.path.join(tmp, scheme, "t")
                cmd = ["convert", url, "-o", prefix, "--shards", "2"] + extra
                rc, err = run(*cmd, "--resume")
                if rc != 0 or contents(prefix) != want_first:
                    raise rtest.Failure("first run: exit %d: %s" % (rc, err))
                entry = input_entries(prefix)[0]
                if entry.get("bytes") != len(first) or not entry.get("etag"):
                    raise rtest.Failure("the manifest records no size and ETag: %s" % entry)
                before = stamps(prefix)
                rc, err = run(*cmd, "--resume")
                if rc != 0 or "finished before" not in err or stamps(prefix) != before:
                    raise rtest.Failure("untouched input: --resume did not keep the run (exit %d): %s" % (rc, err))
                replace_same_size(path, other)
                rc, err = run(*cmd, "--resume")
                if rc != 1 or url not in err or "ETag changed" not in err or "--force" not in err:
                    raise rtest.Failure("replaced input: --resume exit %d, wanted 1 naming %s: %s" % (rc, url, err))
                if stamps(prefix) != before or contents(prefix) != want_first:
                    raise rtest.Failure("the refused --resume touched the shards")
                rc, err = run(*cmd, "--force")
                if rc != 0 or contents(prefix) != want_other:
                    raise rtest.Failure("--force: exit %d, or shards not of the new bytes: %s" % (rc, err))
            res.check("%s: --resume keeps an untouched input's run and refuses one replaced on the server by "
                      "another of the same size, naming it" % scheme, replaced_on_server)

        def last_modified_only():
            os.makedirs(os.path.join(root, "noetag"), exist_ok=True)
            path = os.path.join(root, "noetag", "lm.csv")
            with open(path, "wb") as f:
                f.write(first)
            url = web.url("noetag/lm.csv")
            prefix = os.path.join(tmp, "lm", "t")
            cmd = ["convert", url, "-o", prefix, "--shards", "2", "--resume"]
            rc, err = run(*cmd)
            entry = input_entries(prefix)[0] if rc == 0 else {}
            if rc != 0 or "etag" in entry or not entry.get("last_modified"):
                raise rtest.Failure("first run: exit %d, entry %s: %s" % (rc, entry, err))
            before = stamps(prefix)
            rc, err = run(*cmd)
            if rc != 0 or "finished before" not in err or stamps(prefix) != before:
                raise rtest.Failure("untouched input: --resume did not keep the run (exit %d): %s" % (rc, err))
            replace_same_size(path, other)
            rc, err = run(*cmd)
            if rc != 1 or url not in err or "Last-Modified changed" not in err or stamps(prefix) != before:
                raise rtest.Failure("replaced input: --resume exit %d, wanted 1 naming %s: %s" % (rc, url, err))
        res.check("a server that sends Last-Modified but no ETag: a replaced input is refused by it",
                  last_modified_only)

        def unversioned_server():
            url = "http://127.0.0.1:%d/bare.csv" % bare.port
            prefix = os.path.join(tmp, "bare", "t")
            cmd = ["convert", url, "-o", prefix, "--shards", "2", "--resume"]
            rc, err = run(*cmd)
            if rc != 0 or contents(prefix) != want_first:
                raise rtest.Failure("first run: exit %d: %s" % (rc, err))
            entry = input_entries(prefix)[0]
            if entry.get("bytes") != len(first) or "unproved" not in entry or "etag" in entry:
                raise rtest.Failure("the manifest does not say the version is unproved: %s" % entry)
            before = stamps(prefix)
            time.sleep(0.01)
            rc, err = run(*cmd)
            if (rc != 0 or "converting again" not in err or "neither ETag nor Last-Modified" not in err
                    or "finished before" in err):
                raise rtest.Failure("--resume did not convert again saying why (exit %d): %s" % (rc, err))
            if stamps(prefix) == before or contents(prefix) != want_first:
                raise rtest.Failure("the shards were not written again from the bytes read")
        res.check("a server without ETag and Last-Modified: --resume converts again with a note", unversioned_server)

        def head_only_when_needed():
            url = "http://127.0.0.1:%d/plain.csv" % bare.port
            with bare.lock:
                del bare.log[:]
            rc, err = run("convert", url, "-o", os.path.join(tmp, "plain", "t"), "--shards", "2")
            with bare.lock:
                heads = sum(1 for m, _ in bare.log if m == "HEAD")
            if rc != 0 or heads:
                raise rtest.Failure("a plain run: exit %d, %d HEAD requests: %s" % (rc, heads, err))
            rc, err = run("convert", url, "-o", os.path.join(tmp, "plain-resume", "t"), "--shards", "2", "--resume")
            with bare.lock:
                heads = sum(1 for m, _ in bare.log if m == "HEAD")
            if rc != 0 or heads != 1:
                raise rtest.Failure("--resume: exit %d, %d HEAD requests, wanted 1: %s" % (rc, heads, err))
        res.check("a plain run sends no HEAD request, --resume one per input", head_only_when_needed)

        def heads_together():
            slow = servers.ChangingObject([csv_bytes(0)], head_delay=0.3)
            try:
                urls = ["http://127.0.0.1:%d/part-%d.csv" % (slow.port, k) for k in range(8)]
                rc, err = run("convert", *urls, "-o", os.path.join(tmp, "many", "t"), "--shards", "2", "--resume")
                with slow.lock:
                    heads = sum(1 for m, _ in slow.log if m == "HEAD")
                    together = slow.most_heads_in_flight
            finally:
                slow.stop()
            if rc != 0 or heads != 8 or together < 4:
                raise rtest.Failure("exit %d, %d HEAD requests, at most %d in flight at once (wanted 8, together): %s"
                                    % (rc, heads, together, err))
        res.check("--resume asks about its inputs' versions all at once, not one round trip each", heads_together)

        def old_manifest():
            path = os.path.join(root, "old.csv")
            with open(path, "wb") as f:
                f.write(first)
            url = web.url("old.csv")
            prefix = os.path.join(tmp, "old", "t")
            cmd = ["convert", url, "-o", prefix, "--shards", "2", "--resume"]
            rc, err = run(*cmd)
            if rc != 0:
                raise rtest.Failure("first run: exit %d: %s" % (rc, err))
            with open(prefix + ".manifest.json") as f:
                m = json.load(f)
            m["options"]["input_files"] = [{"path": e["path"]} for e in m["options"]["input_files"]]
            with open(prefix + ".manifest.json", "w") as f:
                json.dump(m, f)
            before = stamps(prefix)
            rc, err = run(*cmd)
            if rc != 0 or "converting again" not in err or "finished before" in err:
                raise rtest.Failure("--resume over a path-only entry did not convert again (exit %d): %s" % (rc, err))
            if stamps(prefix) == before or contents(prefix) != want_first:
                raise rtest.Failure("the shards were not written again")
            rc, err = run(*cmd)
            if rc != 0 or "finished before" not in err:
                raise rtest.Failure("the manifest it wrote does not prove the input (exit %d): %s" % (rc, err))
        res.check("an older manifest listing an http input by its path only converts again", old_manifest)

        def combine_changed_between_tasks():
            names = ["t0.csv", "t1.csv"]
            for i, n in enumerate(names):
                with open(os.path.join(root, n), "wb") as f:
                    f.write(csv_bytes(i * 100000))
            urls = [web.url(n) for n in names]
            prefix = os.path.join(tmp, "tasks", "t")
            for t in (0, 1):
                if t == 1:
                    replace_same_size(os.path.join(root, names[1]), csv_bytes(900000))
                rc, err = run("convert", *urls, "-o", prefix, "--shards", "2", "--task", "%d/2" % t, "-q")
                if rc != 0:
                    raise rtest.Failure("task %d: exit %d: %s" % (t, rc, err))
            rc, err = run("combine", prefix)
            if rc != 1 or urls[1] not in err or "ETag changed" not in err:
                raise rtest.Failure("combine: exit %d, wanted 1 naming %s: %s" % (rc, urls[1], err))
            if os.path.exists(prefix + ".manifest.json"):
                raise rtest.Failure("combine wrote a manifest")
        res.check("combine refuses tasks that read an http object replaced between them", combine_changed_between_tasks)

        def combine_unversioned():
            url = "http://127.0.0.1:%d/bare.csv" % bare.port
            prefix = os.path.join(tmp, "tasks-bare", "t")
            for t in (0, 1):
                rc, err = run("convert", url, "-o", prefix, "--shards", "2", "--task", "%d/2" % t, "-q")
                if rc != 0:
                    raise rtest.Failure("task %d: exit %d: %s" % (t, rc, err))
            rc, err = run("combine", prefix)
            if rc != 1 or "neither ETag nor Last-Modified" not in err:
                raise rtest.Failure("combine: exit %d, wanted 1 saying why: %s" % (rc, err))
        res.check("combine refuses tasks over a server that proves no version", combine_unversioned)

        def gcs_generation():
            gcs.store("bkt", "in/a.csv", first)
            url = "gs://bkt/in/a.csv"
            prefix = os.path.join(tmp, "gs", "t")
            cmd = ["convert", url, "-o", prefix, "--shards", "2", "--resume"]
            rc, err = run(*cmd)
            if rc != 0 or contents(prefix) != want_first:
                raise rtest.Failure("first run: exit %d: %s" % (rc, err))
            entry = input_entries(prefix)[0]
            if entry.get("bytes") != len(first) or not entry.get("generation"):
                raise rtest.Failure("the manifest records no size and generation: %s" % entry)
            before = stamps(prefix)
            rc, err = run(*cmd)
            if rc != 0 or "finished before" not in err or stamps(prefix) != before:
                raise rtest.Failure("untouched object: --resume did not keep the run (exit %d): %s" % (rc, err))
            gcs.store("bkt", "in/a.csv", first)  # the same bytes uploaded again
            rc, err = run(*cmd)
            if rc != 1 or url not in err or "generation changed" not in err or stamps(prefix) != before:
                raise rtest.Failure("uploaded again: --resume exit %d, wanted 1 naming the generation: %s" % (rc, err))
        res.check("gs://: an object uploaded again (a new generation) is refused, an untouched one kept",
                  gcs_generation)

        def secrets_not_recorded():
            path = os.path.join(root, "secret.csv")
            with open(path, "wb") as f:
                f.write(first)
            url = "http://alice:PASSWORDvalue@127.0.0.1:%d/secret.csv?X-Amz-Signature=SIGNATUREvalue" % web.port
            prefix = os.path.join(tmp, "secret", "t")
            for _ in range(2):
                rc, err = run("convert", url, "-o", prefix, "--shards", "2", "--resume")
                if rc != 0:
                    raise rtest.Failure("exit %d: %s" % (rc, err))
            with open(prefix + ".manifest.json") as f:
                text = f.read()
            entry = input_entries(prefix)[0]
            if "PASSWORDvalue" in text or "SIGNATUREvalue" in text or "PASSWORDvalue" in err:
                raise rtest.Failure("a secret reached the manifest or a message")
            if not entry.get("etag") or "finished before" not in err:
                raise rtest.Failure("not proved by its ETag: %s: %s" % (entry, err))
        res.check("a URL's password and signature stay out of the manifest", secrets_not_recorded)
    finally:
        web.stop()
        tls.stop()
        bare.stop()
        gcs.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return res.finish()


if __name__ == "__main__":
    rtest.main_guard(main)
