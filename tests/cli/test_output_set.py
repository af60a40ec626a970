#!/usr/bin/env python3
"""The output-set protocol of convert and split, as a user meets it:

  - an earlier run's outputs with the same prefix are refused without
    --force (before any input is read) and replaced exactly with it;
  - tasks of one distributed run write into one prefix at the same time;
  - --shard-size counts the bytes on disk, compressed or not;
  - two runs on one prefix never mix: one wins, the other is refused;
    a lock left by a killed run is taken over;
  - outputs that are devices, FIFOs or links to them are refused;
  - a SIGKILL at any point (timed, or injected before/during/after the
    renames with the test-only SHARDTOOL_TEST_KILL_AT) leaves no final
    name without a journal, and a rerun without --force gives the same
    bytes as a clean run, for every output mode;
  - --to parquet killed at every commit point and while its shards grow
    (and between a disproved schema guess and the run that follows it);
    convert killed between a disproved CSV type guess and its rerun:
    no partial shard under a final name, a plain, --force or --resume
    rerun gives the clean bytes, verify --manifest and DuckDB accept them;
  - a long prefix whose final names fit works; -o '' and -o - are usage
    errors; -o DIR/ (or an existing DIR, or .) writes DIR/part-*; a typed
    extension (-o t.tfrecord.gz) is dropped from the prefix;
  - a hostile user's names: an earlier manifest or a planted journal never
    leads to removing a file outside the set, --manifest/--feature-spec
    never take an input's or another output's name, tasks of another count
    and an earlier set read beside its source are refused, a hidden prefix
    and -o . are handled.
Prints "N passed, M failed".
"""
import fcntl
import glob
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

ST = SOURCE = None
results = {"passed": 0, "failed": 0}
FINAL = re.compile(r"-\d{5}-of-\d{5}")


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def st(*args, env=None, **kw):
    e = dict(os.environ)
    e.pop("SHARDTOOL_TEST_KILL_AT", None)
    e.update(env or {})
    return subprocess.run([ST] + list(args), capture_output=True, text=True, env=e, **kw)


def snapshot(directory, hidden=True):
    """{name: bytes} of the plain files in directory."""
    out = {}
    if not os.path.isdir(directory):
        return out
    for n in sorted(os.listdir(directory)):
        p = os.path.join(directory, n)
        if (hidden or not n.startswith(".")) and os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                out[n] = f.read()
    return out


def finals(directory):
    if not os.path.isdir(directory):
        return []
    return sorted(n for n in os.listdir(directory) if FINAL.search(n) and not n.startswith("."))


def gen_table(path, rows):
    subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "gen_table.py"), path, str(rows)], check=True)


def records(paths):
    r = st("cat", *paths)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


# ---- issue 11 item 1: stale shards ----------------------------------------------------


def test_earlier_set(tmp, taxi):
    d = os.path.join(tmp, "stale")
    out = d + "/train"
    r = st("convert", taxi, "-o", out, "-s", "8", "-q")
    check(r.returncode == 0, "a first run writes 8 shards")
    with open(d + "/train-notes.txt", "w") as f:
        f.write("mine\n")
    shutil.copy(d + "/train-00000-of-00008.tfrecord", d + "/trainer-00000-of-00001.tfrecord")
    before = snapshot(d)

    r = st("convert", taxi, "-o", out, "-s", "4", "-q")
    check(r.returncode == 2 and "--force" in r.stderr and "train-0000" in r.stderr and "earlier" in r.stderr,
          f"a second run with another shard count is refused without --force ({r.stderr.strip()[-300:]})")
    check(snapshot(d) == before, "the refusal changes nothing")

    r = st("convert", taxi, "-o", out, "-s", "4", "-f", "-q")
    check(r.returncode == 0 and re.search(r"removed 8 files .*train-\*-of-00008\.tfrecord", r.stderr),
          f"--force says what it removed, by count and pattern ({r.stderr.strip()[-300:]})")
    check(sorted(glob.glob(out + "-*-of-*.tfrecord")) == [f"{out}-0000{i}-of-00004.tfrecord" for i in range(4)],
          f"only the new set matches the man page's glob ({os.listdir(d)})")
    check(os.path.exists(d + "/train-notes.txt") and os.path.exists(d + "/trainer-00000-of-00001.tfrecord"),
          "files that are not outputs of this prefix survive (train-notes.txt, trainer-...)")
    check(len(records(glob.glob(out + "-*-of-*.tfrecord"))) == 10000, "the set holds each record once")
    r = st("verify", "--manifest", out + ".manifest.json")
    check(r.returncode == 0, "the new set verifies against its manifest")

    r = st("convert", taxi, "-o", out, "-s", "4", "-z", "gzip", "-f", "-v", "-q")
    check(r.returncode == 0 and sorted(n for n in os.listdir(d) if n.startswith("train-0")) ==
          [f"train-0000{i}-of-00004.tfrecord.gz" for i in range(4)],
          f"changing only --compression replaces the set too ({os.listdir(d)})")
    check("removed " + out + "-00002-of-00004.tfrecord" in r.stderr, "-v names every file removed")

    # Every kind of leftover of this prefix counts as an earlier run's.
    leftovers = ["train-00000.tfrecord.partial", "train-00003-of-00004.tfrecord.idx",
                 "train-task00001-of-00002-00000-of-00001.tfrecord", "train-task00000-of-00002.manifest.json",
                 "train.manifest.json", "train.journal"]
    for i, name in enumerate(leftovers):
        dd = os.path.join(tmp, f"left{i}")
        os.makedirs(dd)
        with open(os.path.join(dd, name), "w") as f:
            f.write("x")
        r = st("convert", taxi, "-o", dd + "/train", "-q")
        check(r.returncode == 2 and name in r.stderr and finals(dd) == [n for n in [name] if FINAL.search(n)],
              f"a leftover {name} is refused without --force ({r.stderr.strip()[-200:]})")

    # Collisions are found before any input is read: the input here is a
    # FIFO no one writes to, so reading it would hang.
    dd = os.path.join(tmp, "collide")
    os.makedirs(dd)
    fifo = os.path.join(dd, "input.csv")
    os.mkfifo(fifo)
    for opt, name in (("--manifest", "m.json"), ("--feature-spec", "spec.json")):
        with open(os.path.join(dd, name), "w") as f:
            f.write("{}")
        try:
            r = st("convert", fifo, "-o", dd + "/x", opt, os.path.join(dd, name), timeout=20)
            ok = r.returncode == 2 and name in r.stderr
        except subprocess.TimeoutExpired:
            ok = False
        check(ok, f"an existing {opt} file is refused before the input is read")


def test_tasks_together(tmp, big):
    d = os.path.join(tmp, "tasks")
    os.makedirs(d)
    with open(d + "/train-notes.txt", "w") as f:
        f.write("mine\n")
    procs = [subprocess.Popen([ST, "convert", big, "-o", d + "/train", "--shards", "2", "-q", "--task", f"{i}/4"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    check(all(p.returncode == 0 for p in procs),
          f"4 tasks of one run write into one prefix at the same time ({[o[1].strip()[-200:] for o in outs]})")
    shards = sorted(glob.glob(d + "/train-*-of-00008.tfrecord"))
    check(shards == [f"{d}/train-{i:05d}-of-00008.tfrecord" for i in range(8)]
          and len(glob.glob(d + "/train-task*.manifest.json")) == 4,
          f"the tasks wrote one set under final names, and a task manifest each ({sorted(os.listdir(d))})")
    check(not [n for n in os.listdir(d) if n.endswith((".lock", ".journal")) or n.startswith(".")],
          f"no lock, journal or temporary file is left ({sorted(os.listdir(d))})")
    mine = ("train-00002-of-00008", "train-00003-of-00008", "task00001")
    others = {n: b for n, b in snapshot(d).items() if not n.startswith(mine) and "task00001" not in n}
    r = st("convert", big, "-o", d + "/train", "--shards", "2", "-q", "--task", "1/4")
    check(r.returncode == 2 and "train-00002-of-00008" in r.stderr, "a task run again refuses its own earlier outputs")
    r = st("convert", big, "-o", d + "/train", "--shards", "3", "-q", "--task", "1/4")
    # Its own shards of the first count are its earlier set; the other
    # tasks' (their task manifests list them) are theirs, not this task's.
    check(r.returncode == 2 and "train-00002-of-00008" in r.stderr and "(3 files of that set: " in r.stderr,
          f"a task of another shard count refuses its own shards of the first count as an earlier set "
          f"({r.stderr.strip()[-200:]})")
    r = st("convert", big, "-o", d + "/train", "--shards", "2", "-q", "--task", "1/4", "-f")
    check(r.returncode == 0, f"with --force the task replaces its own shards ({r.stderr.strip()[-200:]})")
    check({n: b for n, b in snapshot(d).items() if not n.startswith(mine) and "task00001" not in n} == others,
          "the other tasks' files are untouched")
    before = {p: os.stat(p).st_mtime_ns for p in shards}
    r = st("convert", big, "-o", d + "/train", "--shards", "2", "--task", "1/4", "--resume")
    check(r.returncode == 0 and "finished before" in r.stderr and before == {p: os.stat(p).st_mtime_ns for p in shards},
          f"--resume keeps a finished task and writes nothing ({r.stderr.strip()[-200:]})")
    # A shard of the task damaged after the run: --resume writes that one
    # again and keeps the task's other shard as it is.
    with open(d + "/train-00003-of-00008.tfrecord", "ab") as f:
        f.write(b"x")
    keep = d + "/train-00002-of-00008.tfrecord"
    kept = (os.stat(keep).st_ino, os.stat(keep).st_mtime_ns)
    r = st("convert", big, "-o", d + "/train", "--shards", "2", "--task", "1/4", "--resume")
    check(r.returncode == 0 and "keeping 1 of 2 shards" in r.stderr
          and (os.stat(keep).st_ino, os.stat(keep).st_mtime_ns) == kept
          and st("verify", "-q", "--manifest", d + "/train-task00001-of-00004.manifest.json").returncode == 0,
          f"--resume writes only the damaged shard again ({r.stderr.strip()[-300:]})")
    r = st("combine", d + "/train")
    check(r.returncode == 0 and os.path.exists(d + "/train.manifest.json"), f"combine ({r.stderr.strip()[-200:]})")
    r = st("convert", big, "-o", d + "/train", "--shards", "2", "-q", "--task", "1/4", "-f")
    check(r.returncode == 0 and os.path.exists(d + "/train.manifest.json"),
          "the combined manifest is the whole run's: a task does not take it for its own earlier output")
    r = st("convert", big, "-o", d + "/train", "-q")
    check(r.returncode == 2 and "train-0000" in r.stderr, "a plain run refuses the tasks' outputs as an earlier set")
    r = st("split", *shards, "-o", d + "/train", "--shards", "3", "-q", "-f")
    check(r.returncode == 0 and all(os.path.exists(p) for p in shards) and "kept 8 files" in r.stderr
          and "(" + d + "/train-" in r.stderr and "the new manifest does not list them" in r.stderr
          and not glob.glob(d + "/train-task*.manifest.json"),
          f"split -f merging a prefix's task shards into that prefix never removes its inputs ({r.stderr.strip()})")


def test_shard_size_on_disk(tmp, big):
    limit = 256 * 1024
    for comp in ("gzip", "zlib", "none"):
        d = os.path.join(tmp, "size-" + comp)
        r = st("convert", big, "-o", d + "/t", "--shard-size", "256KiB", "-z", comp, "-q")
        sizes = [os.path.getsize(os.path.join(d, n)) for n in finals(d)]
        check(r.returncode == 0 and len(sizes) > 3 and max(sizes) <= limit,
              f"-z {comp} --shard-size 256KiB: no file passes the limit ({sizes[:6]}...)")
        check(all(s >= 0.8 * limit for s in sizes[:-1]),
              f"-z {comp}: every file but the last lands within 80-100% of the limit (min {min(sizes[:-1])})")
        if comp != "none":
            r = st("verify", "--decode", "--manifest", d + "/t.manifest.json")
            check(r.returncode == 0, f"-z {comp} shards cut that way verify ({r.stdout.strip()[-200:]})")
    # Writers that hold records back (CSV lines, Avro blocks) are counted too.
    for to in ("csv", "jsonl", "avro"):
        d = os.path.join(tmp, "size-to-" + to)
        r = st("convert", big, "-o", d + "/t", "--to", to, "--shard-size", "256KiB", "-q")
        sizes = [os.path.getsize(os.path.join(d, n)) for n in finals(d)]
        check(r.returncode == 0 and len(sizes) > 3 and max(sizes) <= limit and min(sizes[:-1]) >= 0.7 * limit,
              f"--to {to} --shard-size 256KiB: files close under the limit, never over ({sizes[:6]}...)")


# ---- issue 17 item 1: two runs on one prefix ----------------------------------------------


def test_two_runs(tmp, table_a, table_b):
    modes = [["--records-per-shard", "4000"], ["--shard-size", "200KiB"], ["--shards", "3"]]
    refs = {}
    for k, mode in enumerate(modes):
        for name, table in (("a", table_a), ("b", table_b)):
            d = os.path.join(tmp, f"ref-{k}-{name}", "out")
            r = st("convert", table, "-o", d + "/t", "-q", "--jobs", "1", *mode)
            assert r.returncode == 0, r.stderr
            refs[(k, name)] = {n: b for n, b in snapshot(d).items() if n != "t.manifest.json"}
    bad = []
    trials = 0
    for k, mode in enumerate(modes):
        for trial in range(5):
            trials += 1
            d = os.path.join(tmp, f"race-{k}-{trial}", "out")
            p1 = subprocess.Popen([ST, "convert", table_a, "-o", d + "/t", "-q", "--jobs", "1", *mode],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(0.05)
            p2 = subprocess.Popen([ST, "convert", table_b, "-o", d + "/t", "-q", "--jobs", "1", *mode],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            e1 = p1.communicate(timeout=120)[1]
            e2 = p2.communicate(timeout=120)[1]
            got = {n: b for n, b in snapshot(d).items() if n != "t.manifest.json"}
            wins = [n for n, p in (("a", p1), ("b", p2)) if p.returncode == 0]
            losers_clean = all(p.returncode == 2 and ("t.lock" in e or "--force" in e)
                               for p, e in ((p1, e1), (p2, e2)) if p.returncode != 0)
            if len(wins) == 1:
                ok = got == refs[(k, wins[0])] and losers_clean
            else:
                ok = not wins and losers_clean and finals(d) == []
            if not ok:
                bad.append((mode, trial, p1.returncode, p2.returncode, e1.strip()[-150:], e2.strip()[-150:],
                            sorted(got)))
    check(not bad, f"two runs on one prefix 0.05 s apart, {trials} trials: exactly one wins with its own "
                   f"records, the other is refused ({bad[:2]})")

    # A live lock is refused by name; a dead run's lock is taken over.
    d = os.path.join(tmp, "locked")
    os.makedirs(d)
    with open(d + "/t.lock", "w") as held:
        held.write(f"4242@{socket.gethostname()} abc\n")
        held.flush()
        fcntl.flock(held, fcntl.LOCK_EX)
        r = st("convert", table_a, "-o", d + "/t", "-q")
        check(r.returncode == 2 and d + "/t.lock" in r.stderr and "4242" in r.stderr and "remove" in r.stderr,
              f"a run refuses while another holds the lock, naming it and how to clear it ({r.stderr.strip()})")
    d = os.path.join(tmp, "stale-lock")
    r = st("convert", table_a, "-o", d + "/t", "-q", env={"SHARDTOOL_TEST_KILL_AT": "locked"})
    check(r.returncode == -signal.SIGKILL and os.path.exists(d + "/t.lock"), "a run killed holding its lock")
    r = st("convert", table_a, "-o", d + "/t", "-q")
    check(r.returncode == 0 and "took over the lock" in r.stderr and not os.path.exists(d + "/t.lock"),
          f"the lock of a killed run is taken over, and said so ({r.stderr.strip()[-200:]})")


# ---- issue 17 item 2: devices and FIFOs ---------------------------------------------------------


def test_not_regular(tmp, taxi):
    cases = [("symlink to /dev/null at a shard name", "x-00000-of-00001.tfrecord", "link"),
             ("FIFO at a shard name", "x-00000-of-00001.tfrecord", "fifo"),
             ("symlink to /dev/null at --manifest", "m.json", "link"),
             ("FIFO at --manifest", "m.json", "fifo")]
    for what, name, kind in cases:
        for force in ([], ["-f"]):
            d = os.path.join(tmp, "dev-" + kind + name + "".join(force))
            os.makedirs(d)
            p = os.path.join(d, name)
            if kind == "link":
                os.symlink("/dev/null", p)
            else:
                os.mkfifo(p)
            try:
                r = st("convert", taxi, "-o", d + "/x", "--manifest", d + "/m.json", "-q", *force, timeout=30)
                ok = r.returncode == 2 and "not a regular file" in r.stderr and p in r.stderr
            except subprocess.TimeoutExpired:
                ok = False
            kept = os.path.islink(p) if kind == "link" else stat.S_ISFIFO(os.lstat(p).st_mode)
            check(ok and kept and finals(d) == ([name] if FINAL.search(name) else []),
                  f"{what}{' with --force' if force else ''} is refused and left alone")


# ---- issue 17 item 3: one commit point; a rerun after any kill -----------------------------------


def kill_modes(tmp, table, taxi):
    avro_in = os.path.join(tmp, "avro-in")
    r = st("convert", table, "-o", avro_in + "/a", "--to", "avro", "-s", "3", "-q")
    assert r.returncode == 0, r.stderr
    tf_in = os.path.join(tmp, "tf-in")
    r = st("convert", table, "-o", tf_in + "/t", "-s", "2", "-q")
    assert r.returncode == 0, r.stderr
    tf = sorted(glob.glob(tf_in + "/t-*.tfrecord"))
    av = sorted(glob.glob(avro_in + "/a-*.avro"))
    # Integers for the first 15,000 rows, then not: convert decodes on the
    # types of the first rows, throws that attempt's shards away at row
    # 15,000 and converts again after the whole-input pass.
    redo = os.path.join(tmp, "redo.csv")
    with open(redo, "w") as f:
        f.write("id,n,s\n")
        for i in range(30000):
            f.write(f"{i},{i if i < 15000 else i + 0.5},w{i % 97}\n")
    return [
        ("guessed types redone", ["convert", redo, "--jobs", "1", "--shards", "3"]),
        ("--shards", ["convert", table, "--jobs", "1", "--shards", "4"]),
        ("--shard-size", ["convert", table, "--jobs", "1", "--shard-size", "300KiB"]),
        ("--records-per-shard", ["convert", table, "--jobs", "1", "--records-per-shard", "3000"]),
        ("--index", ["convert", table, "--jobs", "1", "--records-per-shard", "5000", "--index"]),
        ("-z gzip", ["convert", table, "--jobs", "1", "--shards", "3", "-z", "gzip"]),
        ("split", ["split", *tf, "--records-per-shard", "4000"]),
        ("split avro", ["split", *av, "--shards", "3"]),
        ("--to avro", ["convert", taxi, "--to", "avro", "--records-per-shard", "3000"]),
        ("--to jsonl", ["convert", taxi, "--to", "jsonl", "--shards", "3"]),
        ("--to csv", ["convert", taxi, "--to", "csv", "--records-per-shard", "4000"]),
        # Two threads write the shuffled records to the shards at once.
        ("--shuffle", ["convert", table, "--jobs", "2", "--shards", "4", "--shuffle", "--seed", "3"]),
    ]


def after_kill(d, ref, args, label, bad):
    """Checks the state a kill left, reruns without --force, compares with ref."""
    names = os.listdir(d) if os.path.isdir(d) else []
    journal = "t.journal" in names
    committed = not journal and "t.manifest.json" in names and \
        {n: b for n, b in snapshot(d, hidden=False).items() if n != "t.lock"} == ref
    if finals(d) and not journal and not committed:
        bad.append((label, "final names without a journal", sorted(names)))
        return
    if committed:
        return  # the kill came after the commit point: the set is complete
    r = st(*args, "-o", d + "/t", "-q")
    if r.returncode != 0:
        bad.append((label, "rerun failed", r.stderr.strip()[-300:]))
    elif snapshot(d) != ref:
        bad.append((label, "rerun differs from a clean run", sorted(os.listdir(d))))


# ---- --to parquet killed: what SAFETY and --resume promise for Parquet shards ------------


def temp_bytes(d):
    """Bytes in the run's hidden temporary files (.tmp-st*) under d."""
    total = 0
    try:
        with os.scandir(d) as it:
            for e in it:
                if e.name.startswith(".tmp-st"):
                    try:
                        total += e.stat().st_size
                    except FileNotFoundError:
                        pass
    except FileNotFoundError:
        pass
    return total


def kill_at_bytes(args, d, threshold):
    """Starts args, SIGKILLs it once its temporary files hold `threshold`
    bytes (polled, not timed); True when the kill landed before the run ended."""
    p = subprocess.Popen([ST] + args + ["-o", d + "/t", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while p.poll() is None:
        if os.path.isdir(d) and temp_bytes(d) >= threshold:
            p.send_signal(signal.SIGKILL)
            break
        time.sleep(0.0005)
    p.wait()
    return p.returncode == -signal.SIGKILL


def duckdb_rows(pattern):
    """Rows DuckDB reads from the Parquet files matching pattern, or None
    without node and @duckdb/node-api (tests/interop)."""
    node = shutil.which("node")
    helper = os.path.join(SOURCE, "tests", "interop", "parquet_nested_duckdb.mjs")
    if not node:
        return None
    r = subprocess.run([node, helper, "read", pattern], capture_output=True, text=True)
    if r.returncode == 77:
        return None
    if r.returncode:
        return "DuckDB: " + r.stderr.strip()[-300:]
    return len(__import__("json").loads(r.stdout)["rows"])


def test_parquet_kills(tmp, table):
    """convert --to parquet SIGKILLed at every commit point and while its
    shards are written (by the bytes in its temporary files: the first
    ones, a third, two thirds): never a partial shard under a final name
    (nor a final name without the journal); the rerun the man page offers
    (plain, --force or --resume) gives the clean run's bytes, which verify
    --manifest and DuckDB accept.  Row groups of 64 KiB make the shards
    grow while they are written instead of all at their end.  --shards
    (all shards open at once) at every point; --shard-size (one shard
    after another, the count known at the end) at a few."""
    rows = sum(1 for _ in open(table)) - 1
    base = ["convert", table, "--to", "parquet", "--jobs", "1", "--row-group-size", "64KiB"]
    commit_points = ["locked", "journal-created", "journal", "rename:0", "rename:1", "rename:2", "manifest",
                     "commit", "committed"]
    # TFRecord in: the schema is taken from the first unit; a feature first
    # seen at record 6000 disproves it, and the run starts again with a
    # full first read (killed too between the two).
    late = os.path.join(tmp, "late")
    with open(late + ".jsonl", "w") as f:
        for i in range(20000):
            f.write('{"id": %d, "s": "w%d"%s}\n' % (i, i % 97, ', "late": %d' % (i * 3) if i >= 6000 else ""))
    r = st("convert", late + ".jsonl", "-o", late + "/t", "-s", "1", "-q")
    assert r.returncode == 0, r.stderr
    late_in = late + "/t-00000-of-00001.tfrecord"
    modes = [("--shards 3", base + ["--shards", "3"], commit_points, True, rows),
             ("--shard-size 600KiB", base + ["--shard-size", "600KiB"], ["journal", "rename:1"], False, rows),
             ("schema retried", ["convert", late_in] + base[2:] + ["--shards", "3"],
              ["restart", "journal", "rename:1"], False, 20000)]
    for mname, args, injected, every_way, rows in modes:
        d = os.path.join(tmp, "pqkill")
        shutil.rmtree(d, ignore_errors=True)
        r = st(*args, "-o", d + "/t", "-q")
        assert r.returncode == 0, r.stderr
        ref = snapshot(d)
        shards = sorted(n for n in ref if FINAL.search(n))
        check(len(shards) >= 3 and all(ref[n][:4] == b"PAR1" and ref[n][-4:] == b"PAR1" for n in shards),
              f"--to parquet {mname} writes 3 or more Parquet files ({shards})")
        pattern = os.path.join(d, "t-*-of-%05d.parquet" % len(shards))
        n = duckdb_rows(pattern)
        check(n is None or n == rows, f"{mname}: DuckDB reads the clean set: {n} rows of {rows}")
        total = sum(len(ref[n]) for n in shards)
        reruns = [[], ["--force"], ["--resume"]]
        bad, landed, k = [], [], 0
        points = [("injected " + p, p, None) for p in injected]
        points += [("at the first bytes", None, 1), ("a third in", None, total // 3),
                   ("two thirds in", None, 2 * total // 3)]
        for i, (label, point, threshold) in enumerate(points):
            # Each commit point is rerun one way (the three ways in turn);
            # the kills while writing, every way (--shards) or one.
            ways = reruns if not point and every_way else [reruns[i % 3]]
            for rerun in ways:
                k += 1
                shutil.rmtree(d, ignore_errors=True)
                if point:
                    r = st(*args, "-o", d + "/t", "-q", env={"SHARDTOOL_TEST_KILL_AT": point})
                    killed = r.returncode == -signal.SIGKILL
                else:
                    killed = kill_at_bytes(args, d, threshold)
                if not killed:
                    continue
                landed.append(label)
                names = sorted(os.listdir(d)) if os.path.isdir(d) else []
                journal = "t.journal" in names
                now = snapshot(d)
                for name in names:
                    if FINAL.search(name) and not journal and now.get(name) != ref.get(name):
                        bad.append((label, "partial or foreign file under a final name", name))
                committed = not journal and "t.manifest.json" in names
                if finals(d) and not journal and not committed:
                    bad.append((label, "final names without a journal or manifest", names))
                r = st(*args, "-o", d + "/t", "-q", *rerun)
                if committed and not rerun:
                    ok = r.returncode == 2 and "--force" in r.stderr  # a finished set is an earlier set
                else:
                    ok = r.returncode == 0 and snapshot(d) == ref
                if not ok:
                    bad.append((label, "rerun " + (" ".join(rerun) or "plain"), r.returncode,
                                r.stderr.strip()[-300:], sorted(os.listdir(d))))
                    continue
                v = st("verify", "-q", "--manifest", d + "/t.manifest.json")
                if v.returncode:
                    bad.append((label, "verify --manifest", v.stdout.strip()[-300:]))
        check(not bad, f"{mname}: {len(landed)} kills ({k} tried): no partial shard under a final name, every "
                       f"rerun (plain, --force, --resume) gives the clean run's bytes and verifies ({bad[:3]})")
        for want in ("at the first bytes", "a third in", "two thirds in"):
            check(want in landed, f"{mname}: a kill landed {want} of the shards' bytes")
        n = duckdb_rows(pattern)
        check(n is None or n == rows, f"{mname}: DuckDB reads the set rewritten after the last kill: {n} rows")


def test_kills(tmp, table, taxi):
    modes = kill_modes(tmp, table, taxi)
    injected = ["locked", "journal-created", "journal", "rename:0", "rename:1", "rename:2", "manifest", "commit", "committed"]
    bad = []
    kills = 0
    for m, (label, args) in enumerate(modes):
        # Every trial of a mode writes to the same path as its clean run:
        # Avro derives its sync markers from the output names.
        d = os.path.join(tmp, f"kill{m}")
        t0 = time.time()
        r = st(*args, "-o", d + "/t", "-q")
        duration = time.time() - t0
        assert r.returncode == 0, (label, r.stderr)
        ref = snapshot(d)
        if len([n for n in ref if FINAL.search(n)]) < 3:
            bad.append((label, "the mode should give 3+ files", sorted(ref)))
        # --shuffle: also killed between two buckets of the drain, the
        # first one's records in the shards already.
        points = [(p, {}) for p in injected]
        if label == "--shuffle":
            points.append(("shuffle-drained:0", {"SHARDTOOL_TEST_SHUFFLE_BUCKETS": "2"}))
        # between the failed attempt and the run that replaces it
        if label == "guessed types redone":
            points.append(("restart", {}))
        for point, env in points:
            shutil.rmtree(d)
            r = st(*args, "-o", d + "/t", "-q", env={"SHARDTOOL_TEST_KILL_AT": point, **env})
            kills += 1
            if r.returncode != -signal.SIGKILL:
                bad.append((label, point, "not killed", r.returncode, r.stderr.strip()[-200:]))
                continue
            after_kill(d, ref, args, f"{label} at {point}", bad)
        # Kills at times spread over the run: 22 for the first mode, 3 for the others.
        n = 22 if m == 0 else 3
        for i in range(n):
            shutil.rmtree(d, ignore_errors=True)
            p = subprocess.Popen([ST] + args + ["-o", d + "/t", "-q"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(duration * (i + 0.5) / n)
            p.send_signal(signal.SIGKILL)
            p.wait()
            kills += 1
            after_kill(d, ref, args, f"{label} killed at {(i + 0.5) / n:.0%} of the run", bad)
    check(not bad, f"{kills} kills over {len(modes)} output modes: never a final name without a journal; "
                   f"every rerun without --force succeeds with byte-identical files ({bad[:3]})")


# ---- issue 17 smaller items ------------------------------------------------------------------


def test_names(tmp, taxi):
    d = os.path.join(tmp, "long")
    prefix = d + "/" + "p" * 230
    r = st("convert", taxi, "-o", prefix, "--records-per-shard", "4000", "-q")
    check(r.returncode == 0 and len(finals(d)) == 3 and max(len(n) for n in os.listdir(d)) <= 255,
          f"a 230-byte name prefix whose final names fit works ({r.stderr.strip()[-200:]})")
    r = st("convert", taxi, "-o", "", cwd=d)  # in d: a run that took it would write .manifest.json here
    check(r.returncode == 2 and "empty" in r.stderr and "-o out/train" in r.stderr, "-o '' is a usage error with a hint")
    e = os.path.join(tmp, "dir-prefix")
    r = st("convert", taxi, "-o", e + "/")
    check(r.returncode == 0 and "is a directory" in r.stderr and
          sorted(os.listdir(e)) == ["part-00000-of-00001.tfrecord", "part.manifest.json"],
          f"a prefix that ends in '/' writes DIR/part-*, saying so ({r.stderr.strip()[-200:]})")
    r = st("split", glob.glob(d + "/p*-00000-of-00003.tfrecord")[0], "-o", e + "/split/")
    check(r.returncode == 0 and os.path.exists(e + "/split/part-00000-of-00001.tfrecord"), "split does the same")
    r = st("convert", taxi, "-o", e, "--force", "-q")
    check(r.returncode == 0 and r.stderr == "" and os.path.exists(e + "/part-00000-of-00001.tfrecord"),
          "an existing directory without '/' is one too")
    r = st("convert", taxi, "-o", "-", cwd=e)
    check(r.returncode == 2 and "shardtool cat" in r.stderr and not glob.glob(e + "/-*"),
          "-o - is refused with a hint at cat")
    r = st("convert", taxi, "-o", e + "/t.tfrecord.gz", "-z", "gzip")
    check(r.returncode == 0 and "own extension" in r.stderr and os.path.exists(e + "/t-00000-of-00001.tfrecord.gz")
          and os.path.exists(e + "/t.manifest.json"), "a typed extension is dropped from the prefix, saying so")


# ---- a hostile user's names: manifests, named outputs, hidden prefixes ----------------------


def test_hostile_names(tmp, taxi):
    # --force removes only what an earlier manifest could have written:
    # shard names really inside its directory, not a file reached through a
    # linked directory, nor any other file the manifest happens to list.
    d = os.path.join(tmp, "hostile-manifest")
    outside = os.path.join(tmp, "hostile-outside")
    os.makedirs(d)
    os.makedirs(outside)
    for p in (outside + "/victim-00000-of-00001.tfrecord", d + "/data.csv", d + "/x-00000-of-00001.tfrecord"):
        with open(p, "w") as f:
            f.write("keep\n")
    os.symlink(outside, d + "/link")
    with open(d + "/t.manifest.json", "w") as f:
        f.write('{"shards":[{"path":"link/victim-00000-of-00001.tfrecord"},{"path":"data.csv"},'
                '{"path":"x-00000-of-00001.tfrecord"}]}')
    r = st("convert", taxi, "-o", d + "/t", "-f", "-q")
    check(r.returncode == 0 and os.path.exists(outside + "/victim-00000-of-00001.tfrecord")
          and os.path.exists(d + "/data.csv") and not os.path.exists(d + "/x-00000-of-00001.tfrecord"),
          f"--force removes a listed shard, never a file through a linked directory or a non-shard name "
          f"({r.stderr.strip()[-200:]})")

    # --manifest and --feature-spec never take a name that another output
    # or an input has: with --force each of these replaced or lost a file
    # and exited 0.
    d = os.path.join(tmp, "hostile-named")
    os.makedirs(d)
    table = os.path.join(d, "in.csv")
    with open(table, "w") as f:
        f.write("a,b\n1,2\n")
    cases = [("--manifest at a shard name", ["-o", d + "/u", "--manifest", d + "/u-00000-of-00001.tfrecord"]),
             ("--manifest at the lock", ["-o", d + "/v", "--manifest", d + "/v.lock"]),
             ("--manifest at the journal", ["-o", d + "/w", "--manifest", d + "/w.journal"]),
             ("--feature-spec at a task's lock", ["-o", d + "/w", "--task", "1/2", "--feature-spec",
                                                  d + "/w-task00001-of-00002.lock"]),
             ("--manifest and --feature-spec at one file", ["-o", d + "/x", "--manifest", d + "/m.json",
                                                            "--feature-spec", d + "/./m.json"]),
             ("--manifest at an input", ["-o", d + "/y", "--manifest", table]),
             ("--feature-spec at an input", ["-o", d + "/y", "--feature-spec", table])]
    for what, args in cases:
        r = st("convert", table, *args, "-f", "-q")
        check(r.returncode == 2 and sorted(os.listdir(d)) == ["in.csv"] and open(table).read() == "a,b\n1,2\n",
              f"{what} is refused before anything is written ({r.stderr.strip()[-200:]})")
    for to in ("tfrecord", "avro"):
        sd = os.path.join(tmp, "hostile-split-" + to)
        r = st("convert", table, "-o", sd + "/a", "--to", to, "--no-manifest", "-q")
        assert r.returncode == 0, r.stderr
        shard = glob.glob(sd + "/a-*")[0]
        before = open(shard, "rb").read()
        r = st("split", shard, "-o", sd + "/b", "--manifest", shard, "-f", "-q")
        check(r.returncode == 2 and "inputs" in r.stderr and open(shard, "rb").read() == before,
              f"split of {to} refuses a manifest at its input too ({r.stderr.strip()[-200:]})")

    # A manifest or feature spec in a directory that does not exist yet:
    # made like the prefix's, not a failure after the whole conversion.
    d = os.path.join(tmp, "hostile-dirs")
    r = st("convert", taxi, "-o", d + "/data/t", "--manifest", d + "/meta/m.json",
           "--feature-spec", d + "/spec/s.json", "-q")
    check(r.returncode == 0 and os.path.exists(d + "/meta/m.json") and os.path.exists(d + "/spec/s.json"),
          f"--manifest and --feature-spec in new directories ({r.stderr.strip()[-200:]})")
    r = st("verify", "--manifest", d + "/meta/m.json", "--trust-manifest-paths")
    check(r.returncode == 0, f"that manifest verifies ({r.stdout.strip()[-200:]} {r.stderr.strip()[-200:]})")

    # A hidden prefix (-o out/.train) has earlier sets like any other.
    d = os.path.join(tmp, "hostile-hidden")
    r = st("convert", taxi, "-o", d + "/.h", "-s", "3", "-q", "--no-manifest")
    check(r.returncode == 0, "a hidden prefix's first run")
    r = st("convert", taxi, "-o", d + "/.h", "-s", "2", "-q")
    check(r.returncode == 2 and ".h-00000-of-00003" in r.stderr, f"its earlier set is refused ({r.stderr.strip()[-200:]})")
    r = st("convert", taxi, "-o", d + "/.h", "-s", "2", "-q", "-f")
    check(r.returncode == 0 and sorted(os.listdir(d)) == [".h-00000-of-00002.tfrecord", ".h-00001-of-00002.tfrecord",
                                                          ".h.manifest.json"],
          f"and replaced with --force ({sorted(os.listdir(d))})")

    # Under --task, one --manifest named alike by every task: the second
    # task is refused even with --force (it would replace the first task's
    # manifest and remove that task's shards as an "earlier set").
    d = os.path.join(tmp, "hostile-task-manifest")
    r = st("convert", taxi, "-o", d + "/t", "--task", "0/2", "--manifest", d + "/m.json", "-q")
    check(r.returncode == 0, "task 0 with --manifest m.json")
    before = snapshot(d)
    r = st("convert", taxi, "-o", d + "/t", "--task", "1/2", "--manifest", d + "/m.json", "-q", "-f")
    check(r.returncode == 2 and "another task" in r.stderr and snapshot(d) == before,
          f"task 1 with the same --manifest and --force is refused, task 0's files kept ({r.stderr.strip()[-200:]})")

    # Tasks of another count are another distributed run: while a task of
    # --task I/2 holds its lock, a task of --task J/3 is refused; a task of
    # the same run is not.
    d = os.path.join(tmp, "hostile-two-runs-of-tasks")
    os.makedirs(d)
    with open(d + "/t-task00000-of-00002.lock", "w") as held:
        held.write(f"4242@{socket.gethostname()} abc\n")
        held.flush()
        fcntl.flock(held, fcntl.LOCK_EX)
        r = st("convert", taxi, "-o", d + "/t", "--task", "1/3", "-q")
        check(r.returncode == 2 and "t-task00000-of-00002.lock" in r.stderr and "another run" in r.stderr
              and not glob.glob(d + "/t-task00001-of-00003*"),
              f"a task of another task count is refused while the first run's task works ({r.stderr.strip()[-200:]})")
        r = st("convert", taxi, "-o", d + "/t", "--task", "1/2", "-q")
        check(r.returncode == 0, f"a task of the same run is not ({r.stderr.strip()[-200:]})")

    # convert DIR -o DIR/t -f would read the earlier set's shards again
    # beside their source: every record twice.  The earlier set alone (a
    # reshape in place) is still fine.
    d = os.path.join(tmp, "hostile-own-outputs")
    os.makedirs(d)
    shutil.copy(taxi, d + "/taxi.csv")
    r = st("convert", d, "-o", d + "/t", "-q")
    check(r.returncode == 0, "a first run over a directory into a prefix inside it")
    before = snapshot(d)
    r = st("convert", d, "-o", d + "/t", "-q", "-f")
    check(r.returncode == 2 and "t-00000-of-00001.tfrecord" in r.stderr and "second time" in r.stderr
          and snapshot(d) == before,
          f"the rerun with --force refuses to read its earlier set beside the source ({r.stderr.strip()[-200:]})")
    r = st("convert", d + "/t-00000-of-00001.tfrecord", "-o", d + "/t", "-s", "2", "-q", "-f")
    check(r.returncode == 0 and len(records(glob.glob(d + "/t-*-of-00002.tfrecord"))) == 10000,
          f"the earlier set alone is converted in place ({r.stderr.strip()[-200:]})")

    # A FIFO at the journal's name is refused, not opened (which would block).
    d = os.path.join(tmp, "hostile-fifo-journal")
    os.makedirs(d)
    os.mkfifo(d + "/t.journal")
    try:
        r = st("convert", taxi, "-o", d + "/t", "-q", timeout=20)
        ok = r.returncode == 2 and "t.journal" in r.stderr and "remove it" in r.stderr
    except subprocess.TimeoutExpired:
        ok = False
    check(ok, "a FIFO at PREFIX.journal is refused without blocking")

    # verify DIR over a commit that did not finish says so, -v or not.
    d = os.path.join(tmp, "hostile-half")
    r = st("convert", taxi, "-o", d + "/t", "-s", "3", "-q", env={"SHARDTOOL_TEST_KILL_AT": "rename:1"})
    r = st("verify", d)
    check(r.returncode == 0 and "t.journal" in r.stderr and "incomplete set" in r.stderr,
          f"verify DIR notes a journal: the shards beside it may be half a set ({r.stderr.strip()[-200:]})")

    # -o . and -o DIR/.. name directories: their files are DIR/part-*.
    for o, where in ((".", d), (d + "/.", d), (d + "/..", tmp)):
        r = st("convert", taxi, "-o", o, "--force", cwd=d)
        check(r.returncode == 0 and os.path.exists(os.path.join(where, "part-00000-of-00001.tfrecord")),
              f"-o {o} writes part-* in that directory ({r.stderr.strip()[-200:]})")


# ---- issue 19 item 3: a planted journal --------------------------------------------------------


def test_planted_journal(tmp, taxi):
    """A journal is a file in the output directory that anyone who can
    write there could plant.  One that names anything but the set's own
    files in the prefix's directory (with the inode and size the run
    recorded) is reported and left alone, and nothing at all is removed."""
    # The issue's case: an old-style "output ABSPATH 0" line naming a
    # manifest and a feature spec of another directory, the journal's time
    # set back so that they look written after it.
    d = os.path.join(tmp, "planted")
    prod = os.path.join(tmp, "planted-prod")
    os.makedirs(d)
    os.makedirs(prod)
    victims = {prod + "/train.manifest.json": '{\n  "format": "tfrecord"}\n',
               prod + "/train.spec.json": '{\n  "features": {}}\n'}
    for p, text in victims.items():
        with open(p, "w") as f:
            f.write(text)
    journal = d + "/t.journal"
    text = "shardtool-journal 1\n" + "".join(f"output {p} 0\n" for p in victims) + "end\n"
    with open(journal, "w") as f:
        f.write(text)
    os.utime(journal, (time.time() - 3600, time.time() - 3600))
    r = st("convert", taxi, "-o", d + "/t", "-q")
    check(r.returncode == 2 and "t.journal" in r.stderr and "nothing is removed" in r.stderr
          and all(os.path.exists(p) for p in victims) and open(journal).read() == text,
          f"an old-style journal naming files of another directory: reported, left alone, nothing removed "
          f"({r.stderr.strip()[-300:]})")

    # Journals of this version that break one rule each, beside a line
    # that alone would be honoured (a planted rename of the earlier set's
    # shard, with its real inode and size): none of it is acted on.
    d = os.path.join(tmp, "planted-v2")
    r = st("convert", taxi, "-o", d + "/t", "-q")
    assert r.returncode == 0, r.stderr
    shard = d + "/t-00000-of-00001.tfrecord"
    sst = os.stat(shard)
    with open(d + "/t-notes.txt", "w") as f:
        f.write("notes\n")
    nst = os.stat(d + "/t-notes.txt")
    outside = os.path.join(tmp, "planted-outside-00000-of-00001.tfrecord")
    shutil.copy(shard, outside)
    ost = os.stat(outside)
    good = f"rename .tmp-stab12-0 t-00000-of-00001.tfrecord {sst.st_ino} {sst.st_size}\n"
    bad_lines = {
        "an absolute name": f"rename .tmp-stab12-1 {outside} {ost.st_ino} {ost.st_size}\n",
        "a name in another directory": f"rename .tmp-stab12-1 ../{os.path.basename(outside)} {ost.st_ino} {ost.st_size}\n",
        "an escaped slash": f"rename .tmp-stab12-1 ..%2F{os.path.basename(outside)} {ost.st_ino} {ost.st_size}\n",
        "a name the run does not write": f"rename .tmp-stab12-1 t-notes.txt {nst.st_ino} {nst.st_size}\n",
        "another run's temporary name": f"rename .tmp-stff-1 t-00000-of-00001.tfrecord {sst.st_ino} {sst.st_size}\n",
        "no size": f"rename .tmp-stab12-1 t-00000-of-00001.tfrecord {sst.st_ino}\n",
        "the lock": f"aside t.lock .tmp-stab12-2 {sst.st_ino} {sst.st_size}\n",
        "an unknown entry": f"output {outside} 0\n",
    }
    for what, line in bad_lines.items():
        before = snapshot(d)
        text = "shardtool-journal 2\nrun 42 ab12\n" + good + line
        with open(d + "/t.journal", "w") as f:
            f.write(text)
        r = st("convert", taxi, "-o", d + "/t", "-q")
        check(r.returncode == 2 and "t.journal" in r.stderr and snapshot(d) == {**before, "t.journal": text.encode()}
              and os.path.exists(outside) and os.path.exists(d + "/t-notes.txt"),
              f"a journal with {what}: reported, left alone, nothing removed ({r.stderr.strip()[-200:]})")
        os.unlink(d + "/t.journal")
    # The same good line alone is a journal a run could have written: the
    # file it names, with that inode and size, is removed.
    with open(d + "/t.journal", "w") as f:
        f.write("shardtool-journal 2\nrun 42 ab12\n" + good)
    r = st("convert", taxi, "-o", d + "/t", "-q")
    check("rolled back" in r.stderr and not os.path.exists(d + "/t.journal") and os.path.exists(d + "/t-notes.txt"),
          f"a journal within the rules is rolled back ({r.stderr.strip()[-200:]})")


def test_edited_journal(tmp, table):
    """A --force run killed after moving the earlier set aside, its journal
    then edited to plausible values (an entry's size, the "aside" lines
    taken out) or cut short: the rollback cannot prove those files its own
    and moves nothing back, and before, the next run then removed them with
    the dead run's temporaries: the earlier set was gone (with exit 0 when
    no file of it was left to refuse).  Every earlier file now stays, under
    its name or the hidden one, and the note names them and the way out."""
    def first_aside(lines, change):
        """lines with the first "aside NAME TMP INO SIZE" entry changed."""
        at = next(i for i, l in enumerate(lines) if l.startswith("aside "))
        f = lines[at].split(" ")
        return lines[:at] + [" ".join(change(f))] + lines[at + 1:]

    edits = {
        "an aside entry's size changed": lambda lines: first_aside(lines, lambda f: f[:4] + [str(int(f[4]) + 1)]),
        "an aside entry's inode changed": lambda lines: first_aside(lines, lambda f: f[:3] + [str(int(f[3]) + 1), f[4]]),
        "the aside entries taken out": lambda lines: [l for l in lines if not l.startswith("aside ")],
        "cut after its first entry": lambda lines: lines[:next(i for i, l in enumerate(lines) if l.startswith("aside ")) + 1],
    }
    for k, (what, edit) in enumerate(edits.items()):
        d = os.path.join(tmp, f"edited-journal-{k}")
        r = st("convert", table, "-o", d + "/t", "--shards", "3", "-q")
        assert r.returncode == 0, r.stderr
        earlier = {n: b for n, b in snapshot(d).items() if not n.endswith(".lock")}
        r = st("convert", table, "-o", d + "/t", "--shards", "2", "-f", "-q", env={"SHARDTOOL_TEST_KILL_AT": "manifest"})
        assert r.returncode == -signal.SIGKILL and os.path.exists(d + "/t.journal"), r.stderr
        with open(d + "/t.journal") as f:
            lines = f.read().splitlines()
        with open(d + "/t.journal", "w") as f:
            f.write("\n".join(edit(lines)) + "\n")
        r = st("convert", table, "-o", d + "/t", "--shards", "5", "-q")
        now = list(snapshot(d).values())
        lost = [n for n, b in earlier.items() if b not in now]
        told = r.returncode == 2 or ("could not be moved back" in r.stderr and "rename" in r.stderr)
        check(not lost and told, f"a journal with {what}: no file of the earlier set is lost (lost {lost}; "
                                 f"{r.returncode} {r.stderr.strip()[-250:]})")


# ---- issue 19 item 4: --force killed before its commit point -----------------------------------


def force_kill_formats(tmp, taxi):
    """(label, old run, new run, points) per output format: the new run
    replaces the old set with --force, once under the same names (every
    new shard takes an old shard's name) and once under other ones."""
    small = os.path.join(tmp, "taxi-head.csv")
    with open(taxi) as f, open(small, "w") as g:
        for i, line in enumerate(f):
            if i > 6000:
                break
            g.write(line)
    out = []
    for fmt in ("tfrecord", "parquet", "avro", "csv", "jsonl"):
        base = ["convert", "--to", fmt, "--jobs", "1"]
        out.append((fmt + " same names", base + [taxi, "--shards", "3"], base + [small, "--shards", "3"], 3))
        out.append((fmt + " other names", base + [taxi, "--shards", "3"], base + [small, "--shards", "2"], 2))
    return out


def test_force_kills(tmp, taxi):
    """--force killed at every point of its commit, for every output
    format: the earlier set stays whole until the journal is removed.  Right
    after the kill, a directory without a journal holds exactly one set; the
    next run (which rolls back a journal) leaves exactly the old set (a kill
    up to the commit point) or the new one (after it), byte for byte, no
    temporary file, and verify --manifest passes on it."""
    bad, kills = [], 0
    for label, old_args, new_args, new_shards in force_kill_formats(tmp, taxi):
        d = os.path.join(tmp, "force-kill")
        pristine = os.path.join(tmp, "force-kill-old")
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(pristine, ignore_errors=True)
        r = st(*old_args, "-o", d + "/t", "-q")
        assert r.returncode == 0, (label, r.stderr)
        old = {n: b for n, b in snapshot(d, hidden=False).items() if n != "t.lock"}
        shutil.copytree(d, pristine)
        r = st(*new_args, "-o", d + "/t", "-q", "-f")
        assert r.returncode == 0, (label, r.stderr)
        new = {n: b for n, b in snapshot(d, hidden=False).items() if n != "t.lock"}
        assert old != new and "t.manifest.json" in new, label
        points = ["locked", "journal-created", "journal", "aside:0", "aside:1"]
        points += [f"rename:{i}" for i in range(new_shards)] + ["manifest", "commit", "committed"]
        for point in points:
            shutil.rmtree(d)
            shutil.copytree(pristine, d)
            r = st(*new_args, "-o", d + "/t", "-q", "-f", env={"SHARDTOOL_TEST_KILL_AT": point})
            kills += 1
            if r.returncode != -signal.SIGKILL:
                bad.append((label, point, "not killed", r.returncode, r.stderr.strip()[-200:]))
                continue
            now = {n: b for n, b in snapshot(d, hidden=False).items() if n != "t.lock"}
            if "t.journal" not in now and now not in (old, new):
                bad.append((label, point, "no journal and not one whole set", sorted(now)))
                continue
            r = st(*new_args, "-o", d + "/t", "-q")
            want = new if point == "committed" else old
            now = {n: b for n, b in snapshot(d, hidden=False).items() if n != "t.lock"}
            temps = [n for n in os.listdir(d) if n.startswith(".tmp-")]
            if r.returncode != 2 or now != want or temps:
                bad.append((label, point, "after the next run", r.returncode, r.stderr.strip()[-200:],
                            "old" if now == old else "new" if now == new else sorted(now), temps))
                continue
            v = st("verify", "-q", "--manifest", d + "/t.manifest.json")
            if v.returncode:
                bad.append((label, point, "verify --manifest", v.stdout.strip()[-200:], v.stderr.strip()[-200:]))
    check(not bad, f"--force killed at every commit point, 5 formats, same and other names ({kills} kills): "
                   f"always exactly the old or the new set, byte for byte, verified ({bad[:3]})")


def main():
    global ST, SOURCE
    ST, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    taxi = os.path.join(SOURCE, "tests", "data", "csv", "tfx", "chicago_taxi_data.csv")
    only = sys.argv[3:] or None
    with tempfile.TemporaryDirectory() as tmp:
        table_a = os.path.join(tmp, "a.csv")
        table_b = os.path.join(tmp, "b.csv")
        gen_table(table_a, 40000)
        gen_table(table_b, 30000)
        table_c = os.path.join(tmp, "c.csv")
        gen_table(table_c, 60000)
        tests = [("earlier", lambda: test_earlier_set(tmp, taxi)),
                 ("tasks", lambda: test_tasks_together(tmp, table_a)),
                 ("size", lambda: test_shard_size_on_disk(tmp, table_a)),
                 ("two", lambda: test_two_runs(tmp, table_a, table_b)),
                 ("devices", lambda: test_not_regular(tmp, taxi)),
                 ("kills", lambda: test_kills(tmp, table_b, taxi)),
                 ("parquet-kills", lambda: test_parquet_kills(tmp, table_c)),
                 ("names", lambda: test_names(tmp, taxi)),
                 ("hostile", lambda: test_hostile_names(tmp, taxi)),
                 ("planted-journal", lambda: test_planted_journal(tmp, taxi)),
                 ("edited-journal", lambda: test_edited_journal(tmp, table_b)),
                 ("force-kills", lambda: test_force_kills(tmp, taxi))]
        for name, fn in tests:
            if not only or name in only:
                fn()
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
