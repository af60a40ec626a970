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

from operator import itemgetter

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
    transform        a function applied to each record (or batch) before it
                     is yielded
    batch_size       B: yield whole batches of up to B records cut in C (use
                     DataLoader(batch_size=None)): int64 / float32 features
                     as (records, width) tensors, padded where records
                     differ (NAME + "/length" then holds the counts), bytes
                     as object arrays or lists; the fastest way in.  Not
                     with shuffle_buffer, which shuffles records
    rank, world_size override torch.distributed and $RANK / $WORLD_SIZE
    remote           a dict of shardtool.configure_remote's settings (parallel,
                     chunk_size, retries, endpoint, ...), applied in this
                     process and in every worker, forked or spawned
    format, compression, max_record_size, and any other keyword
                     (columns, exclude, types, delimiter, ...): as for shardtool.open

    Memory per worker: one unit of one input (a batch of records, a Parquet
    row group or an Avro block), the remote fetcher's read-ahead (a few
    ranges of up to 8 MiB per object being read), and the shuffle buffer.
    """

    def __init__(self, inputs, *, decode=True, shuffle_shards=False, shuffle_buffer=0, seed=0,
                 skip_corrupt=False, transform=None, rank=None, world_size=None, format=None,
                 compression=None, max_record_size=0, batch_size=None, pad_value=0, remote=None,
                 **reader_options):
        super().__init__()
        self.remote = dict(remote) if remote else None
        if self.remote:
            shardtool._configure_remote_once(self.remote)
        if batch_size is not None and shuffle_buffer:
            raise ValueError("shuffle_buffer shuffles records and batch_size yields whole batches: "
                             "use one, or batch_size=None with DataLoader(batch_size=..., collate_fn=collate)")
        self.batch_size = batch_size
        self.pad_value = pad_value
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
        self.reader_options = dict(reader_options, format=format, compression=compression,
                                   max_record_size=max_record_size)
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
        if self.remote:
            shardtool._configure_remote_once(self.remote)
        index, count = self.share()
        reader = shardtool.open(self._ordered_inputs(), decode=self.decode, share=(index, count),
                                skip_corrupt=self.skip_corrupt, batch_size=self.batch_size,
                                pad_value=self.pad_value, **self.reader_options)
        records = reader if self.batch_size is None else map(_tensors, reader)
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


def _tensors(batch):
    """A padded batch's numeric arrays as tensors (bytes stay as they are),
    all views of one buffer: a DataLoader worker then hands the main
    process one shared-memory block per batch instead of one per feature."""
    numeric = [(k, v) for k, v in batch.items() if isinstance(v, np.ndarray) and v.dtype != object]
    out = dict(batch)
    if not numeric:
        return out
    offsets = []
    size = 0
    for _, v in numeric:
        offsets.append(size)
        size += (v.nbytes + 7) // 8 * 8   # every view starts 8-byte aligned
    buf = torch.empty(size, dtype=torch.uint8)
    flat = buf.numpy()
    for (k, v), at in zip(numeric, offsets):
        dtype = torch.from_numpy(v[:0]).dtype
        view = buf[at:at + v.nbytes].view(dtype).view(v.shape)
        flat[at:at + v.nbytes] = np.ascontiguousarray(v).view(np.uint8).reshape(-1)
        out[k] = view
    return out


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


def _one_dtype(name, values, fallback):
    """The one dtype of a feature's non-empty values across the records (an
    empty list has no kind of its own), or fallback when all are empty.
    Two kinds would have to be cast into one, which changes values: that
    is an error naming the feature, as in a batch cut in C."""
    kinds = {v.dtype for v in values if v is not None and len(v)}
    if len(kinds) > 1:
        raise ValueError("feature %r holds %s in different records of one batch: collate records of one kind, "
                         "or read them one at a time" % (name, " and ".join(sorted(str(k) for k in kinds))))
    return kinds.pop() if kinds else fallback


def collate(samples, pad_value=0):
    """A DataLoader collate_fn for decoded records, giving what
    ShardDataset(batch_size=...) gives: a feature every record has with
    the same number of values as a (batch, width) tensor (an object array
    for bytes); otherwise int64 / float32 features padded with pad_value to
    the longest (NAME + "/length" then holds each record's count, 0 where
    absent) and bytes features as a list per record of bytes; FeatureLists
    as a list per record of its steps' tensors (lists for bytes)."""
    if not samples:
        return {}
    n = len(samples)
    keys = samples[0].keys()
    same_keys = all(s.keys() == keys for s in samples)
    if same_keys:
        names = list(keys)
    else:
        names = list(dict.fromkeys(name for s in samples for name in s))
    out = {}
    for name in names:
        values = list(map(itemgetter(name), samples)) if same_keys else [s.get(name) for s in samples]
        first = next(v for v in values if v is not None)
        if isinstance(first, list):
            out[name] = [[torch.from_numpy(step) if step.dtype != object else list(step) for step in v]
                         if v is not None else [] for v in values]
            continue
        # (`None in values` would compare arrays with None, value by value.)
        absent = not same_keys and any(v is None for v in values)
        if absent:
            lengths = np.fromiter((len(v) if v is not None else 0 for v in values), np.int64, n)
        else:
            lengths = np.fromiter(map(len, values), np.int64, n)
        width = int(lengths.max())
        if not absent and width and (lengths == width).all():
            # The common case: every record has the feature with one length.
            # A batch of one kind concatenates to that kind; two kinds would
            # be cast into a third, which _one_dtype below refuses by name.
            flat = np.concatenate(values)
            if flat.dtype == first.dtype != object:
                out[name] = flat.reshape(n, width)
                continue
        dtype = _one_dtype(name, values, first.dtype)
        numeric = dtype != object
        if not absent and (lengths == width).all():
            flat = np.concatenate(values) if width else np.empty(0, dtype)
            arr = flat.reshape(n, width)
            out[name] = arr
            continue
        if not numeric:
            out[name] = [list(v) if v is not None else [] for v in values]
            continue
        batch = np.full((n, width), pad_value, dtype=dtype)
        present = [v for v in values if v is not None and len(v)]
        if present:
            rows = np.repeat(np.arange(n), lengths)
            starts = np.cumsum(lengths) - lengths
            batch[rows, np.arange(int(lengths.sum())) - np.repeat(starts, lengths)] = np.concatenate(present)
        out[name] = batch
        out[name + "/length"] = lengths
    return _tensors(out)
