"""A shardtool_batch (shardtool.h) as one packed buffer: every array of the
batch dict laid end to end, 8-byte aligned, written by the library itself
(shardtool_batch_pack: no Python work per record or value), plus a short
list of entries that say where each array lies.  From a DataLoader worker
such a batch crosses to the main process as one buffer and rebuilds there
as views of it: torch passes each tensor of a dict through its own
shared-memory file descriptor, which costs far more than the copy.

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
import struct

import numpy as np

from . import _lib
from ._columns import _COLUMN, _DTYPES, _clash

_lib_pack_layout = _lib.lib.shardtool_batch_pack_layout
_lib_pack = _lib.lib.shardtool_batch_pack
_byref = ctypes.byref
_string_at = ctypes.string_at
_c_char = ctypes.c_char
_I64 = np.dtype("<i8")
_F32 = np.dtype("<f4")
_U8 = np.dtype("u1")
LAYOUTS = ("objects", "offsets")
# shardtool_pack_array: column, role, dtype, padded, ndim, reserved, shape[2], offset, nbytes
_ARRAY = struct.Struct("=6I4Q")
assert _ARRAY.size == ctypes.sizeof(_lib.PackArray)
_DTYPE_STR = {_lib.PACK_INT64: "<i8", _lib.PACK_FLOAT32: "<f4", _lib.PACK_UINT8: "|u1"}
_SUFFIX = ("", "/offsets", "/length", "/step_length")


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


def _objects(n, field):
    """bytes_layout="objects": the Python object of a bytes column (an
    object array (records, width) when every record has it with one count,
    else a list per record) or of a FeatureList (a list per record of its
    steps' arrays), from the batch's columns."""
    _, _, kind, is_list, present, offsets, step_offsets, i64, f32, boff, bdata = field
    off = _view(offsets, n + 1, _I64)
    if is_list:
        steps = _view(step_offsets, int(off[-1]) + 1, _I64)
        count = int(steps[-1])
        if kind in _DTYPES:
            values = _view(i64 if kind == _lib.KIND_INT64 else f32, count, _DTYPES[kind]).copy()
        else:
            values = _bytes_values(boff, bdata, count) if kind == _lib.KIND_BYTES else np.empty(0, object)
        o, s = off.tolist(), steps.tolist()
        return [[values[s[j]:s[j + 1]] for j in range(o[i], o[i + 1])] for i in range(n)]
    lengths = np.diff(off)
    width = int(lengths.max()) if n else 0
    whole = bool(n) and width * n == int(off[-1]) and bool(_view(present, n, _U8).all())
    if whole:
        whole = int(lengths.min()) == width
    count = int(off[-1])
    values = _bytes_values(boff, bdata, count) if kind == _lib.KIND_BYTES else np.empty(0, object)
    if whole:
        return values.reshape(n, width)
    o = off.tolist()
    return [list(values[o[i]:o[i + 1]]) for i in range(n)]


class _Plan:
    """One packed batch: its size in bytes, its entries, and what
    shardtool_batch_pack needs to write it."""
    __slots__ = ("batch", "size", "entries", "pads")


class Packer:
    """Lays out and packs the batches of one reader: the names it has met,
    the layout array the library fills, and the pad values."""

    def __init__(self, pad_value=0, bytes_layout="objects"):
        self.pad_value = pad_value
        self.offsets_layout = bytes_layout == "offsets"
        self._names = {}       # raw column name -> str
        self._array_names = {}  # (raw name, role) -> the entry's name
        self._cap = 0
        self._arrays = None
        self._narrays = ctypes.c_size_t()
        self._size = ctypes.c_uint64()
        self._err = _lib.Error()
        self._pads = {}
        self._checked = set()   # column name lists found free of clashes

    def _pad(self, dtype):
        """The pad value as the dtype holds it, as ndarray.fill would store it."""
        pad = self._pads.get(dtype)
        if pad is None:
            a = np.empty(1, dtype)
            a.fill(self.pad_value)
            pad = self._pads[dtype] = a[0].item()
        return pad

    def plan(self, batch):
        """(n, _Plan) of a shardtool_batch pointer."""
        b = batch.contents
        n = b.nrecords
        p = _Plan()
        p.batch = batch
        p.pads = (0, 0.0)
        if not b.ncolumns:
            p.size, p.entries = 0, []
            return n, p
        cap = 4 * b.ncolumns
        if cap > self._cap:
            self._cap = cap
            self._arrays = (_lib.PackArray * cap)()
        if _lib_pack_layout(batch, self._arrays, self._cap, _byref(self._narrays), _byref(self._size),
                            _byref(self._err)) < 0:
            raise _error(self._err)
        p.size = self._size.value
        col_bytes = _string_at(b.columns, _COLUMN.size * b.ncolumns)
        fields = list(_COLUMN.iter_unpack(col_bytes))
        raw_names = [_string_at(f[0], f[1]) if f[1] else b"" for f in fields]
        key = tuple(raw_names)
        if key not in self._checked:
            names = [self._name(r) for r in raw_names]
            context = {name for name, f in zip(names, fields) if not f[3]}
            for name, f in zip(names, fields):
                if f[3] and name in context:
                    raise _clash(name)
            self._checked.add(key)
        entries = []
        pad_i64 = pad_f32 = 0
        last = -1
        arrays = _string_at(self._arrays, _ARRAY.size * self._narrays.value)
        for column, role, dtype, padded, ndim, _, s0, s1, offset, _ in _ARRAY.iter_unpack(arrays):
            raw = raw_names[column]
            if not self.offsets_layout:
                f = fields[column]
                if f[3] or f[2] not in _DTYPES:
                    # A bytes column or a FeatureList: one Python object,
                    # in place of its arrays.
                    if last != column:
                        entries.append(("o", self._name(raw), _objects(n, f)))
                        last = column
                    continue
            if padded and s0 * s1:
                if dtype == _lib.PACK_INT64:
                    pad_i64 = self._pad(_I64)
                else:
                    pad_f32 = self._pad(_F32)
            name = self._array_names.get((raw, role))
            if name is None:
                name = self._array_names[(raw, role)] = self._name(raw) + _SUFFIX[role]
            entries.append(("a", name, _DTYPE_STR[dtype], (s0, s1) if ndim == 2 else (s0,), offset))
        p.entries = entries
        p.pads = (pad_i64, pad_f32)
        return n, p

    def _name(self, raw):
        name = self._names.get(raw)
        if name is None:
            name = self._names[raw] = raw.decode("utf-8", "surrogateescape")
        return name

    def fill(self, p, buffer):
        """Writes the batch of plan p into `buffer` (at least p.size bytes,
        8-byte aligned: a bytearray or a tensor's storage, by address)."""
        if not p.size:
            return
        addr = buffer if isinstance(buffer, int) else ctypes.addressof(_c_char.from_buffer(buffer))
        if _lib_pack(p.batch, p.pads[0], p.pads[1], addr, p.size, _byref(self._err)) < 0:
            raise _error(self._err)


def _error(err):
    from . import Error
    return Error(err.code, err.message.decode("utf-8", "replace"))


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
