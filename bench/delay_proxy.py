#!/usr/bin/env python3
"""A TCP proxy for HTTP/1.1 that holds every request DELAY_MS before passing
it on, as a far object store's round trip would.

usage: delay_proxy.py LISTEN_PORT UPSTREAM_PORT DELAY_MS

The delay is per request, not per packet: the proxy reads each request's
head (and counts its body by Content-Length), waits DELAY_MS, then forwards
it.  Answers flow back at once, through the kernel (splice), so the proxy
adds latency, not a bandwidth limit.  Each client connection gets its own
upstream connection, and requests on it go one after another, so
keep-alive connections stay possible, as they would to a real store.  A new
connection costs one more DELAY_MS before its first request (the TCP
handshake a far store costs; TLS would add more), so a client that opens
connections anew pays for it, as it would over a real link.

Prints "ready" on stdout once it listens.  Runs until killed.  With
DELAY_PROXY_LOG=FILE set, appends a line per request to FILE: the time it
was read (after a new connection's handshake delay), its connection (1, 2,
...), its request line and Range header: to see what a reader waits for."""

import fcntl
import os
import socket
import sys
import threading
import time

F_SETPIPE_SZ = 1031
PIPE_SIZE = 1 << 20
LOG = open(os.environ["DELAY_PROXY_LOG"], "a", buffering=1) if os.environ.get("DELAY_PROXY_LOG") else None
LOG_LOCK = threading.Lock()


def log_request(conn, head):
    lines = head.split(b"\r\n")
    rng = next((ln.split(b":", 1)[1].strip() for ln in lines[1:] if ln.lower().startswith(b"range:")), b"-")
    with LOG_LOCK:
        LOG.write("%.6f %d %s %s\n" % (time.time(), conn, lines[0].decode("latin-1"), rng.decode("latin-1")))


def pump_answers(up, client):
    """upstream -> client through a pipe, without copying into Python."""
    r, w = os.pipe()
    try:
        fcntl.fcntl(w, F_SETPIPE_SZ, PIPE_SIZE)
    except OSError:
        pass
    try:
        while True:
            n = os.splice(up.fileno(), w, PIPE_SIZE)
            if n == 0:
                break
            while n:
                n -= os.splice(r, client.fileno(), n)
    except OSError:
        pass
    finally:
        os.close(r)
        os.close(w)
        for s in (client, up):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def body_length(head):
    """Bytes of body after this request head (Content-Length), or None for
    a chunked body, which this proxy does not take apart."""
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            return int(value.strip())
        if name == b"transfer-encoding" and b"chunked" in value.lower():
            return None
    return 0


def serve(client, upstream_port, delay, conn=0):
    up = None
    pump = None
    try:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        time.sleep(delay)  # the handshake of a new connection
        up = socket.create_connection(("127.0.0.1", upstream_port))
        up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pump = threading.Thread(target=pump_answers, args=(up, client), daemon=True)
        pump.start()
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                more = client.recv(65536)
                if not more:
                    return
                buf += more
            end = buf.index(b"\r\n\r\n") + 4
            head, buf = buf[:end], buf[end:]
            n = body_length(head)
            if n is None:
                sys.stderr.write("delay_proxy: chunked request bodies are not supported\n")
                return
            if LOG:
                log_request(conn, head)
            time.sleep(delay)
            up.sendall(head)
            # The body follows the head without a further delay (a client
            # that sent Expect: 100-continue waits for the answer first).
            while n:
                if not buf:
                    buf = client.recv(min(n, 1 << 20))
                    if not buf:
                        return
                take = buf[:n]
                up.sendall(take)
                n -= len(take)
                buf = buf[len(take):]
    except OSError:
        pass
    finally:
        for s in (client, up):
            if s is not None:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        if pump is not None:
            pump.join()  # it uses both sockets until it sees them shut
        client.close()
        if up is not None:
            up.close()


def main():
    listen_port, upstream_port, delay_ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", listen_port))
    ls.listen(256)
    print("ready", flush=True)
    n = 0
    while True:
        c, _ = ls.accept()
        n += 1
        threading.Thread(target=serve, args=(c, upstream_port, delay_ms / 1000.0, n), daemon=True).start()


if __name__ == "__main__":
    main()
