#!/usr/bin/env python3
"""--resume and combine must prove the records, not trust counts or names:

  - a kept shard whose records moved (an input edited in place inside the
    task's range, two rows become one of the same bytes, its size and even
    its modification time unchanged, its change time forged in the task
    manifest) is refused, not kept: the records dealt to it would make
    other bytes than the manifest lists;
  - the same edit, with its modification time restored or changed, is
    refused up front, naming the input and how it changed (its change
    time, which touch -r cannot restore and a chmod sets; an input
    replaced by a file of the same size and time has another inode); a
    manifest that records no inode and change time (an older version)
    converts again; combine compares neither (other nodes see others);
  - tasks given the same inputs in another order (an unquoted glob in
    another locale) read them in one byte order and make one correct set;
  - combine refuses tasks that read other inputs (an extra file under file
    dealing, a file changed between tasks) naming the first difference;
  - combine refuses a task manifest whose byte range was edited to overlap
    another task's;
  - for every output format, a task SIGKILLed at each commit point and
    rerun with --resume, or a finished task one of whose shards was
    removed and rerun with --resume, gives the clean run's files byte for
    byte once combined (the kept shards are proven by encoding their
    records again, through that format's writer);
  - a task rerun with another --shards leaves the other tasks' shards
    (their task manifests list them) for combine to refuse, not remove;
  - a manifest edited to no longer list a shard (gone) is not a finished
    run; a TFDS split's intact shards are kept by --resume;
  - combine refuses a listed shard that is gone or of another size, and
    one whose bytes are not those listed (edited in place with its size
    and modification time kept, another file of its size moved over it):
    it proves a shard by the inode and change time its task recorded, and
    reads (CRC32C) those they do not prove: a set copied with cp -a, task
    manifests of an older version; the same for a TFDS split's tasks;
  - tasks over a plain run's set replace its PREFIX.manifest.json too;
  - --resume of a run that read standard input converts what it reads;
  - tasks of another task count over a distributed run replace it.
Every check reads the records back (distinct ids against the rows
written), so a count that happens to match proves nothing here.
Prints "N passed, M failed".
"""
import csv
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

ST = None
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def st(*args, cwd=None):
    return subprocess.run([ST] + list(args), capture_output=True, text=True, cwd=cwd)


ROW = "{:08d},{}\n"


def write_inputs(d, files=5, rows=4000, gz=False):
    """files CSV inputs of rows fixed-width rows each (ids distinct)."""
    paths = []
    for f in range(files):
        text = "id,name\n" + "".join(ROW.format(f * rows + r, "n%07d" % (f * rows + r)) for r in range(rows))
        p = os.path.join(d, "in%d.csv%s" % (f, ".gz" if gz else ""))
        if gz:
            with gzip.open(p, "wt") as out:
                out.write(text)
        else:
            with open(p, "w") as out:
                out.write(text)
        paths.append(p)
    return paths


def ids_of(shards):
    """Every id in the shards, read back with cat (each record's 'id')."""
    ids = []
    for s in shards:
        r = st("cat", s)
        if r.returncode != 0:
            return None
        for line in r.stdout.splitlines():
            ids.append(json.loads(line)["id"][0])
    return ids


def run_tasks(paths, prefix, tasks=4, shards=2, order=None, only=None):
    out = {}
    for t in range(tasks):
        if only is not None and t not in only:
            continue
        ins = list(order(t) if order else paths)
        out[t] = st("convert", *ins, "-o", prefix, "--shards", str(shards), "--task", "%d/%d" % (t, tasks),
                    "--resume", "-q")
    return out


def task_manifest(prefix, t, tasks=4):
    with open("%s-task%05d-of-%05d.manifest.json" % (prefix, t, tasks)) as f:
        return json.load(f)


def combined_ids(prefix):
    with open(prefix + ".manifest.json") as f:
        m = json.load(f)
    d = os.path.dirname(prefix)
    return ids_of([os.path.join(d, s["path"]) for s in m["shards"]])


def rerun_task_and_combine(paths, prefix, tasks, shards, task, want, what):
    """Task TASK of TASKS runs again with --resume, then combine: every
    record of the inputs must be in the combined set exactly once."""
    r = run_tasks(paths, prefix, tasks=tasks, shards=shards, only=[task])[task]
    c = st("combine", prefix)
    ids = combined_ids(prefix) if c.returncode == 0 else None
    check(r.returncode == 0 and c.returncode == 0 and ids is not None and sorted(ids) == want,
          "%s (%s)" % (what, (r.stderr + c.stderr).strip()[-200:]))


def edit_in_range(path, begin, end, base):
    """Two rows become one of the same bytes, inside [begin, end) of the
    inputs concatenated (this file starts at base): the row's newline and
    the next row's comma become ';'.  Returns the file's old times."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    lo = max(begin - base, 0) + (end - begin) // 3
    nl = data.index(b"\n", lo)
    comma = data.index(b",", nl)
    data[nl] = ord(";")
    data[comma] = ord(";")
    times = os.stat(path)
    with open(path, "wb") as f:
        f.write(data)
    return times


def item1_kept_shard_records_moved(d):
    paths = write_inputs(d)
    prefix = os.path.join(d, "out", "train")
    os.makedirs(os.path.dirname(prefix))
    runs = run_tasks(paths, prefix)
    check(all(r.returncode == 0 for r in runs.values()), "four tasks convert")
    m1 = task_manifest(prefix, 1)
    counts = [s["records"] for s in m1["shards"]]
    # Delete the shard whose count the edit (one record less) leaves as it
    # is for the other one: the kept shard's count then still matches.
    lose = 1 if counts[0] == counts[1] else 0
    os.unlink(os.path.join(d, "out", m1["shards"][lose]["path"]))
    share = m1["options"]["task_share"]
    sizes = [os.path.getsize(p) for p in paths]
    base = 0
    for p, size in zip(paths, sizes):
        if base <= share["range_begin"] + (share["range_end"] - share["range_begin"]) // 3 < base + size:
            break
        base += size
    times = edit_in_range(p, share["range_begin"], share["range_end"], base)
    check(os.path.getsize(p) == times.st_size, "the edit keeps the input's size")
    # As an edit that kept the time (rsync -t, a restore) leaves it.
    os.utime(p, ns=(times.st_atime_ns, times.st_mtime_ns))
    before = sorted(os.listdir(os.path.join(d, "out")))
    r = run_tasks(paths, prefix, only={1})[1]
    check(r.returncode == 1 and os.path.basename(p) + " changed (ctime changed" in r.stderr and "--force" in r.stderr,
          "--resume refuses the input whose change time the edit set, before anything is read "
          "(exit %d: %s)" % (r.returncode, r.stderr.strip()[-300:]))
    check(sorted(os.listdir(os.path.join(d, "out"))) == before, "the refused run leaves the directory as it was")
    # The task manifest edited to the input's new change time: the records
    # themselves are still proved.
    mpath = "%s-task%05d-of-%05d.manifest.json" % (prefix, 1, 4)
    with open(mpath) as f:
        text = f.read()
    forged = json.loads(text)
    for entry in forged["options"]["input_files"]:
        entry["ctime_ns"] = os.stat(entry["path"]).st_ctime_ns
    with open(mpath, "w") as f:
        json.dump(forged, f)
    r = run_tasks(paths, prefix, only={1})[1]
    check(r.returncode == 1 and "are not the ones it holds" in r.stderr and "--force" in r.stderr,
          "with its change time forged in the manifest, --resume refuses to keep a shard whose records moved "
          "though its count matches (exit %d: %s)" % (r.returncode, r.stderr.strip()[-300:]))
    check(sorted(os.listdir(os.path.join(d, "out"))) == before, "the refused run leaves the directory as it was")
    with open(mpath, "w") as f:
        f.write(text)
    # The same edit with the time changed: refused before anything is read,
    # naming the input.
    os.utime(p, ns=(times.st_atime_ns, times.st_mtime_ns + 1_000_000_000))
    r = run_tasks(paths, prefix, only={1})[1]
    check(r.returncode == 1 and os.path.basename(p) + " changed" in r.stderr,
          "--resume names the input that changed (exit %d: %s)" % (r.returncode, r.stderr.strip()[-300:]))
    # The way out it names: every task anew, then one correct set.
    for t in range(4):
        st("convert", *paths, "-o", prefix, "--shards", "2", "--task", "%d/4" % t, "--force", "-q")
    r = st("combine", prefix)
    ids = combined_ids(prefix) if r.returncode == 0 else None
    check(ids is not None and len(ids) == len(set(ids)) == 5 * 4000 - 1,
          "after --force on every task, combine gives every row once (%s)" % (r.stderr.strip()[-200:]))


def item2_inputs_order_and_identity(d):
    paths = write_inputs(d)
    prefix = os.path.join(d, "out", "train")
    os.makedirs(os.path.dirname(prefix))
    # Task 1's shell listed the inputs in another order.
    runs = run_tasks(paths, prefix, order=lambda t: reversed(paths) if t == 1 else paths)
    check(all(r.returncode == 0 for r in runs.values()), "tasks given the inputs in different orders convert")
    r = st("combine", prefix)
    ids = combined_ids(prefix) if r.returncode == 0 else None
    check(ids is not None and len(ids) == len(set(ids)) == 5 * 4000,
          "tasks read the inputs in one byte order whatever order they were given in: every row once (%s)"
          % r.stderr.strip()[-200:])
    m0 = task_manifest(prefix, 0)
    check([os.path.basename(f["path"]) for f in m0["options"].get("input_files", [])] ==
          sorted(os.path.basename(p) for p in paths) and all("bytes" in f and "mtime_ns" in f
                                                              for f in m0["options"].get("input_files", [])),
          "every task manifest lists every input with its size and time")

    # A task manifest edited so that its share overlaps task 0's.
    mpath = "%s-task%05d-of-%05d.manifest.json" % (prefix, 1, 4)
    with open(mpath) as f:
        text = f.read()
    m1 = json.loads(text)
    b = m1["options"]["task_share"]["range_begin"]
    with open(mpath, "w") as f:
        f.write(re.sub(r'"range_begin": ?%d\b' % b, '"range_begin":%d' % (b - 100), text))
    r = st("combine", prefix, "--force")
    check(r.returncode == 1 and "overlap" in r.stderr,
          "combine refuses a task whose byte range overlaps another's (exit %d: %s)"
          % (r.returncode, r.stderr.strip()[-300:]))
    with open(mpath, "w") as f:
        f.write(text)

    # A file changed between two tasks' runs (same size): combine names it.
    p = paths[2]
    edit_in_range(p, 0, os.path.getsize(p), 0)
    for t in (3,):
        os.unlink("%s-task%05d-of-%05d.manifest.json" % (prefix, t, 4))
        for s in task_manifest_shards(prefix, t, d):
            os.unlink(s)
    runs = run_tasks(paths, prefix, only={3})
    r = st("combine", prefix, "--force")
    check(r.returncode == 1 and os.path.basename(p) + " changed" in r.stderr,
          "combine refuses tasks that read a file before and after it changed, naming it (exit %d: %s)"
          % (r.returncode, r.stderr.strip()[-300:]))


def task_manifest_shards(prefix, t, d, tasks=4, shards=2):
    out = []
    for n in os.listdir(os.path.join(d, "out")):
        for k in range(t * shards, t * shards + shards):
            if n.startswith("train-%05d-of-%05d" % (k, tasks * shards)):
                out.append(os.path.join(d, "out", n))
    return out


def item2_file_dealing_extra_input(d):
    paths = write_inputs(d, files=8, rows=500, gz=True)
    prefix = os.path.join(d, "out", "train")
    os.makedirs(os.path.dirname(prefix))
    extra = write_inputs(os.path.join(d, "x"), files=1, rows=500, gz=True) if os.makedirs(
        os.path.join(d, "x")) is None else None
    runs = run_tasks(paths, prefix, order=lambda t: paths + extra if t == 1 else paths)
    check(all(r.returncode == 0 for r in runs.values()), "tasks dealing gzip inputs by files convert")
    check(task_manifest(prefix, 0)["options"]["task_share"]["dealing"] == "files", "gzip inputs are dealt by files")
    r = st("combine", prefix)
    check(r.returncode == 1 and "did not read the same inputs" in r.stderr and "in0.csv.gz" in r.stderr,
          "combine refuses a task that read an extra input under file dealing, naming it (exit %d: %s)"
          % (r.returncode, r.stderr.strip()[-300:]))


WITNESSES = re.compile(rb'("crc32c": "[0-9a-f]{8}"),\n *"inode": [0-9]+,\n *"ctime_ns": [0-9]+')


def snapshot(d):
    """Every visible file of d, name to bytes (the lock, held only while a
    run lives, left out; in task manifests, the shards' inodes and change
    times, which are each file's own, left out: every other byte counts)."""
    out = {}
    for n in sorted(os.listdir(d)):
        if not n.startswith(".") and not n.endswith(".lock"):
            with open(os.path.join(d, n), "rb") as f:
                out[n] = f.read()
            if "-task" in n and n.endswith(".manifest.json"):
                out[n] = WITNESSES.sub(rb"\1", out[n])
    return out


def task_run(paths, prefix, fmt, t, *extra, env=None):
    return subprocess.run([ST, "convert", *paths, "-o", prefix, "--to", fmt, "--shards", "2", "--jobs", "1",
                           "--task", "%d/2" % t, "-q", *extra], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))


def resume_kills_every_format(d):
    paths = write_inputs(d, files=3, rows=3000)
    points = ["locked", "journal", "rename:0", "rename:1", "manifest", "commit"]
    for fmt in ("tfrecord", "parquet", "avro", "csv", "jsonl", "arrayrecord"):
        out = os.path.join(d, "out-" + fmt)  # one path per format: Avro's sync markers derive from it
        prefix = os.path.join(out, "t")

        def fresh():
            if os.path.isdir(out):
                for n in os.listdir(out):
                    os.unlink(os.path.join(out, n))

        runs = [task_run(paths, prefix, fmt, t) for t in range(2)]
        c = st("combine", prefix, "-q")
        ok = all(r.returncode == 0 for r in runs) and c.returncode == 0
        check(ok, "%s: two tasks and combine ([%s] %s)" % (fmt, ", ".join(str(r.returncode) for r in runs),
                                                         c.stderr.strip()[-200:]))
        if not ok:
            continue
        ref = snapshot(out)
        if fmt == "tfrecord":
            ids = combined_ids(prefix)
            check(ids is not None and sorted(ids) == list(range(3 * 3000)), "the clean set holds every id once")
        bad = []
        for point in points:
            fresh()
            r0 = task_run(paths, prefix, fmt, 0)
            r1 = task_run(paths, prefix, fmt, 1, env={"SHARDTOOL_TEST_KILL_AT": point})
            if r0.returncode != 0 or r1.returncode != -9:
                bad.append((point, "not killed", r0.returncode, r1.returncode, r1.stderr.strip()[-200:]))
                continue
            r = task_run(paths, prefix, fmt, 1, "--resume")
            c = st("combine", prefix, "-q")
            if r.returncode or c.returncode or snapshot(out) != ref:
                bad.append((point, r.returncode, r.stderr.strip()[-200:], c.returncode, c.stderr.strip()[-200:],
                            sorted(set(snapshot(out)) ^ set(ref))))
        check(not bad, "%s: task 1 killed at %d commit points, rerun with --resume: the clean set byte for byte (%s)"
              % (fmt, len(points), bad[:2]))
        # A finished task whose second shard is gone: --resume keeps the
        # first (its records encoded again give its bytes) and writes the
        # second.
        fresh()
        for t in range(2):
            task_run(paths, prefix, fmt, t)
        shards = sorted(n for n in os.listdir(out) if "-00003-of-00004" in n)
        kept = [n for n in os.listdir(out) if "-00002-of-00004" in n]
        if shards:
            os.unlink(os.path.join(out, shards[0]))
        inode = os.stat(os.path.join(out, kept[0])).st_ino if kept else None
        r = task_run(paths, prefix, fmt, 1, "--resume", "-v")
        c = st("combine", prefix, "-q")
        check(kept and os.stat(os.path.join(out, kept[0])).st_ino == inode,
              "%s: --resume keeps the intact shard of the task (same file, not written again)" % fmt)
        check(len(shards) == 1 and r.returncode == 0 and c.returncode == 0 and snapshot(out) == ref,
              "%s: a removed shard of a finished task is written again by --resume, the kept one proven: the "
              "clean set byte for byte (%s %s)" % (fmt, shards, r.stderr.strip()[-200:]))


def task_rerun_other_shards(d):
    """One task of a finished run rerun with another --shards (--resume,
    then --force): the other tasks' shards, which their task manifests
    still list, stay.  Before, the task removed every shard of the other
    total, and once it was rerun as before, combine (which reads only the
    task manifests) wrote a manifest of 8 shards, 6 of them missing, with
    exit 0."""
    paths = write_inputs(d, files=4, rows=1500)
    want = sorted(range(4 * 1500))
    for mode in ("--resume", "--force"):
        prefix = os.path.join(d, "rerun" + mode, "t")
        r = run_tasks(paths, prefix, tasks=4, shards=2)
        assert all(x.returncode == 0 for x in r.values()), r
        out = os.path.dirname(prefix)
        before = {n: os.stat(os.path.join(out, n)).st_ino for n in os.listdir(out) if "-of-00008." in n}
        one = st("convert", *paths, "-o", prefix, "--shards", "3", "--task", "1/4", mode, "-q")
        kept = [n for n in before if os.path.exists(os.path.join(out, n))]
        check(one.returncode == 0 and sorted(kept) == sorted(n for n in before if not n.startswith("t-0000%d" % 2)
                                                                and not n.startswith("t-0000%d" % 3)),
              "%s: task 1 rerun with --shards 3 removes only its own earlier shards (2, 3 of 8), not the other "
              "tasks' (%s; left %s)" % (mode, one.stderr.strip()[-200:], sorted(kept)))
        c = st("combine", prefix)
        check(c.returncode == 1 and "--shards" in c.stderr and not os.path.exists(prefix + ".manifest.json"),
              "%s: combine refuses tasks of other --shards (%s)" % (mode, c.stderr.strip()[-200:]))
        again = st("convert", *paths, "-o", prefix, "--shards", "2", "--task", "1/4", mode, "-q")
        c = st("combine", prefix)
        listed = json.load(open(prefix + ".manifest.json"))["shards"] if c.returncode == 0 else []
        missing = [s["path"] for s in listed if not os.path.exists(os.path.join(out, s["path"]))]
        ids = combined_ids(prefix) if c.returncode == 0 and not missing else None
        check(again.returncode == 0 and c.returncode == 0 and not missing and ids is not None and sorted(ids) == want,
              "%s: task 1 rerun as before, combine: every listed shard there, every record once (missing %s; %s)"
              % (mode, missing, (again.stderr + c.stderr).strip()[-200:]))
        v = st("verify", "--manifest", prefix + ".manifest.json", "-q")
        check(v.returncode == 0, "%s: verify --manifest of the combined set passes (%s)" % (mode, v.stderr.strip()[-200:]))


def resume_edited_manifest(d):
    """--resume with a manifest whose every listed shard is intact, but
    that no longer lists one of the run's shards (the entry taken out, the
    shard gone): before, the run counted as finished and exited 0 with the
    shard missing.  Each shard the run names must be a listed one; the
    others are written again.  Also a TFDS split: its shards are spelled
    PREFIX.tfrecord-NNNNN-of-NNNNN, and an intact one is kept by --resume."""
    paths = write_inputs(d, files=4, rows=1500)
    want = sorted(range(4 * 1500))
    prefix = os.path.join(d, "edited", "t")
    r = st("convert", *paths, "-o", prefix, "--shards", "4", "-q")
    assert r.returncode == 0, r.stderr
    with open(prefix + ".manifest.json") as f:
        m = json.load(f)
    gone = m["shards"].pop(3)
    os.unlink(os.path.join(d, "edited", gone["path"]))
    with open(prefix + ".manifest.json", "w") as f:
        json.dump(m, f, indent=2)
    r = st("convert", *paths, "-o", prefix, "--shards", "4", "--resume", "-q")
    shards = sorted(n for n in os.listdir(os.path.join(d, "edited")) if n.endswith(".tfrecord"))
    ids = ids_of([os.path.join(d, "edited", n) for n in shards])
    check(r.returncode == 0 and len(shards) == 4 and ids is not None and sorted(ids) == want,
          "a manifest that no longer lists shard 3 (gone): --resume writes it again, every record once (%s, %s)"
          % (shards, r.stderr.strip()[-200:]))

    prefix = os.path.join(d, "edited-task", "t")
    r = run_tasks(paths, prefix, tasks=2, shards=2)
    assert all(x.returncode == 0 for x in r.values()), r
    tm = "%s-task%05d-of-%05d.manifest.json" % (prefix, 1, 2)
    with open(tm) as f:
        m = json.load(f)
    gone = m["shards"].pop(1)
    os.unlink(os.path.join(d, "edited-task", gone["path"]))
    with open(tm, "w") as f:
        json.dump(m, f, indent=2)
    rerun_task_and_combine(paths, prefix, 2, 2, 1, want,
                           "a task manifest that no longer lists one of its shards: --resume writes it again, "
                           "combine has every record once")

    version = os.path.join(d, "tfds", "ds", "1.0.0")
    ref = os.path.join(d, "tfds-ref", "ds", "1.0.0")
    for root in ("tfds", "tfds-ref"):
        r = st("convert", *paths, "--tfds", os.path.join(d, root), "--name", "ds", "--split", "train",
               "--shards", "3", "-q")
        assert r.returncode == 0, r.stderr
    r = st("convert", *paths, "--tfds", os.path.join(d, "tfds"), "--name", "ds", "--split", "train", "--shards", "3",
           "--resume", "-v")
    check(r.returncode == 0 and "finished before" in r.stderr,
          "TFDS split: --resume of a finished run keeps it (%s)" % r.stderr.strip()[-200:])
    os.unlink(os.path.join(version, "ds-train.tfrecord-00001-of-00003"))
    inode = os.stat(os.path.join(version, "ds-train.tfrecord-00000-of-00003")).st_ino
    r = st("convert", *paths, "--tfds", os.path.join(d, "tfds"), "--name", "ds", "--split", "train", "--shards", "3",
           "--resume", "-q")
    check(r.returncode == 0 and os.stat(os.path.join(version, "ds-train.tfrecord-00000-of-00003")).st_ino == inode
          and snapshot(version) == snapshot(ref),
          "TFDS split, a shard removed: --resume keeps the intact ones (same file) and gives the clean run's files "
          "byte for byte (%s)" % r.stderr.strip()[-200:])


def combine_missing_shard(d):
    """combine reads the task manifests only, but a shard they list that
    is gone (renamed away) or of another size (cut short) is refused,
    naming it and the task to run again; before, combine exited 0 with a
    manifest of the whole set listing the missing shard."""
    paths = write_inputs(d, files=4, rows=1500)
    want = sorted(range(4 * 1500))
    prefix = os.path.join(d, "gone", "t")
    r = run_tasks(paths, prefix, tasks=4, shards=2)
    assert all(x.returncode == 0 for x in r.values()), r
    shard = prefix + "-00003-of-00008.tfrecord"
    os.rename(shard, os.path.join(d, "gone", "renamed.tfrecord"))
    c = st("combine", prefix)
    check(c.returncode == 1 and shard in c.stderr and "task 1 of 4" in c.stderr and "missing" in c.stderr
          and not os.path.exists(prefix + ".manifest.json"),
          "combine refuses a listed shard renamed away, naming it and the task to run again (%s)"
          % c.stderr.strip()[-250:])
    os.rename(os.path.join(d, "gone", "renamed.tfrecord"), shard)
    size = os.path.getsize(shard)
    os.truncate(shard, size - 7)
    c = st("combine", prefix)
    check(c.returncode == 1 and shard in c.stderr and "%d bytes" % (size - 7) in c.stderr
          and not os.path.exists(prefix + ".manifest.json"),
          "combine refuses a listed shard cut short (%s)" % c.stderr.strip()[-250:])
    rerun_task_and_combine(paths, prefix, 4, 2, 1, want,
                           "task 1 rerun with --resume, combine: every record once")


READ_NOTE = "read to prove"

RECORDS_SCRIPT = r"""
import collections, json, os, struct, subprocess, sys, tempfile
sys.path.insert(0, os.path.join(sys.argv[1], "tests"))
from tfrecord_frames import crc32c, masked
tmp = tempfile.mkdtemp()
subprocess.run(["protoc", "--proto_path=" + os.path.join(sys.argv[1], "formats", "example"),
                "--python_out=" + tmp, "example.proto"], check=True)
sys.path.insert(0, tmp)
import example_pb2
m = json.load(open(sys.argv[2]))
out = collections.Counter()
for s in m["shards"]:
    data = open(os.path.join(os.path.dirname(sys.argv[2]), s["path"]), "rb").read()
    at = 0
    while at < len(data):
        (n,) = struct.unpack("<Q", data[at:at + 8])
        assert masked(crc32c(data[at:at + 8])) == struct.unpack("<I", data[at + 8:at + 12])[0]
        payload = data[at + 12:at + 12 + n]
        assert masked(crc32c(payload)) == struct.unpack("<I", data[at + 12 + n:at + 16 + n])[0]
        ex = example_pb2.Example()
        ex.ParseFromString(payload)
        f = ex.features.feature
        out["%d,%s" % (f["id"].int64_list.value[0], f["name"].bytes_list.value[0].decode())] += 1
        at += 16 + n
print(json.dumps(out))
"""


def combined_records(prefix):
    """The combined set's records as "id,name" -> count, read by
    python3-protobuf from TFRecord frames parsed with struct (not by
    shardtool); None when they cannot be read."""
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run(["/usr/bin/python3", "-c", RECORDS_SCRIPT, src, prefix + ".manifest.json"],
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def input_records(paths):
    out = {}
    for p in paths:
        with open(p) as f:
            for row in list(csv.reader(f))[1:]:
                key = "%d,%s" % (int(row[0]), row[1])
                out[key] = out.get(key, 0) + 1
    return out


def flip_in_place(path, at):
    """One byte of path changed in place (same size), its modification
    time put back as it was (what `touch -r` does)."""
    before = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x20]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def combine_proves_shard_bytes(d):
    """combine proves each listed shard by the inode and change time its
    task recorded after the commit's renames (one lstat), and reads the
    shards these do not prove (a set copied elsewhere, an edit, another
    file moved over a shard, an older task manifest), comparing their
    CRC32C with the listed one; before, a shard edited in place with its
    size and modification time kept, or replaced by another file of its
    size, passed, and the combined manifest listed a false crc32c."""
    paths = write_inputs(d, files=4, rows=1500)
    want = input_records(paths)
    prefix = os.path.join(d, "set", "t")
    r = run_tasks(paths, prefix, tasks=4, shards=2)
    assert all(x.returncode == 0 for x in r.values()), r
    recorded = True
    for t in range(4):
        for e in task_manifest(prefix, t)["shards"]:
            st_ = os.lstat(os.path.join(d, "set", e["path"]))
            recorded = recorded and e.get("inode") == st_.st_ino and e.get("ctime_ns") == st_.st_ctime_ns
    c = st("combine", prefix)
    check(recorded and c.returncode == 0 and READ_NOTE not in c.stderr,
          "every task manifest records its shards' inodes and change times as they are after the commit; combine "
          "proves the shards by them, reads none and says nothing of it (%s)" % c.stderr.strip()[-200:])
    os.unlink(prefix + ".manifest.json")

    shard = prefix + "-00003-of-00008.tfrecord"
    with open(shard, "rb") as f:
        original = f.read()
    flip_in_place(shard, len(original) // 2)
    c = st("combine", prefix)
    check(c.returncode == 1 and shard in c.stderr and "crc32c" in c.stderr and "task 1 of 4" in c.stderr
          and not os.path.exists(prefix + ".manifest.json"),
          "a shard edited in place, its size and modification time kept, is refused naming it, what differs "
          "and the task (%s)" % c.stderr.strip()[-300:])

    # Another file of the same size (the original with one byte changed)
    # moved over the shard, its modification time the original's.
    other = os.path.join(d, "set", "other.bin")
    with open(other, "wb") as f:
        f.write(original[:-1] + bytes([original[-1] ^ 1]))
    os.utime(other, ns=(os.stat(shard).st_atime_ns, os.stat(shard).st_mtime_ns))
    os.replace(other, shard)
    c = st("combine", prefix)
    check(c.returncode == 1 and shard in c.stderr and "inode changed" in c.stderr
          and not os.path.exists(prefix + ".manifest.json"),
          "a shard replaced by another file of its size is refused naming it (%s)" % c.stderr.strip()[-300:])

    # The original bytes back (a new file: its inode and change time are
    # not the recorded ones): read, proved, accepted.
    with open(shard, "wb") as f:
        f.write(original)
    c = st("combine", prefix)
    check(c.returncode == 0 and "1 shard read to prove its bytes" in c.stderr,
          "the same bytes written back are read and accepted, and the note says so (%s)" % c.stderr.strip()[-200:])
    os.unlink(prefix + ".manifest.json")

    # The whole set copied elsewhere (cp -a keeps sizes and times, not
    # inodes or change times): every shard read, the set accepted and
    # whole.
    copy = os.path.join(d, "copy")
    subprocess.run(["cp", "-a", os.path.join(d, "set"), copy], check=True)
    cprefix = os.path.join(copy, "t")
    c = st("combine", cprefix)
    v = st("verify", "--manifest", cprefix + ".manifest.json") if c.returncode == 0 else None
    got = combined_records(cprefix) if c.returncode == 0 else None
    check(c.returncode == 0 and "8 shards read to prove their bytes" in c.stderr and v.returncode == 0
          and got == want,
          "a set copied with cp -a is combined by reading its 8 shards; verify --manifest passes and an "
          "independent reader finds every input record once (%s%s)"
          % (c.stderr.strip()[-200:], v.stderr.strip()[-200:] if v else ""))
    os.unlink(cprefix + ".manifest.json")
    flip_in_place(cprefix + "-00006-of-00008.tfrecord", 100)
    c = st("combine", cprefix)
    check(c.returncode == 1 and cprefix + "-00006-of-00008.tfrecord" in c.stderr and "crc32c" in c.stderr
          and "task 3 of 4" in c.stderr and not os.path.exists(cprefix + ".manifest.json"),
          "the copy with one shard edited is refused naming it (%s)" % c.stderr.strip()[-300:])

    # Task manifests of an older version (no inode, no change time):
    # every shard read; accepted when intact, refused when one is edited.
    for t in range(4):
        mpath = "%s-task%05d-of-%05d.manifest.json" % (prefix, t, 4)
        m = task_manifest(prefix, t)
        for e in m["shards"]:
            e.pop("inode", None)
            e.pop("ctime_ns", None)
        with open(mpath, "w") as f:
            json.dump(m, f, indent=2)
    c = st("combine", prefix)
    got = combined_records(prefix) if c.returncode == 0 else None
    check(c.returncode == 0 and "8 shards read to prove their bytes" in c.stderr and got == want,
          "task manifests without the fields: every shard read, the set accepted and whole (%s)"
          % c.stderr.strip()[-200:])
    os.unlink(prefix + ".manifest.json")
    flip_in_place(prefix + "-00000-of-00008.tfrecord", 40)
    c = st("combine", prefix)
    check(c.returncode == 1 and prefix + "-00000-of-00008.tfrecord" in c.stderr and "older version" in c.stderr
          and not os.path.exists(prefix + ".manifest.json"),
          "task manifests without the fields and an edited shard: refused naming it (%s)" % c.stderr.strip()[-300:])


def tfds_combine_proves_shard_bytes(d):
    """The tasks of a TFDS split record their shards' witnesses as other
    tasks do: combine reads none of the intact split, and refuses one shard
    edited in place (size and modification time kept) without writing the
    split's manifest or the dataset's files."""
    paths = write_inputs(d, files=2, rows=1500)
    version = os.path.join(d, "tfds", "ds", "1.0.0")
    prefix = os.path.join(version, "ds-train")
    for t in range(2):
        r = st("convert", *paths, "--tfds", os.path.join(d, "tfds"), "--name", "ds", "--split", "train",
               "--shards", "2", "--task", "%d/2" % t, "-q")
        assert r.returncode == 0, r.stderr
    c = st("combine", prefix)
    check(c.returncode == 0 and READ_NOTE not in c.stderr and os.path.exists(os.path.join(version, "features.json")),
          "TFDS split of 2 tasks: combine proves its shards by lstat, reads none (%s)" % c.stderr.strip()[-200:])
    for n in ("ds-train.manifest.json", "features.json", "dataset_info.json"):
        os.unlink(os.path.join(version, n))
    shard = os.path.join(version, "ds-train.tfrecord-00002-of-00004")
    flip_in_place(shard, 30)
    c = st("combine", prefix)
    check(c.returncode == 1 and shard in c.stderr and "task 1 of 2" in c.stderr and "crc32c" in c.stderr
          and not any(os.path.exists(os.path.join(version, n))
                      for n in ("ds-train.manifest.json", "features.json", "dataset_info.json")),
          "TFDS split, a shard edited in place: refused naming it, nothing written (%s)" % c.stderr.strip()[-300:])


def resume_keeps_witnesses(d):
    """A task rerun with --resume that keeps some shards and writes the
    missing one records every shard's inode and change time as they are
    after its commit: combine then reads none."""
    paths = write_inputs(d, files=4, rows=1500)
    want = input_records(paths)
    prefix = os.path.join(d, "res", "t")
    r = run_tasks(paths, prefix, tasks=2, shards=2)
    assert all(x.returncode == 0 for x in r.values()), r
    os.unlink(prefix + "-00001-of-00004.tfrecord")
    r = run_tasks(paths, prefix, tasks=2, shards=2, only=[0])[0]
    recorded = True
    for e in task_manifest(prefix, 0, tasks=2)["shards"]:
        st_ = os.lstat(os.path.join(d, "res", e["path"]))
        recorded = recorded and e.get("inode") == st_.st_ino and e.get("ctime_ns") == st_.st_ctime_ns
    c = st("combine", prefix)
    got = combined_records(prefix) if c.returncode == 0 else None
    check(r.returncode == 0 and recorded and c.returncode == 0 and READ_NOTE not in c.stderr and got == want,
          "--resume of a task that keeps a shard records its shards' witnesses; combine reads none and the set is "
          "whole (%s)" % (r.stderr + c.stderr).strip()[-200:])


def resume_finished_adds_witnesses(d):
    """--resume of a task that had finished (nothing to convert) reads its
    shards whole to prove them; where its manifest records no inode and
    change time for them (an older version, a failed rewrite), it adds
    them, so that combine reads none.  Before, the manifest was left
    without them and combine read both shards of that task."""
    paths = write_inputs(d, files=4, rows=1500)
    want = input_records(paths)
    prefix = os.path.join(d, "fin", "t")
    r = run_tasks(paths, prefix, tasks=2, shards=2)
    assert all(x.returncode == 0 for x in r.values()), r
    mpath = "%s-task%05d-of-%05d.manifest.json" % (prefix, 0, 2)
    with open(mpath) as f:
        m = json.load(f)
    for e in m["shards"]:
        e.pop("inode"), e.pop("ctime_ns")
    with open(mpath, "w") as f:
        json.dump(m, f, indent=2)
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "--task", "0/2", "--resume")
    recorded = True
    for e in task_manifest(prefix, 0, tasks=2)["shards"]:
        st_ = os.lstat(os.path.join(d, "fin", e["path"]))
        recorded = recorded and e.get("inode") == st_.st_ino and e.get("ctime_ns") == st_.st_ctime_ns
    c = st("combine", prefix)
    got = combined_records(prefix) if c.returncode == 0 else None
    check(r.returncode == 0 and "finished before" in r.stderr and recorded and c.returncode == 0
          and READ_NOTE not in c.stderr and got == want,
          "--resume of a finished task whose manifest lacks its shards' inodes and change times adds them; "
          "combine reads none and the set is whole (%s)" % (r.stderr + c.stderr).strip()[-300:])
    # Run again: nothing to add, the manifest file is left untouched.
    before = os.stat(mpath)
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "--task", "0/2", "--resume", "-q")
    after = os.stat(mpath)
    check(r.returncode == 0 and (before.st_ino, before.st_ctime_ns) == (after.st_ino, after.st_ctime_ns),
          "a finished task's manifest that has every witness is not written again (%s)" % r.stderr.strip()[-200:])


def task_resume_changed_input(d):
    """A task rerun with --resume after an input was appended to (its
    modification time put back with touch -r) is refused naming the input,
    as a plain run's --resume is: the input's size changes the deal of the
    inputs, so the task's options differed too, and before, the task
    converted anew and exited 0, its shards holding the new records beside
    the other tasks' old ones (only combine noticed).  The set stays the
    one the tasks wrote, and combine makes it whole."""
    paths = write_inputs(d, files=2, rows=1500)
    want = input_records(paths)
    prefix = os.path.join(d, "changed", "t")
    r = run_tasks(paths, prefix, tasks=2, shards=2)
    assert all(x.returncode == 0 for x in r.values()), r
    before = os.stat(paths[1])
    kept = {p: os.stat(p).st_ino for p in glob.glob(prefix + "-0*")}
    with open(paths[1], "a") as f:
        f.write(ROW.format(99999999, "late"))
    os.utime(paths[1], ns=(before.st_atime_ns, before.st_mtime_ns))
    r = run_tasks(paths, prefix, tasks=2, shards=2, only=[1])[1]
    check(r.returncode == 1 and paths[1] in r.stderr and "changed" in r.stderr and "--force" in r.stderr
          and {p: os.stat(p).st_ino for p in glob.glob(prefix + "-0*")} == kept,
          "a task's --resume after an input was appended to (mtime restored) is refused naming it; no shard "
          "touched (%s)" % r.stderr.strip()[-300:])
    c = st("combine", prefix)
    got = combined_records(prefix) if c.returncode == 0 else None
    check(c.returncode == 0 and got == want,
          "combine then makes the set the tasks wrote, every record once (%s)" % c.stderr.strip()[-200:])


def tasks_over_plain_run(d):
    """Tasks run with --resume over a plain run's set on the same prefix
    replace it, its PREFIX.manifest.json included: before, that manifest
    stayed behind listing the plain run's shards, which were gone (exit 0),
    and combine refused to replace it without --force."""
    paths = write_inputs(d, files=4, rows=1500)
    want = sorted(range(4 * 1500))
    prefix = os.path.join(d, "plain-then-tasks", "t")
    r = st("convert", *paths, "-o", prefix, "--shards", "5", "-q")
    assert r.returncode == 0, r.stderr
    r = run_tasks(paths, prefix, tasks=2, shards=2, only=[0])[0]
    listed = []
    if os.path.exists(prefix + ".manifest.json"):
        with open(prefix + ".manifest.json") as f:
            listed = [x["path"] for x in json.load(f)["shards"]]
    missing = [p for p in listed if not os.path.exists(os.path.join(d, "plain-then-tasks", p))]
    check(r.returncode == 0 and not missing,
          "task 0 over a plain run's set: no manifest is left listing shards that are gone (%s; %s)"
          % (missing, r.stderr.strip()[-200:]))
    rerun_task_and_combine(paths, prefix, 2, 2, 1, want,
                           "then task 1 and combine (no --force): every record once")


def resume_standard_input(d):
    """--resume of a run that read standard input, given another stream:
    standard input is recorded by its name only, and before, the run
    counted as finished and exited 0 with the shards of the first stream."""
    paths = write_inputs(d, files=2, rows=1500)
    prefix = os.path.join(d, "stdin", "t")
    for k, path in enumerate(paths):
        with open(path) as f:
            r = subprocess.run([ST, "convert", "-", "--from", "csv", "-o", prefix, "--shards", "2", "-q"]
                               + (["--resume"] if k else []), stdin=f, capture_output=True, text=True)
        shards = [os.path.join(d, "stdin", n) for n in sorted(os.listdir(os.path.join(d, "stdin")))
                  if n.endswith(".tfrecord")]
        ids = ids_of(shards)
        check(r.returncode == 0 and ids is not None and sorted(ids) == list(range(k * 1500, (k + 1) * 1500)),
              "standard input, stream %d%s: the shards hold its records (%s)"
              % (k, " with --resume" if k else "", r.stderr.strip()[-200:]))


def tasks_over_other_task_count(d):
    """A run of --task I/4 --shards 2 over one of --task I/2 --shards 4 (the
    same 8 shard numbers), with --force or --resume: before, every task was
    refused (exit 2) as if all named one --manifest, even with --force, with
    no way out but removing files by hand.  The new run replaces the old."""
    paths = write_inputs(d, files=4, rows=1500)
    want = sorted(range(4 * 1500))
    for mode in ("--force", "--resume"):
        prefix = os.path.join(d, "recount" + mode, "t")
        r = run_tasks(paths, prefix, tasks=2, shards=4)
        assert all(x.returncode == 0 for x in r.values()), r
        rs = [st("convert", *paths, "-o", prefix, "--shards", "2", "--task", "%d/4" % t, mode, "-q")
              for t in range(4)]
        c = st("combine", prefix)
        ids = combined_ids(prefix) if c.returncode == 0 else None
        left = [n for n in os.listdir(os.path.dirname(prefix)) if "-of-00002." in n]
        check(all(x.returncode == 0 for x in rs) and c.returncode == 0 and ids is not None and sorted(ids) == want
              and not left,
              "%s: 4 tasks over a run of 2 tasks with the same shard numbers replace it; combine has every record "
              "once (%s; left %s)" % (mode, [(x.returncode, x.stderr.strip()[-120:]) for x in rs if x.returncode]
                                      or c.stderr.strip()[-150:], left))


def plain_run(d, name, paths):
    prefix = os.path.join(d, name, "t")
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "-q")
    assert r.returncode == 0, r.stderr
    return prefix


def shard_files(prefix):
    d = os.path.dirname(prefix)
    return sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".tfrecord"))


def shard_stamps(prefix):
    return {p: (os.stat(p).st_ino, os.stat(p).st_mtime_ns) for p in shard_files(prefix)}


def ids_of_inputs(paths):
    """Every id in the inputs as they are now, read by Python's csv."""
    ids = []
    for p in paths:
        with open(p, newline="") as f:
            ids += [int(row["id"]) for row in csv.DictReader(f)]
    return ids


def same_size_other_ids(path, first_id):
    """The file's rows with other ids of the same width (same size)."""
    with open(path) as f:
        head, *rows = f.read().splitlines(True)
    return head + "".join(ROW.format(first_id + k, "n%07d" % (first_id + k)) for k in range(len(rows)))


def resume_input_witnesses(d):
    """--resume of a finished run whose input was edited in place keeping
    its size, its modification time restored (touch -r), or replaced by
    another file of the same size and time (mv over it): before, the size
    and time matched and the run exited 0 keeping the shards of the old
    bytes.  The inode and change time, which touch -r cannot set, tell."""
    paths = write_inputs(d, files=2, rows=1500)
    # Edited in place, size kept, modification time restored.
    prefix = plain_run(d, "inplace", paths)
    before = shard_stamps(prefix)
    times = os.stat(paths[1])
    with open(paths[1], "r+") as f:
        f.write(same_size_other_ids(paths[1], 50000))
    os.utime(paths[1], ns=(times.st_atime_ns, times.st_mtime_ns))
    check(os.stat(paths[1]).st_size == times.st_size and os.stat(paths[1]).st_mtime_ns == times.st_mtime_ns
          and os.stat(paths[1]).st_ino == times.st_ino, "the edit keeps the input's size, time and inode")
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "--resume", "-q")
    check(r.returncode == 1 and os.path.basename(paths[1]) + " changed (ctime changed" in r.stderr
          and "--force" in r.stderr and shard_stamps(prefix) == before,
          "--resume refuses an input edited in place with its size and time kept, saying how it changed, "
          "leaving the shards (exit %d: %s)" % (r.returncode, r.stderr.strip()[-300:]))
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "--force", "-q")
    ids = ids_of(shard_files(prefix))
    check(r.returncode == 0 and ids is not None and sorted(ids) == sorted(ids_of_inputs(paths))
          and 50000 in ids, "then --force: the shards hold the edited input's records (%s)" % r.stderr.strip()[-200:])

    # Replaced by another file of the same size and time (write, touch -r, mv).
    paths = write_inputs(d, files=2, rows=1500)
    prefix = plain_run(d, "replaced", paths)
    before = shard_stamps(prefix)
    other = paths[0] + ".new"
    with open(other, "w") as f:
        f.write(same_size_other_ids(paths[0], 70000))
    subprocess.run(["touch", "-r", paths[0], other], check=True)
    os.rename(other, paths[0])
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "--resume", "-q")
    check(r.returncode == 1 and os.path.basename(paths[0]) + " changed (inode changed" in r.stderr
          and shard_stamps(prefix) == before,
          "--resume refuses an input replaced by a file of the same size and time, naming it "
          "(exit %d: %s)" % (r.returncode, r.stderr.strip()[-300:]))

    # A chmod changes no byte but sets the change time: refused too.
    prefix = plain_run(d, "chmod", paths)
    os.chmod(paths[1], 0o600)
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "--resume", "-q")
    check(r.returncode == 1 and os.path.basename(paths[1]) + " changed (ctime changed" in r.stderr,
          "--resume refuses an input whose mode changed since (exit %d: %s)" % (r.returncode, r.stderr.strip()[-200:]))

    # Untouched (read again, even opened for reading): everything kept, nothing rewritten.
    prefix = plain_run(d, "untouched", paths)
    before = shard_stamps(prefix)
    ids_of_inputs(paths)
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "--resume")
    check(r.returncode == 0 and "finished before" in r.stderr and shard_stamps(prefix) == before,
          "--resume of a finished run over untouched inputs keeps every shard as it is (%s)" % r.stderr.strip()[-200:])

    # A manifest written before inodes and change times were recorded:
    # its inputs are unproved, so the run converts again, saying why.
    with open(prefix + ".manifest.json") as f:
        m = json.load(f)
    for entry in m["options"]["input_files"]:
        check("inode" in entry and "ctime_ns" in entry and entry["inode"] == os.stat(entry["path"]).st_ino,
              "the manifest records %s's inode and change time" % os.path.basename(entry["path"]))
        entry.pop("inode", None), entry.pop("ctime_ns", None)
    with open(prefix + ".manifest.json", "w") as f:
        json.dump(m, f)
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "--resume")
    ids = ids_of(shard_files(prefix))
    check(r.returncode == 0 and "converting again" in r.stderr and "no inode and change time" in r.stderr
          and ids is not None and sorted(ids) == sorted(ids_of_inputs(paths)),
          "--resume over a manifest without inodes and change times converts again, saying why (%s)"
          % r.stderr.strip()[-300:])
    r = st("convert", *paths, "-o", prefix, "--shards", "2", "--resume")
    check(r.returncode == 0 and "finished before" in r.stderr,
          "the manifest it writes proves the inputs: --resume then keeps the run (%s)" % r.stderr.strip()[-200:])

    # combine compares no inode or change time: the tasks' nodes see
    # others (node-local copies), and older task manifests have none.
    prefix = os.path.join(d, "tasks", "t")
    runs = run_tasks(paths, prefix, tasks=2, shards=2)
    assert all(x.returncode == 0 for x in runs.values()), runs
    for t, change in ((0, lambda e: e.update(inode=e["inode"] + 1, ctime_ns=e["ctime_ns"] + 7)),
                      (1, lambda e: (e.pop("inode"), e.pop("ctime_ns")))):
        mpath = "%s-task%05d-of-%05d.manifest.json" % (prefix, t, 2)
        with open(mpath) as f:
            m = json.load(f)
        for entry in m["options"]["input_files"]:
            change(entry)
        with open(mpath, "w") as f:
            json.dump(m, f)
    c = st("combine", prefix)
    ids = combined_ids(prefix) if c.returncode == 0 else None
    check(c.returncode == 0 and ids is not None and sorted(ids) == sorted(ids_of_inputs(paths)),
          "combine joins tasks whose manifests list other inodes and change times, or none (%s)"
          % c.stderr.strip()[-200:])


def main():
    global ST
    ST = os.path.abspath(sys.argv[1])
    for case in (item1_kept_shard_records_moved, item2_inputs_order_and_identity, item2_file_dealing_extra_input,
                 resume_kills_every_format, task_rerun_other_shards,
                 resume_edited_manifest, combine_missing_shard, tasks_over_plain_run, resume_standard_input,
                 tasks_over_other_task_count, resume_input_witnesses, combine_proves_shard_bytes,
                 tfds_combine_proves_shard_bytes, resume_keeps_witnesses, resume_finished_adds_witnesses,
                 task_resume_changed_input):
        with tempfile.TemporaryDirectory() as d:
            print("# " + case.__name__)
            case(d)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
