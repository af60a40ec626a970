#!/usr/bin/env python3
"""CSV with classic-Mac CR-only line ends reads as Python's csv module reads
it (CR alone ends a record; a CR inside a quoted field is data).

Usage: check_cr_line_ends.py SHARDTOOL WORKDIR.  Writes CR-only CSV files
(hand-made ones and random ones with quoted CRs, quotes and commas, one
large enough for several chunks), reads them with `shardtool cat`, and
compares every record with csv.reader's.  Prints "equal" and exits 0, or
names the first file that differs and exits 1.
"""
import csv
import io
import json
import os
import random
import subprocess
import sys


def expected(data):
    rows = [r for r in csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")) if r]
    header = rows[0]
    # shardtool leaves an empty cell out of the record (--empty omit).
    return [{k: [v] for k, v in zip(header, r) if v != ""} for r in rows[1:]]


def ours(st, path, columns):
    types = [a for c in columns for a in ("--type", c + "=bytes")]
    p = subprocess.run([st, "cat", path] + types, capture_output=True, check=False)
    if p.returncode != 0:
        return None, p.stderr.decode(errors="replace")
    # A quoted "" is an empty string to shardtool but the same as an empty
    # cell to csv.reader: compare without them.
    recs = [json.loads(line) for line in p.stdout.decode().splitlines()]
    return [{k: v for k, v in r.items() if v != [""]} for r in recs], ""


def random_csv(rng, rows):
    out = ["a,b"]
    for _ in range(rows):
        cells = []
        for _ in range(2):
            v = "".join(rng.choice('xy1 ,\r"') for _ in range(rng.randint(0, 4)))
            if any(ch in v for ch in ',\r"') or rng.random() < 0.3:
                v = '"' + v.replace('"', '""') + '"'
            cells.append(v)
        out.append(",".join(cells))
    return ("\r".join(out) + "\r").encode()


def main():
    st, work = sys.argv[1], sys.argv[2]
    rng = random.Random(11)
    files = [
        b"a,b\r1,x\r2,y\r",
        b"a,b\r1,x\r2,y",  # no final line end
        b'a,b\r"1\rz",x\r2,"y""q"\r',  # a CR inside quotes is data
        b'\xef\xbb\xbf"a",b\r1,2\r',  # byte order mark
        b"a,b\r\r1,2\r",  # a blank line is skipped
    ]
    files += [random_csv(rng, rng.randint(1, 8)) for _ in range(150)]
    big = io.StringIO()
    w = csv.writer(big, lineterminator="\r")
    w.writerow(["a", "b"])
    for i in range(60000):
        w.writerow([str(i), rng.choice(["plain", "with\rcr", 'q"uote', "com,ma", ""])])
    files.append(big.getvalue().encode())
    for n, data in enumerate(files):
        path = os.path.join(work, "cr%d.csv" % n)
        with open(path, "wb") as f:
            f.write(data)
        got, err = ours(st, path, ["a", "b"])
        if got != expected(data):
            print("differs: %s (%r...) %s" % (path, data[:60], err))
            return 1
    print("equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
