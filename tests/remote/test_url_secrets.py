#!/usr/bin/python3
"""No command prints or stores the secrets a URL carries.

Inputs are served by nginx on 127.0.0.1 under URLs that hold a password
(http://alice:PASSWORD@host/...) and a signed query (X-Amz-Credential,
X-Amz-Signature, X-Amz-Security-Token, X-Goog-Signature, sig, token,
access_token, key; nginx ignores both).  Every command runs on them, with
-v, in cases that succeed and cases that fail (an absent object, a closed
port, a damaged file):

  cat (JSON and -f tfrecord), stat (text and --json), verify (text and
  --json), convert (with --manifest, --feature-spec, --index, --shuffle
  and TMPDIR of our own), split (with --index), verify --manifest of
  what convert wrote (local, and over http with the password).

Every byte of stdout and stderr, and every file left in the working
directory and TMPDIR (shards, manifests, feature specs, indexes, temporary
files), is searched for each secret.  Where the URL is shown (messages,
verify --json "path", the manifest's options.inputs) it must still be
recognisable: the user name, the host and the path stay, with "***" in
place of each secret.

usage: test_url_secrets.py SHARDTOOL SOURCE_ROOT
exit 77 when nginx is not installed."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rtest  # noqa: E402

TFRECORD = "tfrecord/tfx/mnist/mnist.tfrecord"
CSV = "csv/tfx/chicago_taxi_data.csv"

PASSWORD = "PWsecret5150"
SECRETS = {
    "X-Amz-Credential": "AKIDcredSECRET1",
    "X-Amz-Signature": "amzSIGsecret2",
    "X-Amz-Security-Token": "amzTOKENsecret3",
    "X-Goog-Signature": "googSIGsecret4",
    "sig": "sasSIGsecret5",
    "token": "plainTOKENsecret6",
    "access_token": "oauthTOKENsecret7",
    "key": "apiKEYsecret8",
}
ALL_SECRETS = [PASSWORD] + list(SECRETS.values())
QUERY = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&" + "&".join(
    "%s=%s" % kv for kv in SECRETS.items())


def fail(fmt, *a):
    raise rtest.Failure(fmt % a if a else fmt)


def leaks(blob):
    if isinstance(blob, str):
        blob = blob.encode("utf-8", "replace")
    return [s for s in ALL_SECRETS if s.encode() in blob]


def files_under(*dirs):
    for d in dirs:
        for base, _, names in os.walk(d):
            for n in names:
                yield os.path.join(base, n)


class Run:
    def __init__(self, exe, env):
        self.exe = exe
        self.env = env

    def __call__(self, args, cwd, want_rc=None):
        p = subprocess.run([self.exe] + list(args), capture_output=True, env=self.env, cwd=cwd,
                           timeout=120)
        what = "shardtool " + " ".join(args)
        if want_rc is not None and p.returncode not in (want_rc if isinstance(want_rc, tuple) else (want_rc,)):
            fail("%s: exit %d, expected %s: %s", what, p.returncode, want_rc,
                 p.stderr.decode("utf-8", "replace")[-800:])
        for name, blob in (("stdout", p.stdout), ("stderr", p.stderr)):
            found = leaks(blob)
            if found:
                text = blob.decode("utf-8", "replace")
                line = next((ln for ln in text.splitlines() if any(s in ln for s in found)), "")
                fail("%s: %s shows %s: %s", what, name, found, line[:400])
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check_tree(what, *dirs):
    for path in files_under(*dirs):
        with open(path, "rb") as f:
            found = leaks(f.read())
        if found or leaks(path):
            fail("%s: %s holds %s", what, path, found or "a secret in its name")


def main():
    exe, root = sys.argv[1], sys.argv[2]
    data = os.path.abspath(os.path.join(root, "tests", "data"))
    if not rtest.nginx_binary():
        print("nginx is not installed")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-url-secrets-")
    ngx = None
    try:
        www = os.path.join(tmp, "www")
        os.makedirs(os.path.join(www, "in"))
        shutil.copy(os.path.join(data, TFRECORD), os.path.join(www, "in", "mnist.tfrecord"))
        shutil.copy(os.path.join(data, CSV), os.path.join(www, "in", "taxi.csv"))
        with open(os.path.join(data, TFRECORD), "rb") as f:
            damaged = bytearray(f.read())
        damaged[5000] ^= 0xFF
        with open(os.path.join(www, "in", "damaged.tfrecord"), "wb") as f:
            f.write(damaged)
        try:
            ngx = rtest.Nginx(www, os.path.join(tmp, "nginx"))
        except rtest.Failure as e:
            print("cannot start nginx: %s" % e)
            return rtest.SKIP
        host = "127.0.0.1:%d" % ngx.port
        closed = "127.0.0.1:%d" % rtest.free_port()

        def with_password(path, where=host):
            return "http://alice:%s@%s/%s" % (PASSWORD, where, path)

        def signed(path, where=host):
            return "http://%s/%s?%s" % (where, path, QUERY)

        def both(path, where=host):
            return "http://alice:%s@%s/%s?%s" % (PASSWORD, where, path, QUERY)

        kinds = [("password", with_password), ("signed query", signed), ("both", both)]
        tmpdir = os.path.join(tmp, "TMPDIR")
        os.makedirs(tmpdir)
        env = rtest.clean_env({"TMPDIR": tmpdir})
        run = Run(exe, env)
        res = rtest.Results("url-secrets")

        for kind, make in kinds:
            def success(kind=kind, make=make):
                work = tempfile.mkdtemp(dir=tmp, prefix="ok-")
                tf, csv = make("in/mnist.tfrecord"), make("in/taxi.csv")
                run(["cat", "-v", "--retries", "0", tf], work, 0)
                run(["cat", "-v", "--format", "tfrecord", tf], work, 0)
                _, out, _ = run(["stat", "-v", tf], work, 0)
                if "127.0.0.1" not in out or "in/mnist.tfrecord" not in out:
                    fail("stat does not name the object: %s", out[:300])
                run(["stat", "--json", tf, csv], work, 0)
                _, out, _ = run(["verify", "-v", tf], work, 0)
                if ": OK" not in out:
                    fail("verify: %s", out[:300])
                _, out, _ = run(["verify", "--json", "-v", tf], work, 0)
                path = json.loads(out)["files"][0]["path"]
                if "***" not in path or "/in/mnist.tfrecord" not in path or host not in path:
                    fail("verify --json path is not the URL with its secrets masked: %s", path)
                if kind != "signed query" and "alice:***@" not in path:
                    fail("verify --json path lost the user name: %s", path)
                run(["convert", "-v", csv, tf, "-o", "out/train", "--shards", "2", "--index",
                     "--manifest", "out/m.json", "--feature-spec", "out/spec.json",
                     "--shuffle", "--seed", "3"], work, 0)
                with open(os.path.join(work, "out", "m.json")) as f:
                    inputs = json.load(f)["options"]["inputs"]
                if len(inputs) != 2 or not all("***" in i and host in i for i in inputs):
                    fail("manifest options.inputs: %s", inputs)
                run(["verify", "-v", "--manifest", "out/m.json"], work, 0)
                if kind == "password":
                    # the manifest and its shards over http, the password in
                    # the manifest's URL (a signed URL names one object only)
                    served = os.path.join(www, os.path.basename(work))
                    shutil.copytree(os.path.join(work, "out"), served)
                    murl = make("%s/m.json" % os.path.basename(work))
                    _, out, _ = run(["verify", "-v", "--manifest", murl], work, 0)
                    if "alice:***@" not in out:
                        fail("verify --manifest does not show the shards' URLs masked: %s", out[:400])
                    _, out, _ = run(["verify", "--json", "--manifest", murl], work, 0)
                    if "alice:***@" not in out:
                        fail("verify --json --manifest: %s", out[:400])
                run(["convert", "-v", tf, "-o", "out/tf", "--records-per-shard", "300", "--index",
                     "--feature-spec", "out/tf-spec.json"], work, 0)
                run(["split", "-v", tf, "-o", "split/part", "--shards", "3", "--index"], work, 0)
                check_tree("after the runs", work, tmpdir)
            res.check("URL with %s: every command succeeds and shows no secret" % kind, success)

            def failure(kind=kind, make=make):
                work = tempfile.mkdtemp(dir=tmp, prefix="fail-")
                for url in (make("in/absent.tfrecord"), make("in/x.tfrecord", closed),
                            make("in/damaged.tfrecord")):
                    run(["cat", "-v", "--retries", "0", url], work, (1, 2))
                    run(["stat", "-v", "--retries", "0", url], work, (1, 2))
                    run(["stat", "--json", "--retries", "0", url], work, (1, 2))
                    _, _, err = run(["verify", "-v", "--retries", "0", url], work, (1, 2))
                    _, out, _ = run(["verify", "--json", "--retries", "0", url], work, (1, 2))
                    run(["convert", "-v", "--retries", "0", url, "-o", "out/c", "--index",
                         "--feature-spec", "out/spec.json"], work, (1, 2))
                    run(["split", "-v", "--retries", "0", url, "-o", "out/s", "--index"], work, (1, 2))
                    # the message still names the object
                    doc = json.loads(out)
                    if host not in json.dumps(doc) and closed not in json.dumps(doc):
                        fail("verify --json of %s does not name the host: %s", kind, out[:400])
                check_tree("after the failed runs", work, tmpdir)
            res.check("URL with %s: failing commands show no secret" % kind, failure)
        return res.finish()
    finally:
        if ngx:
            ngx.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    rtest.main_guard(main)
