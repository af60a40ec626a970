#!/usr/bin/env python3
"""verify --manifest checks every manifest that convert and split write.

  - convert --to FORMAT -z COMPRESSION for every output format (tfrecord,
    avro, jsonl, csv, tsv) and compression (none, gzip, zlib), with the CSV
    options that shape text shards (--quote, --no-header), and split of
    TFRecord (plain and compressed) and Avro: verify --manifest exits 0 and
    reports every shard OK with its format and record count;
  - a text shard that lost a line, or whose compressed stream is damaged,
    fails (exit 1) with a record-count mismatch or "bad compressed stream".
Prints "N passed, M failed".
"""
import json
import os
import subprocess
import sys
import tempfile

ST = SOURCE = None
results = {"passed": 0, "failed": 0}


def check(cond, what, detail=""):
    results["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else "\n" + detail))


def st(*args):
    return subprocess.run([ST] + list(args), capture_output=True, text=True, timeout=120)


def verify_ok(manifest, fmt, what):
    with open(manifest) as f:
        m = json.load(f)
    r = st("verify", "--manifest", manifest)
    want = ["%s: OK (%s, %d records" % (os.path.join(os.path.dirname(manifest), s["path"]), fmt, s["records"])
            for s in m["shards"]]
    good = r.returncode == 0 and all(w in r.stdout for w in want) and len(m["shards"]) > 1
    check(good, what, "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))


def main():
    global ST, SOURCE
    ST, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    data = os.path.join(SOURCE, "tests", "data")
    taxi = os.path.join(data, "csv", "tfx", "chicago_taxi_data.csv")
    with tempfile.TemporaryDirectory() as tmp:
        # Quoted cells with newlines, quotes and delimiters: a line is not a record.
        tricky = os.path.join(tmp, "tricky.csv")
        with open(tricky, "w") as f:
            f.write('a,b\n1,"x\ny"\n2,"p,""q"""\n3,"tab\there"\n4,\n5,"\n\n"\n')
        for to in ("tfrecord", "avro", "jsonl", "csv", "tsv"):
            for z in ("none", "gzip", "zlib"):
                for name, src in (("taxi", taxi), ("tricky", tricky)):
                    out = os.path.join(tmp, "%s-%s-%s" % (to, z, name), "x")
                    r = st("convert", src, "-o", out, "-s", "2", "--to", to, "-z", z, "-q")
                    if r.returncode:
                        check(False, "convert %s --to %s -z %s" % (name, to, z), r.stderr)
                        continue
                    verify_ok(out + ".manifest.json", to, "convert %s --to %s -z %s: verify --manifest" % (name, to, z))
        for opts in (["--quote", "'"], ["--no-header"], ["--quote", "none"]):
            src = os.path.join(tmp, "plain.csv")
            with open(src, "w") as f:
                f.write("a,b\n1,x\n2,y\n3,z\n")
            out = os.path.join(tmp, "opts-" + "-".join(o.strip("-'") for o in opts), "x")
            r = st("convert", src, "-o", out, "-s", "2", "--to", "csv", "-q", *opts)
            check(r.returncode == 0, "convert --to csv %s" % " ".join(opts), r.stderr)
            verify_ok(out + ".manifest.json", "csv", "convert --to csv %s: verify --manifest" % " ".join(opts))

        # split: TFRecord (plain, gzip, zlib) and Avro.
        src = os.path.join(tmp, "tfrecord-none-taxi", "x-0000*-of-00002.tfrecord")
        for z in ("none", "gzip", "zlib"):
            out = os.path.join(tmp, "split-tfrecord-" + z, "y")
            r = st("split", src, "-o", out, "-s", "3", "-z", z, "-q")
            check(r.returncode == 0, "split tfrecord -z " + z, r.stderr)
            verify_ok(out + ".manifest.json", "tfrecord", "split tfrecord -z %s: verify --manifest" % z)
        out = os.path.join(tmp, "split-avro", "y")
        r = st("split", os.path.join(tmp, "avro-none-taxi", "x-0000*-of-00002.avro"), "-o", out,
               "--records-per-shard", "3000", "-q")
        check(r.returncode == 0, "split avro", r.stderr)
        verify_ok(out + ".manifest.json", "avro", "split avro: verify --manifest")

        # Damage to text shards is found.
        shard = os.path.join(tmp, "jsonl-none-taxi", "x-00001-of-00002.jsonl")
        with open(shard, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        with open(shard, "wb") as f:
            f.write(b"".join(lines[:-1]))
        r = st("verify", "-q", "--manifest", os.path.join(tmp, "jsonl-none-taxi", "x.manifest.json"))
        check(r.returncode == 1 and "DAMAGED: manifest mismatch: 4999 records, the manifest says 5000" in r.stdout,
              "a JSON-lines shard that lost a line fails", r.stdout + r.stderr)
        shard = os.path.join(tmp, "csv-gzip-taxi", "x-00000-of-00002.csv.gz")
        with open(shard, "r+b") as f:
            f.seek(200)
            b = f.read(1)
            f.seek(200)
            f.write(bytes([b[0] ^ 0x55]))
        r = st("verify", "-q", "--manifest", os.path.join(tmp, "csv-gzip-taxi", "x.manifest.json"))
        check(r.returncode == 1 and "DAMAGED: bad compressed stream" in r.stdout,
              "a damaged gzip CSV shard fails", r.stdout + r.stderr)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
