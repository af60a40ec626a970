#!/usr/bin/env python3
"""One exit status per error, whatever the command (shardtool(1), EXIT
STATUS): the same damaged input gives 1 in convert, cat, stat, verify and
split alike; a missing input or a bad option gives 2.  Each bad input runs
through every command that reads its format.

Usage: test_exit_status.py SHARDTOOL SOURCE_DIR.  Prints "N passed, M failed".
"""
import os
import struct
import subprocess
import sys
import tempfile

DAMAGED, USAGE = 1, 2


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def main():
    st = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp()
    inputs = {
        # name: (bytes, status, commands that read it)
        "badline.jsonl": (b'{"a":1}\n{"a":\n', DAMAGED, ["convert", "cat", "stat"]),
        "unclosed.jsonl": (b'{"a":\n', DAMAGED, ["convert", "cat", "stat"]),
        "short.csv": (b"a,b\n1,2\n3\n", DAMAGED, ["convert", "cat", "stat"]),
        "badline.tfrecord": (b'{"a":1}\n{"a":\n', DAMAGED, ["cat", "stat", "verify", "split"]),
        "truncated.tfrecord": (struct.pack("<Q", 100) + b"\0\0\0\0" + b"x" * 10, DAMAGED,
                               ["convert", "cat", "stat", "verify", "split"]),
        "footer.parquet": (b"PAR1" + b"x" * 12 + b"PAR1", DAMAGED, ["convert", "cat", "stat", "verify"]),
        "empty.parquet": (b"", DAMAGED, ["convert", "cat", "stat", "verify"]),
        "header.avro": (b"Obj\x01\xff\xff\xff\xff\xff\xff", DAMAGED,
                        ["convert", "cat", "stat", "verify", "split"]),
        "missing.jsonl": (None, USAGE, ["convert", "cat", "stat", "verify", "split"]),
        # verify and split take shards only: a table is the wrong input, not damage
        "text.jsonl": (b'{"a":1}\n{"a":2}\n', USAGE, ["verify", "split"]),
        "tiny.csv": (b"a\n1\n", USAGE, ["verify", "split"]),
        "table.parquet": (open(os.path.join(sys.argv[2], "tests", "data", "parquet", "alltypes_plain.parquet"),
                               "rb").read(), USAGE, ["split"]),
    }
    passed = failed = 0
    for name, (data, want, commands) in inputs.items():
        path = os.path.join(tmp, name)
        if data is not None:
            write(path, data)
        for command in commands:
            args = [st, command, path]
            if command in ("convert", "split"):
                args += ["-q", "-o", os.path.join(tmp, "out", command, name, "part")]
            proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
            if proc.returncode == want:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {command} {name}: exit {proc.returncode}, expected {want}: "
                      f"{proc.stderr.strip()[:300]}")
    for command in ("convert", "cat", "stat", "verify", "split"):
        proc = subprocess.run([st, command, "--no-such-option", "x"], capture_output=True, timeout=60)
        if proc.returncode == USAGE:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {command} --no-such-option: exit {proc.returncode}, expected {USAGE}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
