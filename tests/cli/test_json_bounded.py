#!/usr/bin/env python3
"""A large JSON input in the array and objects shapes is read in bounded memory.

    test_json_bounded.py SHARDTOOL

A ~100 MB top-level array of objects (pretty-printed, as exports give them)
and the same records as objects one after another are converted with
--jobs 2, from a file and from a pipe; each run's peak RSS (from wait4)
must stay far below the input's size (a reader that loaded the whole array
would use more than the file), and the shards must equal those of the JSON
lines form.  Prints "N passed, M failed"; exits 1 on any failure.
"""
import hashlib
import os
import subprocess
import sys
import tempfile

ST = None
RECORDS = 400000
LIMIT_MB = 45
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def run_rss(args, stdin_path=None):
    """Exit status and peak RSS in MB of one run."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        p = subprocess.Popen([ST] + args, stdin=stdin, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stdin_path:
            stdin.close()
    if p.returncode:
        print("  " + err.decode(errors="replace").strip())
    return p.returncode, usage.ru_maxrss / 1024.0


def digest(path):
    """The file's hash (the test holds no large data: a forked child would
    count the parent's pages in its RSS)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def generate(tmp):
    lines = os.path.join(tmp, "big.jsonl")
    array = os.path.join(tmp, "big.json")
    objects = os.path.join(tmp, "objects.json")
    with open(lines, "w") as fl, open(array, "w") as fa, open(objects, "w") as fo:
        fa.write("[\n")
        for i in range(RECORDS):
            name = "user-%d" % i
            score = (i % 1000) / 8.0
            fl.write('{"id": %d, "name": "%s", "score": %s, "tags": ["a", "b"], "geo": {"lat": 1.5}}\n'
                     % (i, name, repr(score)))
            pretty = ('{\n    "id": %d,\n    "name": "%s",\n    "score": %s,\n    "tags": [\n      "a",\n'
                      '      "b"\n    ],\n    "geo": {\n      "lat": 1.5\n    }\n  }' % (i, name, repr(score)))
            fa.write(("  " if i == 0 else ",\n  ") + pretty)
            fo.write(pretty + "\n")
        fa.write("\n]\n")
    return lines, array, objects


def main():
    global ST
    ST = os.path.abspath(sys.argv[1])
    # A sanitizer build's shadow memory and quarantine of freed blocks say
    # nothing of the tool's own bound: there only the results are checked.
    with open(ST, "rb") as f:
        sanitized = b"__asan_init" in f.read()
    if sanitized:
        print("note: sanitizer build: peak RSS is not checked")
    with tempfile.TemporaryDirectory() as tmp:
        lines, array, objects = generate(tmp)
        size_mb = os.path.getsize(array) / 1e6
        rc, _ = run_rss(["convert", lines, "-o", os.path.join(tmp, "want", "x"), "--jobs", "2", "--quiet"])
        check(rc == 0, "convert the JSON lines form")
        want = digest(os.path.join(tmp, "want", "x-00000-of-00001.tfrecord"))
        for label, path in (("array", array), ("objects", objects)):
            for pipe in (False, True):
                out = os.path.join(tmp, "%s-%d" % (label, pipe), "x")
                args = ["convert", "-" if pipe else path, "-o", out, "--jobs", "2", "--quiet"]
                if pipe:
                    args[1:1] = ["--from", "jsonl"]
                rc, rss = run_rss(args, path if pipe else None)
                what = "%s%s (%.0f MB input)" % (label, " through a pipe" if pipe else "", size_mb)
                check(rc == 0, "convert " + what)
                if not sanitized:
                    check(rss < LIMIT_MB,
                          "convert %s: peak RSS %.1f MB < %d MB" % (what, rss, LIMIT_MB))
                if rc == 0:
                    got = digest(out + "-00000-of-00001.tfrecord")
                    check(got == want, "convert %s: the same shards as JSON lines" % what)
                    os.unlink(out + "-00000-of-00001.tfrecord")
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
