#!/usr/bin/python3
"""An input that is not there exits 2 in every command that reads inputs,
whether it is a local file or a remote object, as shardtool(1) says.

For each of convert, split, cat, verify and stat, four remote inputs that
cannot be read:

  an HTTP 404           (a server on 127.0.0.1 that answers 404 to everything)
  an S3 NoSuchKey       (the same server speaking S3's XML error, --endpoint)
  an unresolvable host  (a name under .invalid, which never resolves)
  a refused connection  (a port on 127.0.0.1 where nothing listens)

must exit 2, as the missing local file beside them does (the reference),
print one error line that names the URL exactly once, and leave no output.

usage: test_exit_status_remote.py SHARDTOOL"""

import os
import socket
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NO_SUCH_KEY = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code>'
               b'<Message>The specified key does not exist.</Message></Error>')


class Missing(BaseHTTPRequestHandler):
    """404 to everything; S3's XML body for paths under /bucket/."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _handle(self):
        s3 = self.path.startswith("/bucket/")
        body = NO_SUCH_KEY if s3 else b"not found\n"
        self.send_response(404)
        self.send_header("Content-Type", "application/xml" if s3 else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_HEAD = do_PUT = do_POST = _handle


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once it is closed


def main():
    shardtool = sys.argv[1]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Missing)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    refused = closed_port()
    env = dict(os.environ, AWS_ACCESS_KEY_ID="", AWS_SECRET_ACCESS_KEY="", AWS_REGION="us-east-1")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = [
            ("a missing local file", os.path.join(tmp, "absent.tfrecord"), []),
            ("HTTP 404", "http://127.0.0.1:%d/absent.tfrecord" % port, []),
            ("S3 NoSuchKey", "s3://bucket/absent.tfrecord",
             ["--endpoint", "http://127.0.0.1:%d" % port, "--no-sign-request"]),
            ("an unresolvable host", "http://no-such-host.invalid/absent.tfrecord", []),
            ("a refused connection", "http://127.0.0.1:%d/absent.tfrecord" % refused, []),
        ]
        commands = [
            ("convert", lambda o: ["convert", "-o", o]),
            ("split", lambda o: ["split", "-s", "2", "-o", o]),
            ("cat", lambda o: ["cat"]),
            ("verify", lambda o: ["verify"]),
            ("stat", lambda o: ["stat"]),
        ]
        for ci, (name, argv) in enumerate(commands):
            for ki, (what, url, extra) in enumerate(cases):
                out_dir = os.path.join(tmp, "out%d-%d" % (ci, ki))
                args = [shardtool] + argv(os.path.join(out_dir, "part")) + ["--retries", "1"] + extra + [url]
                p = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
                label = "%s of %s (%s)" % (name, what, url)
                if p.returncode != 2:
                    failures.append("%s: exit %d, want 2 as for a missing file; stderr: %s"
                                    % (label, p.returncode, p.stderr.strip()))
                    continue
                lines = [l for l in p.stderr.splitlines() if l.startswith("shardtool %s:" % name)]
                if not lines:
                    failures.append("%s: no 'shardtool %s:' error line: %r" % (label, name, p.stderr))
                    continue
                shown = url.replace("s3://bucket/", "bucket/") if "S3" in what else url
                named = lines[0].count(shown)
                if named != 1:
                    failures.append("%s: the error names the URL %d times, want once: %s"
                                    % (label, named, lines[0]))
                if what == "HTTP 404" and "404" not in lines[0]:
                    failures.append("%s: the error does not say 404: %s" % (label, lines[0]))
                if os.path.exists(out_dir) and os.listdir(out_dir):
                    failures.append("%s: left %s" % (label, sorted(os.listdir(out_dir))))
    httpd.shutdown()
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("ok: %d commands x %d unreadable inputs exit 2, naming the input once"
          % (len(commands), len(cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
