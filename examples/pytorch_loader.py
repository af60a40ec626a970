#!/usr/bin/env python3
"""Shards into a PyTorch training loop with shardtool.torch.ShardDataset.

    python3 examples/pytorch_loader.py out/
    python3 examples/pytorch_loader.py 'out/train-*.tfrecord' s3://bucket/more/

The inputs are given as to the shardtool command line (paths, globs,
directories, URLs; TFRecord, CSV, TSV, JSON lines, Parquet, Avro).  Two
epochs go through a DataLoader with 2 workers, each worker reading its own
share of the records, the shards dealt in an order shuffled per epoch and
the records shuffled through a buffer of 1000.  Prints per epoch the number
of records and the features of the first batch with their shapes.

Needs the shardtool module (`meson install`, or PYTHONPATH=python and
SHARDTOOL_LIBRARY=build/lib/libshardtool.so from a build tree), NumPy and
torch (Debian: python3-numpy, python3-torch)."""

import sys

from torch.utils.data import DataLoader

from shardtool.torch import ShardDataset, collate


def shape_of(value):
    """A batch entry's shape: a tensor's or array's, or the lengths of a
    list (bytes of records that differ in length, FeatureLists)."""
    if hasattr(value, "shape"):
        return "%s %s" % (tuple(value.shape), value.dtype)
    return "list of %d" % len(value)


def main(inputs):
    dataset = ShardDataset(inputs, shuffle_shards=True, shuffle_buffer=1000, seed=0)
    loader = DataLoader(dataset, batch_size=64, num_workers=2, collate_fn=collate)
    for epoch in range(2):
        dataset.set_epoch(epoch)  # a new order of shards and records each epoch
        records = 0
        first = None
        for batch in loader:
            if first is None:
                first = batch
            records += len(next(iter(batch.values()))) if batch else 0
        print("epoch %d: %d records" % (epoch, records))
        for name, value in (first or {}).items():
            print("  %s: %s" % (name, shape_of(value)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: pytorch_loader.py INPUT...")
    sys.exit(main(sys.argv[1:]))
