#!/usr/bin/python3
"""s3:// against s3rver (npm, pinned in package.json) behind a proxy of ours
that checks every AWS Signature V4 with the known secret (s3rver itself does
not), so that a wrong secret, a missing session token or an unsigned
request fails as on AWS.

Covers: single PUT and multipart uploads (checked by reading s3rver
directly), abort leaving nothing, an existing object without --force,
listing with continuation tokens, globs, reads and random preads,
credentials from the environment, from ~/.aws profiles and with a session
token, anonymous access (--no-sign-request), error messages that say what to
check and never show a secret.

usage: test_s3.py REMOTE_CAT
exit 77 when s3rver cannot be installed (no node/npm or no registry)."""

import http.client
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rtest  # noqa: E402
import servers  # noqa: E402

KEY, SECRET = "S3RVER", "S3RVER"
MIB = 1 << 20


def s3rver_bin():
    exe = os.path.join(HERE, "node_modules", ".bin", "s3rver")
    if os.access(exe, os.X_OK):
        return exe
    if not shutil.which("npm"):
        return None
    # package.json pins the version; package-lock.json pins the rest.
    p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, capture_output=True,
                       timeout=600)
    if p.returncode != 0:
        print(p.stderr.decode()[-2000:])
        return None
    return exe if os.access(exe, os.X_OK) else None


class S3rver:
    def __init__(self, exe, workdir):
        self.port = rtest.free_port()
        env = dict(os.environ, NODE_OPTIONS="--openssl-legacy-provider")
        self.proc = subprocess.Popen([exe, "-d", workdir, "-a", "127.0.0.1", "-p", str(self.port), "-s"],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        rtest.wait_port(self.port, self.proc, timeout=60)

    def request(self, method, path, query="", body=b""):
        """Signed request straight to s3rver (an independent client)."""
        host = "127.0.0.1:%d" % self.port
        hdrs = servers.sigv4_headers(method, host, path, query, body, KEY, SECRET)
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        c.request(method, path + ("?" + query if query else ""), body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    exe = sys.argv[1]
    s3bin = s3rver_bin()
    if not s3bin:
        print("s3rver is not installed and cannot be (npm ci in tests/remote)")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-remote-s3-")
    res = rtest.Results("s3")
    srv = S3rver(s3bin, os.path.join(tmp, "s3rver"))
    proxy = servers.SigV4Proxy(srv.port, {KEY: SECRET}, public=["public"], max_keys=2)
    # s3rver knows only the key id S3RVER (it never checks secrets)
    tproxy = servers.SigV4Proxy(srv.port, {KEY: "tokensecret"}, token="sessionTOKEN123")
    try:
        for b in ("test", "public"):
            st, body = srv.request("PUT", "/" + b)
            if st != 200:
                raise rtest.Failure("cannot create bucket %s: %d %s" % (b, st, body))
        endpoint = "http://127.0.0.1:%d" % proxy.port
        env = rtest.clean_env({"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET})
        d = rtest.Driver(exe, env)
        base = ["--endpoint", endpoint, "--chunk-size", str(5 * MIB)]
        import random
        rng = random.Random(3)
        small = rng.randbytes(1000)
        big = rng.randbytes(11 * MIB + 3)
        files = {"dir/a.bin": rng.randbytes(70000), "dir/b.bin": rng.randbytes(5 * MIB),
                 "dir/c.bin": b"", "dir/d.bin": rng.randbytes(3), "dir/e.bin": rng.randbytes(12345),
                 "dir/sub/x.bin": b"nested", "dir/y.txt": b"text", "dir/b\u00e9 c+d.bin": b"odd name"}

        def put_small():
            n0 = len(proxy.log)
            d.ok(base + ["--put", "s3://test/small.bin"], stdin=small)
            st, data = srv.request("GET", "/test/small.bin")
            if st != 200 or data != small:
                raise rtest.Failure("s3rver holds %d bytes (status %d)" % (len(data), st))
            methods = [m for m, p in proxy.log[n0:]]
            if methods.count("PUT") != 1 or any("uploads" in p for m, p in proxy.log[n0:]):
                raise rtest.Failure("expected one PUT, saw %s" % proxy.log[n0:])
        res.check("s3 small object is one PUT", put_small)

        def put_big():
            n0 = len(proxy.log)
            d.ok(base + ["--put", "s3://test/big/obj.bin"], stdin=big)
            st, data = srv.request("GET", "/test/big/obj.bin")
            if st != 200 or data != big:
                raise rtest.Failure("s3rver holds %d bytes, %d expected" % (len(data), len(big)))
            log = proxy.log[n0:]
            parts = [p for m, p in log if m == "PUT" and "partNumber=" in p]
            if not any(m == "POST" and "uploads" in p for m, p in log) or len(parts) != 3 or \
                    not any(m == "POST" and "uploadId=" in p for m, p in log):
                raise rtest.Failure("expected a 3-part multipart upload, saw %s" % log)
        res.check("s3 large object is a multipart upload", put_big)

        def read_big():
            out, _ = d.ok(base + ["s3://test/big/obj.bin"])
            if out != big:
                raise rtest.Failure("read back differs")
            d.ok(base + ["--check-pread", "24", "s3://test/big/obj.bin"])
        res.check("s3 read back and random preads", read_big)

        def exists():
            d.fails(base + ["--put", "s3://test/small.bin"], ["exists", "--force"], stdin=b"new")
            d.ok(base + ["--force", "--put", "s3://test/small.bin"], stdin=b"replaced")
            out, _ = d.ok(base + ["s3://test/small.bin"])
            if out != b"replaced":
                raise rtest.Failure("not replaced")
        res.check("s3 existing object needs --force", exists)

        def abort():
            n0 = len(proxy.log)
            d.ok(base + ["--put-abort", "s3://test/aborted.bin"], stdin=big)
            st, _ = srv.request("HEAD", "/test/aborted.bin")
            if st != 404:
                raise rtest.Failure("aborted object is visible (HEAD %d)" % st)
            if not any(m == "DELETE" and "uploadId=" in p for m, p in proxy.log[n0:]):
                raise rtest.Failure("no AbortMultipartUpload: %s" % proxy.log[n0:])
            d.ok(base + ["--put-abort", "s3://test/aborted-small.bin"], stdin=small)
            st, _ = srv.request("HEAD", "/test/aborted-small.bin")
            if st != 404:
                raise rtest.Failure("aborted small object is visible")
        res.check("s3 abort leaves nothing", abort)

        def poisoned_connection():
            # A server that sends a body with a HEAD's answer (a 503 here) or
            # bytes after an answer leaves them on the kept-alive connection:
            # the next request there reads them as its answer ("Received
            # HTTP/0.9") and must be retried on a fresh connection.
            once = {"HEAD": True, "POST": True}

            def poison(method, path):
                if method == "HEAD" and once["HEAD"]:
                    once["HEAD"] = False
                    return "503-body"
                if method == "POST" and path.endswith("?uploads") and once["POST"]:
                    once["POST"] = False
                    return "junk-after"
                return None
            fp = servers.FaultProxy(proxy.port, ["ok"], fail_when=poison)
            try:
                opts = ["--endpoint", "http://127.0.0.1:%d" % fp.port, "--chunk-size", str(5 * MIB),
                        "--parallel", "1", "--retries", "3"]
                _, err = d.ok(opts + ["--verbose", "--put", "s3://test/poisoned/big.bin"], stdin=big)
                st, data = srv.request("GET", "/test/poisoned/big.bin")
                if st != 200 or data != big:
                    raise rtest.Failure("s3rver holds %d bytes (status %d)" % (len(data), st))
                faults = [f for _, _, f in fp.log]
                if "503-body" not in faults or "junk-after" not in faults:
                    raise rtest.Failure("the faults did not happen: %s" % fp.log)
                # both poisoned connections were met, and each request retried
                if err.count("HTTP/0.9") < 2 or "retry" not in err:
                    raise rtest.Failure("the poisoned connections were not both met: %s" % err[-1500:])
            finally:
                fp.stop()
        res.check("s3 upload retried on a fresh connection after HTTP/0.9", poisoned_connection)

        for name, data in files.items():
            st, body = srv.request("PUT", "/test/" + _quote(name), body=data)
            if st != 200:
                raise rtest.Failure("cannot store %s: %d %s" % (name, st, body))

        def listing():
            out, _ = d.ok(base + ["--list", "s3://test/dir/"])
            want = sorted("s3://test/" + n for n in files)
            if out.decode().split("\n")[:-1] != want:
                raise rtest.Failure("listing %r, want %r" % (out, want))
            if not any("continuation-token=" in p for m, p in proxy.log):
                raise rtest.Failure("no continuation token was used")
        res.check("s3 list prefix with continuation tokens", listing)

        def glob():
            out, _ = d.ok(base + ["--list", "s3://test/dir/*.bin"])
            want = sorted("s3://test/" + n for n in files if n.endswith(".bin") and "/sub/" not in n)
            if out.decode().split("\n")[:-1] != want:
                raise rtest.Failure("glob %r, want %r" % (out, want))
            out, _ = d.ok(base + ["--list", "s3://test/dir/[a-c].bin"])
            if out.decode().split() != ["s3://test/dir/a.bin", "s3://test/dir/b.bin", "s3://test/dir/c.bin"]:
                raise rtest.Failure("class glob %r" % out)
            d.fails(base + ["--list", "s3://test/dir/*.parquet"], "no objects match")
        res.check("s3 globs", glob)

        def cat_glob():
            out, _ = d.ok(base + ["s3://test/dir/*.bin"])
            names = sorted(n for n in files if n.endswith(".bin") and "/sub/" not in n)
            if out != b"".join(files[n] for n in names):
                raise rtest.Failure("concatenation differs")
        res.check("s3 cat a glob in name order", cat_glob)

        def missing():
            d.fails(base + ["s3://test/nope.bin"], ["not found", "s3://test/nope.bin",
                                                    "check the bucket name"])
            d.fails(base + ["s3://nobucket/x.bin"], ["not found", "NoSuchBucket"])
        res.check("s3 missing object", missing)

        def wrong_secret():
            env2 = dict(env, AWS_SECRET_ACCESS_KEY="wrongSECRETvalue")
            err = rtest.Driver(exe, env2).fails(base + ["s3://test/dir/a.bin"],
                                                ["SignatureDoesNotMatch", "check the credentials"])
            if "wrongSECRETvalue" in err:
                raise rtest.Failure("secret in message: %s" % err)
            err = rtest.Driver(exe, env2).fails(base + ["--verbose", "--verbose", "--put", "s3://test/w.bin"],
                                                "SignatureDoesNotMatch", stdin=big)
            if "wrongSECRETvalue" in err:
                raise rtest.Failure("secret in verbose output")
        res.check("s3 wrong secret is refused with a clear message", wrong_secret)

        def anonymous():
            st, _ = srv.request("PUT", "/public/open.bin", body=b"public bytes")
            out, _ = d.ok(base + ["--no-sign-request", "s3://public/open.bin"])
            if out != b"public bytes":
                raise rtest.Failure("public object differs")
            d.fails(base + ["--no-sign-request", "s3://test/dir/a.bin"], ["AccessDenied", "credentials"])
        res.check("s3 --no-sign-request", anonymous)

        def profile():
            home = tempfile.mkdtemp(prefix="st-remote-home-")
            os.makedirs(os.path.join(home, ".aws"))
            with open(os.path.join(home, ".aws", "credentials"), "w") as f:
                f.write("[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n"
                        "[tok]\naws_access_key_id = S3RVER\naws_secret_access_key = tokensecret\n"
                        "aws_session_token = sessionTOKEN123\n")
            with open(os.path.join(home, ".aws", "config"), "w") as f:
                f.write("[profile tok]\nregion = eu-west-3\n")
            env3 = rtest.clean_env({"HOME": home, "AWS_PROFILE": "tok",
                                    "AWS_ENDPOINT_URL": "http://127.0.0.1:%d" % tproxy.port})
            out, err = rtest.Driver(exe, env3).ok(["--verbose", "s3://test/dir/e.bin"])
            if out != files["dir/e.bin"]:
                raise rtest.Failure("bytes differ")
            if "tokensecret" in err or "sessionTOKEN123" in err:
                raise rtest.Failure("secret in verbose output")
            # the same keys without the session token: refused
            env5 = rtest.clean_env({"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": "tokensecret",
                                    "AWS_ENDPOINT_URL": "http://127.0.0.1:%d" % tproxy.port})
            rtest.Driver(exe, env5).fails(["s3://test/dir/e.bin"], ["InvalidToken", "check the credentials"])
            env4 = dict(env3, AWS_PROFILE="default")
            err = rtest.Driver(exe, env4).fails(["s3://test/dir/e.bin"], ["InvalidAccessKeyId"])
            shutil.rmtree(home, ignore_errors=True)
        res.check("s3 profile with session token and region from ~/.aws", profile)
    finally:
        proxy.stop()
        tproxy.stop()
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return res.finish()


def _quote(name):
    import urllib.parse
    return urllib.parse.quote(name, safe="/-_.~")


if __name__ == "__main__":
    rtest.main_guard(main)
