"""Riegeli/records and ArrayRecord files in plain Python, for the tests: a
reader that follows google/riegeli's doc/riegeli_records_file_format.md on
its own (sharing no code with shardtool), and a writer that can make files
that lie (wrong counts, footers, sizes) with every hash still valid.

HighwayHash-64 is written out here from its specification too; it is slow
(pure Python) but the files the tests make are small.
"""
import struct

M64 = (1 << 64) - 1
BLOCK = 1 << 16
BLOCK_HEADER = 24
USABLE = BLOCK - BLOCK_HEADER
CHUNK_HEADER = 40
KEY = (0x2f696c6567656952, 0x0a7364726f636572, 0x2f696c6567656952, 0x0a7364726f636572)
MAGIC = 0x71930e704fdae05e


def _rot32_halves(x, n):
    lo, hi = x & 0xffffffff, x >> 32
    lo = ((lo << n) | (lo >> (32 - n))) & 0xffffffff if n else lo
    hi = ((hi << n) | (hi >> (32 - n))) & 0xffffffff if n else hi
    return lo | (hi << 32)


def _zipper(v1, v0):
    a0 = ((((v0 & 0xff000000) | (v1 & 0xff00000000)) >> 24) |
          (((v0 & 0xff0000000000) | (v1 & 0xff000000000000)) >> 16) | (v0 & 0xff0000) |
          ((v0 & 0xff00) << 32) | ((v1 & 0xff00000000000000) >> 8) | ((v0 << 56) & M64))
    a1 = ((((v1 & 0xff000000) | (v0 & 0xff00000000)) >> 24) | (v1 & 0xff0000) |
          ((v1 & 0xff0000000000) >> 16) | ((v1 & 0xff00) << 24) |
          ((v0 & 0xff000000000000) >> 8) | ((v1 & 0xff) << 48) | (v0 & 0xff00000000000000))
    return a1, a0


class _HH:
    def __init__(self, key):
        self.mul0 = [0xdbe6d5d5fe4cce2f, 0xa4093822299f31d0, 0x13198a2e03707344, 0x243f6a8885a308d3]
        self.mul1 = [0x3bd39e10cb0ef593, 0xc0acf169b5f18a8c, 0xbe5466cf34e90c6c, 0x452821e638d01377]
        self.v0 = [self.mul0[i] ^ key[i] for i in range(4)]
        self.v1 = [self.mul1[i] ^ (((key[i] >> 32) | (key[i] << 32)) & M64) for i in range(4)]

    def update(self, lanes):
        v0, v1, m0, m1 = self.v0, self.v1, self.mul0, self.mul1
        for i in range(4):
            v1[i] = (v1[i] + m0[i] + lanes[i]) & M64
            m0[i] ^= ((v1[i] & 0xffffffff) * (v0[i] >> 32)) & M64
            v0[i] = (v0[i] + m1[i]) & M64
            m1[i] ^= ((v0[i] & 0xffffffff) * (v1[i] >> 32)) & M64
        for hi, lo in ((1, 0), (3, 2)):
            a1, a0 = _zipper(v1[hi], v1[lo])
            v0[hi] = (v0[hi] + a1) & M64
            v0[lo] = (v0[lo] + a0) & M64
        for hi, lo in ((1, 0), (3, 2)):
            a1, a0 = _zipper(v0[hi], v0[lo])
            v1[hi] = (v1[hi] + a1) & M64
            v1[lo] = (v1[lo] + a0) & M64

    def packet(self, b):
        self.update(struct.unpack("<4Q", b))

    def remainder(self, b):
        n = len(b)
        mod4 = n & 3
        whole = n & ~3
        for i in range(4):
            self.v0[i] = (self.v0[i] + ((n << 32) + n)) & M64
            self.v1[i] = _rot32_halves(self.v1[i], n)
        p = bytearray(32)
        p[:whole] = b[:whole]
        rem = b[whole:]
        if n & 16:
            for i in range(4):
                p[28 + i] = b[whole + i + mod4 - 4]
        elif mod4:
            p[16] = rem[0]
            p[17] = rem[mod4 >> 1]
            p[18] = rem[mod4 - 1]
        self.packet(bytes(p))

    def final(self):
        for _ in range(4):
            v = self.v0
            sw = lambda x: ((x >> 32) | (x << 32)) & M64
            self.update([sw(v[2]), sw(v[3]), sw(v[0]), sw(v[1])])
        return (self.v0[0] + self.v1[0] + self.mul0[0] + self.mul1[0]) & M64


def highwayhash64(data, key=KEY):
    h = _HH(key)
    whole = len(data) & ~31
    for i in range(0, whole, 32):
        h.packet(data[i:i + 32])
    if len(data) & 31:
        h.remainder(data[whole:])
    return h.final()


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def read_varint(b, at):
    v = shift = 0
    while True:
        c = b[at]
        at += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, at


# ---- position arithmetic (the specification's implementation notes) ----

def remaining_in_block(pos):
    return (-pos) % BLOCK


def chunk_end(begin, data_size, num_records):
    size = CHUNK_HEADER + data_size
    blocks = (size + (begin + USABLE - 1) % BLOCK) // USABLE
    by_content = begin + size + blocks * BLOCK_HEADER
    p = begin + num_records
    rem = remaining_in_block(p)
    by_records = p + (rem - (USABLE - 1) if rem > USABLE - 1 else 0)
    return max(by_content, by_records)


# ---- reading ----

class Chunk:
    def __init__(self, offset, end, ctype, data, num_records, decoded_size):
        self.offset, self.end, self.type = offset, end, ctype
        self.data, self.num_records, self.decoded_size = data, num_records, decoded_size


def read_chunks(buf, check_hashes=True):
    """Every chunk of a Riegeli file, in order; raises ValueError on damage."""
    pos = 0
    chunks = []
    while pos < len(buf):
        begin = pos
        content = bytearray()
        blocks_seen = []

        def take(n):
            nonlocal pos
            while n:
                if pos % BLOCK == 0:
                    bh = buf[pos:pos + BLOCK_HEADER]
                    if len(bh) < BLOCK_HEADER:
                        raise ValueError("truncated block header at %d" % pos)
                    blocks_seen.append((pos, bh))
                    pos += BLOCK_HEADER
                k = min(n, remaining_in_block(pos))
                piece = buf[pos:pos + k]
                if len(piece) < k:
                    raise ValueError("truncated at %d" % pos)
                content.extend(piece)
                pos += k
                n -= k

        take(CHUNK_HEADER)
        h = bytes(content)
        header_hash, data_size, data_hash, type_count, decoded = struct.unpack("<QQQQQ", h)
        if check_hashes and highwayhash64(h[8:]) != header_hash:
            raise ValueError("chunk header hash at %d" % begin)
        ctype, num_records = type_count & 0xff, type_count >> 8
        end = chunk_end(begin, data_size, num_records)
        take(data_size)
        data = bytes(content[CHUNK_HEADER:])
        if check_hashes and highwayhash64(data) != data_hash:
            raise ValueError("data hash at %d" % begin)
        while pos < end:  # padding
            take(min(end - pos - (BLOCK_HEADER if pos % BLOCK == 0 else 0),
                     USABLE if pos % BLOCK == 0 else remaining_in_block(pos)))
        for at, bh in blocks_seen:
            hh, prev, nxt = struct.unpack("<QQQ", bh)
            if check_hashes and highwayhash64(bh[8:]) != hh:
                raise ValueError("block header hash at %d" % at)
            if prev != at - begin or nxt != end - at:
                raise ValueError("block header at %d does not name chunk %d..%d" % (at, begin, end))
        chunks.append(Chunk(begin, end, ctype, data, num_records, decoded))
    return chunks


def simple_records(chunk):
    """The records of an uncompressed simple chunk."""
    data = chunk.data
    if data[0] != 0:
        raise ValueError("compressed chunk (type %r): this reader reads uncompressed ones" % data[0])
    sizes_len, at = read_varint(data, 1)
    sizes = data[at:at + sizes_len]
    values = data[at + sizes_len:]
    out, s, v = [], 0, 0
    while s < len(sizes):
        n, s = read_varint(sizes, s)
        out.append(values[v:v + n])
        v += n
    if v != len(values) or len(out) != chunk.num_records or v != chunk.decoded_size:
        raise ValueError("simple chunk at %d: sizes disagree with its header" % chunk.offset)
    return out


# ---- writing (for hostile files: anything may lie, the hashes do not) ----

class Writer:
    def __init__(self):
        self.out = bytearray()

    def chunk(self, ctype, data, num_records, decoded_size, end=None, data_size=None):
        begin = len(self.out)
        size = len(data) if data_size is None else data_size
        body = struct.pack("<QQQQ", size, highwayhash64(data), (num_records << 8) | ctype, decoded_size)
        header = struct.pack("<Q", highwayhash64(body)) + body
        stop = chunk_end(begin, size, num_records) if end is None else end
        content = header + data
        i = 0
        while i < len(content) or len(self.out) < stop:
            if len(self.out) % BLOCK == 0:
                bb = struct.pack("<QQ", len(self.out) - begin, stop - len(self.out))
                self.out += struct.pack("<Q", highwayhash64(bb)) + bb
            k = remaining_in_block(len(self.out))
            if i < len(content):
                piece = content[i:i + k]
                i += len(piece)
                self.out += piece
            else:
                self.out += bytes(min(k, stop - len(self.out)))
        return begin

    def signature(self):
        return self.chunk(ord("s"), b"", 0, 0)

    def simple(self, records, num_records=None, decoded_size=None):
        sizes = b"".join(varint(len(r)) for r in records)
        values = b"".join(records)
        data = b"\0" + varint(len(sizes)) + sizes + values
        return self.chunk(ord("r"), data, len(records) if num_records is None else num_records,
                          len(values) if decoded_size is None else decoded_size)

    def pad_to_block(self):
        length = remaining_in_block(len(self.out))
        if length == 0:
            return
        if length < CHUNK_HEADER:
            length += USABLE
        self.chunk(ord("p"), bytes(length - CHUNK_HEADER), 0, 0)
