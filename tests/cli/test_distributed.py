#!/usr/bin/python3
"""A distributed conversion on a real engine: a one-node Slurm cluster
started here, inputs in object storage (s3rver behind the
signature-checking proxy of tests/remote, with a fault proxy in front).

The commands run are the examples of shardtool-convert(1), DISTRIBUTED
RUNS, read from the man page itself, so that the page cannot drift from
what is tested:

  1. the Slurm job script is submitted as an array (sbatch --wait); task 1
     finds its input failing part-way (the fault proxy answers 500 to the
     later ranged reads of that object) and fails, leaving no final name;
  2. the same script is submitted again (it has --resume): the finished
     tasks keep their shards (same inode and mtime) and read no input data,
     task 1 completes;
  3. combine, then verify --decode --manifest; the names are
     train-0000{0..7}-of-00008.tfrecord; the records equal, as a multiset,
     those of a single-process conversion;
  4. the GNU parallel example and the Kubernetes Indexed Job's command
     (run once per JOB_COMPLETION_INDEX, no cluster) give byte-identical
     shards.

usage: test_distributed.py SHARDTOOL SOURCE_ROOT
exit 77 when the Slurm or munge packages are missing (or s3rver cannot be
started); .ci/install-deps installs them."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

SOURCE = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
REMOTE = os.path.join(SOURCE or ".", "tests", "remote")
sys.path.insert(0, REMOTE)
import rtest  # noqa: E402
import servers  # noqa: E402
import test_s3  # noqa: E402

SKIP = 77
BUCKET = "lake"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


# ---- the examples of the man page ---------------------------------------------------

def unroff(line):
    """A line of a .nf block of the man page as the shell sees it."""
    return (line.replace("\\(aq", "'").replace("\\-", "-").replace("\\e", "\\")
            .replace("\\fI", "").replace("\\fP", "").replace("\\fB", "").replace("\\fR", ""))


def man_block(page, heading):
    """The first .nf ... .fi block after the subsection heading."""
    lines = page.splitlines()
    start = lines.index('.SS "%s"' % heading)
    i = lines.index(".nf", start)
    j = lines.index(".fi", i)
    return [unroff(x) for x in lines[i + 1:j]]


def examples(source):
    with open(os.path.join(source, "man", "shardtool-convert.1")) as f:
        page = f.read()
    slurm = "\n".join(man_block(page, "Slurm job array")) + "\n"
    par = " ".join(x.rstrip("\\").strip() for x in man_block(page, "GNU parallel, on one machine"))
    yaml = "\n".join(man_block(page, "Kubernetes Indexed Job"))
    m = re.search(r"command: (\[.*?\])", yaml, re.S)
    k8s_command = json.loads(m.group(1))
    completions = int(re.search(r"completions: (\d+)", yaml).group(1))
    return slurm, par, k8s_command, completions


# ---- a one-node Slurm cluster ----------------------------------------------------------

SLURM_PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo")


class Slurm:
    def __init__(self, d):
        self.d = d
        self.procs = []
        os.makedirs(os.path.join(d, "state"))
        os.makedirs(os.path.join(d, "spool"))
        key = os.path.join(d, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.sock = os.path.join(d, "munge.sock")
        self.start(["munged", "--foreground", "--force", "--socket=" + self.sock, "--key-file=" + key,
                    "--log-file=" + d + "/munged.log", "--pid-file=" + d + "/munged.pid",
                    "--seed-file=" + d + "/munged.seed"], "munged")
        self.wait_for(lambda: os.path.exists(self.sock), "munged's socket")
        ctld, slurmd = rtest.free_port(), rtest.free_port()
        self.conf = os.path.join(d, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=sttest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser={os.environ.get("USER", "root") if os.getuid() else "root"}
AuthType=auth/munge
AuthInfo=socket={self.sock}
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=sched_interval=1
MinJobAge=5
PlugStackConfig=/dev/null
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
""")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.start(["slurmctld", "-D", "-i", "-f", self.conf], "slurmctld")
        self.start(["slurmd", "-D", "-N", "localhost", "-f", self.conf], "slurmd")
        self.wait_for(lambda: "idle" in self.client(["sinfo", "-h", "-o", "%T"]).stdout, "an idle node")

    def start(self, argv, name):
        log = open(os.path.join(self.d, name + ".out"), "wb")
        self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))

    def wait_for(self, cond, what, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            if cond():
                return
            time.sleep(0.1)
        raise rtest.Failure("Slurm: no %s after %d s" % (what, timeout))

    def client(self, argv, env=None, timeout=20, cwd=None):
        """Every client call under timeout: a request the node cannot meet
        waits forever instead of failing."""
        return subprocess.run(["timeout", str(timeout)] + argv, capture_output=True, text=True,
                              env=env or self.env, cwd=cwd)

    def stop(self):
        try:
            jobs = self.client(["squeue", "-h", "-o", "%A"]).stdout.split()
            if jobs:
                self.client(["scancel"] + jobs)
            self.wait_for(lambda: not self.client(["squeue", "-h"]).stdout.strip(), "empty queue", 20)
        except Exception:
            pass
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# ---- the inputs ----------------------------------------------------------------------------

def csv_text(rows, start):
    out = ["id,value,word"]
    for i in range(start, start + rows):
        out.append("%d,%s,w%d" % (i, repr(i * 0.25), i % 97))
    return ("\n".join(out) + "\n").encode()


def parquet_of(st, rows, start):
    """A Parquet file of csv_text's rows (id, value, word), written by
    shardtool itself: the inputs of one run share their columns (inputs
    whose columns differ are refused without --union-by-name)."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "t.csv"), "wb") as f:
            f.write(csv_text(rows, start))
        subprocess.run([st, "convert", os.path.join(d, "t.csv"), "--to", "parquet", "-o", d + "/p", "-s", "1",
                        "-q"], check=True)
        with open(os.path.join(d, "p-00000-of-00001.parquet"), "rb") as f:
            return f.read()


def inputs(st):
    """Objects of very different sizes, CSV and Parquet, by name (the glob
    sorts them; task I takes inputs I, I+4, ...)."""
    return {
        "train/a.csv": csv_text(300, 0),
        "train/b.csv": csv_text(60000, 1000),     # task 1: the one that fails first
        "train/c.parquet": parquet_of(st, 10000, 300000),
        "train/d.csv": csv_text(5000, 100000),
        "train/e.parquet": parquet_of(st, 8, 400000),
        "train/f.csv": csv_text(20, 200000),
    }


def records(st, shards, env):
    p = subprocess.run([st, "cat"] + shards, capture_output=True, env=env, timeout=120)
    return sorted(p.stdout.splitlines())


def shard_files(d):
    return sorted(n for n in os.listdir(d) if re.fullmatch(r"train-\d{5}-of-\d{5}\.tfrecord", n))


def main():
    st = os.path.abspath(sys.argv[1])
    source = SOURCE
    missing = [p for p in SLURM_PROGRAMS + ("parallel",) if not shutil.which(p)]
    if missing:
        print("skipped: not installed: %s (.ci/install-deps installs them)" % " ".join(missing))
        return SKIP
    s3bin = test_s3.s3rver_bin()
    if not s3bin:
        print("skipped: s3rver is not installed and cannot be")
        return SKIP
    slurm_script, parallel_line, k8s_command, completions = examples(source)
    # The README shows the same commands as the man page.
    with open(os.path.join(source, "README.md")) as f:
        readme = f.read()
    flat = " ".join(x.rstrip("\\").strip() for x in readme.splitlines())
    check(all(line in readme for line in slurm_script.splitlines() if line.strip())
          and parallel_line in flat and json.dumps(k8s_command) in readme,
          "the README's Slurm, GNU parallel and Kubernetes examples are the man page's")

    tmp = tempfile.mkdtemp(prefix="st-distributed-")
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    os.symlink(st, os.path.join(bindir, "shardtool"))
    srv = test_s3.S3rver(s3bin, os.path.join(tmp, "s3rver"))
    sig = servers.SigV4Proxy(srv.port, {test_s3.KEY: test_s3.SECRET})
    # Task 1's input fails part-way while `faulting` is set: every read of
    # it is cut off half-way, the retries included.
    faulting = threading.Event()
    faulting.set()
    b_reads = []

    def fault(method, path):
        if method == "GET" and path.startswith("/%s/train/b.csv" % BUCKET) and faulting.is_set():
            b_reads.append(path)
            return "cut"
        return None
    fp = servers.FaultProxy(sig.port, ["ok"], fail_when=fault)
    slurm = None
    try:
        st_, body = srv.request("PUT", "/" + BUCKET)
        if st_ != 200:
            raise rtest.Failure("cannot create the bucket: %d %s" % (st_, body))
        for name, data in inputs(st).items():
            st_, body = srv.request("PUT", "/%s/%s" % (BUCKET, name), body=data)
            if st_ != 200:
                raise rtest.Failure("cannot put %s: %d" % (name, st_))
        env = rtest.clean_env({"AWS_ACCESS_KEY_ID": test_s3.KEY, "AWS_SECRET_ACCESS_KEY": test_s3.SECRET,
                               "AWS_ENDPOINT_URL": "http://127.0.0.1:%d" % fp.port})
        env["PATH"] = bindir + os.pathsep + env["PATH"]

        slurm = Slurm(os.path.join(tmp, "slurm"))
        senv = dict(env, SLURM_CONF=slurm.conf)
        work = os.path.join(tmp, "slurm-run")
        os.makedirs(work)
        with open(os.path.join(work, "job.sh"), "w") as f:
            f.write(slurm_script)
        out = os.path.join(work, "out")

        # 1. The first submission: task 1 fails part-way.
        r = slurm.client(["sbatch", "--wait", "-o", work + "/slurm-%A_%a.log", "job.sh"], env=senv, timeout=180,
                         cwd=work)
        logs = "".join(open(os.path.join(work, n)).read() for n in sorted(os.listdir(work)) if n.endswith(".log"))
        check(r.returncode != 0 and len(b_reads) > 1 and "b.csv" in logs,
              f"the first array fails: task 1's input fails part-way (sbatch {r.returncode}, "
              f"{len(b_reads)} reads of b.csv; {logs.strip()[-300:]})")
        names = shard_files(out)
        check(names == ["train-%05d-of-00008.tfrecord" % i for i in (0, 1, 4, 5, 6, 7)]
              and not [n for n in os.listdir(out) if n.startswith(".") or n.endswith((".lock", ".journal"))],
              f"the failed task left no shard under a final name, nor any temporary file ({sorted(os.listdir(out))})")
        before = {n: (os.stat(os.path.join(out, n)).st_ino, os.stat(os.path.join(out, n)).st_mtime_ns) for n in names}
        r = subprocess.run(["shardtool", "combine", "out/train"], capture_output=True, text=True, env=env, cwd=work)
        check(r.returncode == 1 and "(task 1)" in r.stderr, f"combine names the missing task ({r.stderr.strip()})")

        # 2. The same script again (it has --resume): only task 1 works.
        faulting.clear()
        n_traffic = len(sig.traffic)
        r = slurm.client(["sbatch", "--wait", "-o", work + "/again-%A_%a.log", "job.sh"], env=senv, timeout=180,
                         cwd=work)
        check(r.returncode == 0, f"the array submitted again completes ({r.stderr.strip()[-300:]})")
        after = {n: (os.stat(os.path.join(out, n)).st_ino, os.stat(os.path.join(out, n)).st_mtime_ns)
                 for n in before}
        check(after == before, "no finished shard was written twice (same inode and mtime)")
        # Task 1 (of 4) takes inputs 1 and 5 of the sorted six.
        task1_inputs = ("/%s/train/b.csv" % BUCKET, "/%s/train/f.csv" % BUCKET)
        gets = sorted({p.split("?")[0] for m, p, rng, s, n in sig.traffic[n_traffic:] if m == "GET" and n and not p.startswith(task1_inputs)
                       and "list-type" not in p and not p.rstrip("/").endswith(BUCKET)})
        check(not gets and any(p.startswith(task1_inputs) for m, p, rng, st_, n in sig.traffic[n_traffic:]),
              f"the finished tasks read no input data again, task 1 read its own ({gets})")

        # 3. One manifest, verified; final names; the records of one process.
        r = subprocess.run(["shardtool", "combine", "out/train"], capture_output=True, text=True, env=env, cwd=work)
        check(r.returncode == 0, f"combine ({r.stderr.strip()})")
        r = subprocess.run(["shardtool", "verify", "--decode", "--manifest", "out/train.manifest.json"],
                           capture_output=True, text=True, env=env, cwd=work)
        check(r.returncode == 0 and "8 files: 8 intact" in r.stdout,
              f"verify --decode --manifest of the combined manifest ({r.stdout.strip()[-300:]})")
        names = shard_files(out)
        check(names == ["train-%05d-of-00008.tfrecord" % i for i in range(8)], f"the shard names ({names})")
        single = os.path.join(tmp, "single")
        r = subprocess.run(["shardtool", "convert", "s3://%s/train/*" % BUCKET, "-o", single + "/train", "-q"],
                           capture_output=True, text=True, env=env)
        check(r.returncode == 0, f"the single-process conversion ({r.stderr.strip()[-300:]})")
        ours = records(st, [os.path.join(out, n) for n in names], env)
        one = records(st, [os.path.join(single, n) for n in shard_files(single)], env)
        check(len(ours) == 300 + 60000 + 10000 + 5000 + 8 + 20 and ours == one,
              f"the records equal those of one process, as a multiset ({len(ours)} and {len(one)})")

        def shard_bytes(d):
            return {n: open(os.path.join(d, n), "rb").read() for n in shard_files(d)}
        reference = shard_bytes(out)

        # 4. GNU parallel, and the Indexed Job's command once per index.
        pwork = os.path.join(tmp, "parallel-run")
        os.makedirs(pwork)
        r = subprocess.run(["sh", "-c", parallel_line], capture_output=True, text=True, env=env, cwd=pwork)
        check(r.returncode == 0 and shard_bytes(os.path.join(pwork, "out")) == reference,
              f"the GNU parallel example gives byte-identical shards ({r.stderr.strip()[-300:]})")
        kwork = os.path.join(tmp, "k8s-run")
        os.makedirs(kwork)
        codes = []
        for i in range(completions):
            r = subprocess.run(k8s_command, capture_output=True, text=True, env=dict(env, JOB_COMPLETION_INDEX=str(i)),
                               cwd=kwork)
            codes.append((r.returncode, r.stderr.strip()[-200:]))
        check(all(c == 0 for c, _ in codes) and shard_bytes(os.path.join(kwork, "out")) == reference,
              f"the Kubernetes Indexed Job's command, once per JOB_COMPLETION_INDEX, gives byte-identical shards "
              f"({codes})")
    except rtest.Failure as e:
        check(False, str(e))
    finally:
        if slurm:
            slurm.stop()
        fp.stop()
        sig.stop()
        srv.stop()
    if failures:
        print("%d failed; files kept in %s" % (len(failures), tmp))
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
