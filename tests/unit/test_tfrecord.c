/* TFRecord framing and the shared record reader. */
#include "../../formats/tfrecord/tfrecord.h"
#include "../../src/crc32c.h"
#include "../support/lending_stream.h"
#include "../support/pipe_stream.h"

#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

/* Frames n records of sizes sizes[i] filled with byte i into a buffer. */
static st_buf make_file(const size_t *sizes, size_t n)
{
    st_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        uint8_t *payload = malloc(sizes[i] ? sizes[i] : 1);
        memset(payload, (int)i + 1, sizes[i]);
        st_tfrecord_append(&b, payload, sizes[i]);
        free(payload);
    }
    return b;
}

static void test_empty_record_framing(void)
{
    /* What TensorFlow writes for an empty record: 8 zero bytes, their masked
     * CRC, and the masked CRC of nothing. */
    st_buf b = {0};
    CU_ASSERT_EQUAL(st_tfrecord_append(&b, "", 0), ST_OK);
    CU_ASSERT_EQUAL(b.len, 16);
    static const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0x29, 0x03, 0x98, 0x07,
                                     0xd8, 0xea, 0x82, 0xa2};
    CU_ASSERT_EQUAL(memcmp(b.data, want, 16), 0);
    uint64_t len = 99;
    CU_ASSERT_TRUE(st_tfrecord_header_valid(b.data, &len));
    CU_ASSERT_EQUAL(len, 0);
    st_buf_free(&b);
}

static void test_mask_roundtrip(void)
{
    for (uint32_t c = 0; c < 100000; c += 7)
        CU_ASSERT_EQUAL(st_crc32c_unmask(st_crc32c_mask(c * 2654435761u)), c * 2654435761u);
}

static st_stream *open_blocky(const st_buf *file, size_t block)
{
    return lending_stream_open(file->data, file->len, block);
}

/* How read_all reads: 0 unsized reads (like stdin), 1 a memory stream
 * (lent whole), 2 and up lent in blocks of 7, 4096 and 65536 bytes. */
enum { READ_UNSIZED, READ_MEMORY, READ_BLOCKS_7, READ_BLOCKS_4K, READ_BLOCKS_64K, READ_MODES };
static const size_t block_sizes[READ_MODES] = {0, 0, 7, 4096, 65536};

static int read_all(const st_buf *file, int mode, uint64_t max, uint64_t *records,
                    st_tfrecord_reader *out_reader)
{
    st_stream *in;
    st_error err;
    if (mode == READ_MEMORY) {
        st_stream_open_memory(file->data, file->len, "mem", &in, &err);
    } else if (mode == READ_UNSIZED) {
        in = pipe_stream_open(file->data, file->len, 0, "unsized");
    } else {
        in = open_blocky(file, block_sizes[mode]);
    }
    st_tfrecord_reader r;
    st_tfrecord_reader_init(&r, in, max, &err);
    const uint8_t *data;
    size_t len;
    int rc;
    *records = 0;
    while ((rc = st_tfrecord_next(&r, &data, &len, NULL, &err)) > 0)
        (*records)++;
    *out_reader = r;
    st_tfrecord_reader_free(&r);
    st_stream_close(in);
    return rc;
}

static void test_reader_reads_back(void)
{
    size_t sizes[] = {0, 1, 100, 5 << 20, 3};
    st_buf f = make_file(sizes, 5);
    for (int mode = 0; mode < READ_MODES; mode++) {
        uint64_t n;
        st_tfrecord_reader r;
        CU_ASSERT_EQUAL(read_all(&f, mode, 0, &n, &r), 0);
        CU_ASSERT_EQUAL(n, 5);
    }
    st_buf_free(&f);
}

/* Records read in place from lent blocks, or gathered where they cross a
 * block's end, are the records written, byte for byte; runs of records
 * that st_tfrecord_next_is_buffered promises stay put really do. */
static void test_lent_blocks_read_in_place_and_across(void)
{
    size_t sizes[300];
    for (size_t i = 0; i < 300; i++)
        sizes[i] = (i * 7919) % 5000 + (i % 17 == 0 ? 70000 : 0);
    st_buf f = make_file(sizes, 300);
    const size_t blocks[] = {1, 5, 13, 4096, 65536, 1 << 20};
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
        st_stream *in = open_blocky(&f, blocks[b]);
        st_tfrecord_reader r;
        st_error err;
        CU_ASSERT_EQUAL_FATAL(st_tfrecord_reader_init(&r, in, 0, &err), ST_OK);
        const uint8_t *data, *framed;
        size_t len, i = 0;
        uint64_t offset = 0;
        const uint8_t *run_start = NULL; /* frames promised to stay put */
        size_t run_len = 0;
        int rc;
        while ((rc = st_tfrecord_next(&r, &data, &len, &framed, &err)) > 0) {
            CU_ASSERT_EQUAL_FATAL(len, sizes[i]);
            bool same = true;
            for (size_t k = 0; k < len; k++)
                same = same && data[k] == (uint8_t)(i + 1);
            CU_ASSERT_TRUE(same);
            CU_ASSERT_EQUAL(memcmp(framed, f.data + offset, len + 16), 0);
            /* The run so far must still hold the bytes written. */
            if (run_start && run_start + run_len == framed) {
                run_len += len + 16;
            } else {
                run_start = framed;
                run_len = len + 16;
            }
            CU_ASSERT_EQUAL(memcmp(run_start, f.data + offset + len + 16 - run_len, run_len), 0);
            if (!st_tfrecord_next_is_buffered(&r))
                run_start = NULL;
            offset += len + 16;
            i++;
        }
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(i, 300);
        CU_ASSERT_EQUAL(in->pos, f.len);
        st_tfrecord_reader_free(&r);
        st_stream_close(in);
    }
    st_buf_free(&f);
}

static void test_fault_kinds_and_order(void)
{
    size_t sizes[] = {10, 20, 30};
    st_buf f = make_file(sizes, 3);
    uint64_t n;
    st_tfrecord_reader r;
    size_t second = 10 + 16;

    for (int mode = READ_MEMORY; mode < READ_MODES; mode++) {
        /* Data CRC of record 1. */
        f.data[second + 12 + 5] ^= 0x10;
        CU_ASSERT_EQUAL(read_all(&f, mode, 0, &n, &r), ST_EDATA);
        CU_ASSERT_EQUAL(r.fault, ST_TFR_DATA_CRC);
        CU_ASSERT_EQUAL(r.fault_index, 1);
        CU_ASSERT_EQUAL(r.fault_offset, second);
        CU_ASSERT_EQUAL(n, 1);
        f.data[second + 12 + 5] ^= 0x10;

        /* A length flip is caught by the length CRC before anything else. */
        f.data[second + 7] ^= 0x80;
        CU_ASSERT_EQUAL(read_all(&f, mode, 0, &n, &r), ST_EDATA);
        CU_ASSERT_EQUAL(r.fault, ST_TFR_LENGTH_CRC);
        f.data[second + 7] ^= 0x80;
    }

    /* Cut inside the last record: truncated, with and without a known size. */
    st_buf cut = {0};
    st_buf_append(&cut, f.data, f.len - 3);
    for (int mode = 0; mode < READ_MODES; mode++) {
        CU_ASSERT_EQUAL(read_all(&cut, mode, 0, &n, &r), ST_EDATA);
        CU_ASSERT_EQUAL(r.fault, ST_TFR_TRUNCATED);
        CU_ASSERT_EQUAL(r.fault_index, 2);
        CU_ASSERT_EQUAL(n, 2);
    }
    /* Cut inside a header. */
    cut.len = second + 5;
    CU_ASSERT_EQUAL(read_all(&cut, READ_MEMORY, 0, &n, &r), ST_EDATA);
    CU_ASSERT_EQUAL(r.fault, ST_TFR_TRUNCATED);
    CU_ASSERT_EQUAL(read_all(&cut, READ_BLOCKS_7, 0, &n, &r), ST_EDATA);
    CU_ASSERT_EQUAL(r.fault, ST_TFR_TRUNCATED);
    /* A length beyond the cap, with the size unknown: too large, no allocation. */
    CU_ASSERT_EQUAL(read_all(&f, READ_UNSIZED, 15, &n, &r), ST_EDATA);
    CU_ASSERT_EQUAL(r.fault, ST_TFR_TOO_LARGE);
    CU_ASSERT_EQUAL(r.fault_index, 1);
    st_buf_free(&cut);
    st_buf_free(&f);
}

static void test_huge_length_is_not_allocated(void)
{
    /* A valid header claiming 2^60 bytes: truncated when the size is known,
     * too large otherwise; never an allocation of that size. */
    st_buf f = {0};
    uint8_t h[12];
    st_tfrecord_header(h, 1ull << 60);
    st_buf_append(&f, h, 12);
    uint64_t n;
    st_tfrecord_reader r;
    CU_ASSERT_EQUAL(read_all(&f, READ_MEMORY, 0, &n, &r), ST_EDATA);
    CU_ASSERT_EQUAL(r.fault, ST_TFR_TRUNCATED);
    CU_ASSERT_EQUAL(read_all(&f, READ_BLOCKS_4K, 0, &n, &r), ST_EDATA);
    CU_ASSERT_EQUAL(r.fault, ST_TFR_TRUNCATED);
    CU_ASSERT_EQUAL(read_all(&f, READ_UNSIZED, 0, &n, &r), ST_EDATA);
    CU_ASSERT_EQUAL(r.fault, ST_TFR_TOO_LARGE);
    st_buf_free(&f);
}

/* Reads f to the end, skipping damage; counts records and skips. */
static void read_resyncing(st_stream *in, int *got, int *skipped)
{
    st_error err;
    st_tfrecord_reader r;
    st_tfrecord_reader_init(&r, in, 0, &err);
    const uint8_t *data;
    size_t len;
    int rc;
    *got = *skipped = 0;
    while ((rc = st_tfrecord_next(&r, &data, &len, NULL, &err)) != 0) {
        if (rc > 0) {
            (*got)++;
            CU_ASSERT_TRUE(len == 10 || len == 40);
            continue;
        }
        (*skipped)++;
        if (st_tfrecord_resync(&r, &err) <= 0)
            break;
    }
    st_tfrecord_reader_free(&r);
    st_stream_close(in);
}

static void test_resync_skips_damage(void)
{
    size_t sizes[] = {10, 20, 30, 40};
    st_buf f = make_file(sizes, 4);
    f.data[10 + 16 + 12 + 1] ^= 1;      /* data CRC of record 1 */
    f.data[10 + 16 + 20 + 16 + 2] ^= 4; /* length CRC of record 2 */
    for (size_t block = 0; block < 20; block += 5) {
        st_stream *in;
        st_error err;
        if (block)
            in = open_blocky(&f, block); /* the byte-by-byte search crosses blocks */
        else
            st_stream_open_memory(f.data, f.len, "mem", &in, &err);
        int got, skipped;
        read_resyncing(in, &got, &skipped);
        CU_ASSERT_EQUAL(got, 2);
        CU_ASSERT_EQUAL(skipped, 2);
    }
    st_buf_free(&f);
}

static void test_probe(void)
{
    size_t sizes[] = {7};
    st_buf f = make_file(sizes, 1);
    CU_ASSERT_EQUAL(st_format_tfrecord.probe(f.data, f.len), 100);
    CU_ASSERT_EQUAL(st_format_tfrecord.probe((const uint8_t *)"a,b,c\n1,2,3\n", 12), 0);
    st_buf_free(&f);
}

/* Every record the reader hands on carries its frame as read (CRCs checked
 * once), so that split and convert to TFRecord write it out as it is
 * instead of framing it and computing its CRCs again: small records in a
 * unit's buffer as well as a large one handed over whole. */
static void test_units_keep_frames(void)
{
    size_t sizes[] = {0, 1, 100, 7000, 2 << 20, 3, 40};
    size_t n = sizeof sizes / sizeof *sizes;
    st_buf f = make_file(sizes, n);
    st_stream *in;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_stream_open_memory(f.data, f.len, "mem", &in, &err), 0);
    const st_reader_ops *ops = st_format_tfrecord.reader;
    void *priv = calloc(1, ops->priv_size);
    st_read_options o;
    memset(&o, 0, sizeof o); /* as st_read_options_init, not linked here */
    o.compression = ST_COMPRESSION_NONE;
    o.payload_only = true; /* not Examples: only the frames matter here */
    CU_ASSERT_EQUAL_FATAL(ops->open(priv, in, &o, &err), 0);
    st_batch b;
    st_batch_init(&b);
    size_t seen = 0, offset = 0;
    st_unit u = {0};
    while (ops->next_unit(priv, &u, &err) > 0) {
        st_batch_reset(&b);
        CU_ASSERT_EQUAL_FATAL(ops->decode_unit(priv, &u, &b, &err), 0);
        for (size_t i = 0; i < b.count; i++, seen++) {
            const st_record *rec = &b.records[i];
            CU_ASSERT_FATAL(seen < n);
            CU_ASSERT_EQUAL(rec->payload.len, sizes[seen]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(rec->framed.data);
            CU_ASSERT_EQUAL_FATAL(rec->framed.len, sizes[seen] + ST_TFRECORD_OVERHEAD);
            CU_ASSERT_EQUAL(memcmp(rec->framed.data, f.data + offset, rec->framed.len), 0);
            CU_ASSERT_PTR_EQUAL(rec->payload.data, rec->framed.data + ST_TFRECORD_HEADER_SIZE);
            offset += rec->framed.len;
        }
        ops->free_unit(priv, &u);
        memset(&u, 0, sizeof u);
    }
    CU_ASSERT_EQUAL(seen, n);
    st_batch_free(&b);
    ops->close(priv);
    free(priv);
    st_stream_close(in);
    st_buf_free(&f);
}

#define SUITE_NAME "tfrecord"
static const CU_TestInfo suite_tests[] = {
    {"empty record framing matches TensorFlow", test_empty_record_framing},
    {"mask / unmask", test_mask_roundtrip},
    {"reader reads back sized, unsized and lending streams", test_reader_reads_back},
    {"lent blocks: read in place, gathered across ends", test_lent_blocks_read_in_place_and_across},
    {"fault kinds, indexes, offsets and order", test_fault_kinds_and_order},
    {"a huge length is refused, not allocated", test_huge_length_is_not_allocated},
    {"resync skips damaged records", test_resync_skips_damage},
    {"probe", test_probe},
    {"units keep every record's frame as read", test_units_keep_frames},
    CU_TEST_INFO_NULL,
};
#include "cunit_main.h"
