/* ArrayRecord: HighwayHash against the values the Riegeli specification
 * fixes, the chunk arithmetic of its implementation notes, record lookup
 * through the footer reading a small part of a large file, and a lying
 * footer found by the reader. */
#include "../../formats/arrayrecord/ar_internal.h"
#include "../../formats/arrayrecord/highwayhash.h"
#include "../../formats/arrayrecord/zstd_small.h"

#include <CUnit/CUnit.h>
#include <zstd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void test_hash_of_the_signature(void)
{
    /* The signature's 64 bytes hold three hashes the specification prints:
     * the block header's, the chunk header's and the empty data's. */
    const uint8_t *s = st_riegeli_signature;
    CU_ASSERT_EQUAL(st_riegeli_hash(s + 8, 16), le64(s));
    CU_ASSERT_EQUAL(st_riegeli_hash(s + 32, 32), le64(s + 24));
    CU_ASSERT_EQUAL(st_riegeli_hash("", 0), le64(s + 40));
    CU_ASSERT_EQUAL(st_riegeli_hash("", 0), 0x72c3b1e9c0139fe1ull);
}

static void test_chunk_end_arithmetic(void)
{
    uint64_t end;
    /* the signature chunk: a block header, then 40 bytes */
    CU_ASSERT_TRUE(st_riegeli_chunk_end(0, 0, 0, &end));
    CU_ASSERT_EQUAL(end, 64);
    /* Google's one-byte records: 40 + 4 bytes each */
    CU_ASSERT_TRUE(st_riegeli_chunk_end(64, 4, 1, &end));
    CU_ASSERT_EQUAL(end, 108);
    /* ending exactly at a boundary: no block header after it */
    CU_ASSERT_TRUE(st_riegeli_chunk_end(65536 - 50, 10, 1, &end));
    CU_ASSERT_EQUAL(end, 65536);
    /* one byte more: the next block's header and the byte */
    CU_ASSERT_TRUE(st_riegeli_chunk_end(65536 - 50, 11, 1, &end));
    CU_ASSERT_EQUAL(end, 65536 + 24 + 1);
    /* many records in few bytes: at least one byte per record, and never
     * ending inside or right after a block header */
    CU_ASSERT_TRUE(st_riegeli_chunk_end(65536 - 100, 0, 90, &end));
    CU_ASSERT_EQUAL(end, 65536 - 10);
    CU_ASSERT_TRUE(st_riegeli_chunk_end(65536 - 100, 0, 110, &end));
    CU_ASSERT_EQUAL(end, 65536 + 25);
    /* sizes that overflow are refused */
    CU_ASSERT_FALSE(st_riegeli_chunk_end(64, UINT64_MAX - 10, 1, &end));
    /* the largest record count (7 bytes) still has an end, which no file
     * reaches: the reader calls that truncated */
    CU_ASSERT_TRUE(st_riegeli_chunk_end(64, 0, UINT64_MAX >> 8, &end));
    CU_ASSERT(end >= UINT64_MAX >> 8);
}

/* The inline chunk end (the reader's, with the usual chunk worked out in
 * place) against the general formula: every place in a block's first and
 * last bytes, sizes that end just inside, at and past the block's end,
 * record counts around the chunk's bytes, and the top of the range. */
static void test_chunk_end_inline_agrees(void)
{
    static const uint64_t blocks[] = {0, 1, 7, (uint64_t)1 << 40, UINT64_MAX / ST_RIEGELI_BLOCK_SIZE - 1,
                                      UINT64_MAX / ST_RIEGELI_BLOCK_SIZE};
    static const uint64_t sizes[] = {0, 1, 31, 32, 220, 1000, 65000, 65471, 65472, 65473, 65536, 65537, 1 << 20};
    long compared = 0, differ = 0;
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
        for (uint64_t in_block = 0; in_block < ST_RIEGELI_BLOCK_SIZE; in_block++) {
            if (in_block == 64)
                in_block = ST_RIEGELI_BLOCK_SIZE - 1100; /* the middle: like its edges */
            uint64_t begin = blocks[b] * ST_RIEGELI_BLOCK_SIZE + in_block;
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
                uint64_t edge = ST_RIEGELI_BLOCK_SIZE - in_block; /* content up to the block's end */
                uint64_t candidates[] = {sizes[k], edge > 40 ? edge - 40 : 0, edge > 41 ? edge - 41 : 0, edge - 39};
                for (size_t d = 0; d < 4; d++) {
                    uint64_t size = candidates[d];
                    uint64_t counts[] = {0, 1, size + 39, size + 40, size + 41, UINT64_MAX >> 8};
                    for (size_t r = 0; r < 6; r++) {
                        uint64_t want = 0, got = 0;
                        bool want_ok = st_riegeli_chunk_end(begin, size, counts[r], &want);
                        bool got_ok = st_riegeli_chunk_end_inline(begin, size, counts[r], &got);
                        compared++;
                        if (want_ok != got_ok || (want_ok && want != got)) {
                            if (differ++ < 5)
                                printf("\nchunk end at %llu, %llu bytes, %llu records: %d %llu, inline %d %llu\n",
                                       (unsigned long long)begin, (unsigned long long)size,
                                       (unsigned long long)counts[r], want_ok, (unsigned long long)want, got_ok,
                                       (unsigned long long)got);
                        }
                    }
                }
            }
        }
    }
    CU_ASSERT_EQUAL(differ, 0);
    CU_ASSERT(compared > 100000);
}

/* The inline varint reader (its one-, two- and word-at-once cases)
 * against the general one: values of every length up to 10 bytes, each
 * cut at every length, overlong forms and random bytes. */
static void test_varint_inline_agrees(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    long differ = 0;
    for (int round = 0; round < 20000; round++) {
        uint8_t p[16];
        size_t len;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (round % 3 == 2) {
            for (int i = 0; i < 16; i++)
                p[i] = (uint8_t)(x >> (8 * (i % 8))) ^ (uint8_t)(i * 37);
            len = 16;
        } else {
            /* a value of 1..64 bits, maybe with overlong zero groups */
            int bits = 1 + round % 64;
            uint64_t v = bits == 64 ? x : x & (((uint64_t)1 << bits) - 1);
            len = st_riegeli_put_varint(p, v);
            if (round % 3 == 1 && len < 9) {
                p[len - 1] |= 0x80;
                p[len++] = 0;
            }
            memset(p + len, 0xff, sizeof p - len); /* never read as part of it */
        }
        for (size_t n = 0; n <= len; n++) {
            uint64_t want = 7, got = 7;
            size_t want_len = st_riegeli_get_varint(p, n, &want);
            size_t got_len = st_riegeli_get_varint_inline(p, n, &got);
            if (want_len != got_len || (want_len && want != got)) {
                if (differ++ < 5)
                    printf("\nvarint of %zu bytes cut at %zu: %zu %llu, inline %zu %llu\n", len, n, want_len,
                           (unsigned long long)want, got_len, (unsigned long long)got);
            }
        }
    }
    CU_ASSERT_EQUAL(differ, 0);
}

/* Writes n records ("record %d" padded to `size` bytes) with the writer ops. */
static char *write_file(size_t n, size_t size, uint64_t group, const char *codec)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/st-ar-test-%d.array_record", (int)getpid());
    st_error err = {0};
    st_ostream *out;
    CU_ASSERT_EQUAL_FATAL(st_ostream_create_file(path, ST_OSTREAM_FORCE, &out, &err), ST_OK);
    st_ar_write_options ao = {.codec = codec, .level = -1, .group_size = group};
    st_write_options wo = {.format_options = &ao};
    const st_writer_ops *ops = st_format_arrayrecord.writer;
    void *priv = calloc(1, ops->priv_size);
    CU_ASSERT_EQUAL_FATAL(ops->open(priv, out, &wo, &err), ST_OK);
    st_buf enc = {0};
    char *payload = malloc(size + 1);
    for (size_t i = 0; i < n; i++) {
        memset(payload, 'a' + (int)(i % 26), size);
        snprintf(payload, size, "record %zu", i);
        st_record rec;
        memset(&rec, 0, sizeof rec);
        rec.payload.data = (const uint8_t *)payload;
        rec.payload.len = size;
        enc.len = 0;
        CU_ASSERT_EQUAL_FATAL(ops->encode(&wo, &rec, &enc, &err), ST_OK);
        CU_ASSERT_EQUAL_FATAL(ops->write(priv, enc.data, enc.len, &err), ST_OK);
    }
    CU_ASSERT_EQUAL_FATAL(ops->finish(priv, &err), ST_OK);
    CU_ASSERT_EQUAL_FATAL(st_ostream_commit(out, &err), ST_OK);
    st_ostream_close(out);
    ops->close(priv);
    free(priv);
    free(payload);
    st_buf_free(&enc);
    return path;
}

static void check_at(const char *path, uint64_t index, size_t size, uint64_t *read)
{
    st_stream *in;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_stream_open_file(path, &in, &err), ST_OK);
    uint8_t *data;
    size_t len;
    CU_ASSERT_EQUAL_FATAL(st_ar_read_record_at(in, index, 0, &data, &len, read, &err), ST_OK);
    char want[64];
    snprintf(want, sizeof want, "record %llu", (unsigned long long)index);
    CU_ASSERT_EQUAL(len, size);
    CU_ASSERT_EQUAL(memcmp(data, want, strlen(want) + 1), 0);
    free(data);
    st_stream_close(in);
}

static void test_record_at_reads_little(void)
{
    /* 60,000 records of 300 bytes, uncompressed: about 19 MB.  Finding one
     * reads the postscript block, the footer and one chunk. */
    const char *path = write_file(60000, 300, 1, "none");
    st_stream *in;
    st_error err = {0};
    uint64_t size;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_file(path, &in, &err), ST_OK);
    CU_ASSERT_EQUAL(st_stream_size(in, &size, &err), ST_OK);
    st_stream_close(in);
    uint64_t worst = 0;
    uint64_t picks[] = {0, 1, 29999, 59999, 12345};
    for (size_t i = 0; i < sizeof picks / sizeof *picks; i++) {
        uint64_t read = 0;
        check_at(path, picks[i], 300, &read);
        if (read > worst)
            worst = read;
    }
    CU_ASSERT(size > 18000000);
    /* the footer's 60,000 entries are about 600 KB; the rest is 64 KiB reads */
    CU_ASSERT(worst < 1200000);
    CU_ASSERT(worst < size / 15);
    /* groups of 100, zstd */
    path = write_file(5000, 120, 100, "zstd");
    check_at(path, 4999, 120, NULL);
    check_at(path, 100, 120, NULL);
    check_at(path, 99, 120, NULL);
    unlink(path);
}

static void test_reader_reads_every_record(void)
{
    const char *path = write_file(3000, 50, 7, "zstd");
    st_stream *in;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_stream_open_file(path, &in, &err), ST_OK);
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.payload_only = true;
    const st_reader_ops *ops = st_format_arrayrecord.reader;
    void *priv = calloc(1, ops->priv_size);
    CU_ASSERT_EQUAL_FATAL(ops->open(priv, in, &ro, &err), ST_OK);
    st_batch b;
    st_batch_init(&b);
    st_unit u;
    size_t seen = 0;
    int rc;
    while ((rc = ops->next_unit(priv, &u, &err)) > 0) {
        CU_ASSERT_EQUAL(u.first_record, seen);
        st_batch_reset(&b);
        CU_ASSERT_EQUAL_FATAL(ops->decode_unit(priv, &u, &b, &err), ST_OK);
        for (size_t i = 0; i < b.count; i++, seen++) {
            char want[32];
            snprintf(want, sizeof want, "record %zu", seen);
            CU_ASSERT_EQUAL(b.records[i].payload.len, 50);
            CU_ASSERT_EQUAL(memcmp(b.records[i].payload.data, want, strlen(want) + 1), 0);
        }
        ops->free_unit(priv, &u);
    }
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(seen, 3000);
    st_batch_free(&b);
    ops->close(priv);
    free(priv);
    st_stream_close(in);
    unlink(path);
}

/* Small buffers are stored as zstd frames of one raw block, made by hand:
 * libzstd itself must read them back, and our reader too. */
static void test_small_zstd_frames_are_zstd(void)
{
    for (size_t n = 0; n <= 40; n++) {
        uint8_t in[64];
        for (size_t i = 0; i < n; i++)
            in[i] = (uint8_t)(i * 37 + n);
        uint8_t size[10];
        size_t size_len = st_riegeli_put_varint(size, n);
        st_buf chunk = {0};
        st_error err = {0};
        CU_ASSERT_EQUAL_FATAL(st_riegeli_simple_encode(ST_RIEGELI_COMPRESSION_ZSTD, 3, size, size_len, in, n, 1,
                                                       &chunk, &err), ST_OK);
        /* the data: type byte, sizes' length, sizes' frame, values' frame */
        const uint8_t *d = chunk.data + ST_RIEGELI_CHUNK_HEADER_SIZE;
        size_t len = chunk.len - ST_RIEGELI_CHUNK_HEADER_SIZE;
        CU_ASSERT_EQUAL(d[0], 'z');
        uint64_t sizes_len;
        size_t v = st_riegeli_get_varint(d + 1, len - 1, &sizes_len);
        const uint8_t *values = d + 1 + v + sizes_len;
        uint64_t prefix;
        size_t p = st_riegeli_get_varint(values, (size_t)(d + len - values), &prefix);
        CU_ASSERT_EQUAL(prefix, n);
        uint8_t out[64];
        size_t got = ZSTD_decompress(out, sizeof out, values + p, (size_t)(d + len - values - p));
        CU_ASSERT_FALSE(ZSTD_isError(got));
        CU_ASSERT_EQUAL(got, n);
        CU_ASSERT_EQUAL(memcmp(out, in, n), 0);
        /* and back through our decoder */
        st_riegeli_chunk_header h;
        CU_ASSERT_TRUE(st_riegeli_chunk_header_decode(chunk.data, &h));
        st_riegeli_simple s;
        CU_ASSERT_EQUAL_FATAL(st_riegeli_simple_decode(d, len, &h, 1 << 20, &s, &err), ST_OK);
        const uint8_t *rec = NULL;
        size_t rec_len = 0;
        CU_ASSERT_TRUE(st_riegeli_simple_next(&s, &rec, &rec_len));
        CU_ASSERT_EQUAL(rec_len, n);
        CU_ASSERT_EQUAL(memcmp(rec, in, n), 0);
        st_riegeli_simple_free(&s);
        st_buf_free(&chunk);
    }
}

/* The literals section type of a zstd frame's first block (RFC 8878:
 * 0 raw, 1 RLE, 2 Huffman, 3 Huffman with the previous table), or -1 when
 * the block is not a compressed one. */
static int first_literals_type(const uint8_t *f, size_t n)
{
    if (n < 6)
        return -1;
    uint8_t fhd = f[4];
    static const size_t fcs_sizes[4] = {0, 2, 4, 8}, did_sizes[4] = {0, 1, 2, 4};
    size_t fcs = fcs_sizes[fhd >> 6];
    if ((fhd & 0x20) && fcs == 0)
        fcs = 1;
    size_t at = 5 + ((fhd & 0x20) ? 0 : 1) + did_sizes[fhd & 3] + fcs;
    if (at + 4 > n || ((f[at] >> 1) & 3) != 2)
        return -1;
    return f[at + 3] & 3;
}

/* A record's chunk: records up to 512 bytes keep their literals raw (a
 * Huffman table per tiny frame costs more time than it saves bytes),
 * larger buffers Huffman-code them; libzstd's decoder reads both back to
 * the input. */
static void test_zstd_literals_by_size(void)
{
    static const char words[] = "feature label image/encoded score tokens the quick brown fox jumps ";
    int raw_small = 0, huffman_large = 0;
    for (size_t n = 100; n <= 4000; n += n < 600 ? 7 : 500) {
        uint8_t in[4000];
        uint64_t x = n;
        for (size_t i = 0; i < n; i++) { /* text with some randomness: compressible, varied literals */
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            in[i] = (x >> 60) < 2 ? (uint8_t)('A' + (x >> 40) % 26) : (uint8_t)words[i % (sizeof words - 1)];
        }
        uint8_t size[10];
        size_t size_len = st_riegeli_put_varint(size, n);
        st_buf chunk = {0};
        st_error err = {0};
        CU_ASSERT_EQUAL_FATAL(st_riegeli_simple_encode(ST_RIEGELI_COMPRESSION_ZSTD, 3, size, size_len, in, n, 1,
                                                       &chunk, &err), ST_OK);
        const uint8_t *d = chunk.data + ST_RIEGELI_CHUNK_HEADER_SIZE;
        size_t len = chunk.len - ST_RIEGELI_CHUNK_HEADER_SIZE;
        uint64_t sizes_len;
        size_t v = st_riegeli_get_varint(d + 1, len - 1, &sizes_len);
        const uint8_t *values = d + 1 + v + sizes_len;
        uint64_t prefix;
        size_t p = st_riegeli_get_varint(values, (size_t)(d + len - values), &prefix);
        const uint8_t *frame = values + p;
        size_t frame_len = (size_t)(d + len - frame);
        uint8_t out[4000];
        size_t got = ZSTD_decompress(out, sizeof out, frame, frame_len);
        CU_ASSERT_FALSE(ZSTD_isError(got));
        CU_ASSERT_EQUAL(got, n);
        CU_ASSERT_EQUAL(memcmp(out, in, n), 0);
        int lt = first_literals_type(frame, frame_len);
        if (n <= 512) {
            CU_ASSERT(lt == -1 || lt == 0 || lt == 1);
            raw_small += lt == 0;
        } else {
            huffman_large += lt == 2;
        }
        st_buf_free(&chunk);
    }
    /* the premises: small compressed blocks with raw literals were seen,
     * and large ones Huffman-code theirs */
    CU_ASSERT(raw_small > 10);
    CU_ASSERT(huffman_large > 3);
}

/* Input of a kind for the small zstd encoder: 0 random bytes, 1 text with
 * some randomness, 2 runs (matches that overlap their own output: offset
 * below the length), 3 a period of 1 to 40 bytes, 4 zeros, 5 records like
 * a serialized Example (names repeated, varied values), 6 short matches
 * every few bytes (over 127 sequences in a block: a 2-byte count). */
static void small_input(int kind, size_t n, uint64_t seed, uint8_t *in)
{
    static const char words[] = "feature label image/encoded score tokens the quick brown fox jumps ";
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + n + 1;
    size_t period = 1 + seed % 40;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint8_t r = (uint8_t)(x >> 56);
        switch (kind) {
        case 0: in[i] = r; break;
        case 1: in[i] = (x >> 60) < 3 ? r : (uint8_t)words[(i + seed) % (sizeof words - 1)]; break;
        case 2: in[i] = (x >> 61) == 0 || i == 0 ? r : in[i - 1]; break;
        case 3: in[i] = i < period ? r : in[i - period]; break;
        case 4: in[i] = 0; break;
        case 5: in[i] = (i % 23) < 12 ? (uint8_t)words[i % 23] : r; break;
        default: /* one of four 4-byte words, then a random byte: a sequence every 5 bytes */
            in[i] = i % 5 == 4 ? r : (uint8_t)"abcdefghijklmnop"[((i / 5) * 2654435761u >> 13) % 4 * 4 + i % 5];
            break;
        }
    }
}

/* The small encoder's frames, for every size up to its maximum and
 * inputs of every kind, decode with libzstd's ZSTD_decompress to the
 * input and state its size; frames holding a compressed block (not only
 * raw ones) are among them, and they are smaller than their input. */
static void test_small_zstd_encoder_against_libzstd(void)
{
    static uint8_t in[ST_ZSTD_SMALL_MAX], frame[ST_ZSTD_SMALL_BOUND(ST_ZSTD_SMALL_MAX)], out[ST_ZSTD_SMALL_MAX + 1];
    size_t compressed = 0, frames = 0, bad = 0, many_sequences = 0;
    for (int kind = 0; kind < 7; kind++) {
        for (size_t n = 0; n <= ST_ZSTD_SMALL_MAX; n++) {
            for (uint64_t seed = 0; seed < (n < 64 ? 4u : 1u); seed++) {
                small_input(kind, n, seed + n * 7, in);
                size_t len = st_zstd_small_compress(frame, in, n);
                CU_ASSERT_FATAL(len <= ST_ZSTD_SMALL_BOUND(n));
                frames++;
                unsigned long long stated = ZSTD_getFrameContentSize(frame, len);
                size_t got = ZSTD_decompress(out, sizeof out, frame, len);
                if (ZSTD_isError(got) || got != n || memcmp(out, in, n) != 0 || stated != n) {
                    if (bad++ < 5)
                        fprintf(stderr, "kind %d, %zu bytes: %s\n", kind, n,
                                ZSTD_isError(got) ? ZSTD_getErrorName(got) : "decodes to other bytes");
                    continue;
                }
                /* the block header after a 6 or 7 byte frame header */
                size_t at = n < 256 ? 6 : 7;
                if (((frame[at] >> 1) & 3) == 2) {
                    compressed++;
                    CU_ASSERT(len < n + at + 3);
                    /* raw literals (RFC 8878, 3.1.1.3.1.1): their header's
                     * size format, then the sequence count's first byte */
                    const uint8_t *lit = frame + at + 3;
                    size_t lh = (lit[0] >> 2 & 1) == 0 ? 1 : (lit[0] >> 2 & 3) == 1 ? 2 : 3;
                    size_t nlit = lh == 1 ? lit[0] >> 3 : lh == 2 ? (lit[0] >> 4) + ((size_t)lit[1] << 4)
                                                                  : (lit[0] >> 4) + ((size_t)lit[1] << 4) + ((size_t)lit[2] << 12);
                    many_sequences += lit[lh + nlit] >= 128;
                }
            }
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* random bytes and the tiniest inputs go raw; the rest compress */
    CU_ASSERT(compressed > frames / 2);
    CU_ASSERT(many_sequences > 100);
}

/* A stream over memory that lends its bytes in pieces of sizes that vary
 * (1 byte to several blocks), as a mapped file's peeked first bytes and a
 * remote object's chunks are lent: the reader must gather what crosses a
 * piece's end. */
typedef struct piece_in {
    const uint8_t *data;
    size_t len;
    size_t calls;
} piece_in;

static ssize_t piece_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    (void)err;
    piece_in *m = (piece_in *)(s + 1);
    size_t left = m->len - (size_t)s->pos;
    if (n > left)
        n = left;
    memcpy(buf, m->data + s->pos, n);
    return (ssize_t)n;
}

static int piece_size(st_stream *s, uint64_t *size, st_error *err)
{
    (void)err;
    *size = ((piece_in *)(s + 1))->len;
    return ST_OK;
}

static ssize_t piece_lend(st_stream *s, size_t want, const uint8_t **data, st_error *err)
{
    (void)want;
    (void)err;
    piece_in *m = (piece_in *)(s + 1);
    /* A piece ends at the next multiple of a size picked by the position,
     * so a second lend from the same place gives the same piece. */
    static const size_t sizes[] = {1, 7, 23, 40, 1000, 4096, 65536 + 5, 200000};
    size_t step = sizes[(s->pos / 997) % (sizeof sizes / sizeof *sizes)];
    size_t end = ((size_t)s->pos / step + 1) * step;
    if (end > m->len)
        end = m->len;
    m->calls++;
    *data = m->data + s->pos;
    return (ssize_t)(end - (size_t)s->pos);
}

static void piece_consume(st_stream *s, size_t n)
{
    (void)s;
    (void)n;
}

static const st_stream_ops piece_ops = {"pieces", piece_read, NULL, piece_size, NULL, piece_lend, piece_consume};

static st_stream *open_pieces(const uint8_t *data, size_t len)
{
    st_stream *s = st_stream_alloc(&piece_ops, "pieces", sizeof(piece_in));
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    *(piece_in *)(s + 1) = (piece_in){data, len, 0};
    return s;
}

static int verify_stream(st_stream *in, st_verify_report *rep)
{
    st_verify_options opt;
    memset(&opt, 0, sizeof opt);
    st_error err = {0};
    return st_ar_verify(in, &opt, rep, &err);
}

static bool same_verdict(const st_verify_report *a, const st_verify_report *b)
{
    return a->ok == b->ok && a->records == b->records && a->bytes == b->bytes &&
           (a->ok || (strcmp(a->failure_kind, b->failure_kind) == 0 && a->failure_offset == b->failure_offset &&
                      a->failure_record == b->failure_record && strcmp(a->failure_detail, b->failure_detail) == 0));
}

/* verify reads a stream that lends (a mapped file) in place and one that
 * does not through its buffer: the same verdict either way, on intact
 * files and on damage anywhere (block headers, chunk headers, data,
 * footer entries, the postscript). */
static void test_verify_lent_and_read_agree(void)
{
    static const struct {
        size_t n, size;
        uint64_t group;
        const char *codec;
    } files[] = {{20000, 220, 1, "zstd"}, {3000, 50, 7, "zstd"}, {500, 70000, 1, "none"}};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        const char *path = write_file(files[f].n, files[f].size, files[f].group, files[f].codec);
        FILE *fp = fopen(path, "rb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
        fseek(fp, 0, SEEK_END);
        size_t len = (size_t)ftell(fp);
        rewind(fp);
        uint8_t *bytes = malloc(len);
        CU_ASSERT_EQUAL_FATAL(fread(bytes, 1, len, fp), len);
        fclose(fp);
        /* intact, then one byte changed at places spread over the file,
         * its first blocks and its end */
        size_t places[40];
        size_t nplaces = 0;
        places[nplaces++] = (size_t)-1;
        for (size_t i = 0; i < 30; i++)
            places[nplaces++] = (size_t)(((uint64_t)len * (2 * i + 1)) / 61);
        size_t fixed[] = {3, 30, 70, 65536 + 2, 65536 + 30, len - 65536 + 10, len - 65536 - 5, len - 1};
        for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
            places[nplaces++] = fixed[i];
        for (size_t k = 0; k < nplaces; k++) {
            if (places[k] != (size_t)-1)
                bytes[places[k]] ^= 0x40;
            /* the file, read(2) into the reader's buffer */
            char *tmp = strdup("/tmp/st-ar-lend-XXXXXX");
            int fd = mkstemp(tmp);
            CU_ASSERT_EQUAL_FATAL((size_t)write(fd, bytes, len), len);
            close(fd);
            st_stream *in;
            st_error err = {0};
            CU_ASSERT_EQUAL_FATAL(st_stream_open_file(tmp, &in, &err), ST_OK);
            CU_ASSERT_FALSE(st_stream_can_lend(in));
            st_verify_report by_read, by_memory, by_pieces;
            CU_ASSERT_EQUAL(verify_stream(in, &by_read), ST_OK);
            unlink(tmp);
            free(tmp);
            /* lent whole, and lent in pieces */
            CU_ASSERT_EQUAL_FATAL(st_stream_open_memory(bytes, len, "memory", &in, &err), ST_OK);
            CU_ASSERT_TRUE(st_stream_can_lend(in));
            CU_ASSERT_EQUAL(verify_stream(in, &by_memory), ST_OK);
            in = open_pieces(bytes, len);
            CU_ASSERT_EQUAL(verify_stream(in, &by_pieces), ST_OK);
            CU_ASSERT_TRUE(same_verdict(&by_read, &by_memory));
            CU_ASSERT_TRUE(same_verdict(&by_read, &by_pieces));
            if (places[k] == (size_t)-1) {
                CU_ASSERT_TRUE(by_read.ok);
                CU_ASSERT_EQUAL(by_read.records, files[f].n);
            } else {
                CU_ASSERT_FALSE(by_read.ok);
                bytes[places[k]] ^= 0x40;
            }
        }
        free(bytes);
        unlink(path);
    }
}

/* Footer entries in the order writers use (read straight through) and in
 * any other valid form (read field by field) give the same entry; broken
 * ones are refused either way. */
static void test_footer_entry_forms(void)
{
    static const struct {
        uint8_t bytes[40];
        size_t len;
        bool ok;
        uint64_t offset, size, records;
    } cases[] = {
        {{0x08, 0x40, 0x10, 0xdc, 0x01, 0x18, 0x01}, 7, true, 64, 220, 1},
        {{0x08, 0x80, 0x80, 0x04, 0x10, 0x05, 0x18, 0x02}, 8, true, 65536, 5, 2},
        /* reordered, an overlong key, an unknown field, a field repeated */
        {{0x18, 0x01, 0x10, 0xdc, 0x01, 0x08, 0x40}, 7, true, 64, 220, 1},
        {{0x88, 0x00, 0x40, 0x10, 0x05, 0x18, 0x01}, 7, true, 64, 5, 1},
        {{0x08, 0x40, 0x10, 0x05, 0x18, 0x01, 0x20, 0x07}, 8, true, 64, 5, 1},
        {{0x08, 0x40, 0x10, 0x05, 0x18, 0x01, 0x08, 0x41}, 8, true, 65, 5, 1},
        /* no offset; cut inside a varint; a bad key */
        {{0x10, 0x05, 0x18, 0x01, 0x10, 0x06}, 6, false, 0, 0, 0},
        {{0x08, 0x40, 0x10, 0x05, 0x18, 0x81}, 6, false, 0, 0, 0},
        {{0x08, 0x40, 0x10, 0x05, 0x18, 0x01, 0x00}, 7, false, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        st_ar_chunk_entry e;
        st_error err = {0};
        int rc = st_ar_decode_chunk_entry(cases[i].bytes, cases[i].len, &e, &err);
        CU_ASSERT_EQUAL(rc == ST_OK, cases[i].ok);
        if (rc == ST_OK && cases[i].ok) {
            CU_ASSERT_EQUAL(e.offset, cases[i].offset);
            CU_ASSERT_EQUAL(e.decoded_data_size, cases[i].size);
            CU_ASSERT_EQUAL(e.num_records, cases[i].records);
        }
    }
    /* and what the writer encodes reads back */
    st_ar_chunk_entry in = {123456789012ull, 300, 1}, out;
    st_buf b = {0};
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_ar_encode_chunk_entry(&b, &in), ST_OK);
    CU_ASSERT_EQUAL(st_ar_decode_chunk_entry(b.data, b.len, &out, &err), ST_OK);
    CU_ASSERT_EQUAL(memcmp(&in, &out, sizeof in), 0);
    st_buf_free(&b);
}

#define SUITE_NAME "arrayrecord"
static const CU_TestInfo suite_tests[] = {
    {"HighwayHash gives the signature's hashes", test_hash_of_the_signature},
    {"chunk ends as the specification computes them", test_chunk_end_arithmetic},
    {"the inline chunk end agrees with the formula", test_chunk_end_inline_agrees},
    {"the inline varint reader agrees with the general one", test_varint_inline_agrees},
    {"record N through the footer reads a small part of the file", test_record_at_reads_little},
    {"the reader ops read every record in order", test_reader_reads_every_record},
    {"small buffers are zstd frames libzstd reads", test_small_zstd_frames_are_zstd},
    {"a record's zstd frame keeps raw literals up to 512 bytes", test_zstd_literals_by_size},
    {"the small zstd encoder's frames decode with libzstd", test_small_zstd_encoder_against_libzstd},
    {"verify gives the same verdicts on lent and read bytes", test_verify_lent_and_read_agree},
    {"footer entries read the same in every valid form", test_footer_entry_forms},
    CU_TEST_INFO_NULL,
};
#include "cunit_main.h"
