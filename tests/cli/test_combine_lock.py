#!/usr/bin/env python3
"""combine holds PREFIX.lock, the lock every run writing the prefix takes:

  - a combine while a task of the distributed run is still writing (it
    holds PREFIX.lock shared; here a real task reading a pipe) is refused
    naming the lock, and writes nothing; a task started while a combine
    holds the lock is refused naming the combine;
  - of two combines, the second is refused naming the first (the kernel's
    flock, held as a live combine holds it), and two combines started
    together, again and again, leave one whole manifest that verify
    passes, never a torn one, and no temporary file;
  - a combine SIGKILLed at each point (lock taken, wids index or TFDS
    files staged, manifest staged) leaves no manifest claiming the set; the
    next combine (no --force) takes its lock over, removes its temporary
    files and writes the same files a clean combine writes; a task run
    that takes over the dead combine's lock removes them too;
  - a lock left by a convert that died keeps its record through a
    combine, so that run's next start still cleans up after it; a journal
    of an unfinished commit is refused, not combined.
Before, combine took no lock, wrote PREFIX.manifest.json through
PATH.tmp-PID (left forever by a combine killed there), and wrote the
manifest before the wids index and the TFDS files.
Prints "N passed, M failed".
"""
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

ST = None
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def st(*args, env=None, stdin=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([ST] + list(args), capture_output=True, text=True, env=e, stdin=stdin)


def write_input(d, rows=3000):
    p = os.path.join(d, "in.csv")
    with open(p, "w") as f:
        f.write("id,name\n" + "".join("%d,n%07d\n" % (i, i) for i in range(rows)))
    return p


def run_tasks(src, prefix, *extra, tasks=2):
    for t in range(tasks):
        r = st("convert", src, "-o", prefix, "--shards", "2", "--task", "%d/%d" % (t, tasks), "-q", *extra)
        assert r.returncode == 0, r.stderr


def leftovers(d):
    """Locks, journals and temporary files in d."""
    return sorted(n for n in os.listdir(d) if n.endswith((".lock", ".journal")) or ".tmp" in n)


def files_of(d, skip=()):
    out = {}
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        if os.path.isfile(p) and n not in skip:
            with open(p, "rb") as f:
                out[n] = f.read()
    return out


def whole_manifest(prefix, shards):
    """The manifest parses, lists every shard once, and verify passes."""
    try:
        with open(prefix + ".manifest.json") as f:
            m = json.load(f)
    except (OSError, ValueError):
        return False
    if len(m.get("shards", [])) != shards or len({s["path"] for s in m["shards"]}) != shards:
        return False
    return st("verify", "--manifest", prefix + ".manifest.json").returncode == 0


def hold(path, record):
    """Holds path's flock as a live run holds it; the open file."""
    f = open(path, "a+")
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    f.truncate(0)
    f.write(record)
    f.flush()
    return f


def combine_beside_a_live_task(d):
    src = write_input(d)
    prefix = os.path.join(d, "live", "t")
    run_tasks(src, prefix)
    # Task 1 again, reading a pipe that stays open: it holds PREFIX.lock
    # shared and its own task lock until its input ends.
    task = subprocess.Popen([ST, "convert", "-", "--from", "csv", "-o", prefix, "--shards", "2", "--task", "1/2",
                             "--force", "-q"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    own = prefix + "-task00001-of-00002.lock"
    for _ in range(600):
        if os.path.exists(own) or task.poll() is not None:
            break
        time.sleep(0.05)
    c = st("combine", prefix)
    check(task.poll() is None and c.returncode == 2 and prefix + ".lock" in c.stderr and "task" in c.stderr
          and not os.path.exists(prefix + ".manifest.json"),
          "combine while a task is writing is refused naming the lock, nothing written (%s)" % c.stderr.strip())
    with open(src) as f:
        out, err = task.communicate(f.read())
    # (task 1 as the others ran it: the same input file)
    r = st("convert", src, "-o", prefix, "--shards", "2", "--task", "1/2", "--force", "-q")
    c = st("combine", prefix)
    check(task.returncode == 0 and r.returncode == 0 and c.returncode == 0 and whole_manifest(prefix, 4)
          and leftovers(os.path.dirname(prefix)) == [],
          "once the task has finished, combine writes the manifest and leaves no lock (%s%s)"
          % (err.strip()[-200:], c.stderr.strip()[-200:]))


def two_combines(d):
    src = write_input(d)
    prefix = os.path.join(d, "two", "t")
    run_tasks(src, prefix)
    lock = prefix + ".lock"
    held = hold(lock, "%d@%s 1abc0 combine\n" % (os.getpid(), socket.gethostname()))
    try:
        c = st("combine", prefix)
        r = st("convert", src, "-o", prefix, "--shards", "2", "--task", "0/2", "--resume", "-q")
    finally:
        held.close()
    check(c.returncode == 2 and lock in c.stderr and "combine (pid %d" % os.getpid() in c.stderr
          and not os.path.exists(prefix + ".manifest.json"),
          "a second combine is refused naming the first, nothing written (%s)" % c.stderr.strip())
    check(r.returncode == 2 and lock in r.stderr and "pid %d" % os.getpid() in r.stderr,
          "a task started while a combine holds the lock is refused naming it (%s)" % r.stderr.strip()[-300:])
    os.unlink(lock)

    # Two at once, for real: one manifest, whole; the other refused or
    # replacing it whole (--force), never a torn or mixed one.
    bad = []
    for i in range(8):
        procs = [subprocess.Popen([ST, "combine", prefix, "--force"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [(p.wait(), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close(), p.stderr.close()
        ok = all(rc == 0 or (rc == 2 and prefix + ".lock" in e and "is writing outputs" in e) for rc, e in outs) and any(rc == 0 for rc, _ in outs)
        if not ok or not whole_manifest(prefix, 4) or leftovers(os.path.dirname(prefix)):
            bad.append((i, outs, leftovers(os.path.dirname(prefix))))
    check(not bad, "two combines at once, 8 times: each whole or refused naming the other, the manifest whole, "
          "nothing left (%s)" % bad[:1])


def killed_combines(d):
    src = write_input(d)
    cases = [("tfrecord", [], ["combine-locked", "combine-manifest"]),
             ("webdataset", ["-t", "webdataset"], ["combine-locked", "combine-wids", "combine-manifest"])]
    for name, extra, points in cases:
        prefix = os.path.join(d, name, "t")
        run_tasks(src, prefix, *extra)
        c = st("combine", prefix)
        assert c.returncode == 0, c.stderr
        clean = files_of(os.path.dirname(prefix))
        os.unlink(prefix + ".manifest.json")
        if os.path.exists(prefix + ".wids.json"):
            os.unlink(prefix + ".wids.json")
        for point in points:
            k = st("combine", prefix, env={"SHARDTOOL_TEST_KILL_AT": point})
            dead = k.returncode == -signal.SIGKILL and not os.path.exists(prefix + ".manifest.json")
            c = st("combine", prefix)
            after = files_of(os.path.dirname(prefix))
            check(dead and c.returncode == 0 and "took over the lock of a combine" in c.stderr and after == clean
                  and leftovers(os.path.dirname(prefix)) == [],
                  "%s: combine killed at %s leaves no manifest; the next combine (no --force) takes its lock "
                  "over, removes its temporaries and writes the clean combine's files (%s; %s)"
                  % (name, point, k.returncode, c.stderr.strip()[-300:]))
            os.unlink(prefix + ".manifest.json")
            if os.path.exists(prefix + ".wids.json"):
                os.unlink(prefix + ".wids.json")
        # Tasks run again (each holds the lock shared, and the last one
        # leaves it while it holds a dead run's record): the next combine
        # still finds the dead one's temporaries, and removes them.
        k = st("combine", prefix, env={"SHARDTOOL_TEST_KILL_AT": "combine-manifest"})
        staged = [n for n in os.listdir(os.path.dirname(prefix)) if n.startswith(".tmp-st")]
        runs = [st("convert", src, "-o", prefix, "--shards", "2", "--task", "%d/2" % t, "--resume", "-q", *extra)
                for t in range(2)]
        c = st("combine", prefix)
        check(k.returncode == -signal.SIGKILL and staged and all(r.returncode == 0 for r in runs)
              and c.returncode == 0 and "removed its temporary files" in c.stderr and files_of(
                  os.path.dirname(prefix)) == clean and leftovers(os.path.dirname(prefix)) == [],
              "%s: combine killed, the tasks run again, then combine: the dead one's temporaries are removed (%s; %s)"
              % (name, staged, c.stderr.strip()[-200:]))
        os.unlink(prefix + ".manifest.json")
        if os.path.exists(prefix + ".wids.json"):
            os.unlink(prefix + ".wids.json")
        # A plain run takes the dead combine's lock over (a task holds it
        # shared, and leaves it to the next combine): its temporaries go.
        k = st("combine", prefix, env={"SHARDTOOL_TEST_KILL_AT": "combine-manifest"})
        staged = [n for n in os.listdir(os.path.dirname(prefix)) if n.startswith(".tmp-st")]
        r = st("convert", src, "-o", prefix, "--shards", "2", "--force", *extra)
        check(k.returncode == -signal.SIGKILL and staged and r.returncode == 0 and "took over the lock" in r.stderr
              and leftovers(os.path.dirname(prefix)) == [],
              "%s: a run after a killed combine takes its lock over and removes its temporaries (%s; %s)"
              % (name, staged, r.stderr.strip()[-200:]))

    # A TFDS split: killed while staging the dataset's files, and before
    # the split's manifest.
    version = os.path.join(d, "tfds", "ds", "1.0.0")
    prefix = os.path.join(version, "ds-train")
    for t in range(2):
        r = st("convert", src, "--tfds", os.path.join(d, "tfds"), "--name", "ds", "--split", "train", "--shards",
               "2", "--task", "%d/2" % t, "-q")
        assert r.returncode == 0, r.stderr
    c = st("combine", prefix)
    assert c.returncode == 0, c.stderr
    clean = files_of(version)
    for point in ("combine-tfds", "combine-manifest"):
        os.unlink(prefix + ".manifest.json")
        k = st("combine", prefix, env={"SHARDTOOL_TEST_KILL_AT": point})
        dead = k.returncode == -signal.SIGKILL and not os.path.exists(prefix + ".manifest.json")
        c = st("combine", prefix)
        check(dead and c.returncode == 0 and files_of(version) == clean and leftovers(version) == [],
              "TFDS split: combine killed at %s, the next combine writes the clean files and leaves nothing (%s)"
              % (point, c.stderr.strip()[-300:]))


def dead_convert_lock_and_journal(d):
    src = write_input(d)
    prefix = os.path.join(d, "dead", "t")
    run_tasks(src, prefix)
    # A plain run on the prefix killed holding its lock: its record stays
    # through combine (its next start cleans up by it).
    k = st("convert", src, "-o", prefix, "--shards", "2", "-q", "--force", env={"SHARDTOOL_TEST_KILL_AT": "locked"})
    with open(prefix + ".lock") as f:
        record = f.read()
    c = st("combine", prefix)
    with open(prefix + ".lock") as f:
        kept = f.read()
    check(k.returncode == -signal.SIGKILL and c.returncode == 0 and kept == record and whole_manifest(prefix, 4),
          "a dead convert's lock keeps its record through a combine (%r; %s)" % (kept, c.stderr.strip()[-200:]))
    os.unlink(prefix + ".manifest.json")
    # A task killed in its commit: its journal is refused.
    k = st("convert", src, "-o", prefix, "--shards", "2", "--task", "1/2", "--force", "-q",
           env={"SHARDTOOL_TEST_KILL_AT": "manifest"})
    journal = prefix + "-task00001-of-00002.journal"
    c = st("combine", prefix)
    check(k.returncode == -signal.SIGKILL and os.path.exists(journal) and c.returncode == 2 and journal in c.stderr
          and not os.path.exists(prefix + ".manifest.json"),
          "a task's unfinished commit (its journal) is refused by combine, naming it (%s)" % c.stderr.strip())
    r = st("convert", src, "-o", prefix, "--shards", "2", "--task", "1/2", "--resume", "-q")
    c = st("combine", prefix)
    check(r.returncode == 0 and c.returncode == 0 and whole_manifest(prefix, 4),
          "the task run again, combine writes the whole set (%s)" % (r.stderr + c.stderr).strip()[-200:])


def main():
    global ST
    ST = os.path.abspath(sys.argv[1])
    for case in (combine_beside_a_live_task, two_combines, killed_combines, dead_convert_lock_and_journal):
        with tempfile.TemporaryDirectory() as d:
            print("# " + case.__name__)
            case(d)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
