"""A shardtool_batch (shardtool.h) as one packed buffer: every array of the
padded batch dict (see padded()) laid end to end, 8-byte aligned, copied
straight from the library's columns, plus a short list of entries that
say where each array lies.  From a DataLoader worker such a batch crosses
to the main process as one buffer and rebuilds there as views of it:
torch passes each tensor of a dict through its own shared-memory file
descriptor, which costs far more than the copy.

Entries, in the order of the batch dict's keys:
  ("a", name, dtype string, shape, byte offset)   an array in the buffer
  ("o", name, value)                              a Python object beside it
                                                  (bytes as object arrays or
                                                  lists, FeatureLists as lists)

bytes_layout chooses how bytes features come:
  "objects"  (the default) an object array of bytes, (records, width), when
             every record has the feature with one count, else a list per
             record of bytes: one Python object per value;
  "offsets"  three arrays, no Python object per value: NAME, uint8, every
             value's bytes end to end; NAME + "/offsets", int64, values + 1
             (value j is NAME[offsets[j]:offsets[j+1]]); NAME + "/length",
             int64, each record's count of values (0 where absent).
FeatureLists come as a list per record of its steps' arrays ("objects"),
or ("offsets") as NAME, every step's values end to end (uint8 bytes for
bytes features, with NAME + "/offsets" as above), NAME + "/length" the
steps of each record and NAME + "/step_length" the values of each step."""

import ctypes

import numpy as np

from . import _lib
from ._columns import _COLUMN, _DTYPES, _clash

_string_at = ctypes.string_at
_memmove = ctypes.memmove
_c_char = ctypes.c_char
_I64 = np.dtype("<i8")
_F32 = np.dtype("<f4")
_U8 = np.dtype("u1")
LAYOUTS = ("objects", "offsets")


def _view(addr, count, dtype):
    """A NumPy view of `count` values at `addr` in the library's memory,
    valid until the next batch: copied out before this batch is returned."""
    if not count:
        return np.empty(0, dtype)
    return np.frombuffer((_c_char * (count * dtype.itemsize)).from_address(addr), dtype)


def _bytes_values(boff, bdata, count):
    """An object array of the `count` bytes values of a column."""
    values = np.empty(count, dtype=object)
    if count:
        ends = _view(boff, count + 1, _I64).tolist()
        blob = _string_at(bdata, ends[-1]) if ends[-1] else b""
        values[:] = [blob[a:b] for a, b in zip(ends, ends[1:])]
    return values


class _Plan:
    """The arrays of one packed batch: where each goes, and how it is filled."""

    def __init__(self):
        self.entries = []
        self.fills = []
        self.size = 0

    def array(self, name, dtype, shape, fill, *args):
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
        self.entries.append(("a", name, dtype.str, shape, self.size))
        if nbytes:
            self.fills.append((self.size, nbytes, dtype, shape, fill, args))
        self.size += (nbytes + 7) & ~7

    def obj(self, name, value):
        self.entries.append(("o", name, value))


# Fills: each writes its array at u8[at:at + nbytes].
def _fill_copy(u8, at, nbytes, dtype, shape, addr):
    _memmove(u8.ctypes.data + at, addr, nbytes)


def _fill_from(u8, at, nbytes, dtype, shape, array):
    u8[at:at + nbytes].view(dtype).reshape(shape)[...] = array


def _fill_padded(u8, at, nbytes, dtype, shape, addr, offsets, lengths, pad_value):
    n, width = shape
    out = u8[at:at + nbytes].view(dtype).reshape(shape)
    out.fill(pad_value)
    count = int(offsets[-1])
    if count:
        rows = np.repeat(np.arange(n), lengths)
        out[rows, np.arange(count) - np.repeat(offsets[:-1], lengths)] = _view(addr, count, dtype)


def _plan_values(plan, name, kind, count, i64, f32, boff, bdata):
    """NAME (and for bytes NAME/offsets): the column's values end to end."""
    if kind in _DTYPES:
        plan.array(name, _DTYPES[kind], (count,), _fill_copy, i64 if kind == _lib.KIND_INT64 else f32)
        return
    if kind == _lib.KIND_BYTES and count:
        ends = _view(boff, count + 1, _I64)
        plan.array(name, _U8, (int(ends[-1]),), _fill_copy, bdata)
        plan.array(name + "/offsets", _I64, (count + 1,), _fill_copy, boff)
    else:
        plan.array(name, _U8, (0,), None)
        plan.array(name + "/offsets", _I64, (count + 1,), _fill_from, np.zeros(count + 1, _I64))


def plan(batch, names, pad_value=0, bytes_layout="objects"):
    """The _Plan of a shardtool_batch pointer; `names` caches decoded names."""
    b = batch.contents
    n = b.nrecords
    p = _Plan()
    if not b.ncolumns:
        return n, p
    fields = list(_COLUMN.iter_unpack(_string_at(b.columns, _COLUMN.size * b.ncolumns)))
    decoded = []
    for f in fields:
        raw = _string_at(f[0], f[1]) if f[1] else b""
        name = names.get(raw)
        if name is None:
            name = names[raw] = raw.decode("utf-8", "surrogateescape")
        decoded.append(name)
    context = {name for name, f in zip(decoded, fields) if not f[3]}
    offsets_layout = bytes_layout == "offsets"
    for name, (_, _, kind, is_list, present, offsets, step_offsets, i64, f32, boff, bdata) in zip(decoded, fields):
        off = _view(offsets, n + 1, _I64)
        if is_list:
            if name in context:
                raise _clash(name)
            steps = _view(step_offsets, int(off[-1]) + 1, _I64)
            if offsets_layout:
                _plan_values(p, name, kind, int(steps[-1]), i64, f32, boff, bdata)
                p.array(name + "/length", _I64, (n,), _fill_from, np.diff(off))
                p.array(name + "/step_length", _I64, (len(steps) - 1,), _fill_from, np.diff(steps))
                continue
            count = int(steps[-1])
            if kind in _DTYPES:
                values = _view(i64 if kind == _lib.KIND_INT64 else f32, count, _DTYPES[kind]).copy()
            else:
                values = _bytes_values(boff, bdata, count) if kind == _lib.KIND_BYTES else np.empty(0, object)
            o, s = off.tolist(), steps.tolist()
            p.obj(name, [[values[s[j]:s[j + 1]] for j in range(o[i], o[i + 1])] for i in range(n)])
            continue
        lengths = np.diff(off)
        width = int(lengths.max()) if n else 0
        whole = bool(n) and width * n == int(off[-1]) and bool(_view(present, n, _U8).all())
        if whole:
            whole = int(lengths.min()) == width
        if kind in _DTYPES:
            dtype = _DTYPES[kind]
            addr = i64 if kind == _lib.KIND_INT64 else f32
            if whole:
                p.array(name, dtype, (n, width), _fill_copy, addr)
            else:
                p.array(name, dtype, (n, width), _fill_padded, addr, off, lengths, pad_value)
                p.array(name + "/length", _I64, (n,), _fill_from, lengths)
            continue
        if offsets_layout:
            _plan_values(p, name, kind, int(off[-1]), i64, f32, boff, bdata)
            p.array(name + "/length", _I64, (n,), _fill_from, lengths)
            continue
        count = int(off[-1])
        values = _bytes_values(boff, bdata, count) if kind == _lib.KIND_BYTES else np.empty(0, object)
        if whole:
            p.obj(name, values.reshape(n, width))
        else:
            o = off.tolist()
            p.obj(name, [list(values[o[i]:o[i + 1]]) for i in range(n)])
    return n, p


def fill(p, buffer, u8):
    """Copies the plan's arrays into `buffer` (at least p.size bytes; u8 is
    a uint8 NumPy view of it).  Returns (buffer, entries)."""
    for at, nbytes, dtype, shape, fn, args in p.fills:
        fn(u8, at, nbytes, dtype, shape, *args)
    return buffer, p.entries


def pack(batch, names, pad_value=0, bytes_layout="objects"):
    """(n, bytearray, entries) of a batch."""
    n, p = plan(batch, names, pad_value, bytes_layout)
    buf = bytearray(p.size)
    fill(p, buf, np.frombuffer(buf, _U8) if p.size else np.empty(0, _U8))
    return n, buf, p.entries


def unpack(buffer, entries):
    """The batch dict of a packed buffer, as NumPy views of it."""
    u8 = np.frombuffer(buffer, _U8) if len(buffer) else np.empty(0, _U8)
    out = {}
    for e in entries:
        if e[0] == "o":
            out[e[1]] = e[2]
            continue
        _, name, dtype, shape, at = e
        dtype = np.dtype(dtype)
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
        out[name] = u8[at:at + nbytes].view(dtype).reshape(shape)
    return out
