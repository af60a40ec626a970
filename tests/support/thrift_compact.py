"""Thrift compact protocol, enough for Parquet footers and page headers.

A generic codec: a struct reads as a list of [field id, type, value], a list
as (element type, values), so that a footer or page header read and written
back gives the same bytes, with any field changed in between.  Used by the
tests that rebuild Parquet files (tests/remote/test_cli_remote.py repeats a
row group; tests/support/parquet_pages.py damages page headers).
"""
import struct


def varint(buf, pos):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, pos


def zigzag(n):
    return (n >> 1) ^ -(n & 1)


def put_varint(out, n):
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def put_zigzag(out, n):
    put_varint(out, (n << 1) ^ (n >> 63))


def read(buf, pos, t):
    """One thrift-compact value of type t: returns (value, pos).  Structs
    are lists of [field id, type, value]; lists are (element type, values)."""
    if t in (1, 2):
        return t == 1, pos
    if t == 3:
        return struct.unpack_from("b", buf, pos)[0], pos + 1
    if t in (4, 5, 6):
        v, pos = varint(buf, pos)
        return zigzag(v), pos
    if t == 7:
        return struct.unpack_from("<d", buf, pos)[0], pos + 8
    if t == 8:
        n, pos = varint(buf, pos)
        return bytes(buf[pos:pos + n]), pos + n
    if t in (9, 10):
        h = buf[pos]
        pos += 1
        n, et = h >> 4, h & 0x0F
        if n == 15:
            n, pos = varint(buf, pos)
        items = []
        for _ in range(n):
            if et in (1, 2):
                items.append(buf[pos] == 1)
                pos += 1
            else:
                v, pos = read(buf, pos, et)
                items.append(v)
        return (et, items), pos
    if t == 12:
        fields, fid = [], 0
        while True:
            h = buf[pos]
            pos += 1
            if h == 0:
                return fields, pos
            ft = h & 0x0F
            if h >> 4:
                fid += h >> 4
            else:
                v, pos = varint(buf, pos)
                fid = zigzag(v)
            v, pos = read(buf, pos, ft)
            fields.append([fid, ft, v])
    raise ValueError("thrift type %d is not handled here" % t)


def write(out, t, v):
    if t == 3:
        out += struct.pack("b", v)
    elif t in (4, 5, 6):
        put_zigzag(out, v)
    elif t == 7:
        out += struct.pack("<d", v)
    elif t == 8:
        put_varint(out, len(v))
        out += v
    elif t in (9, 10):
        et, items = v
        if len(items) < 15:
            out.append((len(items) << 4) | et)
        else:
            out.append(0xF0 | et)
            put_varint(out, len(items))
        for item in items:
            if et in (1, 2):
                out.append(1 if item else 2)
            else:
                write(out, et, item)
    elif t == 12:
        last = 0
        for fid, ft, fv in v:
            wt = (1 if fv else 2) if ft in (1, 2) else ft
            if 0 < fid - last <= 15:
                out.append(((fid - last) << 4) | wt)
            else:
                out.append(wt)
                put_zigzag(out, fid)
            last = fid
            if ft not in (1, 2):
                write(out, ft, fv)
        out.append(0)
    else:
        raise ValueError("thrift type %d" % t)


def field(fields, fid):
    for f in fields:
        if f[0] == fid:
            return f
    return None
