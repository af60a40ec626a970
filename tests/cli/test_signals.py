#!/usr/bin/env python3
"""An interrupted run removes what it wrote (README, shardtool(1)), also
when the signal comes twice.

coreutils timeout(1) sends its SIGTERM to the child and then to the
child's process group, so the child gets two; a terminal's Ctrl-C reaches
every process of the group the same way.  A second SIGINT/SIGTERM within a
second of the first is the same request and must not cut the cleanup
short.  Scenarios, each run several times at different moments of a
convert of a CSV into 8 shards, so that a race shows:

  timeout     `timeout T shardtool convert ...` (T spread over the run)
  double      SIGTERM then SIGTERM 10 ms later; SIGINT then SIGTERM 10 ms later
  killed      SIGKILL mid-run (what a later, impatient signal amounts to):
              the hidden shards and the lock stay, and the next run on the
              prefix removes them and writes a whole set

After every interrupted run the output directory holds either nothing
(no hidden .tmp-st files, no lock) or, when the signal came after the
commit, the whole set, which `verify` accepts.

usage: test_signals.py SHARDTOOL [ROUNDS]"""

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHARDS = 8
SET = ["train-%05d-of-%05d.tfrecord" % (i, SHARDS) for i in range(SHARDS)] + ["train.manifest.json"]


def make_csv(path, rows):
    r = random.Random(26)
    with open(path, "w") as f:
        f.write("id,x,y,name\n")
        f.writelines("%d,%.6f,%d,n%d\n" % (i, r.random(), r.randint(0, 1 << 30), i % 977)
                     for i in range(rows))


class Checker:
    def __init__(self, shardtool, tmp):
        self.st = shardtool
        self.tmp = tmp
        self.failures = []
        self.counts = {}

    def out_dir(self):
        d = os.path.join(self.tmp, "to")
        shutil.rmtree(d, ignore_errors=True)
        return d

    def check_left(self, label, out_dir, rc):
        left = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
        kind = "clean" if not left else "whole set"
        if left and left != sorted(SET):
            self.failures.append("%s (status %s): left %s" % (label, rc, left))
            return
        if left:
            v = subprocess.run([self.st, "verify", "-q"] + [os.path.join(out_dir, n) for n in SET[:-1]],
                               capture_output=True, text=True)
            if v.returncode != 0:
                self.failures.append("%s: the set left behind does not verify: %s" % (label, v.stderr))
                return
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def convert_argv(self, src, out_dir):
        return [self.st, "convert", src, "-o", os.path.join(out_dir, "train"), "-s", str(SHARDS), "-q"]


def main():
    shardtool = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    tmp = tempfile.mkdtemp()
    try:
        src = os.path.join(tmp, "big.csv")
        make_csv(src, 600000)
        c = Checker(shardtool, tmp)
        # How long one whole run takes here: the signals are spread over it.
        d = c.out_dir()
        t0 = time.monotonic()
        subprocess.run(c.convert_argv(src, d), check=True)
        whole = time.monotonic() - t0
        moments = [whole * (0.05 + 0.8 * k / max(rounds - 1, 1)) for k in range(rounds)]

        for k, at in enumerate(moments):
            d = c.out_dir()
            p = subprocess.run(["timeout", "%.3f" % at] + c.convert_argv(src, d), capture_output=True)
            c.check_left("timeout %.3f s (round %d)" % (at, k), d, p.returncode)

        for first, second in ((signal.SIGTERM, signal.SIGTERM), (signal.SIGINT, signal.SIGTERM)):
            for k, at in enumerate(moments):
                d = c.out_dir()
                p = subprocess.Popen(c.convert_argv(src, d), stderr=subprocess.PIPE)
                time.sleep(at)
                p.send_signal(first)
                time.sleep(0.010)
                p.send_signal(second)
                err = p.communicate(timeout=60)[1].decode(errors="replace")
                label = "%s then %s 10 ms later at %.3f s" % (first.name, second.name, at)
                if p.returncode not in (0, -first, -second):
                    c.failures.append("%s: status %s: %s" % (label, p.returncode, err))
                c.check_left(label, d, p.returncode)

        # SIGKILL leaves the hidden shards and the lock; the next run clears them.
        for k, at in enumerate(moments[: max(2, rounds // 2)]):
            d = c.out_dir()
            p = subprocess.Popen(c.convert_argv(src, d), stderr=subprocess.DEVNULL)
            time.sleep(at)
            p.kill()
            p.wait()
            left = sorted(os.listdir(d)) if os.path.isdir(d) else []
            n = subprocess.run(c.convert_argv(src, d) + ["--force"], capture_output=True, text=True)
            label = "the run after a SIGKILL at %.3f s (which left %d files)" % (at, len(left))
            if n.returncode != 0:
                c.failures.append("%s: status %d: %s" % (label, n.returncode, n.stderr))
            got = sorted(os.listdir(d))
            if got != sorted(SET):
                c.failures.append("%s: left %s, want only the set" % (label, got))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in c.failures:
        print("FAIL:", f)
    print("whole run %.2f s; interrupted runs: %s; %d failures"
          % (whole, ", ".join("%d %s" % (n, k) for k, n in sorted(c.counts.items())), len(c.failures)))
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
