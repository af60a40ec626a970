"""A shardtool_batch (columns of decoded records, shardtool.h) as NumPy
arrays: one copy per feature per batch, then records are cut from those
arrays without going back to C (whole batches: _packed)."""

import ctypes
import struct

from itertools import repeat

import numpy as np

from . import _lib

# shardtool_column: name (data, len), kind, is_feature_list, then seven pointers.
_COLUMN = struct.Struct("=QQii7Q")
assert _COLUMN.size == ctypes.sizeof(_lib.Column)
_string_at = ctypes.string_at
_memmove = ctypes.memmove
_DTYPES = {_lib.KIND_INT64: np.dtype("<i8"), _lib.KIND_FLOAT: np.dtype("<f4")}


def _array(addr, count, dtype):
    out = np.empty(count, dtype)
    if count:
        _memmove(out.ctypes.data, addr, count * dtype.itemsize)
    return out


class Column:
    """One feature of a batch: present (bool per record), offsets (record i
    has values[offsets[i]:offsets[i+1]]; for a FeatureList, steps), steps
    (FeatureLists: step s has values[steps[s]:steps[s+1]]), and values (an
    int64 or float32 array, or an object array of bytes)."""
    __slots__ = ("name", "kind", "is_feature_list", "present", "offsets", "steps", "values")


def columns(batch, names):
    """[Column] of a shardtool_batch pointer; `names` caches decoded names."""
    b = batch.contents
    n = b.nrecords
    out = []
    if not b.ncolumns:
        return n, out
    for (name_ptr, name_len, kind, is_list, present, offsets, step_offsets, i64, f32, boff,
         bdata) in _COLUMN.iter_unpack(_string_at(b.columns, _COLUMN.size * b.ncolumns)):
        c = Column()
        raw = _string_at(name_ptr, name_len) if name_len else b""
        c.name = names.get(raw)
        if c.name is None:
            c.name = names[raw] = raw.decode("utf-8", "surrogateescape")
        c.kind = kind
        c.is_feature_list = bool(is_list)
        c.present = _array(present, n, np.dtype(np.bool_))
        c.offsets = _array(offsets, n + 1, np.dtype("<u8")).astype(np.int64)
        inner = c.offsets
        if is_list:
            c.steps = _array(step_offsets, int(c.offsets[-1]) + 1, np.dtype("<u8")).astype(np.int64)
            inner = c.steps
        else:
            c.steps = None
        count = int(inner[-1])
        if kind in _DTYPES:
            c.values = _array(i64 if kind == _lib.KIND_INT64 else f32, count, _DTYPES[kind])
        else:
            c.values = np.empty(count, dtype=object)
            if kind == _lib.KIND_BYTES and count:
                ends = _array(boff, count + 1, np.dtype("<u8")).tolist()
                blob = _string_at(bdata, ends[-1]) if ends[-1] else b""
                c.values[:] = list(map(blob.__getitem__, map(slice, ends, ends[1:])))
        out.append(c)
    return n, out


_ABSENT = object()

# The columns of the last two batches cut into rows of one count (id of
# the column's values -> (values, the rows as a 2-D view, the list of row
# views handed out)): collate finds a batch's values there, consecutive
# rows of one column, and takes them as one slice instead of joining a view
# per record.  Two batches, as a collated batch spans the end of one and
# the start of the next; their records hold those columns alive anyway.
recent_rows = {}
_recent_keys = []


def _per_record(n, c, keys):
    """Column c cut into one view per record (a list of steps' views for a
    FeatureList), _ABSENT where the record lacks the feature."""
    values = c.values
    if c.is_feature_list:
        off = c.offsets.tolist()
        steps = c.steps.tolist()
        cut = [[values[steps[s]:steps[s + 1]] for s in range(off[i], off[i + 1])] for i in range(n)]
    elif n and len(values) % n == 0 and (c.offsets == np.arange(n + 1) * (len(values) // n)).all():
        # One count for every record: the rows of a 2-D view, cut in C.
        rows = values.reshape(n, len(values) // n)
        cut = list(rows)
        if rows.shape[1]:
            recent_rows[id(values)] = (values, rows, cut)
            keys.append(id(values))
    else:
        off = c.offsets.tolist()
        cut = [values[a:b] for a, b in zip(off, off[1:])]
    if not c.present.all():
        cut = [v if p else _ABSENT for v, p in zip(cut, c.present.tolist())]
    return cut


def records(n, cols):
    """The batch as a list of n dicts of feature name -> array (views of
    the column arrays), as Reader(decode=True) yields them.  Cut column by
    column, then zipped into dicts: the loops that run per record stay in
    C, and a list (not a generator) costs no Python frame per record."""
    context = {c.name for c in cols if not c.is_feature_list}
    for c in cols:
        if c.is_feature_list and c.name in context:
            raise _clash(c.name)
    names = [c.name for c in cols]
    keys = []
    cuts = [_per_record(n, c, keys) for c in cols]
    _recent_keys.append(keys)
    while len(_recent_keys) > 2:
        for k in _recent_keys.pop(0):
            recent_rows.pop(k, None)
    if not all(c.present.all() for c in cols):
        return [{k: v for k, v in zip(names, row) if v is not _ABSENT} for row in zip(*cuts)]
    if cuts:
        return list(map(dict, map(zip, repeat(names), zip(*cuts))))
    return [{} for _ in range(n)]


def _clash(name):
    from . import Error
    return Error(_lib.EDATA, "feature list %r has the name of a context feature: read the raw records "
                 "(decode=False) to keep both" % name)
