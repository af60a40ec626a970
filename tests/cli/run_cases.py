#!/usr/bin/env python3
"""Runs the CLI golden cases in tests/cli/cases/*.case.

A case file holds one command and what it must do:

    # what the case checks
    cmd: $ST verify $DATA/tfrecord/corrupt/pets_examples.record
    exit: 1
    stdout~: DAMAGED: data crc at record 0
    stderr: (exact text; may repeat for several lines)
    stderr~: a regular expression that must match somewhere
    stdout!~: a regular expression that must not match

`cmd` runs under bash with $ST (the shardtool binary), $DATA (tests/data)
and $TMP (a fresh empty directory) set.  Prints "N passed, M failed".
"""
import os
import re
import subprocess
import sys
import tempfile


def parse_case(path):
    case = {"cmd": None, "exit": 0, "checks": []}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            key, _, value = line.partition(": ")
            if key == "cmd":
                case["cmd"] = value
            elif key == "exit":
                case["exit"] = int(value)
            elif key in ("stdout", "stderr", "stdout~", "stderr~", "stdout!~", "stderr!~"):
                case["checks"].append((key, value))
            else:
                raise ValueError(f"{path}: unknown line {line!r}")
    if not case["cmd"]:
        raise ValueError(f"{path}: no cmd")
    return case


def check(case, proc):
    problems = []
    if proc.returncode != case["exit"]:
        problems.append(f"exit {proc.returncode}, expected {case['exit']}")
    exact = {"stdout": [], "stderr": []}
    for key, value in case["checks"]:
        stream = key.rstrip("~!")
        text = proc.stdout if stream == "stdout" else proc.stderr
        if key in ("stdout", "stderr"):
            exact[key].append(value)
        elif key.endswith("!~"):
            if re.search(value, text):
                problems.append(f"{stream} matches {value!r}")
        elif not re.search(value, text):
            problems.append(f"{stream} does not match {value!r}")
    for stream, lines in exact.items():
        if lines:
            text = proc.stdout if stream == "stdout" else proc.stderr
            want = "\n".join(lines) + "\n"
            if text != want:
                problems.append(f"{stream} is {text!r}, expected {want!r}")
    return problems


def main():
    binary, source_dir = sys.argv[1], os.path.abspath(sys.argv[2])
    only = sys.argv[3:]
    case_dir = os.path.join(source_dir, "tests", "cli", "cases")
    names = sorted(n for n in os.listdir(case_dir) if n.endswith(".case"))
    if only:
        names = [n for n in names if any(o in n for o in only)]
    passed = failed = 0
    for name in names:
        case = parse_case(os.path.join(case_dir, name))
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, ST=os.path.abspath(binary),
                       DATA=os.path.join(source_dir, "tests", "data"), TMP=tmp, LC_ALL="C")
            try:
                proc = subprocess.run(["bash", "-c", case["cmd"]], env=env, cwd=tmp,
                                      capture_output=True, text=True, timeout=120,
                                      errors="replace")
                problems = check(case, proc)
            except subprocess.TimeoutExpired:
                problems = ["timed out"]
                proc = None
        if problems:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(problems))
            if proc is not None:
                print("  stdout: " + proc.stdout[-2000:].replace("\n", "\n          "))
                print("  stderr: " + proc.stderr[-2000:].replace("\n", "\n          "))
        else:
            passed += 1
            print(f"ok   {name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
