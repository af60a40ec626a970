#!/usr/bin/python3
"""An http(s) answer that is a web page is never read as a table.

Python's http.server serves a directory listing (Content-Type text/html)
at a URL ending in '/': `convert URL/` must fail naming the URL, the status
and the type, where it used to write the listing's lines as records with
exit 0.  A CSV file from the same server still converts.  curl -f is the
reference for refusing what is not the object.  A gs:// prefix is listed as
a directory is walked: a README.txt and a _SUCCESS beside Spark's part
files are skipped (-v names them), not read as CSV.

usage: test_html_answer.py SHARDTOOL [SOURCE_DIR]; SHARDTOOL may also come
from $SHARDTOOL."""

import functools
import http.server
import os
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rtest  # noqa: E402
import servers  # noqa: E402


def main():
    st = os.environ.get("SHARDTOOL") or os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="st-remote-html-")
    root = os.path.join(tmp, "www")
    os.makedirs(root)
    with open(os.path.join(root, "a.csv"), "w") as f:
        f.write("id,score\n1,2\n3,4\n")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass
    handler = functools.partial(Quiet, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d/" % server.server_address[1]
    env = rtest.clean_env()
    failed = 0
    try:
        p = subprocess.run([st, "convert", base, "-o", os.path.join(tmp, "out", "listing"), "--retries", "0"],
                           capture_output=True, env=env, timeout=60)
        err = p.stderr.decode(errors="replace")
        ok = (p.returncode != 0 and base in err and "HTTP 200" in err and "text/html" in err
              and not os.path.exists(os.path.join(tmp, "out", "listing.manifest.json")))
        print("%s: directory listing refused (exit %d): %s" % ("ok" if ok else "FAIL", p.returncode, err.strip()))
        failed += not ok
        p = subprocess.run([st, "convert", base + "a.csv", "-o", os.path.join(tmp, "out", "a")],
                           capture_output=True, env=env, timeout=60)
        ok = p.returncode == 0 and b"2 records" in p.stderr
        print("%s: a CSV from the same server converts: %s" % ("ok" if ok else "FAIL", p.stderr.decode().strip()))
        failed += not ok
        g = servers.GcsServer(token="tok")
        try:
            g.store("bkt", "spark/part-00000-1f2e-c000.csv", b"id,score\n1,2\n3,4\n")
            g.store("bkt", "spark/README.txt", b"Written by Spark, do not edit.\nThe data team\n")
            g.store("bkt", "spark/_SUCCESS", b"")
            genv = rtest.clean_env({"STORAGE_EMULATOR_HOST": "127.0.0.1:%d" % g.port,
                                    "GOOGLE_OAUTH_ACCESS_TOKEN": "tok"})
            p = subprocess.run([st, "convert", "-v", "gs://bkt/spark/", "-o", os.path.join(tmp, "out", "gs")],
                               capture_output=True, env=genv, timeout=60)
            err = p.stderr.decode(errors="replace")
            ok = (p.returncode == 0 and "2 records from 1 input" in err and "skipping gs://bkt/spark/README.txt" in err
                  and "skipping gs://bkt/spark/_SUCCESS" in err)
            print("%s: a gs:// prefix takes the part file only: %s" % ("ok" if ok else "FAIL", err.strip()))
            failed += not ok
        finally:
            g.stop()
    finally:
        server.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
