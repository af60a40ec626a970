#!/usr/bin/python3
"""gs:// against a small GCS JSON-API server of ours (servers.GcsServer)
reached through STORAGE_EMULATOR_HOST, as Google's clients do: listing
with page tokens, globs, media downloads with Range, bearer tokens from
GOOGLE_OAUTH_ACCESS_TOKEN or a token file, simple and resumable uploads,
abort deleting the upload session, and messages without the token.

usage: test_gcs.py REMOTE_CAT"""

import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rtest  # noqa: E402
import servers  # noqa: E402

MIB = 1 << 20
TOKEN = "ya29.testTOKENvalue"


def main():
    exe = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="st-remote-gcs-")
    res = rtest.Results("gcs")
    g = servers.GcsServer(token=TOKEN, page_size=2)
    try:
        rng = random.Random(5)
        files = {"data/p-0.tfrecord": rng.randbytes(3 * MIB + 17), "data/p-1.tfrecord": rng.randbytes(1000),
                 "data/p-2.tfrecord": b"", "data/sub/q.tfrecord": b"nested", "data/notes.txt": b"n",
                 "data/with space+plus.tfrecord": rng.randbytes(77)}
        for k, v in files.items():
            g.store("bkt", k, v)
        env = rtest.clean_env({"STORAGE_EMULATOR_HOST": "127.0.0.1:%d" % g.port,
                               "GOOGLE_OAUTH_ACCESS_TOKEN": TOKEN})
        d = rtest.Driver(exe, env)
        opts = ["--chunk-size", str(MIB)]

        def cat():
            for k, v in files.items():
                out, _ = d.ok(opts + ["gs://bkt/" + k])
                if out != v:
                    raise rtest.Failure("%s differs" % k)
            d.ok(opts + ["--check-pread", "20", "gs://bkt/data/p-0.tfrecord"])
        res.check("gcs media download with ranges", cat)

        def listing():
            out, _ = d.ok(opts + ["--list", "gs://bkt/data/"])
            want = sorted("gs://bkt/" + k for k in files)
            if out.decode().split("\n")[:-1] != want:
                raise rtest.Failure("list %r want %r" % (out, want))
            if not any("pageToken=" in p for m, p in g.log):
                raise rtest.Failure("no page token used")
            out, _ = d.ok(opts + ["gs://bkt/data/p-*.tfrecord"])
            names = sorted(k for k in files if k.startswith("data/p-"))
            if out != b"".join(files[k] for k in names):
                raise rtest.Failure("glob concatenation differs")
        res.check("gcs list with page tokens and globs", listing)

        def token_file():
            path = os.path.join(tmp, "token")
            with open(path, "w") as f:
                f.write(TOKEN + "\n")
            env2 = dict(env)
            del env2["GOOGLE_OAUTH_ACCESS_TOKEN"]
            out, _ = rtest.Driver(exe, env2).ok(opts + ["--gcs-token-file", path, "gs://bkt/data/p-1.tfrecord"])
            if out != files["data/p-1.tfrecord"]:
                raise rtest.Failure("differs")
            err = rtest.Driver(exe, env2).fails(opts + ["gs://bkt/data/p-1.tfrecord"],
                                                ["HTTP 401", "no GCS token"])
            env3 = dict(env, GOOGLE_OAUTH_ACCESS_TOKEN="ya29.WRONGtoken")
            err = rtest.Driver(exe, env3).fails(opts + ["--verbose", "gs://bkt/data/p-1.tfrecord"],
                                                ["HTTP 401", "check the access token"])
            if "WRONGtoken" in err:
                raise rtest.Failure("token in message")
        res.check("gcs tokens (env, file, wrong)", token_file)

        def missing():
            d.fails(opts + ["gs://bkt/data/none.tfrecord"], ["not found", "gs://bkt/data/none.tfrecord"])
        res.check("gcs missing object", missing)

        def uploads():
            small = rng.randbytes(4000)
            d.ok(opts + ["--put", "gs://bkt/out/small.bin"], stdin=small)
            if g.objects[("bkt", "out/small.bin")][0] != small:
                raise rtest.Failure("simple upload differs")
            big = rng.randbytes(12 * MIB + 5)
            n0 = len(g.log)
            d.ok(opts + ["--put", "gs://bkt/out/big.bin"], stdin=big)
            if g.objects[("bkt", "out/big.bin")][0] != big:
                raise rtest.Failure("resumable upload differs")
            if not any("uploadType=resumable" in p for m, p in g.log[n0:]):
                raise rtest.Failure("large object did not use a resumable upload")
            d.fails(opts + ["--put", "gs://bkt/out/big.bin"], "exists", stdin=b"x")
            d.ok(opts + ["--force", "--put", "gs://bkt/out/big.bin"], stdin=b"x")
            if g.objects[("bkt", "out/big.bin")][0] != b"x":
                raise rtest.Failure("not replaced")
            out, _ = d.ok(opts + ["gs://bkt/out/small.bin"])
            if out != small:
                raise rtest.Failure("read back differs")
        res.check("gcs simple and resumable uploads", uploads)

        def abort():
            c0 = g.cancelled
            d.ok(opts + ["--put-abort", "gs://bkt/out/aborted.bin"], stdin=rng.randbytes(12 * MIB))
            if ("bkt", "out/aborted.bin") in g.objects or g.cancelled != c0 + 1 or g.sessions:
                raise rtest.Failure("abort left something behind")
        res.check("gcs abort deletes the upload session", abort)
    finally:
        g.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return res.finish()


if __name__ == "__main__":
    rtest.main_guard(main)
