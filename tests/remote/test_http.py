#!/usr/bin/python3
"""Remote reads over http:// and https:// from nginx on 127.0.0.1.

Objects of several sizes (empty, one byte, around the chunk size, many
chunks) must come back byte-identical through sequential reads, random
preads and prefetched lists; TLS is checked against a throwaway CA made
here with openssl: trusted with --cacert or CURL_CA_BUNDLE, refused
without it (with a message that says what to do), accepted with --insecure.

usage: test_http.py REMOTE_CAT"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rtest  # noqa: E402

CHUNK = 1 << 20  # small chunks so that modest files span many of them


def main():
    exe = sys.argv[1]
    if not rtest.nginx_binary():
        print("nginx is not installed")
        return rtest.SKIP
    if not shutil.which("openssl"):
        print("openssl is not installed")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-remote-http-")
    root = os.path.join(tmp, "www")
    sizes = {"empty.bin": 0, "one.bin": 1, "small.bin": 1000, "chunk.bin": CHUNK,
             "chunk1.bin": CHUNK + 1, "multi.bin": 5 * CHUNK + 12345,
             "dir/a.bin": 300000, "dir/b.bin": 2 * CHUNK + 7, "dir/c.bin": 99}
    data = rtest.make_data(root, sizes)
    res = rtest.Results("http")
    plain = rtest.Nginx(root, os.path.join(tmp, "nginx"))
    ca, cert, key = rtest.make_ca(tmp)
    tls = rtest.Nginx(root, os.path.join(tmp, "nginx-tls"), cert=cert, key=key)
    try:
        env = rtest.clean_env()
        d = rtest.Driver(exe, env)
        opts = ["--chunk-size", str(CHUNK), "--parallel", "4"]

        for name in sizes:
            def one(name=name):
                out, _ = d.ok(opts + [plain.url(name)])
                if out != data[name]:
                    raise rtest.Failure("%s: %d bytes back, %d expected, differ" % (
                        name, len(out), len(data[name])))
            res.check("http cat %s" % name, one)

        def size():
            out, _ = d.ok(opts + ["--size", plain.url("multi.bin")])
            if int(out) != len(data["multi.bin"]):
                raise rtest.Failure("size %s" % out)
        res.check("http size", size)

        def pread_tail():
            n = len(data["multi.bin"])
            out, _ = d.ok(opts + ["--pread", "%d:8" % (n - 8), plain.url("multi.bin")])
            if out != data["multi.bin"][-8:]:
                raise rtest.Failure("footer bytes differ")
        res.check("http pread footer", pread_tail)

        def check_pread():
            d.ok(opts + ["--check-pread", "40", plain.url("multi.bin")])
            d.ok(["--chunk-size", str(CHUNK), "--check-pread", "12", plain.url("small.bin")])
        res.check("http random preads", check_pread)

        def many():
            names = ["dir/a.bin", "dir/b.bin", "dir/c.bin", "multi.bin", "one.bin", "empty.bin"]
            out, err = d.ok(opts + ["--stats"] + [plain.url(n) for n in names])
            if out != b"".join(data[n] for n in names):
                raise rtest.Failure("concatenation differs")
        res.check("http prefetched list in order", many)

        def not_found():
            err = d.fails(opts + [plain.url("nope.bin")], ["not found", "HTTP 404", "nope.bin"])
            if "check the URL" not in err:
                raise rtest.Failure("no hint: %s" % err)
        res.check("http 404 names the URL", not_found)

        def refused():
            port = rtest.free_port()
            d.fails(["--retries", "1", "http://127.0.0.1:%d/x" % port], "gave up after 2 attempts")
        res.check("http connection refused gives up after retries", refused)

        def tls_ok():
            out, _ = d.ok(opts + ["--cacert", ca, tls.url("multi.bin", "https")])
            if out != data["multi.bin"]:
                raise rtest.Failure("bytes differ over TLS")
        res.check("https with --cacert", tls_ok)

        def tls_env():
            env2 = dict(env, CURL_CA_BUNDLE=ca)
            out, _ = rtest.Driver(exe, env2).ok(opts + [tls.url("dir/b.bin", "https")])
            if out != data["dir/b.bin"]:
                raise rtest.Failure("bytes differ over TLS")
            env3 = dict(env, SSL_CERT_FILE=ca)
            rtest.Driver(exe, env3).ok(opts + [tls.url("one.bin", "https")])
        res.check("https with CURL_CA_BUNDLE / SSL_CERT_FILE", tls_env)

        def tls_untrusted():
            err = d.fails(opts + [tls.url("small.bin", "https")],
                          ["TLS certificate", "--cacert", "--insecure"])
            if "gave up" in err:
                raise rtest.Failure("certificate errors must not be retried")
        res.check("https without the CA is refused", tls_untrusted)

        def tls_insecure():
            out, _ = d.ok(opts + ["--insecure", tls.url("small.bin", "https")])
            if out != data["small.bin"]:
                raise rtest.Failure("bytes differ")
        res.check("https --insecure", tls_insecure)

        def no_write():
            d.fails(["--put", plain.url("new.bin")], "cannot write to http(s) URLs", stdin=b"x")
        res.check("http output is unsupported", no_write)
    finally:
        plain.stop()
        tls.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return res.finish()


if __name__ == "__main__":
    rtest.main_guard(main)
