"""shardtool.torch: a torch.utils.data.IterableDataset over libshardtool.

    from torch.utils.data import DataLoader
    from shardtool.torch import ShardDataset, collate

    ds = ShardDataset("s3://bucket/train/", shuffle_shards=True, shuffle_buffer=10_000, seed=1)
    loader = DataLoader(ds, batch_size=256, num_workers=4, collate_fn=collate)
    for epoch in range(epochs):
        ds.set_epoch(epoch)
        for batch in loader:
            ...

Every DataLoader worker of every rank reads a disjoint share of the
records, dealt as `shardtool convert --task I/N` deals them (I = rank *
workers + worker, N = world size * workers): by bytes for local
uncompressed files, else by whole inputs when there are at least N, else by
units of each input.  For any layout the shares together hold every record
exactly once per epoch.  The rank and world size come from
torch.distributed when it is initialized, else from $RANK and $WORLD_SIZE,
else 0 and 1."""

import os
import random
import warnings

import numpy as np
import torch
import torch.utils.data

import shardtool

__all__ = ["ShardDataset", "collate", "rank_and_world_size"]


def rank_and_world_size():
    """(rank, world size): torch.distributed's when initialized, else
    $RANK / $WORLD_SIZE, else (0, 1)."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world < 1 or not 0 <= rank < world:
        raise ValueError("RANK=%d is not below WORLD_SIZE=%d" % (rank, world))
    return rank, world


class ShardDataset(torch.utils.data.IterableDataset):
    """The records of `inputs` (paths, globs, directories, URLs, as
    shardtool.open takes them), each a dict of NumPy arrays (decode=True,
    the default) or serialized Example bytes (decode=False).

    shuffle_shards   deal the inputs in an order shuffled by (seed, epoch);
                     every worker and rank computes the same order, so the
                     shares stay disjoint
    shuffle_buffer   N > 0: records pass through a buffer of N, each drawn
                     at random; the same seed, epoch and layout give the
                     same order.  Memory: N decoded records per worker
    seed             the base of both shuffles
    skip_corrupt     skip damaged TFRecord records instead of raising; each
                     worker warns with its count at the end of its share,
                     and `skipped` holds the count of the last iteration
                     in this process
    transform        a function applied to each record before it is yielded
    rank, world_size override torch.distributed and $RANK / $WORLD_SIZE
    format, compression, max_record_size   as for shardtool.open

    Memory per worker: one unit of one input (a batch of records, a Parquet
    row group or an Avro block), the remote fetcher's read-ahead (a few
    ranges of up to 8 MiB per object being read), and the shuffle buffer.
    """

    def __init__(self, inputs, *, decode=True, shuffle_shards=False, shuffle_buffer=0, seed=0,
                 skip_corrupt=False, transform=None, rank=None, world_size=None, format=None,
                 compression=None, max_record_size=0):
        super().__init__()
        # Expanded once, here: every worker and rank deals the same list.
        self.inputs = shardtool.expand(inputs)
        self.decode = decode
        self.shuffle_shards = shuffle_shards
        self.shuffle_buffer = int(shuffle_buffer)
        self.seed = int(seed)
        self.epoch = 0
        self.skip_corrupt = skip_corrupt
        self.transform = transform
        self.rank = rank
        self.world_size = world_size
        self.reader_options = {"format": format, "compression": compression, "max_record_size": max_record_size}
        self.skipped = 0

    def set_epoch(self, epoch):
        """Sets the epoch the shuffles are seeded with (call it before each
        epoch's iteration, as with DistributedSampler)."""
        self.epoch = int(epoch)

    def share(self):
        """(index, count) of the share this process (worker) reads."""
        rank, world = rank_and_world_size()
        if self.rank is not None:
            rank = self.rank
        if self.world_size is not None:
            world = self.world_size
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        return rank * workers + worker, world * workers

    def _ordered_inputs(self):
        inputs = list(self.inputs)
        if self.shuffle_shards:
            random.Random("shards/%d/%d" % (self.seed, self.epoch)).shuffle(inputs)
        return inputs

    def __iter__(self):
        index, count = self.share()
        reader = shardtool.open(self._ordered_inputs(), decode=self.decode, share=(index, count),
                                skip_corrupt=self.skip_corrupt, **self.reader_options)
        records = reader
        if self.shuffle_buffer > 0:
            rng = random.Random("records/%d/%d/%d/%d" % (self.seed, self.epoch, index, count))
            records = _buffer_shuffle(reader, self.shuffle_buffer, rng)
        try:
            for rec in records:
                yield self.transform(rec) if self.transform else rec
        finally:
            reader.close()
            self.skipped = reader.skipped
            if self.skipped:
                warnings.warn("shardtool: skipped %d damaged records in share %d of %d"
                              % (self.skipped, index, count), RuntimeWarning)


def _buffer_shuffle(records, size, rng):
    buf = []
    for rec in records:
        if len(buf) < size:
            buf.append(rec)
            continue
        i = rng.randrange(size)
        out, buf[i] = buf[i], rec
        yield out
    rng.shuffle(buf)
    yield from buf


def collate(samples, pad_value=0):
    """A DataLoader collate_fn for decoded records: a dict of feature name
    -> a tensor of shape (batch, n) for int64 and float32 features (records
    with fewer values are padded with pad_value to the longest, and
    NAME + "/length" then holds each record's count), a list of lists of
    bytes for bytes features, and for FeatureLists a list per record of
    its steps' tensors.  A feature missing from some records is padded
    like an empty one."""
    if not samples:
        return {}
    out = {}
    names = []
    seen = set()
    for s in samples:
        for name in s:
            if name not in seen:
                seen.add(name)
                names.append(name)
    for name in names:
        values = [s.get(name) for s in samples]
        first = next(v for v in values if v is not None)
        if isinstance(first, list):
            out[name] = [[torch.from_numpy(step) if step.dtype != object else list(step) for step in v]
                         if v is not None else [] for v in values]
            continue
        if first.dtype == object:
            out[name] = [list(v) if v is not None else [] for v in values]
            continue
        lengths = [len(v) if v is not None else 0 for v in values]
        width = max(lengths)
        if all(n == width for n in lengths):
            out[name] = torch.from_numpy(np.stack(values))
            continue
        batch = np.full((len(values), width), pad_value, dtype=first.dtype)
        for i, v in enumerate(values):
            if v is not None:
                batch[i, :len(v)] = v
        out[name] = torch.from_numpy(batch)
        out[name + "/length"] = torch.tensor(lengths, dtype=torch.int64)
    return out
