#!/usr/bin/env python3
"""The peer of `convert --to webdataset`: Python's tarfile writing the same
members from memory, as webdataset's TarWriter does (a TarInfo and a
BytesIO per member, addfile, one tar per shard).

    wds_python_writer.py OUTDIR SHARD.tar...

Each input shard's members are loaded into memory first (not timed); then
the writing of that many members to OUTDIR/NAME is timed.  Prints the sum of
the timed seconds.  The members are the very bytes shardtool wrote, so both
write the same tar contents.
"""
import io
import os
import sys
import tarfile
import time


def main():
    out, shards = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    total = 0.0
    for shard in shards:
        with tarfile.open(shard) as t:
            members = [(m.name, t.extractfile(m).read()) for m in t]
        start = time.perf_counter()
        with tarfile.open(os.path.join(out, os.path.basename(shard)), "w", format=tarfile.PAX_FORMAT) as w:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = 0o644
                info.mtime = 0
                w.addfile(info, io.BytesIO(data))
        total += time.perf_counter() - start
        del members
    print(f"{total:.3f}")


if __name__ == "__main__":
    main()
