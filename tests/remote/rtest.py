"""Helpers for the remote-storage tests: servers on 127.0.0.1 that the tests
start and stop themselves (nginx, a throwaway CA, s3rver), and running the
remote_cat driver.  Only loopback addresses are ever contacted."""

import hashlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77


class Failure(Exception):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc=None, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            raise Failure("server exited with status %s" % proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise Failure("nothing listens on port %d" % port)


def clean_env(extra=None):
    """The environment for the driver: no proxies, no AWS/GCS settings from
    the machine, a HOME of our own."""
    env = {k: v for k, v in os.environ.items()
           if not k.lower().endswith("_proxy") and not k.startswith("AWS_")
           and k not in ("GOOGLE_OAUTH_ACCESS_TOKEN", "STORAGE_EMULATOR_HOST",
                         "CURL_CA_BUNDLE", "SSL_CERT_FILE")}
    env["HOME"] = tempfile.mkdtemp(prefix="st-remote-home-")
    env["NO_PROXY"] = "*"
    if extra:
        env.update(extra)
    return env


def make_data(directory, sizes, seed=7):
    """Files of pseudo-random bytes; returns {name: bytes}."""
    rng = random.Random(seed)
    out = {}
    for name, size in sizes.items():
        data = rng.randbytes(size)
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        out[name] = data
    return out


def sha(b):
    return hashlib.sha256(b).hexdigest()[:16]


class Driver:
    def __init__(self, exe, env):
        self.exe = exe
        self.env = env

    def run(self, args, stdin=None, timeout=300):
        p = subprocess.run([self.exe] + list(args), input=stdin, capture_output=True,
                           env=self.env, timeout=timeout)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")

    def ok(self, args, stdin=None, timeout=300):
        rc, out, err = self.run(args, stdin, timeout)
        if rc != 0:
            raise Failure("remote_cat %s failed (%d): %s" % (" ".join(args), rc, err.strip()))
        return out, err

    def fails(self, args, expect_text, stdin=None, timeout=300):
        rc, out, err = self.run(args, stdin, timeout)
        if rc == 0:
            raise Failure("remote_cat %s should have failed" % " ".join(args))
        for t in ([expect_text] if isinstance(expect_text, str) else expect_text):
            if t not in err:
                raise Failure("remote_cat %s: expected %r in: %s" % (" ".join(args), t, err.strip()))
        return err


class Results:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def check(self, what, fn):
        try:
            fn()
            self.passed += 1
            print("ok   %s" % what, flush=True)
        except Exception as e:  # report and go on with the next case
            self.failed += 1
            print("FAIL %s: %s" % (what, e), flush=True)

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed), flush=True)
        return 1 if self.failed else 0


# ---- nginx ---------------------------------------------------------------

def nginx_binary():
    for p in ("/usr/sbin/nginx", shutil.which("nginx") or ""):
        if p and os.access(p, os.X_OK):
            return p
    return None


class Nginx:
    """nginx serving `root` on a free port, plain or TLS, Range support on
    (nginx answers 206 for byte ranges of static files); `locations`: more
    location blocks for the server."""

    def __init__(self, root, workdir, cert=None, key=None, locations=""):
        self.root = root
        self.port = free_port()
        self.dir = workdir
        os.makedirs(workdir, exist_ok=True)
        user = "user root root;" if os.geteuid() == 0 else ""
        listen = "127.0.0.1:%d%s" % (self.port, " ssl" if cert else "")
        tls = ("ssl_certificate %s; ssl_certificate_key %s;" % (cert, key)) if cert else ""
        conf = f"""
{user}
worker_processes 2;
daemon off;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {workdir}/body;
    proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/fastcgi;
    uwsgi_temp_path {workdir}/uwsgi;
    scgi_temp_path {workdir}/scgi;
    sendfile on;
    keepalive_requests 100000;
    server {{
        listen {listen};
        {tls}
        root {root};
        location / {{ }}
        {locations}
    }}
}}
"""
        self.conf = os.path.join(workdir, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(conf)
        self.proc = subprocess.Popen([nginx_binary(), "-c", self.conf, "-p", workdir],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_port(self.port, self.proc)
        except Failure:
            self.stop()
            raise

    def url(self, path, scheme=None):
        scheme = scheme or "http"
        return "%s://127.0.0.1:%d/%s" % (scheme, self.port, path)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def make_ca(directory, host="127.0.0.1"):
    """A throwaway CA and a server certificate for host signed by it.
    Returns (ca_cert, server_cert, server_key)."""
    def run(*args):
        p = subprocess.run(["openssl"] + list(args), cwd=directory, capture_output=True)
        if p.returncode != 0:
            raise Failure("openssl %s: %s" % (args[0], p.stderr.decode()))
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=shardtool test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=%s" % host)
    with open(os.path.join(directory, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:%s\nbasicConstraints=CA:FALSE\n"
                "extendedKeyUsage=serverAuth\n" % host)
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")
    return (os.path.join(directory, "ca.pem"), os.path.join(directory, "server.pem"),
            os.path.join(directory, "server.key"))


def main_guard(fn):
    """Runs fn() and turns Failure into exit 1, SKIP into 77."""
    try:
        sys.exit(fn())
    except Failure as e:
        print("FAIL %s" % e, flush=True)
        sys.exit(1)
