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
import weakref

from operator import attrgetter, is_, itemgetter, methodcaller

import numpy as np
import torch
import torch.utils.data

import shardtool
from shardtool import _columns, _slots
from torch.utils.data._utils.collate import default_convert

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
                     with shuffle_buffer, which shuffles records.  From a
                     worker, each batch crosses to the main process as one
                     buffer, its tensors rebuilt there as views of it
    bytes_layout     batches: "objects" (default) or "offsets": bytes
                     features as NAME (uint8, the values' bytes end to end),
                     NAME + "/offsets" (int64, value j is
                     NAME[offsets[j]:offsets[j+1]]) and NAME + "/length"
                     (int64, values per record, 0 where absent), and
                     FeatureLists as NAME (the steps' values end to end),
                     NAME + "/length" (steps per record) and NAME +
                     "/step_length" (values per step): tensors only, no
                     Python object per value, the fastest to cross from a
                     worker
    shared_slots     batches from a worker: the number of slots it shares
                     with the main process (default 6; 0: none).  A batch is
                     packed straight into a free slot and its tensors in the
                     main process view it there, with no copy through the
                     worker's pipe; the slot is the worker's again once every
                     tensor of that batch is let go.  When every slot is
                     held (batches kept), a batch comes the ordinary way.
                     Memory: the slots are twice the largest batch so far,
                     rounded up to 1 MiB, shared by the worker and the main
                     process
    rank, world_size override torch.distributed and $RANK / $WORLD_SIZE
    remote           a dict of shardtool.configure_remote's settings (parallel,
                     chunk_size, retries, endpoint, ...), applied in this
                     process and in every worker, forked or spawned
    format, compression, max_record_size, and any other keyword
                     (columns, exclude, types, delimiter, ...): as for shardtool.open

    Memory per worker: one unit of one input (a batch of records, a Parquet
    row group or an Avro block), the remote fetcher's read-ahead (a few
    ranges of up to 8 MiB per object being read), the shuffle buffer, and
    with batch_size its shared slots.
    """

    def __init__(self, inputs, *, decode=True, shuffle_shards=False, shuffle_buffer=0, seed=0,
                 skip_corrupt=False, transform=None, rank=None, world_size=None, format=None,
                 compression=None, max_record_size=0, batch_size=None, pad_value=0, bytes_layout="objects",
                 shared_slots=6, remote=None, **reader_options):
        super().__init__()
        self.remote = dict(remote) if remote else None
        if self.remote:
            shardtool._configure_remote_once(self.remote)
        if batch_size is not None and shuffle_buffer:
            raise ValueError("shuffle_buffer shuffles records and batch_size yields whole batches: "
                             "use one, or batch_size=None with DataLoader(batch_size=..., collate_fn=collate)")
        self.batch_size = batch_size
        self.pad_value = pad_value
        self.bytes_layout = bytes_layout
        self.shared_slots = int(shared_slots)
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
                                pad_value=self.pad_value, bytes_layout=self.bytes_layout, **self.reader_options)
        if self.batch_size is None:
            records = reader._decoded_records() if self.decode else reader
        else:
            in_worker = torch.utils.data.get_worker_info() is not None
            slots = None
            if in_worker and self.shared_slots > 0 and _slots.available():
                slots = _slots.WorkerSlots.for_this_process(self.shared_slots)
            records = _batches(reader, in_worker, slots)
        if self.shuffle_buffer > 0:
            rng = random.Random("records/%d/%d/%d/%d" % (self.seed, self.epoch, index, count))
            records = _buffer_shuffle(reader, self.shuffle_buffer, rng)
        try:
            if self.transform:
                for rec in records:
                    yield self.transform(rec)
            else:
                yield from records
        finally:
            reader.close()
            self.skipped = reader.skipped
            if self.skipped:
                warnings.warn("shardtool: skipped %d damaged records in share %d of %d"
                              % (self.skipped, index, count), RuntimeWarning)


# Batches below this size cross from a DataLoader worker through its pipe
# as bytes; larger ones as one tensor in shared memory, whose file
# descriptor costs a fixed ~0.5 ms to pass but no copy through the pipe.
_PIPE_MAX = 512 << 10
_TORCH_DTYPES = {"<i8": (torch.int64, 8), "<f4": (torch.float32, 4), "|u1": (torch.uint8, 1)}


def _torch_dtype(dtype):
    """(torch dtype, item size) of a NumPy dtype string, or None where a
    tensor cannot view it (objects, other byte orders, wider than 8 bytes)."""
    dt = _TORCH_DTYPES.get(dtype)
    if dt is None and dtype not in _TORCH_DTYPES:
        np_dtype = np.dtype(dtype)
        if np_dtype.kind in "biuf" and np_dtype.isnative and np_dtype.itemsize <= 8:
            dt = (torch.from_numpy(np.empty(0, np_dtype)).dtype, np_dtype.itemsize)
        _TORCH_DTYPES[dtype] = dt
    return dt


def _alloc(size):
    """A buffer for a packed batch of `size` bytes: a bytearray, or a
    tensor from _PIPE_MAX bytes."""
    if size >= _PIPE_MAX:
        return torch.empty(size, dtype=torch.uint8)
    return bytearray(size)


_frombuffer = np.frombuffer
_from_numpy = torch.from_numpy
_NP_DTYPES = {}


def _rebuild(buffer, entries):
    """The batch dict of a packed buffer (shardtool._packed): its arrays as
    tensors viewing the buffer, Python objects as they are.  Each tensor is
    made through a NumPy view (np.frombuffer, torch.from_numpy), which costs
    half what slicing and viewing a tensor does."""
    if isinstance(buffer, torch.Tensor):
        base = buffer.numpy()
    elif isinstance(buffer, (_slots.WorkerSlot, _slots.MainSlot)):
        base = buffer.view
    else:
        base = buffer
    out = _Batch()
    for e in entries:
        if e[0] == "o":
            out[e[1]] = e[2]
            continue
        _, name, dtype, shape, at = e
        np_dtype = _NP_DTYPES.get(dtype)
        if np_dtype is None:
            np_dtype = _NP_DTYPES[dtype] = np.dtype(dtype)
        count = 1
        for d in shape:
            count *= d
        if count:
            out[name] = _from_numpy(_frombuffer(base, np_dtype, count, at).reshape(shape))
        else:
            out[name] = torch.empty(shape, dtype=_torch_dtype(dtype)[0])
    out._packed = (buffer, entries, {e[1]: out[e[1]] for e in entries if e[0] == "a"})
    _Batch._last = weakref.ref(out)
    return out


class _Batch(dict):
    """A batch dict whose tensors view one packed buffer: pickled (from a
    DataLoader worker to the main process) as that buffer and the entries
    that place each tensor, and rebuilt there; a dict whose tensors are no
    longer those views pickles as a plain dict.  default_convert, which
    the DataLoader applies in the worker, makes a new dict of the same
    tensors: that copy keeps the packing."""
    __slots__ = ("_packed", "__weakref__")
    _last = None   # a weak reference to the last batch rebuilt in this process

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._packed = None
        last = _Batch._last() if _Batch._last is not None else None
        if last is not None and args and len(self) == len(last) and last._packed is not None and self._views_of(last):
            self._packed = last._packed

    def _views_of(self, batch):
        return all(self.get(k) is v for k, v in batch._packed[2].items())

    def __reduce__(self):
        if self._packed is not None and len(self) == len(self._packed[1]) and self._views_of(self):
            buffer, entries, _ = self._packed
            return _rebuild, (buffer, [e if e[0] == "a" else ("o", e[1], self[e[1]]) for e in entries])
        return dict, (dict(self),)


def _pack(arrays):
    """A _Batch of the NumPy arrays (and other values) of dict `arrays`:
    its numeric arrays copied into one packed buffer, as tensors."""
    entries = []
    fills = []
    size = 0
    for k, v in arrays.items():
        if isinstance(v, np.ndarray) and _torch_dtype(v.dtype.str) is not None:
            entries.append(("a", k, v.dtype.str, v.shape, size))
            fills.append((size, v))
            size += (v.nbytes + 7) & ~7
        else:
            entries.append(("o", k, v))
    buf = _alloc(size)
    if not size:
        u8 = np.empty(0, np.uint8)
    else:
        u8 = buf.numpy() if isinstance(buf, torch.Tensor) else np.frombuffer(buf, np.uint8)
    for at, v in fills:
        u8[at:at + v.nbytes].view(v.dtype).reshape(v.shape)[...] = v
    return _rebuild(buf, entries)


def _batches(reader, ship, slots=None):
    """The reader's batches (Reader(batch_size=...)) packed, as _Batch dicts
    of tensors; `ship`: in a DataLoader worker, where default_convert is
    applied to the FeatureLists' arrays here, as it would be to a dict;
    `slots`: the worker's shared slots (shardtool._slots), where each batch
    is packed when one is free."""
    while True:
        try:
            n, plan = reader._next_plan()
        except StopIteration:
            return
        taken = slots.take(plan.size) if slots is not None and plan.size else None
        if taken is not None:
            address, buf = taken
            reader._packer.fill(plan, address)
        else:
            buf = _alloc(plan.size)
            reader._packer.fill(plan, buf.data_ptr() if isinstance(buf, torch.Tensor) else buf)
        entries = plan.entries
        if ship:
            entries = [e if e[0] == "a" else ("o", e[1], default_convert(e[2])) for e in entries]
        yield _rebuild(buf, entries)


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


def _joined(values, dtype, count):
    """The arrays `values` end to end, joined as raw bytes (object arrays:
    their objects in one pass): several times faster than np.concatenate
    over many small arrays.  None unless all are arrays of `dtype`, and
    C-contiguous when numeric (the result is then read-only: collate copies
    it into the batch's buffer)."""
    if set(map(_dtype_of, values)) != {dtype}:
        return None
    if dtype == object:
        # Bytes: the objects themselves, no cast.  Taken out as a list
        # (itemgetter for one value a record, the common case) and stored
        # in one assignment: several times faster than np.fromiter over
        # the arrays' own iterators.
        if values and count == len(values):
            items = list(map(_first, values))
        else:
            items = [x for v in values for x in v.tolist()]
        if len(items) != count:
            return None
        flat = np.empty(count, dtype=object)
        flat[:] = items
        return flat
    try:
        raw = b"".join(values)
    except (TypeError, BufferError, ValueError):
        return None
    if len(raw) != count * dtype.itemsize:
        return None
    return np.frombuffer(raw, dtype)


def _address(a):
    return a.__array_interface__["data"][0]


def _rows_taken(values):
    """The arrays `values` as one (records, width) array when they are
    consecutive rows, in order, of columns the reader cut into rows of one
    count and one dtype (_columns.recent_rows): a slice per column (one or
    two per batch) instead of a view per record.  None otherwise (any
    value not such a row, rows out of order, widths or dtypes that differ),
    and collate joins them one by one."""
    parts = []
    i = 0
    n = len(values)
    recent = _columns.recent_rows
    while i < n:
        v = values[i]
        if type(v) is not np.ndarray:
            return None
        owner = v.base
        entry = recent.get(id(owner))
        if entry is None or entry[0] is not owner:
            return None
        _, rows, cut = entry
        start, off = divmod(_address(v) - _address(rows), rows.strides[0])
        if off or not 0 <= start < len(cut) or cut[start] is not v:
            return None
        k = min(n - i, len(cut) - start)
        if k > 1 and not all(map(is_, values[i + 1:i + k], cut[start + 1:start + k])):
            return None
        part = rows[start:start + k]
        if parts and (part.dtype != parts[0].dtype or part.shape[1] != parts[0].shape[1]):
            return None
        parts.append(part)
        i += k
    return parts[0].copy() if len(parts) == 1 else np.concatenate(parts)


_dtype_of = attrgetter("dtype")
_first = itemgetter(0)
_keys_of = methodcaller("keys")


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
    same_keys = all(map(keys.__eq__, map(_keys_of, samples)))
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
        if not absent:
            rows = _rows_taken(values)
            if rows is not None:
                out[name] = rows
                continue
            # The common case: every record has the feature with one count
            # and one kind, joined as raw bytes (else as below).
            counts = set(map(len, values))
            if len(counts) == 1 and 0 not in counts:
                width = counts.pop()
                flat = _joined(values, first.dtype, n * width)
                if flat is not None:
                    out[name] = flat.reshape(n, width)
                    continue
        if absent:
            lengths = np.fromiter((len(v) if v is not None else 0 for v in values), np.int64, n)
        else:
            lengths = np.fromiter(map(len, values), np.int64, n)
        width = int(lengths.max())
        if not absent and width and (lengths == width).all():
            # The common case: every record has the feature with one length.
            # A batch of one kind concatenates to that kind; two kinds would
            # be cast into a third, which _one_dtype below refuses by name.
            flat = _joined(values, first.dtype, n * width)
            if flat is None:
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
    return _pack(out)
