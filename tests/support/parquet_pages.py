"""The pages of a Parquet file, to damage one and write the file back.

    rewrite(data, mutate) -> bytes

walks every column chunk of every row group page by page (the chunks laid
out one after another, as writers put them), calls mutate(page) for each,
and lays the chunks out again with the footer's offsets and sizes
(dictionary_page_offset, data_page_offset, total_compressed_size, the row
group's file_offset and total_compressed_size) moved to where the pages now
are.  So a page header may grow or shrink (a size near 2^31 is a longer
varint) and the file stays well-formed around it: the reader meets exactly
the damage asked for, not a footer that no longer matches.

A page is a Page: rg, column (the chunk's index in the row group), index
(within the chunk), header (thrift_compact fields, PageHeader), body (the
bytes after the header).  mutate changes header and body in place.  A body
made longer or shorter moves the header's sizes with it (compressed, and
uncompressed by the same amount) unless mutate sets page.keep_sizes (a page
that claims more bytes than its chunk holds); with fix_crc (the default) a
page whose body changed gets its CRC computed again, so that the damage
reaches the decoder instead of the checksum.
Plain standard-library Python.
"""
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import thrift_compact as tc  # noqa: E402

# PageHeader fields
PH_TYPE, PH_UNCOMPRESSED, PH_COMPRESSED, PH_CRC = 1, 2, 3, 4
PH_DATA_V1, PH_DICTIONARY, PH_DATA_V2 = 5, 7, 8
DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 2, 3
# ColumnMetaData fields
CM_CODEC, CM_NUM_VALUES, CM_UNCOMPRESSED, CM_COMPRESSED = 4, 5, 6, 7
CM_DATA_OFFSET, CM_INDEX_OFFSET, CM_DICT_OFFSET = 9, 10, 11


class Page:
    def __init__(self, rg, column, index, header, body):
        self.rg, self.column, self.index = rg, column, index
        self.header, self.body = header, body
        self.keep_sizes = False

    @property
    def type(self):
        return tc.field(self.header, PH_TYPE)[2]

    def get(self, fid, sub=None):
        """A header field's value (of the sub-struct `sub` when given), or None."""
        fields = self.header
        if sub is not None:
            f = tc.field(fields, sub)
            if f is None:
                return None
            fields = f[2]
        f = tc.field(fields, fid)
        return None if f is None else f[2]

    def set(self, fid, value, sub=None, ftype=5):
        """Sets (or adds, as an i32 by default) a header field."""
        fields = self.header if sub is None else tc.field(self.header, sub)[2]
        f = tc.field(fields, fid)
        if f is None:
            fields.append([fid, ftype, value])
            fields.sort(key=lambda x: x[0])
        else:
            f[2] = value


def footer(data):
    """(FileMetaData fields, footer offset)."""
    if data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        raise ValueError("not a Parquet file")
    flen = struct.unpack("<I", data[-8:-4])[0]
    at = len(data) - 8 - flen
    meta, end = tc.read(data, at, 12)
    if end != len(data) - 8:
        raise ValueError("footer decode stopped at %d, not %d" % (end, len(data) - 8))
    return meta, at


def _chunk_meta(cc):
    return tc.field(cc, 3)[2]


def column_meta(meta, rg, column):
    """The ColumnMetaData fields of one chunk, from footer(data)[0]."""
    return _chunk_meta(tc.field(tc.field(meta, 4)[2][1][rg], 1)[2][1][column])


def pages(data):
    """Every page of the file, in file order."""
    meta, _ = footer(data)
    out = []
    for r, rg in enumerate(tc.field(meta, 4)[2][1]):
        for c, cc in enumerate(tc.field(rg, 1)[2][1]):
            out.extend(_chunk_pages(data, r, c, _chunk_meta(cc)))
    return out


def _chunk_start(cm):
    d = tc.field(cm, CM_DICT_OFFSET)
    start = tc.field(cm, CM_DATA_OFFSET)[2]
    return min(start, d[2]) if d is not None and d[2] > 0 else start


def _chunk_pages(data, r, c, cm):
    pos = _chunk_start(cm)
    end = pos + tc.field(cm, CM_COMPRESSED)[2]
    out = []
    while pos < end:
        header, body_at = tc.read(data, pos, 12)
        size = tc.field(header, PH_COMPRESSED)[2]
        out.append(Page(r, c, len(out), header, data[body_at:body_at + size]))
        pos = body_at + size
    if pos != end:
        raise ValueError("chunk %d/%d: pages end at %d, not %d" % (r, c, pos, end))
    return out


def signed32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def rewrite(data, mutate=None, fix_crc=True, footer_mutate=None):
    """The file with mutate(page) applied to every page (see the docstring),
    and footer_mutate(meta) to the FileMetaData fields once the offsets are
    moved (a size or count in the footer itself)."""
    meta, footer_at = footer(data)
    again = bytearray()
    tc.write(again, 12, meta)
    if bytes(again) != data[footer_at:len(data) - 8]:
        raise ValueError("thrift-compact round trip of the footer differs")
    out = bytearray(b"PAR1")
    for r, rg in enumerate(tc.field(meta, 4)[2][1]):
        rg_start = len(out)
        for c, cc in enumerate(tc.field(rg, 1)[2][1]):
            cm = _chunk_meta(cc)
            old_start = _chunk_start(cm)
            start = len(out)
            first_data = None
            for page in _chunk_pages(data, r, c, cm):
                body = page.body
                if mutate:
                    mutate(page)
                if len(page.body) != len(body) and not page.keep_sizes:
                    tc.field(page.header, PH_COMPRESSED)[2] = len(page.body)
                    tc.field(page.header, PH_UNCOMPRESSED)[2] += len(page.body) - len(body)
                crc = tc.field(page.header, PH_CRC)
                if fix_crc and crc is not None and page.body != body:
                    crc[2] = signed32(zlib.crc32(page.body))
                if first_data is None and page.type != DICTIONARY_PAGE:
                    first_data = len(out)
                tc.write(out, 12, page.header)
                out += page.body
            d = tc.field(cm, CM_DICT_OFFSET)
            if d is not None and d[2] > 0:
                d[2] = start
            tc.field(cm, CM_DATA_OFFSET)[2] = first_data if first_data is not None else start
            tc.field(cm, CM_COMPRESSED)[2] = len(out) - start
            fo = tc.field(cc, 2)
            if fo is not None and fo[2] >= old_start:
                fo[2] += start - old_start
        fo = tc.field(rg, 5)
        if fo is not None:
            fo[2] = rg_start
        tcs = tc.field(rg, 6)
        if tcs is not None:
            tcs[2] = len(out) - rg_start
    if footer_mutate:
        footer_mutate(meta)
    meta_bytes = bytearray()
    tc.write(meta_bytes, 12, meta)
    return bytes(out) + bytes(meta_bytes) + struct.pack("<I", len(meta_bytes)) + b"PAR1"
