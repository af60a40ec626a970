#!/usr/bin/env python3
"""convert and split as a user runs them: determinism, safety and tasks.

  - the same input gives byte-identical shards and manifest with --jobs 1 and 2;
  - --compression gzip / zlib (blocks compressed in parallel) gives the same
    bytes with any --jobs, one gzip member / zlib stream that Python's zlib
    and gzip -t read, holding exactly the uncompressed shard's bytes;
  - a run killed with SIGKILL mid-way leaves no file under a final shard name;
  - SIGINT stops a run cleanly: "interrupted", nothing left behind, then
    death by SIGINT (status 130) so a shell loop stops too;
  - a file-size limit (as a full disk) fails cleanly, naming the path;
  - N tasks (--task I/N, run by GNU parallel) yield exactly the records of one run;
  - CSV -> TFRecord -> CSV gives back the same table;
  - --shuffle is a deterministic permutation;
  - CSV types guessed from the first rows give the whole-input pass's
    types, bytes and errors, also where a later row proves the guess wrong;
  - split re-shards and merges, counts and CRCs intact;
  - --progress to a log is plain lines ending at 100% (with --shuffle the
    writing phase has its own); on a terminal (a pty) the line fits its
    width, and "interrupted" starts on a line of its own.
Prints "N passed, M failed".
"""
import csv
import fcntl
import glob
import json
import pty
import random
import select
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import tty

ST = SOURCE = None
results = {"passed": 0, "failed": 0}


def check(cond, what):
    if cond:
        results["passed"] += 1
        print("ok   " + what)
    else:
        results["failed"] += 1
        print("FAIL " + what)


def st(*args, **kw):
    return subprocess.run([ST] + list(args), capture_output=True, text=True, **kw)


def read_all(paths):
    out = {}
    for p in paths:
        with open(p, "rb") as f:
            out[os.path.basename(p)] = f.read()
    return out


def records_json(paths):
    r = st("cat", *paths)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def make_big_csv(path, rows):
    gen = os.path.join(SOURCE, "bench", "gen_table.py")
    subprocess.run([sys.executable, gen, path, str(rows)], check=True)


def final_names(directory):
    return [n for n in os.listdir(directory) if re.search(r"-\d{5}-of-\d{5}", n) and not n.startswith(".")]


def test_jobs_identical(tmp, taxi):
    outs = []
    for jobs in ("1", "2"):
        d = os.path.join(tmp, "jobs" + jobs)
        r = st("convert", taxi, "-o", os.path.join(d, "train"), "--shards", "3", "--jobs", jobs, "--index")
        check(r.returncode == 0, f"convert --jobs {jobs} succeeds ({r.stderr.strip()[-200:]})")
        outs.append(read_all(sorted(glob.glob(os.path.join(d, "*")))))
    check(outs[0].keys() == outs[1].keys() and len(outs[0]) == 7,
          "--jobs 1 and --jobs 2 write the same files (3 shards, 3 indexes, manifest)")
    check(outs[0] == outs[1], "--jobs 1 and --jobs 2 outputs are byte-identical")


def test_dealt_groups(tmp, big):
    """--shards writes a unit's records shard by shard (each worker lays
    them out by shard), and the shuffle's drain in runs of records per
    shard; --index writes them one by one: same shards."""
    small = os.path.join(tmp, "groups-small.csv")
    with open(small, "w") as f:
        f.write("a,b\n1,x\n2,y\n9,bad,row\n3,z\n")
    mixed = os.path.join(tmp, "groups-mixed.csv")
    with open(mixed, "w") as f:
        f.write("a,b\n")
        for i in range(20000):  # enough for the drain's threads
            size = 300000 + i if i % 2000 == 7 else 200000 if i % 2000 == 8 else i % 50
            f.write("%d,%s\n" % (i, "v" * size))
    cases = [
        ("big, 7 shards", [big], ["--shards", "7"]),
        ("two inputs, bad rows skipped, 3 shards", [big, small], ["--shards", "3", "--skip-bad-rows", "--union-by-name"]),
        ("fewer records than shards", [small], ["--shards", "8", "--skip-bad-rows"]),
        # the shuffle's drain writes runs of records per shard on its threads
        ("shuffled, 5 shards", [big], ["--shards", "5", "--shuffle", "--seed", "3"]),
        # records larger than a run (256 KiB) go out on their own, after
        # the run they interrupt
        ("shuffled, some records larger than a run", [mixed], ["--shards", "5", "--shuffle", "--seed", "4"]),
    ]
    for what, inputs, extra in cases:
        shards = []
        for mode in ("grouped", "index"):
            d = os.path.join(tmp, "groups-" + mode)
            shutil.rmtree(d, ignore_errors=True)
            more = ["--index"] if mode == "index" else []
            r = st("convert", *inputs, "-o", os.path.join(d, "x"), "--jobs", "3", *extra, *more)
            check(r.returncode == 0, f"{what}: convert ({mode}) succeeds ({r.stderr.strip()[-200:]})")
            shards.append(read_all(sorted(glob.glob(os.path.join(d, "*.tfrecord")))))
        check(shards[0] and shards[0] == shards[1],
              f"{what}: shards written by groups are those written record by record")


def test_compressed_shards(tmp, big):
    import zlib
    small = os.path.join(tmp, "compress.csv")
    with open(big) as f, open(small, "w") as g:
        for i, line in enumerate(f):
            if i > 60000:
                break
            g.write(line)
    plain_dir = os.path.join(tmp, "plain")
    r = st("convert", small, "-o", os.path.join(plain_dir, "t"), "--shards", "3", "--quiet")
    check(r.returncode == 0, f"plain convert succeeds ({r.stderr.strip()[-200:]})")
    plain = [open(p, "rb").read() for p in sorted(glob.glob(os.path.join(plain_dir, "t-*")))]
    for kind, wbits, ext in (("gzip", 31, "gz"), ("zlib", 15, "zz")):
        outs = []
        for jobs in ("1", "2", "3"):
            d = os.path.join(tmp, f"{kind}{jobs}")
            r = st("convert", small, "-o", os.path.join(d, "t"), "--shards", "3", "--jobs", jobs,
                   "--compression", kind, "--quiet")
            check(r.returncode == 0, f"convert --compression {kind} --jobs {jobs} succeeds ({r.stderr.strip()[-200:]})")
            outs.append(read_all(sorted(glob.glob(os.path.join(d, "*")))))
        check(outs[0] == outs[1] == outs[2] and len(outs[0]) == 4,
              f"--compression {kind}: --jobs 1, 2 and 3 write byte-identical shards and manifest")
        shards = sorted(glob.glob(os.path.join(tmp, f"{kind}1", "t-*." + ext)))
        same = len(shards) == 3
        for i, p in enumerate(shards):
            z = zlib.decompressobj(wbits)
            data = z.decompress(open(p, "rb").read())
            same = same and z.eof and z.unused_data == b"" and data == plain[i] and len(data) > 1 << 20
        check(same, f"--compression {kind}: each shard is one stream (Python's zlib) holding the plain shard's bytes")
        if kind == "gzip" and shutil.which("gzip"):
            r = subprocess.run(["gzip", "-t"] + shards, capture_output=True, text=True)
            check(r.returncode == 0, f"gzip -t accepts the shards ({r.stderr.strip()[-200:]})")
        r = st("verify", *shards)
        check(r.returncode == 0, f"verify reads the {kind} shards ({r.stderr.strip()[-200:]})")
    # --shard-size counts compressed bytes; where it cuts may not depend on
    # how far the compressing threads have got.
    outs = []
    for jobs in ("1", "2", "3", "2"):
        d = os.path.join(tmp, f"sized{len(outs)}")
        r = st("convert", small, "-o", os.path.join(d, "t"), "--shard-size", "700KiB", "--jobs", jobs,
               "--compression", "gzip", "--quiet")
        check(r.returncode == 0, f"convert --shard-size --compression gzip --jobs {jobs} succeeds ({r.stderr.strip()[-200:]})")
        outs.append(read_all(sorted(glob.glob(os.path.join(d, "*")))))
    sizes = [len(v) for k, v in outs[0].items() if k.endswith(".gz")]
    check(all(o == outs[0] for o in outs) and len(sizes) > 3 and max(sizes) <= 700 << 10,
          "--shard-size with gzip: the same shards (each within the size) with any --jobs, run after run")


def run_until_temp_files(args, directory, sig):
    proc = subprocess.Popen([ST] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if os.path.isdir(directory) and any(".tmp-" in n for n in os.listdir(directory)):
            break
        time.sleep(0.005)
    time.sleep(0.05)
    running = proc.poll() is None
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return running, proc.returncode, err


def test_kill_and_interrupt(tmp, big):
    d = os.path.join(tmp, "killed")
    running, rc, _ = run_until_temp_files(["convert", big, "-o", d + "/train", "--shards", "4", "--jobs", "1"],
                                          d, signal.SIGKILL)
    check(running, "SIGKILL arrived while the conversion was running")
    check(rc == -signal.SIGKILL and final_names(d) == [],
          f"after SIGKILL no file has a final shard name ({final_names(d)})")

    d = os.path.join(tmp, "interrupted")
    running, rc, err = run_until_temp_files(["convert", big, "-o", d + "/train", "--shards", "4", "--jobs", "1"],
                                            d, signal.SIGINT)
    check(running and rc == -signal.SIGINT and "interrupted" in err,
          f"SIGINT cleans up, says so, then dies by SIGINT (status 130) ({rc}, {err.strip()})")
    check(not os.path.exists(d), f"after SIGINT nothing is left, not even the directory it made "
                                 f"({os.listdir(d) if os.path.exists(d) else ''})")

    d = os.path.join(tmp, "interrupted-rotating")
    running, rc, err = run_until_temp_files(
        ["convert", big, "-o", d + "/train", "--records-per-shard", "20000", "--jobs", "1"], d, signal.SIGTERM)
    left = os.listdir(d) if os.path.exists(d) else None
    check(running and rc == -signal.SIGTERM and left is None,
          f"SIGTERM with rotating shards removes the finished .partial shards too ({left})")


def test_disk_full(tmp, big):
    d = os.path.join(tmp, "full")
    # ulimit -f counts 512-byte blocks (bash): 2 MB for a ~20 MB output.
    r = subprocess.run(["bash", "-c", f'ulimit -f 4000; exec "$0" convert "$1" -o "$2" --shards 2',
                        ST, big, d + "/train"], capture_output=True, text=True)
    check(r.returncode == 1 and "File too large" in r.stderr and d in r.stderr,
          f"a write that fails names the path and exits 1 ({r.returncode}: {r.stderr.strip()[-300:]})")
    # the run made d: a failed run removes it too (it is empty)
    left = os.listdir(d) if os.path.exists(d) else None
    check(left is None, f"a failed run leaves nothing behind, not even the directory it made ({left})")


def split_csv(taxi, directory, parts):
    os.makedirs(directory)
    with open(taxi, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    per = (len(body) + parts - 1) // parts
    paths = []
    for i in range(parts):
        p = os.path.join(directory, f"part-{i}.csv")
        with open(p, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(body[i * per:(i + 1) * per])
        paths.append(p)
    return paths


def test_tasks_with_parallel(tmp, taxi):
    if not shutil.which("parallel"):
        check(False, "GNU parallel is installed (needed for the distributed-run test)")
        return
    inputs = split_csv(taxi, os.path.join(tmp, "parts"), 7)
    out = os.path.join(tmp, "tasks")
    # Types come from each task's own inputs; force them so every task agrees.
    types = ["--type", "pickup_census_tract=float,dropoff_census_tract=float,trip_seconds=float"]
    r = subprocess.run(["parallel", "--halt", "now,fail=1", ST, "convert", os.path.join(tmp, "parts", "*.csv"),
                        "-o", out + "/train", "--shards", "2", "--quiet", "--task", "{}/4"] + types + [":::", "0", "1", "2", "3"],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"4 tasks under GNU parallel succeed ({r.stderr.strip()[-300:]})")
    shards = sorted(glob.glob(out + "/train-*.tfrecord"))
    check(shards == [f"{out}/train-{i:05d}-of-00008.tfrecord" for i in range(8)],
          f"4 tasks x 2 shards under the final names of one set of 8 ({shards})")
    r = st("combine", out + "/train")
    check(r.returncode == 0, f"combine joins the 4 task manifests ({r.stderr.strip()[-300:]})")
    r = st("verify", "--decode", "--manifest", out + "/train.manifest.json", "--max-imbalance", "1")
    balance = re.search(r"imbalance ([0-9.]+)", r.stdout)
    check(r.returncode == 0 and "8 intact" in r.stdout and balance and float(balance.group(1)) < 0.05,
          f"the combined manifest verifies every shard, and the balance: 7 files dealt by bytes to 4 tasks "
          f"give even shards ({r.stdout.strip()[-300:]})")
    r = st("verify", "--manifest", out + "/train.manifest.json", "--max-imbalance", "0.0001")
    check(r.returncode == 1 and "uneven shards" in r.stdout, f"--max-imbalance fails a set less even than asked ({r.stdout.strip()[-200:]})")
    single = os.path.join(tmp, "single")
    r = st("convert", *inputs, "-o", single + "/train", "--shards", "2", "--quiet", *types)
    check(r.returncode == 0, "the single run succeeds")
    ours = sorted(records_json(shards))
    one = sorted(records_json(sorted(glob.glob(single + "/train-*.tfrecord"))))
    check(len(ours) == 10000 and ours == one, "the tasks together hold exactly the records of one run")
    merged = os.path.join(tmp, "merged")
    r = st("split", *shards, "-o", merged + "/train", "--shards", "3", "--quiet")
    check(r.returncode == 0 and sorted(records_json(sorted(glob.glob(merged + "/train-*.tfrecord")))) == one,
          "split merges the tasks' shards into one set with the same records")
    r = st("verify", "--manifest", merged + "/train.manifest.json")
    check(r.returncode == 0 and "3 intact" in r.stdout, "the merged set verifies against its manifest")


def rows_csv(path, start, rows):
    """A CSV of `rows` distinct records (ids from `start`) of 31 bytes each,
    so that shares of bytes are shares of records."""
    with open(path, "w") as f:
        f.write("id,value,word\n")
        for i in range(start, start + rows):
            f.write("%08d,%012.2f,w%07d\n" % (i, i * 0.25, i % 99991))


def run_tasks(inputs, out, tasks, extra=()):
    """Runs the tasks one after another; returns each task's records (from
    its task manifest) and all shards' records as sorted JSON lines."""
    per_task = []
    for i in range(tasks):
        r = st("convert", *inputs, "-o", out + "/t", "--shards", "2", "--quiet", "--task", f"{i}/{tasks}", *extra)
        if r.returncode != 0:
            check(False, f"task {i}/{tasks} succeeds ({r.stderr.strip()[-300:]})")
            return None, None
        with open(f"{out}/t-task{i:05d}-of-{tasks:05d}.manifest.json") as f:
            m = json.load(f)
        per_task.append((sum(e["records"] for e in m["shards"]), m["options"]["task_share"]))
    shards = sorted(glob.glob(out + "/t-*-of-*.*"))
    shards = [p for p in shards if not p.endswith(".json")]
    return per_task, sorted(records_json(shards))


def single_run(inputs, out, extra=()):
    r = st("convert", *inputs, "-o", out + "/t", "--shards", "2", "--quiet", *extra)
    assert r.returncode == 0, r.stderr
    return sorted(records_json(sorted(glob.glob(out + "/t-*.tfrecord"))))


def test_tasks_by_bytes(tmp):
    """Inputs of very different sizes are dealt by bytes: every task's share
    is within a few percent of the mean, and the tasks together hold each
    record of a single run exactly once."""
    d = os.path.join(tmp, "bytes")
    os.makedirs(d)
    # One large CSV and five small ones: dealt by files, one task would
    # take nearly everything.
    inputs = []
    start = 0
    for name, rows in (("a", 400), ("b", 150000), ("c", 90), ("d", 2000), ("e", 30), ("f", 700)):
        p = os.path.join(d, name + ".csv")
        rows_csv(p, start, rows)
        start += rows
        inputs.append(p)
    per_task, ours = run_tasks(inputs, os.path.join(d, "tasks"), 4)
    if per_task is None:
        return
    counts = [n for n, _ in per_task]
    mean = sum(counts) / len(counts)
    print(f"     CSV 1 large + 5 small, 4 tasks: records per task {counts}, "
          f"worst {max(abs(c - mean) / mean for c in counts):.4f} from the mean")
    check(all(share["dealing"] == "bytes" for _, share in per_task) and
          all(abs(c - mean) <= 0.03 * mean for c in counts),
          f"every task's share of 1 large + 5 small CSV inputs is within 3% of the mean ({counts})")
    ranges = [(share["range_begin"], share["range_end"]) for _, share in per_task]
    total = sum(os.path.getsize(p) for p in inputs)
    check(ranges[0][0] == 0 and ranges[-1][1] == total and
          all(ranges[i][1] == ranges[i + 1][0] for i in range(3)),
          f"the tasks' byte ranges cover the {total} input bytes without gap or overlap ({ranges})")
    one = single_run(inputs, os.path.join(d, "single"))
    check(len(ours) == start and ours == one,
          f"the tasks together hold each record of a single run exactly once ({len(ours)} of {len(one)})")
    r = st("combine", os.path.join(d, "tasks", "t"))
    check(r.returncode == 0, f"combine accepts tasks that dealt by bytes ({r.stderr.strip()[-300:]})")

    # A unit starting exactly at a range boundary: two headerless files of
    # the same size, two tasks; task 1's range starts at b.csv's first byte.
    e = os.path.join(tmp, "edge")
    os.makedirs(e)
    with open(os.path.join(e, "a.csv"), "w") as f:
        f.write("".join("%d,x\n" % i for i in range(100, 600)))
    with open(os.path.join(e, "b.csv"), "w") as f:
        f.write("".join("%d,y\n" % i for i in range(100, 600)))
    edge = [os.path.join(e, "a.csv"), os.path.join(e, "b.csv")]
    per_task, ours = run_tasks(edge, os.path.join(e, "tasks"), 2, ["--no-header"])
    if per_task is not None:
        check(per_task[1][1]["range_begin"] == os.path.getsize(edge[0]) and [n for n, _ in per_task] == [500, 500]
              and ours == single_run(edge, os.path.join(e, "single"), ["--no-header"]),
              f"a unit starting exactly at a range boundary is the later task's, once ({per_task})")

    # Parquet: row groups carry file offsets (files of 1, 3 and 8 row groups).
    sys.path.insert(0, os.path.join(SOURCE, "tests", "remote"))
    from test_cli_remote import repeat_row_groups
    with open(os.path.join(SOURCE, "tests", "data", "parquet", "tfx", "chicago_taxi_data.parquet"), "rb") as f:
        taxi = f.read()
    pq = os.path.join(tmp, "pq")
    os.makedirs(pq)
    pq_inputs = []
    for name, copies in (("a", 1), ("b", 8), ("c", 3)):
        p = os.path.join(pq, name + ".parquet")
        with open(p, "wb") as f:
            f.write(taxi if copies == 1 else repeat_row_groups(taxi, copies))
        pq_inputs.append(p)
    per_task, ours = run_tasks(pq_inputs, os.path.join(pq, "tasks"), 4)
    if per_task is not None:
        counts = [n for n, _ in per_task]
        one = single_run(pq_inputs, os.path.join(pq, "single"))
        print(f"     Parquet 1 + 8 + 3 row groups, 4 tasks: records per task {counts}")
        # 12 row groups of 10000 records, the unit of dealing: each task
        # within one row group of the mean (3).
        check(all(abs(c - 30000) <= 10000 for c in counts) and sum(counts) == 120000 and ours == one,
              f"Parquet row groups dealt by bytes: each task within one row group of the mean, "
              f"each record once ({counts})")

    # Avro: blocks carry file offsets (a large file and two small ones).
    av = os.path.join(tmp, "av")
    os.makedirs(av)
    av_inputs = []
    start = 0
    for name, rows in (("a", 3000), ("b", 400000), ("c", 500)):
        src = os.path.join(av, name + ".csv")
        rows_csv(src, start, rows)
        start += rows
        # Uncompressed blocks: bytes per record about even, so that shares
        # of bytes are shares of records.
        r = st("convert", src, "-o", os.path.join(av, name), "--to", "avro", "--avro-codec", "null",
               "--shards", "1", "--quiet")
        assert r.returncode == 0, r.stderr
        av_inputs.append(os.path.join(av, name + "-00000-of-00001.avro"))
    per_task, ours = run_tasks(av_inputs, os.path.join(av, "tasks"), 4)
    if per_task is not None:
        counts = [n for n, _ in per_task]
        mean = sum(counts) / len(counts)
        one = single_run(av_inputs, os.path.join(av, "single"))
        print(f"     Avro 1 large + 2 small, 4 tasks: records per task {counts}, "
              f"worst {max(abs(c - mean) / mean for c in counts):.4f} from the mean")
        # The unit here is one block (256 KiB as shardtool writes them,
        # about 16400 records, a sixth of a share): each share is within
        # one block of the mean.
        check(all(abs(c - mean) <= 16500 for c in counts) and len(ours) == start and ours == one,
              f"Avro blocks dealt by bytes: shares within one block of the mean, each record once ({counts})")


def parse_cell(text):
    if text == "":
        return None
    try:
        return ("n", struct.unpack("f", struct.pack("f", float(text)))[0])
    except ValueError:
        return ("s", text)


def test_round_trip(tmp, taxi):
    shards = os.path.join(tmp, "rt")
    r = st("convert", taxi, "-o", shards + "/train", "--shards", "2", "--quiet")
    check(r.returncode == 0, "CSV -> TFRecord")
    back = os.path.join(tmp, "rt-csv")
    r = st("convert", *sorted(glob.glob(shards + "/train-*.tfrecord")), "-o", back + "/table", "--to", "csv", "--quiet")
    check(r.returncode == 0, f"TFRecord -> CSV ({r.stderr.strip()[-300:]})")
    with open(taxi, newline="") as f:
        original = list(csv.DictReader(f))
    out_files = sorted(glob.glob(back + "/table-*.csv"))
    again = []
    for p in out_files:
        with open(p, newline="") as f:
            again.extend(csv.DictReader(f))
    def norm(rows):
        return sorted(tuple(sorted((k, parse_cell(v)) for k, v in row.items() if v != "")) for row in rows)
    check(len(again) == len(original) and norm(again) == norm(original),
          "CSV -> TFRecord -> CSV gives back the same table (numbers compared as float32)")


def test_shuffle(tmp, taxi):
    a = os.path.join(tmp, "shuf-a")
    b = os.path.join(tmp, "shuf-b")
    for d, seed in ((a, "7"), (b, "7")):
        r = st("convert", taxi, "-o", d + "/train", "--shuffle", "--seed", seed, "--quiet")
        check(r.returncode == 0, f"--shuffle --seed {seed}")
    ra = records_json(glob.glob(a + "/train-*.tfrecord"))
    rb = records_json(glob.glob(b + "/train-*.tfrecord"))
    plain = os.path.join(tmp, "plain")
    st("convert", taxi, "-o", plain + "/train", "--quiet")
    rp = records_json(glob.glob(plain + "/train-*.tfrecord"))
    check(ra == rb, "the same seed gives the same order")
    check(ra != rp and sorted(ra) == sorted(rp), "the shuffle is a permutation of the records")

    # Across several buckets (drained while the next one loads), the order
    # is exactly the documented one: record i to bucket splitmix64(seed ^
    # i*K1) mod B, then each bucket in turn, Fisher-Yates shuffled with the
    # state seed ^ K2*(b+1).
    mask = (1 << 64) - 1

    def splitmix64(state):
        state = (state + 0x9e3779b97f4a7c15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & mask
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & mask
        return state, z ^ (z >> 31)

    nb, seed = 5, 7
    buckets = [[] for _ in range(nb)]
    for i, rec in enumerate(rp):
        _, h = splitmix64(seed ^ ((i * 0xd1b54a32d192ed03) & mask))
        buckets[h % nb].append(rec)
    want = []
    for b, items in enumerate(buckets):
        state = seed ^ ((0x632be59bd9b4e019 * (b + 1)) & mask)
        for i in range(len(items), 1, -1):
            state, z = splitmix64(state)
            j = z % i
            items[i - 1], items[j] = items[j], items[i - 1]
        want += items
    c = os.path.join(tmp, "shuf-c")
    env = dict(os.environ, SHARDTOOL_TEST_SHUFFLE_BUCKETS=str(nb))
    r = st("convert", taxi, "-o", c + "/train", "--shuffle", "--seed", str(seed), "--quiet", env=env)
    rc_ = records_json(sorted(glob.glob(c + "/train-*.tfrecord")))
    check(r.returncode == 0 and len(rp) > 100 and rc_ == want,
          f"--shuffle over {nb} buckets gives exactly the documented order")


def test_guessed_types(tmp):
    """convert decodes a local CSV on the types of its first rows and does
    it again with the whole-input pass when a later row does not fit: the
    shards, the manifest and the errors are those of the whole-input pass
    (--infer-rows past the end of the file gives that pass's types)."""
    d = os.path.join(tmp, "guess")
    os.makedirs(d)
    rows = 30000  # a few units of text, the first 10000 rows the guess
    plain = [[str(i), str(i % 97), "%d.5" % i, "w%d" % (i % 7), ""] for i in range(rows)]
    variants = {
        "clean": {},
        "int-to-float": {rows - 3: (0, "12.25")},
        "int-to-text": {rows - 1: (1, "n/a")},
        "float-to-text": {20000: (2, "x")},
        "empty-gets-value": {rows - 2: (4, "7")},
        "empty-gets-text": {15000: (4, "late")},
        "ragged": {25000: (None, "1,2")},
        # Text after a closing quote: text to the inference, though it
        # unescapes to digits.
        "escaped-digits": {rows - 5: (1, '"12"3')},
        "quoted-number": {rows - 5: (1, '"12"')},
    }
    for name, changes in variants.items():
        path = os.path.join(d, name + ".csv")
        with open(path, "w") as f:
            f.write("a,b,c,d,e\n")
            for i, row in enumerate(plain):
                if i in changes and changes[i][0] is None:
                    f.write(changes[i][1] + "\n")
                    continue
                row = list(row)
                if i in changes:
                    row[changes[i][0]] = changes[i][1]
                f.write(",".join(row) + "\n")
        outs = []
        # --shuffle guesses too: its buckets go with a failed guess's shards
        for extra in ([], ["--infer-rows", "1000000"], ["--shuffle", "--seed", "5"],
                      ["--shuffle", "--seed", "5", "--infer-rows", "1000000"]):
            o = os.path.join(d, name + ("-shuffled" if "--shuffle" in extra else "") +
                             ("-whole" if "--infer-rows" in extra else "-guess"))
            r = st("convert", path, "-o", o + "/x", "--shards", "3", "--jobs", "2", "--quiet", *extra)
            files = read_all(sorted(glob.glob(o + "/*")))
            outs.append((r.returncode, r.stderr.replace(o, "OUT"), files))
        (rc, err, files), (rc2, err2, files2) = outs[:2]
        check(rc == rc2 and err == err2 and files == files2,
              "guessed CSV types, %s: same exit, messages and output as the whole-input pass" % name)
        check(outs[2] == outs[3] and outs[2][0] == rc,
              "guessed CSV types, %s, --shuffle: same exit, messages and output as the whole-input pass" % name)
        if name == "ragged":
            check(rc == 1 and "expected 5 fields, found 2" in err and not files,
                  "guessed CSV types, ragged row: the whole-input pass's error, no shard left")
    # A guess that fails after many units went into the shuffle's buckets:
    # the redo must start from empty buckets (no record twice).
    path = os.path.join(d, "late-break.csv")
    with open(path, "w") as f:
        f.write("a,b,c\n")
        for i in range(400000):
            f.write("%d,%s,w%d\n" % (i, "%d.5" % i if i == 390000 else str(i * 7), i % 13))
    outs = []
    for extra in ([], ["--infer-rows", "1000000"]):
        o = os.path.join(d, "late-break" + ("-whole" if extra else "-guess"))
        r = st("convert", path, "-o", o + "/x", "--shards", "3", "--jobs", "2", "--quiet", "--shuffle", *extra)
        outs.append((r.returncode, read_all(sorted(glob.glob(o + "/*")))))
    check(outs[0][0] == 0 and outs[0] == outs[1],
          "guessed CSV types, --shuffle, a guess failing 390000 rows in: the whole-input pass's shards")
    # Small random tables whose later rows break the first rows' types in
    # every way cells can: the records (sorted) and the errors are those of
    # the whole-input pass (--infer-rows past the end), shuffled or not.
    rng = random.Random(15)
    nice = ["1", "-2", "+3", "0", "42", ""]
    odd = ["1.5", "-.5", "1e3", "inf", "-nan", "x", '"12"3', '"7"', '""', '"a""b"', " 1", "1 ",
           "12345678901234567890", "-9223372036854775809", "1.2.3", "--1", ".", '"1.5"', '"x,y"',
           "1e400", "0x10", "\t5"]
    same = 0
    for k in range(40):
        ncol = rng.randint(1, 3)
        rows = [",".join("c%d" % i for i in range(ncol))]
        rows += [",".join(rng.choice(nice) for _ in range(ncol)) for _ in range(rng.randint(0, 4))]
        for _ in range(rng.randint(1, 6)):
            width = ncol if rng.random() > 0.1 else rng.randint(1, ncol + 1)
            rows.append(",".join(rng.choice(odd if rng.random() < 0.5 else nice) for _ in range(width)))
        path = os.path.join(d, "random-%d.csv" % k)
        with open(path, "w", newline="") as f:
            f.write("\r\n".join(rows) + "\r\n" if k % 5 == 0 else "\n".join(rows) + "\n")
        extra = [["--skip-bad-rows"], ["--empty", "empty"], ["--strict-float"], []][k % 4]
        seen = []
        for w, how in enumerate((["--infer-rows", "2"], ["--infer-rows", "1000000"], ["--infer-rows", "2", "--shuffle"])):
            o = os.path.join(d, "random-%d-%d" % (k, w))
            r = st("convert", path, "-o", o + "/x", "--shards", "2", "--quiet", *how, *extra)
            recs = sorted(records_json(sorted(glob.glob(o + "/x-*")))) if r.returncode == 0 else []
            seen.append((r.returncode, r.stderr.replace(o, "OUT"), recs))
        same += seen[0] == seen[1] == seen[2]
    check(same == 40, "guessed CSV types on 40 random tables: the whole-input pass's records and errors (%d/40)" % same)
    recs = records_json(sorted(glob.glob(os.path.join(d, "escaped-digits-guess", "x-*"))))
    check(isinstance(json.loads(recs[0])["b"][0], str), "text after a closing quote makes an int column bytes")
    last = json.loads(records_json(sorted(glob.glob(os.path.join(d, "int-to-float-guess", "x-*"))))[0])
    check(isinstance(last["a"][0], float), "a later decimal makes an int column float")
    recs = records_json(sorted(glob.glob(os.path.join(d, "empty-gets-value-guess", "x-*"))))
    check(any("e" in json.loads(x) and json.loads(x)["e"] == [7] for x in recs),
          "a value in a column empty in the first rows types it (int64)")


def test_existing_output(tmp, taxi):
    d = os.path.join(tmp, "exists")
    st("convert", taxi, "-o", d + "/train", "--quiet")
    before = read_all(glob.glob(d + "/*"))
    r = st("convert", taxi, "-o", d + "/train", "--quiet", "--columns", "fare")
    check(r.returncode == 2 and "--force" in r.stderr, "an existing output is not overwritten without --force")
    check(read_all(glob.glob(d + "/*")) == before, "the existing output is untouched")
    r = st("convert", taxi, "-o", d + "/train", "--quiet", "--columns", "fare", "--force")
    check(r.returncode == 0 and read_all(glob.glob(d + "/*")) != before, "--force replaces it")


def test_progress_to_log(tmp, big):
    for extra in ([], ["--shuffle"]):
        d = os.path.join(tmp, "progress-log" + "".join(extra))
        r = st("convert", big, "-o", d + "/t", "--progress", "--jobs", "1", *extra)
        lines = r.stderr.splitlines()
        check(r.returncode == 0 and "\r" not in r.stderr and "\x1b" not in r.stderr,
              f"--progress{' --shuffle' if extra else ''} to a pipe writes plain lines ({r.stderr[:200]!r})")
        # progress lines are named like every other line: "shardtool convert: "
        progress = [l[len("shardtool convert: "):] for l in lines
                    if re.match(r"shardtool convert: (\d+ records,|writing shuffled records:)", l)]
        check(bool(progress) and all(not re.match(r"\d+ records,|writing ", l) for l in lines),
              f"every progress line starts 'shardtool convert: ' ({lines[:2]})")
        if extra:
            ok = bool(progress) and re.fullmatch(r"writing shuffled records: 400000 of 400000 \(100%\), \d+s",
                                                 progress[-1])
        else:
            ok = bool(progress) and progress[-1].startswith("400000 records, 100%,")
        check(ok, f"progress{' --shuffle' if extra else ''} ends with a line at 100% ({progress[-1:]})")


def read_pty(master, wait=None):
    """One read from a pty's master side: the bytes, b"" once the other side
    is closed (Linux says EIO), or None when nothing came within `wait` s."""
    if wait is not None and not select.select([master], [], [], wait)[0]:
        return None
    try:
        return os.read(master, 65536)
    except OSError:
        return b""


def test_progress_on_terminal(tmp):
    """A 30-column pty: progress fits; SIGINT: message on its own line, death by SIGINT."""
    master, slave = pty.openpty()
    tty.setraw(slave)  # no \n -> \r\n translation: the bytes as written
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 30, 0, 0))
    d = os.path.join(tmp, "progress-tty")
    proc = subprocess.Popen([ST, "convert", "--from", "csv", "-", "-o", d + "/t", "--jobs", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    stop = threading.Event()

    def feed():
        try:
            proc.stdin.write(b"a,b,c\n")
            i = 0
            while not stop.is_set():
                proc.stdin.write(b"".join(b"%d,%d.5,some text %d\n" % (j, j, j) for j in range(i, i + 5000)))
                i += 5000
        except (BrokenPipeError, ValueError, OSError):
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    seen = b""
    deadline = time.time() + 30
    signaled = False
    while time.time() < deadline:
        chunk = read_pty(master, 0.1)
        if chunk == b"":
            break
        seen += chunk or b""
        if not signaled and b"records" in seen:
            proc.send_signal(signal.SIGINT)
            signaled = True
        if signaled and proc.poll() is not None:
            # what is left in the pty
            while chunk := read_pty(master, 0.2):
                seen += chunk
            break
    stop.set()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    os.close(master)
    text = seen.decode("utf-8", "replace")
    segments = [s.replace("\x1b[K", "") for s in re.split(r"[\r\n]", text) if "records" in s]
    check(signaled and segments and all(len(s) <= 29 for s in segments),
          f"on a 30-column terminal the progress line fits in 29 columns ({segments[:3]})")
    check(re.search(r"(^|\n)shardtool convert: interrupted", text) is not None,
          f"'interrupted' starts on a line of its own ({text[-200:]!r})")
    check(proc.returncode == -signal.SIGINT,
          f"after SIGINT the run dies by SIGINT (status 130) ({proc.returncode})")


def test_no_early_eta(tmp, big):
    """Progress on a terminal: no ETA while less than a second has passed
    (the first ticks' rates gave ETAs of days)."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))
    d = os.path.join(tmp, "progress-eta")
    proc = subprocess.Popen([ST, "convert", big, "-o", d + "/t", "--jobs", "1", "--shuffle"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    while chunk := read_pty(master):
        seen += chunk
    proc.wait(timeout=60)
    os.close(master)
    segments = [x.replace("\x1b[K", "") for x in re.split(r"[\r\n]", seen.decode("utf-8", "replace"))]
    # Ticks whose elapsed time (the field after the rate) is still 0 s; an
    # "ETA 0s" near the end is not one of them.
    early = [x for x in segments if re.search(r"records, +\d+%, [0-9.]+ MB/s, 0s(,|$)", x)]
    check(proc.returncode == 0 and not any("ETA" in x for x in early),
          f"no ETA in the first second ({early[:2]})")
    check(any(x.startswith("shardtool convert: writing shuffled records: 400000 of 400000 (100%)")
              for x in segments),
          f"on a terminal the shuffle's writing phase ends at 100% ({segments[-6:]})")


def main():
    global ST, SOURCE
    ST, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    taxi = os.path.join(SOURCE, "tests", "data", "csv", "tfx", "chicago_taxi_data.csv")
    if not os.path.exists(taxi):
        taxi = os.path.join(SOURCE, "examples", "taxi.csv")
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big.csv")
        make_big_csv(big, 400000)
        test_jobs_identical(tmp, taxi)
        test_dealt_groups(tmp, big)
        test_compressed_shards(tmp, big)
        test_kill_and_interrupt(tmp, big)
        test_disk_full(tmp, big)
        test_tasks_with_parallel(tmp, taxi)
        test_tasks_by_bytes(tmp)
        test_round_trip(tmp, taxi)
        test_shuffle(tmp, taxi)
        test_guessed_types(tmp)
        test_existing_output(tmp, taxi)
        test_progress_to_log(tmp, big)
        test_progress_on_terminal(tmp)
        test_no_early_eta(tmp, big)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
