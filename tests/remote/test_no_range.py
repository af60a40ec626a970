#!/usr/bin/env python3
"""A plain HTTP server that ignores Range (Python's http.server answers 200
with the whole object): a Parquet file, whose footer is read by ranges, and
a TFRecord file of many chunks read sequentially come back through
shardtool exactly as from the local files: the object is read whole, once.

usage: test_no_range.py SHARDTOOL SOURCE_DIR.  Prints "N passed, M failed"."""
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading


class Quiet(http.server.SimpleHTTPRequestHandler):
    requests = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        Quiet.requests.append((self.path, self.headers.get("Range")))
        try:
            super().do_GET()
        except ConnectionError:
            pass  # a client that took what it asked for and hung up


def main():
    st, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="st-no-range-")
    results = {"passed": 0, "failed": 0}

    def check(ok, what):
        results["passed" if ok else "failed"] += 1
        print(("ok   " if ok else "FAIL ") + what)

    try:
        parquet = os.path.join(source, "tests", "data", "parquet", "alltypes_tiny_pages_plain.parquet")
        shutil.copy(parquet, os.path.join(tmp, "t.parquet"))
        with open(os.path.join(tmp, "t.jsonl"), "w") as f:
            for i in range(20000):
                f.write('{"i": %d, "s": "text %d"}\n' % (i, i))
        subprocess.run([st, "convert", "-q", os.path.join(tmp, "t.jsonl"), "-o", os.path.join(tmp, "r")],
                       check=True)
        handler = functools.partial(Quiet, directory=tmp)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = "http://127.0.0.1:%d/" % server.server_address[1]
        for name in ("t.parquet", "r-00000-of-00001.tfrecord"):
            local = subprocess.run([st, "cat", os.path.join(tmp, name)], capture_output=True)
            Quiet.requests.clear()
            remote = subprocess.run([st, "cat", "--chunk-size", "65536", base + name], capture_output=True)
            check(remote.returncode == 0 and remote.stdout == local.stdout and len(local.stdout) > 0,
                  f"{name} from a server without Range reads as the local file "
                  f"({remote.returncode}, {remote.stderr.decode()[-300:]!r})")
            check(len(Quiet.requests) <= 3, f"{name}: read whole, not once per range ({len(Quiet.requests)} GETs)")
        server.shutdown()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
