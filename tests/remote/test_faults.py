#!/usr/bin/python3
"""Reads through a fault-injecting proxy in front of nginx: 503 with
Retry-After, 500, 429, bodies cut mid-way, stalled transfers and reset
connections, on a fixed schedule.  Every read must still be byte-identical
(retries resume from the byte reached); Retry-After must set the delay;
reads must grow from 1 MiB ranges to runs of many chunks on one request
when answers are slow, and runs must survive faults mid-run and a slow
reader (transfers paused for want of buffers, not taken for stalled);
on a far link the objects past the read-ahead budget must have their
requests out before they have buffers, every connection but the open
object's carrying one, through faults;
an object whose ETag changes between ranges must fail with "object changed
while being read", and so must one whose size changes when the server
sends neither ETag nor Last-Modified (growing, shrinking, shrinking below
the next range); too few retries must give up with a message.

usage: test_faults.py REMOTE_CAT"""

import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rtest  # noqa: E402
import servers  # noqa: E402

CHUNK = 1 << 20
SCHEDULE = ["ok", "503", "ok", "cut", "ok", "ok", "reset", "ok", "500", "ok", "stall", "ok",
            "429", "ok", "ok", "cut"]


def main():
    exe = sys.argv[1]
    if not rtest.nginx_binary():
        print("nginx is not installed")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-remote-faults-")
    root = os.path.join(tmp, "www")
    sizes = {"multi.bin": 6 * CHUNK + 4321, "small.bin": 5000, "one.bin": 1,
             "mid.bin": 2 * CHUNK + 3, "large.bin": 40 * CHUNK + 17}
    sizes.update({"obj%d.bin" % i: 12 * CHUNK + i for i in range(8)})
    data = rtest.make_data(root, sizes, seed=11)
    res = rtest.Results("faults")
    ngx = rtest.Nginx(root, os.path.join(tmp, "nginx"))
    proxies = []
    try:
        env = rtest.clean_env()
        d = rtest.Driver(exe, env)
        opts = ["--chunk-size", str(CHUNK), "--parallel", "4", "--retries", "8",
                "--stall-timeout", "2"]

        def url(p, name):
            return "http://127.0.0.1:%d/%s" % (p.port, name)

        def faulty_reads():
            p = servers.FaultProxy(ngx.port, SCHEDULE, stall_seconds=4)
            proxies.append(p)
            names = ["multi.bin", "small.bin", "one.bin", "mid.bin"]
            out, err = d.ok(opts + ["--stats", "--verbose", "--verbose"] + [url(p, n) for n in names])
            if out != b"".join(data[n] for n in names):
                raise rtest.Failure("bytes differ after faults")
            for f in ("503", "cut", "reset", "500", "stall", "429"):
                if f not in p.seen:
                    raise rtest.Failure("fault %s never happened (%s)" % (f, p.seen))
            m = re.search(r"retries=(\d+)", err)
            if not m or int(m.group(1)) == 0:
                raise rtest.Failure("no retries counted: %s" % err[-300:])
            # Retry-After: 1 must make that retry wait at least a second.
            waits = [float(w) for w in re.findall(r"HTTP 503; retry \d+/\d+ in ([0-9.]+) s", err)]
            if not waits or min(waits) < 1.0:
                raise rtest.Failure("Retry-After not honoured: %s" % waits)
            if "resuming" not in err:
                raise rtest.Failure("no resumed transfer in the log")
        res.check("reads survive 503/500/429, cut bodies, stalls and resets", faulty_reads)

        def faulty_preads():
            p = servers.FaultProxy(ngx.port, SCHEDULE, stall_seconds=4)
            proxies.append(p)
            d.ok(opts + ["--check-pread", "30", url(p, "multi.bin")])
        res.check("random preads survive faults", faulty_preads)

        def etag_change():
            p = servers.FaultProxy(ngx.port, ["ok"], etag_after=2)
            proxies.append(p)
            d.fails(opts + [url(p, "multi.bin")], "object changed while being read")
        res.check("a changed ETag between ranges fails", etag_change)

        def size_change_without_etag():
            # No ETag, no Last-Modified: only the size tells versions apart.
            # After the first range the object grows, shrinks within the
            # ranges still to come, or shrinks below them (416): each must
            # fail naming both sizes, never give bytes of two versions.
            v1 = data["multi.bin"]
            for v2, how in ((v1 + b"more", "grows"), (v1[:4 * CHUNK + 5], "shrinks"),
                            (v1[:CHUNK // 2], "shrinks below the next range")):
                c = servers.ChangingObject([v1, v2])
                proxies.append(c)
                d.fails(["--chunk-size", str(CHUNK), "--parallel", "1", "--retries", "2",
                         url(c, "multi.bin")],
                        ["object changed while being read",
                         "size was %d, now %d" % (len(v1), len(v2))])
            # The same object, unchanged, reads whole.
            c = servers.ChangingObject([v1])
            proxies.append(c)
            out, _ = d.ok(["--chunk-size", str(CHUNK), url(c, "multi.bin")])
            if out != v1:
                raise rtest.Failure("bytes differ from an unchanging server without ETag")
        res.check("a size change between ranges fails without ETag or Last-Modified",
                  size_change_without_etag)

        def range_lengths(p):
            out = []
            for r in p.ranges:
                m = re.match(r"bytes=(\d+)-(\d+)$", r or "")
                if m:
                    out.append((int(m.group(1)), int(m.group(2)) - int(m.group(1)) + 1))
            return sorted(out)

        def ranges_tile(lens, size):
            # Ranges tile the object: no byte twice, none missing.
            at = 0
            for start, n in lens:
                if start != at:
                    raise rtest.Failure("ranges do not tile the object at %d: %s" % (at, lens))
                at += n
            if at != size:
                raise rtest.Failure("ranges end at %d of %d" % (at, size))

        def large_read_ranges(delay_seconds):
            # large.bin read through a proxy answering after delay_seconds:
            # the bytes are the object's and the first read is 1 MiB; gives
            # the ranges asked for.
            p = servers.FaultProxy(ngx.port, ["ok"], delay_seconds=delay_seconds)
            proxies.append(p)
            out, _ = d.ok(["--parallel", "4", url(p, "large.bin")])
            if out != data["large.bin"]:
                raise rtest.Failure("bytes differ")
            lens = range_lengths(p)
            if not lens or lens[0] != (0, CHUNK):
                raise rtest.Failure("the first read is not 1 MiB: %s" % lens[:3])
            return lens

        def read_sizes_follow_the_link():
            # A store that takes 40 ms to answer: the first read is 1 MiB;
            # then requests ask for runs of many chunks (20 answer times at
            # 100 MB/s or more: 80 MB, here the rest of the 40 MiB object),
            # so there are far fewer requests than 8 MiB chunks; the bytes
            # are the same.
            lens = large_read_ranges(delay_seconds=0.04)
            if max(n for _, n in lens) <= 8 * CHUNK:
                raise rtest.Failure("no request asked for more than a chunk (8 MiB): %s" % lens)
            if len(lens) > 3:
                raise rtest.Failure("%d requests for 40 MiB at 40 ms (want at most 3): %s"
                                    % (len(lens), lens))
            ranges_tile(lens, len(data["large.bin"]))
            # A chunk size that is named is used for every read.
            p = servers.FaultProxy(ngx.port, ["ok"], delay_seconds=0.04)
            proxies.append(p)
            out, _ = d.ok(["--parallel", "4", "--chunk-size", str(3 * CHUNK), url(p, "large.bin")])
            if out != data["large.bin"]:
                raise rtest.Failure("bytes differ with --chunk-size")
            lens = range_lengths(p)
            if any(n != 3 * CHUNK for _, n in lens[:-1]) or not lens:
                raise rtest.Failure("--chunk-size not kept: %s" % lens)
        def runs_on_a_near_link():
            # A store that answers at once: ranges stay 1 MiB (they follow
            # the link), but a run is still at least 16 of them, so that the
            # reader does not wait for a new request's answer every few
            # megabytes.  40 MiB: the first read, then 3 runs.
            lens = large_read_ranges(delay_seconds=0)
            short = [r for r in lens[1:-1] if r[1] < 16 * CHUNK]
            if short:
                raise rtest.Failure("runs shorter than 16 ranges before the object's end: %s" % lens)
            if len(lens) > 4:
                raise rtest.Failure("%d requests for 40 MiB (want at most 4): %s" % (len(lens), lens))
            ranges_tile(lens, len(data["large.bin"]))
        res.check("runs of at least 16 ranges on a near link", runs_on_a_near_link)

        def runs_survive_faults_and_a_slow_reader():
            # Runs at 40 ms a request, with bodies cut and connections reset
            # mid-run, on 2 connections, read by a reader slow enough that
            # the read-ahead fills: runs then wait (paused) longer than the
            # 1 s stall time, which must not count as a stall, and a paused
            # run gives its connection up to the chunk a reader waits on.
            # Every byte must be the same, in order.
            names = ["large.bin", "multi.bin", "mid.bin", "large.bin"]
            p = servers.FaultProxy(ngx.port, ["ok", "ok", "cut", "ok", "reset", "ok", "ok", "ok"],
                                   delay_seconds=0.04)
            proxies.append(p)
            out, err = d.ok(["--parallel", "2", "--retries", "8", "--stall-timeout", "1",
                             "--read-pause", "30"] + [url(p, n) for n in names], timeout=240)
            if out != b"".join(data[n] for n in names):
                raise rtest.Failure("bytes differ after runs with faults")
            for f in ("cut", "reset"):
                if f not in p.seen:
                    raise rtest.Failure("fault %s never happened (%s)" % (f, p.seen))
            if "nothing received" in err:
                raise rtest.Failure("a paused run was taken for a stall: %s" % err[-600:])
            if max(n for _, n in range_lengths(p)) <= 8 * CHUNK:
                raise rtest.Failure("no run longer than a chunk: %s" % range_lengths(p))
        res.check("runs of chunks survive faults mid-run, few connections and a slow reader",
                  runs_survive_faults_and_a_slow_reader)

        def requests_sent_ahead_of_buffers():
            # Eight objects of two chunks each (8 MiB at 40 ms) on 4
            # connections, read slowly: the read-ahead budget (4 chunks)
            # holds two objects besides the open one, so the objects after
            # those must have their requests out already, waiting for
            # buffers (heralds): every connection but the one kept for the
            # open object carries an object's request.  Faults
            # mid-way hit such requests too; every byte must be the same, in
            # order.
            names = ["obj%d.bin" % i for i in range(8)]
            # How many requests are in flight is a matter of timing: on a
            # loaded machine one run may see fewer.  The bytes are checked
            # on every run; the overlap must be seen in one of three.
            seen = []
            for _ in range(3):
                p = servers.FaultProxy(ngx.port, ["ok", "ok", "ok", "cut", "ok", "ok", "reset", "ok"],
                                       delay_seconds=0.04)
                proxies.append(p)
                out, err = d.ok(["--parallel", "4", "--retries", "8", "--read-pause", "10"]
                                + [url(p, n) for n in names], timeout=240)
                if out != b"".join(data[n] for n in names):
                    raise rtest.Failure("bytes differ with requests sent ahead")
                for f in ("cut", "reset"):
                    if f not in p.seen:
                        raise rtest.Failure("fault %s never happened (%s)" % (f, p.seen))
                # The first chunks of the first objects go out together before
                # any budget applies: look at the later objects' requests.
                late = [n for path, n in p.arrivals if path in ("/obj%d.bin" % i for i in range(4, 8))]
                print("paths in flight as the later objects' requests came:", late)
                seen.append(max(late, default=0))
                if seen[-1] >= 3:
                    return
            raise rtest.Failure("the later objects' requests came with at most %s objects in "
                                "flight on 4 connections, in three runs (want 3)" % seen)
        res.check("requests sent ahead of the read-ahead budget on a far link",
                  requests_sent_ahead_of_buffers)

        def pread_amid_a_paused_run():
            # One connection, held by a run that waits for the slow reader;
            # a pread of the object's tail then needs that connection: the
            # run must give it up (else the read waits for itself, forever),
            # and the sequential read goes on with the same bytes after.
            p = servers.FaultProxy(ngx.port, ["ok"], delay_seconds=0.04)
            proxies.append(p)
            tail_file = os.path.join(tmp, "tail.bin")
            out, _ = d.ok(["--parallel", "1", "--read-pause", "30", "--pread-tail-to", tail_file,
                           url(p, "large.bin")], timeout=120)
            if out != data["large.bin"]:
                raise rtest.Failure("sequential bytes differ around the pread")
            with open(tail_file, "rb") as fp:
                if fp.read() != data["large.bin"][-100000:]:
                    raise rtest.Failure("the pread's bytes differ")
        res.check("a pread amid a paused run on the one connection", pread_amid_a_paused_run)

        res.check("read sizes follow the store's answer time; a named size is kept",
                  read_sizes_follow_the_link)

        def give_up():
            p = servers.FaultProxy(ngx.port, ["503"])
            proxies.append(p)
            err = d.fails(["--retries", "2", url(p, "small.bin")], ["HTTP 503", "gave up after 3 attempts"])
            if p.count != 3:
                raise rtest.Failure("%d requests, 3 expected" % p.count)
        res.check("too many failures give up after --retries", give_up)
    finally:
        for p in proxies:
            p.stop()
        ngx.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return res.finish()


if __name__ == "__main__":
    rtest.main_guard(main)
