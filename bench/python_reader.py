#!/usr/bin/python3
"""Reads a TFRecord shard set into Python dicts of arrays through a
DataLoader, three ways, and prints records/s and peak RSS for each:

  baseline   a pure-Python reader written the way the common PyTorch
             TFRecord reader is: struct framing, python3-protobuf parse, no
             CRC check; each worker takes every n-th file; records become
             dicts of NumPy arrays
  records    shardtool.torch.ShardDataset (every CRC checked, decoded in C),
             one dict per record, batched by collate
  batches    ShardDataset(batch_size=B, bytes_layout=L): whole batches cut
             in C, no per-record dicts; with L "offsets" (the default
             here) no Python object per value either

usage: python_reader.py MODE SHARDS... [--workers N] [--batch B] [--proto DIR]
                        [--bytes-layout objects|offsets] [--shared-slots N]
Prints one line: MODE records seconds rate peak_main_mb peak_worker_mb
main_cpu_s workers_cpu_s (CPU: user + system during the reading, the
workers' once they have exited)."""

import argparse
import glob
import os
import resource
import struct
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class PurePythonTFRecord(IterableDataset):
    def __init__(self, files, pb2):
        self.files = files
        self.pb2 = pb2

    def __iter__(self):
        info = get_worker_info()
        files = self.files[info.id::info.num_workers] if info else self.files
        for path in files:
            with open(path, "rb") as f:
                while True:
                    head = f.read(12)
                    if len(head) < 12:
                        break
                    (n,) = struct.unpack("<Q", head[:8])
                    payload = f.read(n)
                    f.read(4)
                    ex = self.pb2.Example.FromString(payload)
                    rec = {}
                    for name, feat in ex.features.feature.items():
                        kind = feat.WhichOneof("kind")
                        if kind == "int64_list":
                            rec[name] = np.array(feat.int64_list.value, dtype=np.int64)
                        elif kind == "float_list":
                            rec[name] = np.array(feat.float_list.value, dtype=np.float32)
                        else:
                            rec[name] = np.array(list(feat.bytes_list.value), dtype=object)
                    yield rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["baseline", "records", "batches"])
    ap.add_argument("shards", nargs="+")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--proto", help="directory holding example_pb2.py (baseline)")
    ap.add_argument("--bytes-layout", default="offsets", choices=["objects", "offsets"])
    ap.add_argument("--shared-slots", type=int, default=6)
    a = ap.parse_args()
    from shardtool.torch import ShardDataset, collate
    files = sorted(p for s in a.shards for p in (glob.glob(s) if "://" not in s and any(c in s for c in "*?[")
                                                 else [s]))
    if a.mode == "baseline":
        sys.path.insert(0, a.proto)
        import example_pb2
        loader = DataLoader(PurePythonTFRecord(files, example_pb2), batch_size=a.batch, num_workers=a.workers,
                            collate_fn=collate)
    elif a.mode == "records":
        loader = DataLoader(ShardDataset(files), batch_size=a.batch, num_workers=a.workers, collate_fn=collate)
    else:
        loader = DataLoader(ShardDataset(files, batch_size=a.batch, bytes_layout=a.bytes_layout,
                                         shared_slots=a.shared_slots), batch_size=None,
                            num_workers=a.workers)
    start = time.time()
    t0 = os.times()
    n = 0
    for batch in loader:
        n += len(next(iter(batch.values())))
    dt = time.time() - start
    del loader   # its workers exit: their CPU time is counted below
    t1 = os.times()
    main_cpu = t1.user - t0.user + t1.system - t0.system
    workers_cpu = t1.children_user - t0.children_user + t1.children_system - t0.children_system
    main_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print("%s %d %.3f %.0f %.0f %.0f %.2f %.2f" % (a.mode, n, dt, n / dt, main_mb, worker_mb, main_cpu, workers_cpu))


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
