#!/usr/bin/env python3
"""What cat does when standard output is a terminal (a pty): --format
tfrecord and raw are binary, so they are refused (status 2, nothing
written) unless --force, as zstd does; JSON is written; a pipe or a file
takes the binary output without --force.

Usage: test_terminal.py SHARDTOOL SOURCE_DIR.  Prints "N passed, M failed".
"""
import os
import pty
import select
import subprocess
import sys
import tempfile
import tty

results = {"passed": 0, "failed": 0}


def check(ok, what):
    results["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + what)


def run_on_pty(args):
    """Runs args with stdout on a pty; returns (status, what the pty got, stderr)."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    seen = b""
    while True:
        if not select.select([master], [], [], 10)[0]:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            break
        seen += chunk
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.wait(timeout=30)
    os.close(master)
    return proc.returncode, seen, err


def main():
    st = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.jsonl")
        with open(src, "w") as f:
            f.write('{"a":1}\n{"a":2}\n')
        r = subprocess.run([st, "convert", "-q", src, "-o", os.path.join(tmp, "t")], capture_output=True)
        shard = os.path.join(tmp, "t-00000-of-00001.tfrecord")
        check(r.returncode == 0, "a shard to read")
        for fmt in ("tfrecord", "raw"):
            rc, out, err = run_on_pty([st, "cat", "--format", fmt, shard])
            check(rc == 2 and out == b"" and "terminal" in err and "--force" in err,
                  f"cat --format {fmt} to a terminal is refused with a hint ({rc}, {out[:40]!r}, {err.strip()!r})")
            rc, out, err = run_on_pty([st, "cat", "--format", fmt, "--force", shard])
            check(rc == 0 and len(out) > 0, f"cat --format {fmt} --force writes to the terminal ({rc}, {err.strip()!r})")
            r = subprocess.run([st, "cat", "--format", fmt, shard], capture_output=True)
            check(r.returncode == 0 and len(r.stdout) > 0, f"cat --format {fmt} to a pipe needs no --force")
        rc, out, err = run_on_pty([st, "cat", shard])
        check(rc == 0 and b'{"a":[1]}' in out, f"cat (JSON) writes to a terminal ({rc}, {err.strip()!r})")
        rc, out, err = run_on_pty([st, "cat", "-f", "tfrecord", shard])
        check(rc == 2 and "-f means --force" in err, f"the old -f for --format works, with a note ({err.strip()!r})")
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
