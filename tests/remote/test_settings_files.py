#!/usr/bin/python3
"""Credential files are read only when an address needs them.

A ~/.aws/config or ~/.aws/credentials that cannot be read (a symlink loop,
a directory in place of the file: both fail for root too, unlike chmod 000)
must not matter to commands on local files: convert, split, cat, verify and
stat exit 0.  An s3:// address then fails with exit 2 and a message that
names the file and the way out.  A --gcs-token-file that does not exist
likewise only matters to gs:// addresses.

No request leaves the machine: the S3 endpoint is a closed port on
127.0.0.1 and the credential error comes before any request.

usage: test_settings_files.py SHARDTOOL SOURCE_ROOT"""

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


def fail(fmt, *a):
    raise rtest.Failure(fmt % a if a else fmt)


def run(exe, args, env, cwd):
    p = subprocess.run([exe] + list(args), capture_output=True, env=env, cwd=cwd, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def env_with(extra):
    """rtest.clean_env with a HOME of the test's choosing."""
    env = rtest.clean_env()
    shutil.rmtree(env["HOME"], ignore_errors=True)
    env.update(extra)
    return env


def breakers(home):
    """Ways to make a file under HOME unreadable, even for root."""
    def symlink_loop(path):
        os.symlink(os.path.basename(path), path)

    def directory(path):
        os.makedirs(path)
    return [("a symlink loop", symlink_loop), ("a directory", directory)]


def main():
    exe, root = sys.argv[1], sys.argv[2]
    data = os.path.abspath(os.path.join(root, "tests", "data"))
    res = rtest.Results("settings-files")
    tmp = tempfile.mkdtemp(prefix="st-settings-")
    try:
        closed_port = rtest.free_port()
        for fname, env_name in (("config", "AWS_CONFIG_FILE"),
                                ("credentials", "AWS_SHARED_CREDENTIALS_FILE")):
            for how, make in breakers(tmp):
                def case(fname=fname, env_name=env_name, how=how, make=make):
                    home = tempfile.mkdtemp(dir=tmp)
                    os.makedirs(os.path.join(home, ".aws"))
                    bad = os.path.join(home, ".aws", fname)
                    make(bad)
                    env = env_with({"HOME": home,
                                           "AWS_ENDPOINT_URL": "http://127.0.0.1:%d" % closed_port})
                    work = os.path.join(home, "work")
                    os.makedirs(work)
                    tf = os.path.join(data, TFRECORD)
                    csv = os.path.join(data, CSV)
                    local = [
                        ["cat", tf],
                        ["stat", tf],
                        ["verify", tf],
                        ["convert", csv, "-o", "out/taxi", "--shards", "2"],
                        ["verify", "--manifest", "out/taxi.manifest.json"],
                        ["split", tf, "-o", "split/part", "--shards", "2"],
                    ]
                    for args in local:
                        rc, _, err = run(exe, args, env, work)
                        if rc != 0:
                            fail("%s with %s as ~/.aws/%s: exit %d: %s", " ".join(args), how, fname,
                                 rc, err.strip()[-500:])
                    url = "s3://bucket/in/x.tfrecord"
                    for args in (["cat", "--retries", "0", url], ["stat", "--retries", "0", url],
                                 ["convert", "--retries", "0", tf, "-o", "s3://bucket/out/x"]):
                        rc, _, err = run(exe, args, env, work)
                        if rc != 2 or bad not in err or env_name not in err:
                            fail("%s with %s as ~/.aws/%s: exit %d, expected 2 and a message "
                                 "naming %s and %s: %s", " ".join(args), how, fname, rc, bad,
                                 env_name, err.strip())
                    # Keys in the environment and a region: the files are not needed.
                    if fname == "credentials":
                        env2 = dict(env, AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="x",
                                    AWS_REGION="us-east-1")
                        rc, _, err = run(exe, ["cat", "--retries", "0", url], env2, work)
                        if bad in err:
                            fail("keys from the environment, yet %s was read: %s", bad, err.strip())
                res.check("~/.aws/%s as %s: local commands work; s3:// names the file" % (fname, how),
                          case)

        def gcs_token_file():
            env = env_with({"HOME": tmp, "STORAGE_EMULATOR_HOST": "127.0.0.1:%d" % closed_port})
            missing = os.path.join(tmp, "no-such-token")
            tf = os.path.join(data, TFRECORD)
            rc, _, err = run(exe, ["cat", "--gcs-token-file", missing, tf], env, tmp)
            if rc != 0:
                fail("cat of a local file with a missing --gcs-token-file: exit %d: %s", rc, err.strip())
            rc, _, err = run(exe, ["cat", "--retries", "0", "--gcs-token-file", missing,
                                   "gs://bucket/x.tfrecord"], env, tmp)
            if rc != 2 or missing not in err:
                fail("gs:// with a missing --gcs-token-file: exit %d: %s", rc, err.strip())
        res.check("a missing --gcs-token-file only matters to gs:// addresses", gcs_token_file)
        return res.finish()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    rtest.main_guard(main)
