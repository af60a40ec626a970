#!/usr/bin/env python3
"""Writes JSON lines of COUNT JPEG-sized blobs: {"id": i, "image": {"base64":
...}}, each 50-200 KB of random bytes behind a JPEG magic (FF D8 FF E0), so
that --to webdataset names them .jpg.  Deterministic (fixed seed).  The
bench converts them to Parquet with shardtool.

    gen_blobs.py OUT.jsonl [COUNT]
"""
import base64
import json
import random
import sys


def main():
    out, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    rng = random.Random(20261129)
    with open(out, "w", buffering=1 << 20) as f:
        for i in range(count):
            n = rng.randrange(50_000, 200_001)
            blob = b"\xff\xd8\xff\xe0" + rng.randbytes(n - 4)
            f.write(json.dumps({"id": i, "image": {"base64": base64.b64encode(blob).decode()}}) + "\n")


if __name__ == "__main__":
    main()
