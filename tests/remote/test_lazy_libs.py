#!/usr/bin/env python3
"""libcurl and libcrypto are loaded only when a command reaches a remote
object (src/remote/curl_load.h, crypto_load.h): local commands never load
them, as the dynamic loader's own trace (LD_DEBUG=libs) shows; an http://
input loads them and reads as the local file; and where libcurl.so.4
cannot be loaded, a remote input fails with an error naming it while local
files are read as ever, and `version` lists no remote scheme, saying why.

usage: test_lazy_libs.py SHARDTOOL SOURCE_DIR.  Prints "N passed, M failed"."""
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

LAZY = ("libcurl.so.4", "libcrypto.so")


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def traced(cmd, env=None):
    """Runs cmd under the loader's trace: (returncode, stdout, trace+stderr)."""
    e = dict(os.environ if env is None else env, LD_DEBUG="libs")
    r = subprocess.run(cmd, capture_output=True, env=e)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


def initialised(trace, lib):
    """Whether the trace shows lib's initialiser run (the library was loaded)."""
    return any("calling init:" in line and lib in line for line in trace.splitlines())


def main():
    st, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="st-lazy-libs-")
    results = {"passed": 0, "failed": 0}

    def check(ok, what):
        results["passed" if ok else "failed"] += 1
        print(("ok   " if ok else "FAIL ") + what)

    try:
        tfr = os.path.join(source, "tests", "data", "tfrecord", "sequence", "events.tfrecord")
        local = os.path.join(tmp, "t.tfrecord")
        shutil.copy(tfr, local)

        # Local work: verify, stat, cat, convert to a local directory.
        for cmd in (["verify", local], ["stat", local], ["cat", local],
                    ["convert", "-q", local, "-o", os.path.join(tmp, "out")]):
            rc, _, trace = traced([st] + cmd)
            # The trace must be there at all, or its silence proves nothing.
            check("libz.so.1" in trace, f"{cmd[0]}: the loader's trace lists the libraries it loads")
            loaded = [lib for lib in LAZY if lib in trace]
            check(rc == 0 and not loaded,
                  f"{cmd[0]} of a local file loads neither libcurl nor libcrypto (rc {rc}, loaded {loaded})")

        # An http:// input: the libraries are loaded then, and it reads right.
        handler = functools.partial(Quiet, directory=tmp)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = "http://127.0.0.1:%d/t.tfrecord" % server.server_address[1]
        want = subprocess.run([st, "cat", local], capture_output=True, check=True).stdout
        rc, out, trace = traced([st, "cat", url])
        check(rc == 0 and out == want and len(want) > 0,
              f"cat of an http:// input reads as the local file (rc {rc}"
              + (f", {trace[-300:]!r})" if rc else ")"))
        for lib in LAZY:
            check(initialised(trace, lib), f"cat of an http:// input loads {lib}")
        rc, out, trace = traced([st, "verify", url])
        check(rc == 0 and initialised(trace, "libcurl.so.4"),
              f"verify of an http:// input loads libcurl and passes (rc {rc})")

        # No usable libcurl.so.4 (here a file that is no library, found
        # first): remote inputs fail naming it; local ones are unaffected.
        broken = os.path.join(tmp, "lib")
        os.mkdir(broken)
        with open(os.path.join(broken, "libcurl.so.4"), "w") as f:
            f.write("not a library\n")
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = broken + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        r = subprocess.run([st, "verify", "--retries", "0", url], capture_output=True, env=env)
        err = r.stderr.decode(errors="replace")
        check(r.returncode != 0 and "libcurl.so.4" in err and url in err,
              f"without a loadable libcurl.so.4 a remote input fails naming it and the URL "
              f"(rc {r.returncode}, {err[-300:]!r})")
        r = subprocess.run([st, "verify", local], capture_output=True, env=env)
        check(r.returncode == 0 and b"OK" in r.stdout,
              f"without a loadable libcurl.so.4 a local input verifies (rc {r.returncode})")
        # version lists the schemes only where they can be reached.
        r = subprocess.run([st, "version"], capture_output=True, env=env)
        line = [l for l in r.stdout.decode().splitlines() if l.startswith("remote:")]
        check(r.returncode == 0 and line and line[0].startswith("remote: none (") and "libcurl.so.4" in line[0],
              f"without a loadable libcurl.so.4 version lists no remote scheme and says why ({line})")
        r = subprocess.run([st, "version", "--json"], capture_output=True, env=env)
        check(r.returncode == 0 and json.loads(r.stdout)["remote"] == [],
              f"... and version --json lists none ({r.stdout[:200]!r})")
        r = subprocess.run([st, "version", "--json"], capture_output=True)
        check(r.returncode == 0 and json.loads(r.stdout)["remote"] == ["http", "https", "s3", "gs"],
              f"with libcurl, version --json lists http, https, s3 and gs ({r.stdout[:200]!r})")
        server.shutdown()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
