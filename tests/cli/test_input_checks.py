#!/usr/bin/env python3
"""Text that is not a table is never read as one, and inputs whose columns
differ are never merged silently (shardtool-convert(1), "Inputs of one
run"; shardtool(1), INPUTS):

  - a directory or glob takes table and shard names only: a README.txt and
    a _SUCCESS beside Spark's part files are skipped, and -v names them;
  - HTML (an error page saved as data.csv) is refused; prose, or '|'
    separated rows, on standard input are refused without --from;
  - a CSV with a header and no rows is a note, and an error with --strict;
  - a.csv "id,score" and b.csv "ID,Score,extra" are an error naming both
    inputs and the names; --union-by-name accepts them, with a note per
    input of the columns it lacks.  Parquet and Avro inputs likewise; JSON
    lines only where keys differ in case alone.

The records written are checked against the inputs by reading the shards
back with `shardtool cat` (JSON lines).

Usage: test_input_checks.py SHARDTOOL [SOURCE_DIR]; SHARDTOOL may also come
from $SHARDTOOL.  Prints "N passed, M failed"; exit 1 on a failure."""
import json
import os
import subprocess
import sys
import tempfile

ST = os.environ.get("SHARDTOOL") or os.path.abspath(sys.argv[1])
failures = []
passed = 0


def run(args, stdin=None, cwd=None):
    p = subprocess.run([ST] + args, input=stdin, capture_output=True, cwd=cwd)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def check(name, cond, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(name)
        print("FAIL %s: %s" % (name, detail))


def records(prefix_glob, cwd):
    rc, out, err = run(["cat", prefix_glob], cwd=cwd)
    if rc != 0:
        return None
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    tmp = tempfile.mkdtemp(prefix="st-input-checks-")
    w = lambda name, text: write(os.path.join(tmp, name), text)  # noqa: E731

    # 1a: a Spark folder with a README and a _SUCCESS marker.
    w("spark/part-00000-1f2e-c000.csv", "a,b\n1,2\n3,4\n")
    w("spark/README.txt", "This folder was written by Spark, do not edit.\nThanks, the data team\n")
    w("spark/_SUCCESS", "")
    w("spark/part-00001", "a,b\n5,6\n")
    rc, _, err = run(["convert", "-v", "spark/", "-o", "out/spark"], cwd=tmp)
    recs = records("out/spark-00000-of-00001.tfrecord", tmp)
    check("dir: exit 0", rc == 0, err)
    check("dir: README skipped and named by -v", "skipping spark/README.txt" in err, err)
    check("dir: _SUCCESS skipped", "skipping spark/_SUCCESS" in err, err)
    check("dir: records are the part files' only", recs is not None and len(recs) == 3, recs)
    rc, _, err = run(["convert", "spark/*", "-o", "out/glob"], cwd=tmp)
    recs = records("out/glob-00000-of-00001.tfrecord", tmp)
    check("glob: records are the part files' only", rc == 0 and recs is not None and len(recs) == 3,
          (rc, err, recs))

    # 1b: an HTML error page saved as data.csv; prose and '|' rows on stdin.
    w("denied.csv", "<html><body>Access denied</body></html>")
    rc, _, err = run(["convert", "denied.csv", "-o", "out/denied"], cwd=tmp)
    check("html .csv refused", rc == 1 and "HTML" in err and "denied.csv" in err, (rc, err))
    check("html .csv: nothing written", not os.path.exists(os.path.join(tmp, "out/denied.manifest.json")))
    rc, _, err = run(["convert", "-", "-o", "out/prose"], cwd=tmp,
                     stdin=b"Hello, this is a note.\nIt has no table in it.\n")
    check("prose on stdin refused", rc == 1 and "does not look like a table" in err, (rc, err))
    rc, _, err = run(["convert", "-", "-o", "out/pipes"], cwd=tmp, stdin=b"1|a|2\n3|b|4\n")
    check("'|' rows on stdin refused with the way out", rc == 1 and "--delimiter" in err, (rc, err))
    rc, _, err = run(["convert", "-", "-o", "out/pipes2", "--from", "csv", "--delimiter", "|",
                      "--no-header"], cwd=tmp, stdin=b"1|a|2\n3|b|4\n")
    check("'|' rows read with --from csv --delimiter", rc == 0, err)
    rc, _, err = run(["convert", "-", "-o", "out/table"], cwd=tmp, stdin=b"x,y\n1,2\n3,4\n")
    check("a table on stdin still read", rc == 0, err)

    # 1d: a header and no rows.
    w("hdr.csv", "id,score\n")
    w("a.csv", "id,score\n1,2\n")
    rc, _, err = run(["convert", "hdr.csv", "a.csv", "-o", "out/hdr"], cwd=tmp)
    check("header only: a note", rc == 0 and "hdr.csv: a header and no rows" in err, (rc, err))
    rc, _, err = run(["convert", "hdr.csv", "a.csv", "-o", "out/hdr-strict", "--strict"], cwd=tmp)
    check("header only: --strict an error", rc == 1 and "hdr.csv: a header and no rows" in err, (rc, err))
    check("header only: --strict leaves no manifest",
          not os.path.exists(os.path.join(tmp, "out/hdr-strict.manifest.json")))

    # 2: columns that differ, in case and in number.
    w("b.csv", "ID,Score,extra\n3,4,5\n")
    rc, _, err = run(["convert", "a.csv", "b.csv", "-o", "out/ab"], cwd=tmp)
    check("differing headers refused", rc == 1, (rc, err))
    check("the error names both inputs", "b.csv" in err and "a.csv" in err, err)
    check("the error names the names", "'ID'" in err and "'id'" in err and "'extra'" in err
          and "only in case" in err, err)
    check("differing headers: nothing written", not os.path.exists(os.path.join(tmp, "out/ab.manifest.json")))
    rc, _, err = run(["convert", "a.csv", "b.csv", "-o", "out/ab-union", "--union-by-name"], cwd=tmp)
    recs = records("out/ab-union-00000-of-00001.tfrecord", tmp)
    check("--union-by-name accepts", rc == 0, err)
    check("--union-by-name: a note per input", "a.csv lacks 3" in err and "ID, Score, extra" in err
          and "b.csv lacks 2" in err, err)
    check("--union-by-name: records by name", recs is not None and len(recs) == 2
          and set(recs[0]) == {"id", "score"} and set(recs[1]) == {"ID", "Score", "extra"}, recs)
    w("c.csv", "score,id\n7,8\n")
    rc, _, err = run(["convert", "a.csv", "c.csv", "-o", "out/ac"], cwd=tmp)
    check("same columns in another order accepted", rc == 0 and "lacks" not in err, err)

    # 2: Parquet inputs whose fields differ.
    for name in ("a", "b"):
        rc, _, err = run(["convert", name + ".csv", "-o", "pq/" + name, "--to", "parquet"], cwd=tmp)
        check("parquet %s written" % name, rc == 0, err)
    rc, _, err = run(["convert", "pq/a-00000-of-00001.parquet", "pq/b-00000-of-00001.parquet",
                      "-o", "out/pq"], cwd=tmp)
    check("parquet: differing fields refused", rc == 1 and "extra" in err and "a-00000-of-00001.parquet" in err,
          (rc, err))
    for name in ("a", "b"):
        rc, _, err = run(["convert", name + ".csv", "-o", "avro/" + name, "--to", "avro"], cwd=tmp)
        check("avro %s written" % name, rc == 0, err)
    rc, _, err = run(["convert", "avro/a-00000-of-00001.avro", "avro/b-00000-of-00001.avro",
                      "-o", "out/avro"], cwd=tmp)
    check("avro: differing fields refused", rc == 1 and "extra" in err and "a-00000-of-00001.avro" in err,
          (rc, err))
    rc, _, err = run(["convert", "avro/a-00000-of-00001.avro", "avro/b-00000-of-00001.avro",
                      "-o", "out/avro-union", "--union-by-name"], cwd=tmp)
    check("avro: --union-by-name accepts", rc == 0 and "lacks" in err, (rc, err))
    # JSON lines: keys per line; sparse keys are fine, case-only drift is not.
    w("j1.jsonl", '{"id":1,"score":2}\n')
    w("j2.jsonl", '{"id":3}\n')
    w("j3.jsonl", '{"ID":3}\n')
    rc, _, err = run(["convert", "j1.jsonl", "j2.jsonl", "-o", "out/j12"], cwd=tmp)
    check("jsonl: a key some files lack is fine", rc == 0, err)
    rc, _, err = run(["convert", "j1.jsonl", "j3.jsonl", "-o", "out/j13"], cwd=tmp)
    check("jsonl: keys differing only in case refused", rc == 1 and "'ID'" in err, (rc, err))
    rc, _, err = run(["convert", "j2.jsonl", "j1.jsonl", "b.csv", "-o", "out/j2b"], cwd=tmp)
    check("jsonl then csv: names differing only in case refused", rc == 1 and "b.csv" in err and "'ID'" in err
          and "j2.jsonl" in err, (rc, err))

    print("%d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
