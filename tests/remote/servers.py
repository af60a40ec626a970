"""Small HTTP servers for the remote tests, all on 127.0.0.1, each in a thread
of the test process:

  SigV4Proxy  a reverse proxy in front of s3rver that recomputes every AWS
              Signature V4 with the known secret (its own implementation,
              written from AWS's description, not shared with the C code) and
              rejects mismatches the way S3 does, and counts the body bytes
              of its answers (what a client downloaded);
  FaultProxy  a reverse proxy that answers 503 (with Retry-After), 500, 429,
              cuts bodies mid-way, stalls, resets connections, or changes the
              ETag, on a fixed schedule or for the requests a predicate picks;
  GcsServer   the parts of the GCS JSON API that shardtool uses: object list
              with page tokens, media download with Range, metadata, simple
              (with ifGenerationMatch=0) and resumable uploads, delete.

SigV4Proxy honours PutObject's If-None-Match: * (412 when the key is taken),
which s3rver itself ignores, so the FaultProxy in front of it does too.
"""

import base64
import hashlib
import hmac
import http.client
import json
import re
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # clients that hang up (on purpose, in the fault tests) are not news


class _Base:
    def __init__(self, handler):
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.httpd.owner = self
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _read_body(h):
    n = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(n) if n else b""


def _forward(port, method, path, headers, body):
    """Sends the request upstream unchanged (Host included); returns
    (status, [(name, value)], body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for k, v in headers:
        if k.lower() in HOP or k.lower() == "content-length":
            continue
        c.putheader(k, v)
    if body or method in ("PUT", "POST"):
        c.putheader("Content-Length", str(len(body)))
    c.endheaders(body if body else None)
    r = c.getresponse()
    try:
        data = r.read()
    except http.client.IncompleteRead as e:
        data = e.partial  # s3rver claims 1 byte for ranges of empty objects
    # A HEAD answer's Content-Length is the object's size (as S3 sends it):
    # kept; any other is recomputed from the body relayed.
    hdrs = [(k, v) for k, v in r.getheaders()
            if k.lower() not in HOP and (k.lower() != "content-length" or method == "HEAD")]
    c.close()
    return r.status, hdrs, data


def _reply(h, status, headers, body, head=False):
    h.send_response(status)
    for k, v in headers:
        h.send_header(k, v)
    if not any(k.lower() == "content-length" for k, v in headers):
        h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    if not head and body:
        h.wfile.write(body)


# ---- SigV4 ------------------------------------------------------------------

def _sha256(b):
    return hashlib.sha256(b).hexdigest()


def _hmac(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def _canonical_query(q):
    pairs = []
    for part in q.split("&"):
        if not part:
            continue
        k, _, v = part.partition("=")
        enc = lambda s: urllib.parse.quote(urllib.parse.unquote(s), safe="-_.~")  # noqa: E731
        pairs.append((enc(k), enc(v)))
    pairs.sort()
    return "&".join("%s=%s" % kv for kv in pairs)


AUTH_RE = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, ?"
                     r"SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$")


def sigv4_check(method, raw_path, headers, body, secrets, token=None):
    """Returns None when the request is signed correctly, else (code, message)."""
    h = {}
    for k, v in headers:
        h.setdefault(k.lower(), []).append(v)
    auth = (h.get("authorization") or [None])[0]
    if auth is None:
        return ("AccessDenied", "Anonymous access is forbidden for this bucket")
    m = AUTH_RE.match(auth)
    if not m:
        return ("AuthorizationHeaderMalformed", "The authorization header is malformed")
    access, date, region, signed, sig = m.groups()
    if access not in secrets:
        return ("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
    names = signed.split(";")
    for need in ("host", "x-amz-date", "x-amz-content-sha256"):
        if need not in names:
            return ("AccessDenied", "%s must be signed" % need)
    if token is not None:
        if "x-amz-security-token" not in names or h.get("x-amz-security-token") != [token]:
            return ("InvalidToken", "The provided token is malformed or otherwise invalid.")
    amz_date = h["x-amz-date"][0]
    if not amz_date.startswith(date):
        return ("AuthorizationHeaderMalformed", "credential date does not match x-amz-date")
    payload = h["x-amz-content-sha256"][0]
    if payload != "UNSIGNED-PAYLOAD" and payload != _sha256(body):
        return ("XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.")
    path, _, query = raw_path.partition("?")
    cpath = urllib.parse.quote(urllib.parse.unquote(path), safe="/-_.~")
    lines = []
    for n in names:
        if n not in h:
            return ("AccessDenied", "signed header %s is missing" % n)
        lines.append("%s:%s" % (n, ",".join(" ".join(v.split()) for v in h[n])))
    creq = "\n".join([method, cpath, _canonical_query(query), "\n".join(lines) + "\n", signed, payload])
    scope = "%s/%s/s3/aws4_request" % (date, region)
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, _sha256(creq.encode())])
    k = _hmac(("AWS4" + secrets[access]).encode(), date)
    k = _hmac(k, region)
    k = _hmac(k, "s3")
    k = _hmac(k, "aws4_request")
    want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, sig):
        return ("SignatureDoesNotMatch", "The request signature we calculated does not match the "
                "signature you provided. Check your key and signing method.")
    return None


def sigv4_headers(method, host, path, query, body, access, secret, region="us-east-1"):
    """Signs a request here in Python (for reading s3rver directly)."""
    amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    payload = _sha256(body)
    hdrs = {"host": host, "x-amz-content-sha256": payload, "x-amz-date": amz_date}
    names = sorted(hdrs)
    creq = "\n".join([method, path, _canonical_query(query),
                      "".join("%s:%s\n" % (n, hdrs[n]) for n in names), ";".join(names), payload])
    date = amz_date[:8]
    scope = "%s/%s/s3/aws4_request" % (date, region)
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, _sha256(creq.encode())])
    k = _hmac(("AWS4" + secret).encode(), date)
    for part in (region, "s3", "aws4_request"):
        k = _hmac(k, part)
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    hdrs["Authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        access, scope, ";".join(names), sig)
    return hdrs


class _SigV4Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _handle(self):
        p = self.server.owner
        body = _read_body(self)
        headers = list(self.headers.items())
        with p.lock:
            p.log.append((self.command, self.path))
        bucket = self.path.lstrip("/").split("/", 1)[0].split("?", 1)[0]
        anonymous_ok = bucket in p.public and self.command in ("GET", "HEAD") and \
            self.headers.get("Authorization") is None
        problem = None if anonymous_ok else sigv4_check(self.command, self.path, headers, body,
                                                         p.secrets, p.token)
        if problem:
            with p.lock:
                p.rejected.append(problem[0])
            xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>%s</Code><Message>%s</Message>"
                   "</Error>" % problem).encode()
            status = 400 if problem[0] in ("AuthorizationHeaderMalformed", "XAmzContentSHA256Mismatch") else 403
            p.count_response(self, status, xml)
            _reply(self, status, [("Content-Type", "application/xml")], xml, self.command == "HEAD")
            return
        path = self.path
        if p.max_keys and self.command == "GET" and "list-type=2" in path:
            path += "&max-keys=%d" % p.max_keys  # forces continuation tokens
        if self.command == "PUT" and self.headers.get("If-None-Match") == "*" and p.conditional:
            # S3's conditional write (s3rver has none): the object is created
            # only when its key is free, else 412, the check and the write
            # together under one lock.
            with p.put_lock:
                with p.lock:
                    p.conditional_puts.append(self.path)
                key_path = self.path.split("?", 1)[0]
                access, secret = next(iter(p.secrets.items()))
                signed = sigv4_headers("HEAD", self.headers.get("Host"), key_path, "", b"",
                                                       access, secret)
                st, _, _ = _forward(p.upstream, "HEAD", key_path, list(signed.items()), b"")
                if st == 200:
                    xml = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>PreconditionFailed</Code>"
                           b"<Message>At least one of the pre-conditions you specified did not hold</Message>"
                           b"<Condition>If-None-Match</Condition></Error>")
                    p.count_response(self, 412, xml)
                    _reply(self, 412, [("Content-Type", "application/xml")], xml)
                    return
                status, hdrs, data = _forward(p.upstream, self.command, path, headers, body)
        else:
            status, hdrs, data = _forward(p.upstream, self.command, path, headers, body)
        p.count_response(self, status, data)
        _reply(self, status, hdrs, data, self.command == "HEAD")
        if fault == "junk-after":
            # Bytes after a complete answer poison the connection the same way.
            self.stray_bytes = b"junk after the answer\n"

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


class SigV4Proxy(_Base):
    def __init__(self, upstream_port, secrets, public=(), token=None, max_keys=0, conditional=True):
        """conditional: honour PutObject's If-None-Match: * (412 when the
        key is taken), as S3 does; False plays a store that ignores it."""
        self.upstream = upstream_port
        self.conditional = conditional
        self.put_lock = threading.Lock()
        self.conditional_puts = []  # paths of the PUTs that carried If-None-Match: *
        self.secrets = secrets
        self.public = set(public)
        self.token = token
        self.max_keys = max_keys
        self.lock = threading.Lock()
        self.log = []
        self.rejected = []
        # (method, path, Range header, status, response body bytes sent), in
        # the order the answers went out, and their body bytes in total: what
        # a client really downloaded (HEAD answers carry no body).
        self.traffic = []
        self.bytes_out = 0
        super().__init__(_SigV4Handler)

    def count_response(self, h, status, body):
        n = 0 if h.command == "HEAD" else len(body)
        with self.lock:
            self.traffic.append((h.command, h.path, h.headers.get("Range"), status, n))
            self.bytes_out += n


# ---- faults --------------------------------------------------------------------

class _FaultHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _handle(self):
        p = self.server.owner
        body = _read_body(self)
        with p.lock:
            p.in_flight[self.path] = p.in_flight.get(self.path, 0) + 1
            p.arrivals.append((self.path, len(p.in_flight)))
        try:
            self._answer(p, body)
        finally:
            with p.lock:
                p.in_flight[self.path] -= 1
                if not p.in_flight[self.path]:
                    del p.in_flight[self.path]

    def _answer(self, p, body):
        with p.lock:
            n = p.count
            p.count += 1
            fault = p.schedule[n % len(p.schedule)] if p.schedule else "ok"
            if n < p.clean_first:
                fault = "ok"
            if p.fail_when is not None:
                fault = p.fail_when(self.command, self.path) or fault
            p.seen.append(fault)
            p.log.append((self.command, self.path, fault))
            p.ranges.append(self.headers.get("Range"))
        if fault == "reset":
            # close without an answer (RST where the kernel allows)
            try:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            except OSError:
                pass
            self.close_connection = True
            return
        stray = getattr(self, "stray_bytes", b"")
        if stray:
            # Bytes left on this connection by the last answer, seen by the
            # client in front of this one.  They are held until the next
            # request comes: sent at once, curl would find the idle
            # connection readable and not reuse it, and the test would
            # depend on that race.
            self.stray_bytes = b""
            self.wfile.write(stray)
        if fault == "503-body" and self.command == "HEAD":
            # A 503 with a body even to a HEAD: the body stays on the
            # connection, and the next answer read there starts with it.
            _reply(self, 503, [("Content-Type", "text/plain")], b"try again later\n", head=True)
            self.stray_bytes = b"try again later\n"
            return
        if fault in ("503", "500", "429"):
            hdrs = [("Content-Type", "text/plain")]
            if fault == "503":
                hdrs.append(("Retry-After", "1"))
            _reply(self, int(fault), hdrs, b"try again later\n", self.command == "HEAD")
            return
        if p.delay_seconds:
            time.sleep(p.delay_seconds)  # a far-away store's answer time
        status, hdrs, data = _forward(p.upstream, self.command, self.path, list(self.headers.items()), body)
        if fault == "lost-answer":
            # The request took effect upstream; its answer never comes.
            self.close_connection = True
            return
        if p.etag_after is not None and n >= p.etag_after:
            hdrs = [(k, '"changed-%d"' % n if k.lower() == "etag" else v) for k, v in hdrs]
        if fault in ("cut", "stall") and len(data) > 2:
            self.send_response(status)
            for k, v in hdrs:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            if fault == "stall":
                time.sleep(p.stall_seconds)
            self.close_connection = True
            return
        _reply(self, status, hdrs, data, self.command == "HEAD")
        if fault == "junk-after":
            # Bytes after a complete answer poison the connection the same way.
            self.stray_bytes = b"junk after the answer\n"

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


class FaultProxy(_Base):
    def __init__(self, upstream_port, schedule, stall_seconds=4.0, etag_after=None, clean_first=0,
                 fail_when=None, delay_seconds=0.0):
        """fail_when(method, path) may name a fault for one request (else
        None), whatever the schedule says: e.g. 500 for every upload part
        after the first.  delay_seconds passes before every answer.
        Faults: ok, 503 (with Retry-After: 1), 500, 429, cut, stall, reset,
        lost-answer (passed on, then the connection closed unanswered),
        503-body (a body even to a HEAD) and junk-after (bytes after the
        answer); the last two leave bytes on a kept-alive connection."""
        self.upstream = upstream_port
        self.delay_seconds = delay_seconds
        self.ranges = []  # the Range header of each request, or None
        self.schedule = list(schedule)
        self.stall_seconds = stall_seconds
        self.etag_after = etag_after
        self.clean_first = clean_first
        self.fail_when = fail_when
        self.lock = threading.Lock()
        self.count = 0
        self.seen = []
        self.log = []  # (method, path, fault)
        # Requests being answered, by path (an answer stays in flight while
        # the client holds its bytes back), and for each request as it came
        # its path and how many paths were then in flight, its own included.
        self.in_flight = {}
        self.arrivals = []
        super().__init__(_FaultHandler)


# ---- an object that changes while it is read ----------------------------------------

class _ChangingHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _handle(self):
        p = self.server.owner
        with p.lock:
            n = p.count
            p.count += 1
            data = p.versions[min(n // p.per_version, len(p.versions) - 1)]
            p.log.append((self.command, self.headers.get("Range")))
        head = self.command == "HEAD"
        if head and p.head_delay:
            # Held a while, to see how many HEADs a client keeps in flight.
            with p.lock:
                p.heads_in_flight += 1
                p.most_heads_in_flight = max(p.most_heads_in_flight, p.heads_in_flight)
            time.sleep(p.head_delay)
            with p.lock:
                p.heads_in_flight -= 1
        rng = self.headers.get("Range")
        m = re.match(r"bytes=(\d+)-(\d*)$", rng or "")
        if not m:
            _reply(self, 200, [("Accept-Ranges", "bytes")], data, head)
            return
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else len(data) - 1
        if a >= len(data):
            _reply(self, 416, [("Content-Range", "bytes */%d" % len(data))], b"", head)
            return
        b = min(b, len(data) - 1)
        _reply(self, 206, [("Content-Range", "bytes %d-%d/%d" % (a, b, len(data)))],
               data[a:b + 1], head)

    do_GET = do_HEAD = _handle


class ChangingObject(_Base):
    """One object, served at any path with ranges but without ETag or
    Last-Modified: requests 0..per_version-1 get versions[0], the next
    per_version versions[1], and so on (the last version stays).  With
    head_delay, each HEAD is held that many seconds, and
    most_heads_in_flight counts how many were held at once."""

    def __init__(self, versions, per_version=1, head_delay=0):
        self.versions = list(versions)
        self.per_version = per_version
        self.head_delay = head_delay
        self.heads_in_flight = self.most_heads_in_flight = 0
        self.lock = threading.Lock()
        self.count = 0
        self.log = []  # (method, Range header)
        super().__init__(_ChangingHandler)


# ---- GCS --------------------------------------------------------------------------

def _gcs_error(h, status, message, head=False):
    body = json.dumps({"error": {"code": status, "message": message}}).encode()
    _reply(h, status, [("Content-Type", "application/json")], body, head)


class _GcsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _auth_ok(self):
        g = self.server.owner
        if g.token is None:
            return True
        if self.headers.get("Authorization") == "Bearer " + g.token:
            return True
        _gcs_error(self, 401, "Invalid Credentials", self.command == "HEAD")
        return False

    def _handle(self):
        g = self.server.owner
        body = _read_body(self)
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        with g.lock:
            g.log.append((self.command, self.path))
        if not self._auth_ok():
            return
        m = re.match(r"^/storage/v1/b/([^/]+)/o$", u.path)
        if m and self.command == "GET":
            return self._list(m.group(1), q)
        m = re.match(r"^/storage/v1/b/([^/]+)/o/(.+)$", u.path)
        if m and self.command == "DELETE":
            key = (m.group(1), urllib.parse.unquote(m.group(2)))
            with g.lock:
                gone = g.objects.pop(key, None)
            if gone is None:
                return _gcs_error(self, 404, "No such object: %s/%s" % key)
            return _reply(self, 204, [], b"")
        if m and self.command in ("GET", "HEAD"):
            key = (m.group(1), urllib.parse.unquote(m.group(2)))
            with g.lock:
                obj = g.objects.get(key)
            if obj is None:
                return _gcs_error(self, 404, "No such object: %s/%s" % key, self.command == "HEAD")
            data, gen = obj
            if q.get("alt") == ["media"]:
                return self._media(data, gen)
            meta = json.dumps({"name": key[1], "bucket": key[0], "size": str(len(data)),
                               "generation": str(gen)}).encode()
            return _reply(self, 200, [("Content-Type", "application/json")], meta, self.command == "HEAD")
        m = re.match(r"^/upload/storage/v1/b/([^/]+)/o$", u.path)
        if m and self.command == "POST":
            name = (q.get("name") or [""])[0]
            kind = (q.get("uploadType") or [""])[0]
            if not name:
                return _gcs_error(self, 400, "name required")
            if kind == "media":
                # ifGenerationMatch=0: only when no object has the name
                # (412 otherwise), checked and stored under one lock.
                if q.get("ifGenerationMatch") == ["0"]:
                    with g.lock:
                        g.conditional_puts.append(name)
                        if (m.group(1), name) in g.objects:
                            taken = True
                        else:
                            taken = False
                            g.generation += 1
                            g.objects[(m.group(1), name)] = (bytes(body), g.generation)
                    if taken:
                        return _gcs_error(self, 412, "At least one of the pre-conditions you specified did not hold.")
                    return _reply(self, 200, [("Content-Type", "application/json")],
                                  json.dumps({"name": name}).encode())
                g.store(m.group(1), name, body)
                return _reply(self, 200, [("Content-Type", "application/json")],
                              json.dumps({"name": name}).encode())
            if kind == "resumable":
                with g.lock:
                    g.next_session += 1
                    sid = "s%d" % g.next_session
                    g.sessions[sid] = [m.group(1), name, bytearray()]
                loc = "http://127.0.0.1:%d/upload/session/%s?upload_id=%s" % (g.port, sid, sid)
                return _reply(self, 200, [("Location", loc)], b"")
            return _gcs_error(self, 400, "bad uploadType")
        m = re.match(r"^/upload/session/([a-z0-9]+)$", u.path)
        if m:
            sid = m.group(1)
            with g.lock:
                s = g.sessions.get(sid)
            if s is None:
                return _gcs_error(self, 404, "no such upload")
            if self.command == "DELETE":
                with g.lock:
                    g.sessions.pop(sid, None)
                    g.cancelled += 1
                return _reply(self, 499, [], b"")
            if self.command != "PUT":
                return _gcs_error(self, 405, "method")
            cr = self.headers.get("Content-Range", "")
            mm = re.match(r"^bytes (\d+)-(\d+)/(\d+|\*)$", cr) or re.match(r"^bytes \*/(\d+)$", cr)
            if not mm:
                return _gcs_error(self, 400, "bad Content-Range %r" % cr)
            if len(mm.groups()) == 3:
                a, b, total = int(mm.group(1)), int(mm.group(2)), mm.group(3)
                if a != len(s[2]) or b - a + 1 != len(body):
                    return _gcs_error(self, 400, "chunk does not continue the upload")
                if total == "*" and len(body) % (256 * 1024):
                    return _gcs_error(self, 400, "chunk size must be a multiple of 256 KiB")
                s[2] += body
            else:
                total = mm.group(1)
            if total != "*":
                if int(total) != len(s[2]):
                    return _gcs_error(self, 400, "size mismatch")
                g.store(s[0], s[1], bytes(s[2]))
                with g.lock:
                    g.sessions.pop(sid, None)
                return _reply(self, 200, [("Content-Type", "application/json")],
                              json.dumps({"name": s[1]}).encode())
            return _reply(self, 308, [("Range", "bytes=0-%d" % (len(s[2]) - 1))], b"")
        return _gcs_error(self, 404, "unknown path %s" % u.path)

    def _list(self, bucket, q):
        g = self.server.owner
        prefix = (q.get("prefix") or [""])[0]
        start = int(base64.b64decode((q.get("pageToken") or [""])[0] or "MA==").decode())
        with g.lock:
            names = sorted(k for b, k in g.objects if b == bucket and k.startswith(prefix))
        page = names[start:start + g.page_size]
        out = {"kind": "storage#objects", "items": [{"name": n, "bucket": bucket} for n in page]}
        if start + g.page_size < len(names):
            out["nextPageToken"] = base64.b64encode(str(start + g.page_size).encode()).decode()
        if not page:
            del out["items"]
        _reply(self, 200, [("Content-Type", "application/json")], json.dumps(out).encode())

    def _media(self, data, gen):
        hdrs = [("Content-Type", "application/octet-stream"), ("ETag", '"g%d"' % gen),
                ("x-goog-generation", str(gen))]
        rng = self.headers.get("Range")
        m = re.match(r"^bytes=(\d+)-(\d*)$", rng or "")
        if not m:
            return _reply(self, 200, hdrs, data, self.command == "HEAD")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else len(data) - 1
        if a >= len(data):
            return _reply(self, 416, [("Content-Range", "bytes */%d" % len(data))], b"")
        b = min(b, len(data) - 1)
        hdrs.append(("Content-Range", "bytes %d-%d/%d" % (a, b, len(data))))
        _reply(self, 206, hdrs, data[a:b + 1], self.command == "HEAD")

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


class GcsServer(_Base):
    def __init__(self, token=None, page_size=2):
        self.token = token
        self.page_size = page_size
        self.lock = threading.Lock()
        self.objects = {}
        self.sessions = {}
        self.next_session = 0
        self.generation = 0
        self.cancelled = 0
        self.log = []
        self.conditional_puts = []  # names uploaded with ifGenerationMatch=0
        super().__init__(_GcsHandler)

    def store(self, bucket, name, data):
        with self.lock:
            self.generation += 1
            self.objects[(bucket, name)] = (bytes(data), self.generation)
