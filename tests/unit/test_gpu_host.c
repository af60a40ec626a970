/* The GPU verify pass without a GPU: everything but the kernel launch.
 *
 *  - the device's CRC32C (slicing-by-8 per lane, shift-and-combine across
 *    lanes) against the core's st_crc32c, every lane count and alignment;
 *  - the device's Example validator (gpu_check.h, compiled here for the
 *    host) against st_example_check on generated, fault-injected, mutated
 *    and random payloads and on real records from the corpus;
 *  - the host driver (chunking, records cut by chunk ends, records larger
 *    than a chunk, the header walk, first-failure selection, reports) run
 *    with the fake device against the CPU verifier (st_tfrecord_verify):
 *    every bit flipped and every truncation of small files, with and
 *    without a known size, many chunk sizes and slot counts. */
#include "gpu_host.h"

#include "crc32c.h"
#include "example.h"
#include "tfrecord.h"
#include "../support/pipe_stream.h"

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *data_dir = "tests/data";

/* ---- helpers ------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static size_t rnd_below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

static uint8_t *read_file(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", data_dir, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    st_buf b = {0};
    uint8_t tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        st_buf_append(&b, tmp, n);
    fclose(f);
    *len = b.len;
    return b.data ? b.data : calloc(1, 1);
}

/* ---- CRC32C --------------------------------------------------------------------- */

static void test_crc_tables(void)
{
    st_gpu_crc_tables tab;
    st_gpu_crc_tables_init(&tab);
    const char *v = "123456789";
    uint32_t raw = st_gpu_crc_raw(0xffffffffu, (const uint8_t *)v, 9, tab.slice);
    CU_ASSERT_EQUAL(~raw, 0xE3069283u);
    /* x^(8*2^k) by repeated shifting of a known register. */
    uint32_t c = 0x12345678u;
    uint8_t zeros[16] = {0};
    CU_ASSERT_EQUAL(st_gpu_crc_shift(c, 16, tab.shift), st_gpu_crc_raw(c, zeros, 16, tab.slice));
    CU_ASSERT_EQUAL(st_gpu_crc_shift(c, 1, tab.shift), st_gpu_crc_raw(c, zeros, 1, tab.slice));
    CU_ASSERT_EQUAL(st_gpu_crc_shift(c, 0, tab.shift), c);
}

static void test_crc_lanes(void)
{
    st_gpu_crc_tables tab;
    st_gpu_crc_tables_init(&tab);
    size_t cap = 200000;
    uint8_t *buf = malloc(cap + 16);
    for (size_t i = 0; i < cap + 16; i++)
        buf[i] = (uint8_t)rnd();
    static const size_t lens[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 1023, 1024,
                                  1025, 2047, 4096, 8191, 30000, 32768, 32769, 65536, 100003,
                                  199999};
    unsigned bad = 0;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        for (size_t align = 0; align < 8; align++) {
            const uint8_t *d = buf + align;
            size_t len = lens[li];
            uint32_t want = st_crc32c_mask(st_crc32c(0, d, len));
            if (st_gpu_masked_crc_lanes(d, len, &tab) != want)
                bad++;
            /* Every lane count the device might use must agree. */
            for (unsigned lanes = 1; lanes <= ST_GPU_LANES; lanes++) {
                uint32_t comb = 0;
                for (unsigned l = 0; l < lanes; l++)
                    comb ^= st_gpu_lane_crc(d, len, l, lanes, &tab);
                if (st_gpu_crc_finish_masked(comb, len, &tab) != want)
                    bad++;
            }
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(st_gpu_lanes_for(0), 1);
    CU_ASSERT_EQUAL(st_gpu_lanes_for(ST_GPU_MIN_LANE_BYTES), 1);
    CU_ASSERT_EQUAL(st_gpu_lanes_for(ST_GPU_MIN_LANE_BYTES + 1), 2);
    CU_ASSERT_EQUAL(st_gpu_lanes_for(1ull << 40), ST_GPU_LANES);
    free(buf);
}

/* ---- Example wire format ----------------------------------------------------------- */

static void w_varint(st_buf *b, uint64_t v)
{
    while (v >= 0x80) {
        uint8_t c = (uint8_t)(v | 0x80);
        st_buf_append(b, &c, 1);
        v >>= 7;
    }
    uint8_t c = (uint8_t)v;
    st_buf_append(b, &c, 1);
}

static void w_tag(st_buf *b, uint64_t field, unsigned wt)
{
    w_varint(b, field << 3 | wt);
}

static void w_len(st_buf *b, uint64_t field, const st_buf *body)
{
    w_tag(b, field, 2);
    w_varint(b, body->len);
    st_buf_append(b, body->data, body->len);
}

/* With probability 1/fault_rate at each decision point, the generator
 * writes something example.c must reject, deep inside or in places it does
 * not look at (earlier oneof members, earlier map values). */
static unsigned fault_rate = 0;

static bool inject(void)
{
    return fault_rate && rnd_below(fault_rate) == 0;
}

static void gen_bad_field(st_buf *b)
{
    switch (rnd_below(9)) {
    case 0: /* field number 0 */
        w_tag(b, 0, (unsigned)rnd_below(3));
        w_varint(b, 1);
        break;
    case 1: /* a group or a reserved wire type */
        w_tag(b, 5 + rnd_below(20), (unsigned)(3 + rnd_below(2)) + (rnd_below(2) ? 3 : 0));
        break;
    case 2: /* tag above 32 bits */
        w_varint(b, (1ull << 33) | 2);
        w_varint(b, 0);
        break;
    case 3: /* a varint of 11 bytes */
        w_tag(b, 9, 0);
        for (int i = 0; i < 10; i++)
            st_buf_append(b, "\x80", 1);
        st_buf_append(b, "\x01", 1);
        break;
    case 4: /* a 10-byte varint whose last byte has high bits set: fine */
        w_tag(b, 9, 0);
        for (int i = 0; i < 9; i++)
            st_buf_append(b, "\xff", 1);
        st_buf_append(b, "\x7f", 1);
        break;
    case 5: /* fixed64 that swallows what follows, or runs past the end */
        w_tag(b, 9, 1);
        st_buf_append(b, "1234", 4);
        break;
    case 6: /* a length past the end */
        w_tag(b, 9, 2);
        w_varint(b, 1000);
        st_buf_append(b, "ab", 2);
        break;
    case 7: /* unknown fields of every legal wire type: fine */
        w_tag(b, 10 + rnd_below(1000), 0);
        w_varint(b, rnd());
        w_tag(b, 10 + rnd_below(1000), 1);
        st_buf_append(b, "12345678", 8);
        w_tag(b, 10 + rnd_below(1000), 5);
        st_buf_append(b, "1234", 4);
        break;
    default: /* a truncated varint at the very end */
        w_tag(b, 9, 0);
        st_buf_append(b, "\x80", 1);
        break;
    }
}

static void gen_list(st_buf *b, unsigned kind)
{
    size_t n = rnd_below(6);
    for (size_t i = 0; i < n; i++) {
        if (inject()) {
            gen_bad_field(b);
            continue;
        }
        if (rnd_below(8) == 0) { /* unknown field */
            w_tag(b, 2 + rnd_below(5), 0);
            w_varint(b, rnd());
            continue;
        }
        st_buf body = {0};
        if (kind == 1) {
            size_t m = rnd_below(12);
            for (size_t k = 0; k < m; k++) {
                uint8_t c = (uint8_t)rnd();
                st_buf_append(&body, &c, 1);
            }
            if (inject())
                w_tag(b, 1, 0), w_varint(b, 5);
            else
                w_len(b, 1, &body);
        } else if (kind == 2) {
            if (rnd_below(2)) {
                size_t m = rnd_below(5) * 4 + (inject() ? 1 + rnd_below(3) : 0);
                for (size_t k = 0; k < m; k++)
                    st_buf_append(&body, "\x3f", 1);
                w_len(b, 1, &body);
            } else if (inject()) {
                w_tag(b, 1, 1);
                st_buf_append(b, "12345678", 8);
            } else {
                w_tag(b, 1, 5);
                st_buf_append(b, "\x00\x00\x80\x3f", 4);
            }
        } else {
            if (rnd_below(2)) {
                size_t m = rnd_below(6);
                for (size_t k = 0; k < m; k++)
                    w_varint(&body, rnd() >> rnd_below(64));
                if (inject()) {
                    size_t cont = 1 + rnd_below(11);
                    for (size_t k = 0; k < cont; k++)
                        st_buf_append(&body, "\x81", 1);
                    if (rnd_below(2))
                        st_buf_append(&body, "\x01", 1);
                }
                w_len(b, 1, &body);
            } else if (inject()) {
                w_tag(b, 1, 5);
                st_buf_append(b, "1234", 4);
            } else {
                w_tag(b, 1, 0);
                w_varint(b, rnd() >> rnd_below(64));
            }
        }
        st_buf_free(&body);
    }
}

static void gen_feature(st_buf *b)
{
    /* Several list fields: the oneof's last kind wins; the lists it
     * replaced must still be well formed. */
    size_t n = rnd_below(4);
    for (size_t i = 0; i < n; i++) {
        if (inject()) {
            gen_bad_field(b);
            continue;
        }
        unsigned kind = 1 + (unsigned)rnd_below(3);
        if (rnd_below(10) == 0) {
            w_tag(b, 4 + rnd_below(3), 0);
            w_varint(b, 7);
            continue;
        }
        if (inject()) { /* a list field that is not length-delimited */
            w_tag(b, kind, 0);
            w_varint(b, 3);
            continue;
        }
        st_buf body = {0};
        gen_list(&body, kind);
        w_len(b, kind, &body);
        st_buf_free(&body);
    }
}

static void gen_feature_list(st_buf *b)
{
    size_t n = rnd_below(4);
    for (size_t i = 0; i < n; i++) {
        if (inject()) {
            if (rnd_below(2))
                gen_bad_field(b);
            else
                w_tag(b, 1, 0), w_varint(b, 1);
            continue;
        }
        st_buf body = {0};
        gen_feature(&body);
        w_len(b, 1, &body);
        st_buf_free(&body);
    }
}

static void gen_map(st_buf *b, bool sequence)
{
    size_t n = rnd_below(4);
    for (size_t i = 0; i < n; i++) {
        if (inject()) {
            if (rnd_below(2))
                gen_bad_field(b);
            else
                w_tag(b, 1, 5), st_buf_append(b, "abcd", 4);
            continue;
        }
        st_buf entry = {0};
        /* key and value in any order, either one repeated or missing */
        size_t parts = rnd_below(4);
        for (size_t k = 0; k < parts; k++) {
            if (inject()) {
                if (rnd_below(2))
                    gen_bad_field(&entry);
                else
                    w_tag(&entry, 1 + rnd_below(2), 0), w_varint(&entry, 4);
                continue;
            }
            st_buf body = {0};
            if (rnd_below(3) == 0) {
                st_buf_append(&body, "name", rnd_below(5));
                w_len(&entry, 1, &body);
            } else if (rnd_below(8) == 0) {
                w_tag(&entry, 3, 0);
                w_varint(&entry, 1);
            } else {
                if (sequence)
                    gen_feature_list(&body);
                else
                    gen_feature(&body);
                w_len(&entry, 2, &body);
            }
            st_buf_free(&body);
        }
        w_len(b, 1, &entry);
        st_buf_free(&entry);
    }
}

static void gen_example(st_buf *b)
{
    size_t n = 1 + rnd_below(3);
    for (size_t i = 0; i < n; i++) {
        if (inject()) {
            if (rnd_below(2))
                gen_bad_field(b);
            else
                w_tag(b, 1 + rnd_below(2), 0), w_varint(b, 2);
            continue;
        }
        st_buf body = {0};
        unsigned what = (unsigned)rnd_below(6);
        if (what == 5) {
            w_tag(b, 3 + rnd_below(50), 0);
            w_varint(b, rnd());
            continue;
        }
        bool sequence = what >= 3;
        gen_map(&body, sequence);
        w_len(b, sequence ? 2 : 1, &body);
        st_buf_free(&body);
    }
}

static void mutate(st_buf *b)
{
    if (b->len == 0) {
        uint8_t c = (uint8_t)rnd();
        st_buf_append(b, &c, 1);
        return;
    }
    size_t at = rnd_below(b->len);
    switch (rnd_below(5)) {
    case 0:
        b->data[at] ^= (uint8_t)(1u << rnd_below(8));
        break;
    case 1:
        b->data[at] = (uint8_t)rnd();
        break;
    case 2:
        b->len = at;
        break;
    case 3:
        memmove(b->data + at, b->data + at + 1, b->len - at - 1);
        b->len--;
        break;
    default: {
        uint8_t c = (uint8_t)rnd();
        st_buf_reserve(b, 1);
        memmove(b->data + at + 1, b->data + at, b->len - at);
        b->data[at] = c;
        b->len++;
        break;
    }
    }
}

typedef struct parity {
    unsigned valid, invalid, mismatches;
} parity;

static void compare_check(parity *p, const uint8_t *data, size_t len)
{
    st_error err;
    bool cpu = st_example_check(data, len, &err) == ST_OK;
    bool dev = st_gpu_check_example(data, len) == ST_GPU_EX_OK;
    if (cpu)
        p->valid++;
    else
        p->invalid++;
    if (cpu != dev) {
        if (p->mismatches++ < 5) {
            printf("\n  validator disagrees (cpu %s, device %s) on %zu bytes:", cpu ? "ok" : "bad",
                   dev ? "ok" : "bad", len);
            for (size_t i = 0; i < len && i < 64; i++)
                printf(" %02x", data[i]);
            if (!cpu)
                printf("\n  cpu: %s", err.msg);
        }
    }
}

static void test_validator_generated(void)
{
    parity p = {0};
    static const unsigned rates[] = {0, 200, 40, 12};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        fault_rate = rates[r];
        for (int i = 0; i < 6000; i++) {
            st_buf b = {0};
            gen_example(&b);
            compare_check(&p, b.data ? b.data : (const uint8_t *)"", b.len);
            for (int m = 0; m < 3; m++) {
                mutate(&b);
                compare_check(&p, b.data ? b.data : (const uint8_t *)"", b.len);
            }
            st_buf_free(&b);
        }
    }
    fault_rate = 0;
    printf("\n  generated: %u well formed, %u rejected ", p.valid, p.invalid);
    CU_ASSERT_EQUAL(p.mismatches, 0);
    /* Both verdicts must be well represented for the test to mean anything. */
    CU_ASSERT(p.valid > 10000);
    CU_ASSERT(p.invalid > 10000);
}

static void test_validator_random(void)
{
    parity p = {0};
    uint8_t buf[64];
    for (int i = 0; i < 200000; i++) {
        size_t len = rnd_below(sizeof buf + 1);
        for (size_t k = 0; k < len; k++)
            buf[k] = (uint8_t)rnd();
        /* Small field numbers and legal wire types more often than chance. */
        if (len && rnd_below(2))
            buf[0] = (uint8_t)((1 + rnd_below(3)) << 3 | 2);
        compare_check(&p, buf, len);
    }
    CU_ASSERT_EQUAL(p.mismatches, 0);
    CU_ASSERT(p.valid > 100);
}

/* Every record of a real (uncompressed or gzip) TFRecord file, and the
 * same records mutated. */
static void compare_file_records(parity *p, const char *rel, unsigned *records)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", data_dir, rel);
    st_error err;
    st_stream *in = NULL;
    if (st_stream_open_file(path, &in, &err) < 0) {
        printf("\n  %s missing: skipped", rel);
        return;
    }
    st_stream *recs = NULL;
    if (st_stream_decompress(in, ST_COMPRESSION_AUTO, &recs, NULL, &err) < 0)
        return;
    st_tfrecord_reader rr;
    if (st_tfrecord_reader_init(&rr, recs, 0, &err) < 0) {
        st_stream_close(recs);
        return;
    }
    const uint8_t *data;
    size_t len;
    while (st_tfrecord_next(&rr, &data, &len, NULL, &err) == 1) {
        compare_check(p, data, len);
        (*records)++;
        if (len > 4096)
            continue; /* mutating image records adds little */
        st_buf b = {0};
        st_buf_append(&b, data, len);
        for (int m = 0; m < 8; m++) {
            mutate(&b);
            compare_check(p, b.data ? b.data : (const uint8_t *)"", b.len);
        }
        st_buf_free(&b);
    }
    st_tfrecord_reader_free(&rr);
    st_stream_close(recs);
}

static void test_validator_corpus(void)
{
    static const char *files[] = {
        "tfrecord/tfx/mnist/mnist.tfrecord",
        "tfrecord/tensorflow-models/deeplab/val-00000-of-00001.tfrecord",
        "tfrecord/magenta/tfrecord_iterator_test.tfrecord",
        "tfrecord/tfx/tfrecord_sequence/Split-eval/data_tfrecord_eval.gz",
        "tfrecord/tfx/csv_example_gen/Split-eval/data_tfrecord-00000-of-00012.gz",
        "tfrecord/tfx/penguin/Split-train/data_tfrecord-00000-of-00001.gz",
        /* SequenceExamples from python3-protobuf: empty steps, steps with no
         * kind, zero steps; and one whose step is damaged */
        "tfrecord/sequence/events.tfrecord",
        "tfrecord/sequence/damaged_step.tfrecord",
    };
    parity p = {0};
    unsigned records = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        compare_file_records(&p, files[i], &records);
    printf("\n  corpus: %u records, %u checks ", records, p.valid + p.invalid);
    CU_ASSERT_EQUAL(p.mismatches, 0);
    CU_ASSERT(records >= 3);
}

/* Hand-built payloads for what the generators reach only by chance: a value
 * that protobuf replaces (an earlier oneof member of a Feature, an earlier
 * value of a map entry) must still be well formed.  Each case states the
 * verdict both validators must give. */

/* Appends field `field` holding `body` (length-delimited) and frees body. */
static void put_msg(st_buf *b, uint64_t field, st_buf *body)
{
    w_len(b, field, body);
    st_buf_free(body);
}

/* An Int64List { value: packed } whose packed run is `run` bytes long. */
static void put_int64_list(st_buf *feature, const char *run, size_t n)
{
    st_buf list = {0}, packed = {0};
    st_buf_append(&packed, run, n);
    put_msg(&list, 1, &packed);
    put_msg(feature, 3, &list);
}

/* A FloatList { value: packed } of `n` bytes (valid when n % 4 == 0). */
static void put_float_list(st_buf *feature, size_t n)
{
    st_buf list = {0}, packed = {0};
    for (size_t i = 0; i < n; i++)
        st_buf_append(&packed, "\x3f", 1);
    put_msg(&list, 1, &packed);
    put_msg(feature, 2, &list);
}

/* Example { features { feature { key "f"; value v1 [; value v2] } } }, or the
 * SequenceExample form with each value wrapped in a one-step FeatureList. */
static void put_example(st_buf *out, bool sequence, st_buf *v1, st_buf *v2)
{
    st_buf entry = {0}, key = {0}, map = {0};
    st_buf_append(&key, "f", 1);
    put_msg(&entry, 1, &key);
    st_buf *vals[2] = {v1, v2};
    for (int i = 0; i < 2; i++) {
        if (!vals[i])
            continue;
        if (sequence) {
            st_buf steps = {0};
            put_msg(&steps, 1, vals[i]);
            put_msg(&entry, 2, &steps);
        } else {
            put_msg(&entry, 2, vals[i]);
        }
    }
    put_msg(&map, 1, &entry);
    put_msg(out, sequence ? 2 : 1, &map);
}

static void test_validator_replaced(void)
{
    static const char good_int[] = "\x01\x96\x01\x05";     /* 1, 150, 5 */
    static const char bad_ints[][12] = {
        "\x80",                                             /* truncated at the end */
        "\x01\x80\x80",                                     /* truncated after a value */
        "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",     /* 11 bytes */
    };
    static const size_t bad_int_len[] = {1, 3, 11};
    parity p = {0};
    unsigned wrong = 0;
    for (int sequence = 0; sequence < 2; sequence++) {
        for (size_t bi = 0; bi < 3; bi++) {
            for (int good = 0; good < 2; good++) {
                const char *run = good ? good_int : bad_ints[bi];
                size_t run_len = good ? sizeof good_int - 1 : bad_int_len[bi];
                /* 1. A Feature whose (packed) int64 list is replaced by a
                 *    later, valid float list; then the same with the int64
                 *    list coming back after the float list, so the bad list
                 *    is of the winning kind but before its last run. */
                for (int back = 0; back < 2; back++) {
                    st_buf feat = {0}, ex = {0};
                    put_int64_list(&feat, run, run_len);
                    put_float_list(&feat, 8);
                    if (back)
                        put_int64_list(&feat, good_int, sizeof good_int - 1);
                    put_example(&ex, sequence, &feat, NULL);
                    st_error err;
                    bool cpu = st_example_check(ex.data, ex.len, &err) == ST_OK;
                    bool dev = st_gpu_check_example(ex.data, ex.len) == ST_GPU_EX_OK;
                    if (cpu != (bool)good || dev != (bool)good) {
                        wrong++;
                        printf("\n  replaced list (sequence %d, bad %zu, back %d, good %d): cpu %d dev %d",
                               sequence, bi, back, good, cpu, dev);
                    }
                    compare_check(&p, ex.data, ex.len);
                    st_buf_free(&ex);
                }
                /* 2. A map entry with two values where the first (a Feature
                 *    with the int64 run) is replaced by a valid second one. */
                st_buf first = {0}, second = {0}, ex = {0};
                put_int64_list(&first, run, run_len);
                put_float_list(&second, 4);
                put_example(&ex, sequence, &first, &second);
                st_error err;
                bool cpu = st_example_check(ex.data, ex.len, &err) == ST_OK;
                bool dev = st_gpu_check_example(ex.data, ex.len) == ST_GPU_EX_OK;
                if (cpu != (bool)good || dev != (bool)good) {
                    wrong++;
                    printf("\n  replaced map value (sequence %d, bad %zu, good %d): cpu %d dev %d",
                           sequence, bi, good, cpu, dev);
                }
                compare_check(&p, ex.data, ex.len);
                st_buf_free(&ex);
            }
        }
        /* 3. The first map value's Feature has a packed float list of 5
         *    bytes; the second value is valid. */
        for (size_t n = 4; n <= 5; n++) {
            st_buf first = {0}, second = {0}, ex = {0};
            put_float_list(&first, n);
            put_int64_list(&second, good_int, sizeof good_int - 1);
            put_example(&ex, sequence, &first, &second);
            st_error err;
            bool want = n == 4;
            bool cpu = st_example_check(ex.data, ex.len, &err) == ST_OK;
            bool dev = st_gpu_check_example(ex.data, ex.len) == ST_GPU_EX_OK;
            if (cpu != want || dev != want) {
                wrong++;
                printf("\n  replaced map value, %zu float bytes (sequence %d): cpu %d dev %d", n,
                       sequence, cpu, dev);
            }
            compare_check(&p, ex.data, ex.len);
            st_buf_free(&ex);
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(p.mismatches, 0);
    CU_ASSERT(p.valid > 0 && p.invalid > 0);
}

/* ---- the driver against the CPU verifier ---------------------------------------------- */

static st_stream *open_input(const uint8_t *data, size_t len, bool sized, size_t step)
{
    st_stream *s = NULL;
    st_error err;
    if (sized) {
        st_stream_open_memory(data, len, "mem", &s, &err);
        return s;
    }
    /* Without size or pread, at most `step` bytes per read, as a pipe. */
    return pipe_stream_open(data, len, step, "pipe");
}

typedef struct config {
    bool sized;
    bool decode;
    bool explain;          /* pass st_example_check to word "not an Example" */
    size_t chunk;
    int slots;
    uint64_t max_record;
    size_t step;           /* pipe read size */
} config;

static unsigned compared, differences;

static bool same_report(const st_verify_report *a, const st_verify_report *b, bool details)
{
    if (a->ok != b->ok || a->records != b->records || a->bytes != b->bytes ||
        a->file_bytes != b->file_bytes || a->compression != b->compression)
        return false;
    if (a->ok)
        return true;
    if (!a->failure_kind || !b->failure_kind || strcmp(a->failure_kind, b->failure_kind) != 0)
        return false;
    if (a->failure_record != b->failure_record || a->failure_offset != b->failure_offset)
        return false;
    return !details || strcmp(a->failure_detail, b->failure_detail) == 0;
}

static void print_report(const char *who, int rc, const st_verify_report *r)
{
    printf("\n    %s rc %d ok %d records %llu bytes %llu file %llu kind %s at %llu/%llu: %s", who,
           rc, r->ok, (unsigned long long)r->records, (unsigned long long)r->bytes,
           (unsigned long long)r->file_bytes, r->failure_kind ? r->failure_kind : "-",
           (unsigned long long)r->failure_record, (unsigned long long)r->failure_offset,
           r->failure_detail);
}

/* Runs both verifiers on the same bytes; returns the CPU report too. */
static bool verify_both(const uint8_t *data, size_t len, const config *c, st_verify_report *cpu_out,
                        st_gpu_stats *stats_out)
{
    st_verify_options vo = {0};
    vo.decode = c->decode;
    vo.compression = ST_COMPRESSION_NONE;
    vo.max_record_size = c->max_record;
    st_verify_report cpu, dev;
    st_error e1, e2;
    int rc1 = st_format_tfrecord.verify(open_input(data, len, c->sized, c->step), &vo, &cpu, &e1);

    st_gpu_verify_options go;
    st_gpu_verify_options_init(&go);
    st_gpu_stats stats;
    go.decode = c->decode;
    go.compression = ST_COMPRESSION_NONE;
    go.max_record_size = c->max_record;
    go.chunk_size = c->chunk;
    go.slots = c->slots;
    go.example_check = c->explain ? st_example_check : NULL;
    go.stats = &stats;
    st_gpu_backend be;
    st_gpu_cpu_backend_create(&be, &e2);
    int rc2 = st_gpu_verify_stream(open_input(data, len, c->sized, c->step), &go, &be, &dev, &e2);

    bool details = c->explain || !cpu.failure_kind || strcmp(cpu.failure_kind, "not an Example") != 0;
    bool same = rc1 == rc2 && (rc1 < 0 || same_report(&cpu, &dev, details));
    /* On an intact file every record was checked by the device or, when
     * larger than a chunk, by the host; and the device never cried wolf. */
    if (same && rc1 == 0 && cpu.ok && stats.device_records + stats.host_records != cpu.records)
        same = false;
    if (stats.disagreements)
        same = false;
    compared++;
    if (!same && differences++ < 5) {
        printf("\n  GPU pass differs from CPU (sized %d decode %d chunk %zu slots %d max %llu step %zu):",
               c->sized, c->decode, c->chunk, c->slots, (unsigned long long)c->max_record, c->step);
        print_report("cpu", rc1, &cpu);
        print_report("gpu", rc2, &dev);
        printf("\n    stats: device %llu host %llu disagreements %llu",
               (unsigned long long)stats.device_records, (unsigned long long)stats.host_records,
               (unsigned long long)stats.disagreements);
    }
    if (cpu_out)
        *cpu_out = cpu;
    if (stats_out)
        *stats_out = stats;
    return same;
}

/* A small shard: Examples of several sizes, an empty payload, a payload
 * that is not an Example, one larger than the smaller chunk sizes. */
static void build_shard(st_buf *out, size_t big, bool with_garbage)
{
    static const size_t sizes[] = {0, 1, 30, 5, 120, 64, 2, 300};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        st_buf ex = {0};
        fault_rate = 0;
        while (ex.len < sizes[i]) {
            st_buf body = {0};
            gen_map(&body, false);
            w_len(&ex, 1, &body);
            st_buf_free(&body);
        }
        st_tfrecord_append(out, ex.data ? ex.data : (const uint8_t *)"", ex.len);
        st_buf_free(&ex);
    }
    if (with_garbage)
        st_tfrecord_append(out, "hello world", 11);
    if (big) {
        st_buf ex = {0};
        st_buf body = {0};
        while (body.len < big)
            st_buf_append(&body, "\x0a\x03" "abc", 5);  /* BytesList values */
        st_buf feat = {0}, entry = {0}, map = {0};
        w_len(&feat, 1, &body);
        w_len(&entry, 2, &feat);
        w_len(&map, 1, &entry);
        w_len(&ex, 1, &map);
        st_tfrecord_append(out, ex.data, ex.len);
        st_buf_free(&ex);
        st_buf_free(&body);
        st_buf_free(&feat);
        st_buf_free(&entry);
        st_buf_free(&map);
    }
    st_tfrecord_append(out, "\x0a\x00", 2);
}

static void test_driver_intact(void)
{
    st_buf shard = {0};
    build_shard(&shard, 3000, false);
    static const size_t chunks[] = {64, 65, 100, 127, 257, 1000, 4096, 1 << 20};
    unsigned before = differences;
    for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++)
        for (int slots = 1; slots <= 4; slots++)
            for (int mode = 0; mode < 4; mode++) {
                config c = {0};
                c.sized = mode & 1;
                c.decode = mode & 2;
                c.explain = true;
                c.chunk = chunks[ci];
                c.slots = slots;
                c.step = 1 + ci * 7;
                st_verify_report cpu;
                st_gpu_stats stats;
                CU_ASSERT(verify_both(shard.data, shard.len, &c, &cpu, &stats));
                CU_ASSERT(cpu.ok);
                if (chunks[ci] < 3000) /* the big record went to the host */
                    CU_ASSERT(stats.host_records >= 1);
                if (chunks[ci] == 1 << 20)
                    CU_ASSERT_EQUAL(stats.host_records, 0);
            }
    CU_ASSERT_EQUAL(differences, before);
    st_buf_free(&shard);
}

static void test_driver_not_example(void)
{
    st_buf shard = {0};
    build_shard(&shard, 0, true);
    for (int explain = 0; explain < 2; explain++)
        for (size_t chunk = 64; chunk < 600; chunk += 53) {
            config c = {0};
            c.sized = true;
            c.decode = true;
            c.explain = explain;
            c.chunk = chunk;
            c.slots = 2;
            st_verify_report cpu;
            CU_ASSERT(verify_both(shard.data, shard.len, &c, &cpu, NULL));
            CU_ASSERT(!cpu.ok);
            CU_ASSERT_STRING_EQUAL(cpu.failure_kind ? cpu.failure_kind : "", "not an Example");
        }
    st_buf_free(&shard);
}

static const config sweep_configs[] = {
    /* sized decode explain chunk slots max step */
    {true, false, true, 64, 1, 0, 0},
    {false, true, true, 100, 3, 0, 7},
    {true, true, true, 257, 2, 0, 0},
    {false, false, true, 4096, 8, 0, 1},
    {true, true, true, 1 << 20, 3, 0, 0},
    {false, true, true, 64, 2, 40, 13},
    {true, false, true, 100, 3, 40, 0},
};

static void test_driver_bit_flips(void)
{
    st_buf shard = {0};
    build_shard(&shard, 400, true);
    unsigned before = differences;
    for (size_t bit = 0; bit < shard.len * 8; bit++) {
        shard.data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        const config *c = &sweep_configs[bit % (sizeof sweep_configs / sizeof sweep_configs[0])];
        verify_both(shard.data, shard.len, c, NULL, NULL);
        /* and one more configuration per flip, so every flip is seen twice */
        verify_both(shard.data, shard.len, &sweep_configs[(bit / 3) % 5], NULL, NULL);
        shard.data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    printf("\n  %zu bits flipped ", shard.len * 8);
    CU_ASSERT_EQUAL(differences, before);
    st_buf_free(&shard);
}

static void test_driver_truncations(void)
{
    st_buf shard = {0};
    build_shard(&shard, 400, false);
    unsigned before = differences;
    for (size_t n = 0; n <= shard.len; n++)
        for (size_t k = 0; k < sizeof sweep_configs / sizeof sweep_configs[0]; k++)
            verify_both(shard.data, n, &sweep_configs[k], NULL, NULL);
    CU_ASSERT_EQUAL(differences, before);
    st_buf_free(&shard);
}

/* Big records near the limits: larger than a chunk, larger than the limit,
 * announced larger than what remains, with and without a known size. */
static void test_driver_big_records(void)
{
    st_buf shard = {0};
    build_shard(&shard, 5000, false);
    unsigned before = differences;
    static const uint64_t limits[] = {0, 100, 4999, 5100, 6000};
    for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++)
        for (int mode = 0; mode < 4; mode++) {
            config c = {0};
            c.sized = mode & 1;
            c.decode = mode & 2;
            c.explain = true;
            c.chunk = 512;
            c.slots = 3;
            c.max_record = limits[li];
            verify_both(shard.data, shard.len, &c, NULL, NULL);
            /* cut inside the big record */
            verify_both(shard.data, shard.len - 3000, &c, NULL, NULL);
            verify_both(shard.data, shard.len - 2, &c, NULL, NULL);
        }
    CU_ASSERT_EQUAL(differences, before);
    st_buf_free(&shard);
}

/* Real shards, intact and damaged. */
static void test_driver_corpus(void)
{
    static const char *files[] = {
        "tfrecord/tfx/mnist/mnist.tfrecord",
        "tfrecord/tensorflow-models/deeplab/val-00000-of-00001.tfrecord",
        "tfrecord/magenta/tfrecord_iterator_test.tfrecord",
        "tfrecord/corrupt/pets_examples.record",
    };
    unsigned before = differences;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t len;
        uint8_t *data = read_file(files[i], &len);
        if (!data) {
            printf("\n  %s missing: skipped", files[i]);
            continue;
        }
        static const size_t chunks[] = {4096, 100000, 1 << 20, 64 << 20};
        for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++)
            for (int mode = 0; mode < 4; mode++) {
                config c = {0};
                c.sized = mode & 1;
                c.decode = mode & 2;
                c.explain = true;
                c.chunk = chunks[ci];
                c.slots = 3;
                c.step = 65536;
                st_verify_report cpu;
                verify_both(data, len, &c, &cpu, NULL);
                if (strstr(files[i], "corrupt")) {
                    CU_ASSERT(!cpu.ok);
                    CU_ASSERT_STRING_EQUAL(cpu.failure_kind ? cpu.failure_kind : "", "data crc");
                } else if (strstr(files[i], "magenta") && c.decode) {
                    CU_ASSERT(!cpu.ok);
                } else {
                    CU_ASSERT(cpu.ok);
                }
            }
        free(data);
    }
    CU_ASSERT_EQUAL(differences, before);
}

/* A device that flags every record: the host's confirmation must keep the
 * verdict right and count each false alarm. */
static int (*real_wait)(void *ctx, int s, st_error *err);
static const st_gpu_slot *liar_slots;
static size_t liar_max;

static int liar_open(void *ctx, int nslots, size_t chunk_cap, size_t max_recs, st_gpu_slot *slots,
                     char *device, size_t devcap, st_error *err);
static int (*real_open)(void *ctx, int nslots, size_t chunk_cap, size_t max_recs,
                        st_gpu_slot *slots, char *device, size_t devcap, st_error *err);

static int liar_open(void *ctx, int nslots, size_t chunk_cap, size_t max_recs, st_gpu_slot *slots,
                     char *device, size_t devcap, st_error *err)
{
    liar_slots = slots;
    liar_max = max_recs;
    return real_open(ctx, nslots, chunk_cap, max_recs, slots, device, devcap, err);
}

static int liar_wait(void *ctx, int s, st_error *err)
{
    int rc = real_wait(ctx, s, err);
    memset(liar_slots[s].status, ST_GPU_STATUS_DATA_CRC | ST_GPU_STATUS_NOT_EXAMPLE, liar_max);
    return rc;
}

static void test_driver_false_alarms(void)
{
    st_buf shard = {0};
    build_shard(&shard, 0, false);
    st_gpu_backend be;
    st_error err;
    st_gpu_cpu_backend_create(&be, &err);
    st_gpu_backend_ops ops = *be.ops;
    real_open = ops.open;
    real_wait = ops.wait;
    ops.open = liar_open;
    ops.wait = liar_wait;
    be.ops = &ops;
    st_gpu_verify_options go;
    st_gpu_verify_options_init(&go);
    st_gpu_stats stats;
    go.decode = true;
    go.chunk_size = 128;
    go.stats = &stats;
    st_verify_report rep;
    int rc = st_gpu_verify_stream(open_input(shard.data, shard.len, true, 0), &go, &be, &rep, &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(rep.ok);
    CU_ASSERT_EQUAL(rep.records, 9);
    /* Records over the 128-byte chunk were checked on the host, not flagged. */
    CU_ASSERT(stats.device_records >= 5);
    CU_ASSERT_EQUAL(stats.device_records + stats.host_records, 9);
    CU_ASSERT_EQUAL(stats.disagreements, stats.device_records);
    st_buf_free(&shard);
}

/* Read errors are errors, not verdicts; compressed input is refused. */
static ssize_t failing_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    if (s->pos >= 100)
        return st_error_set(err, ST_EIO, "disk on fire");
    n = n < 50 ? n : 50;
    memset(buf, 0, n);
    return (ssize_t)n;
}

static const st_stream_ops failing_ops = {"failing", failing_read, NULL, NULL, NULL};

static void test_driver_errors(void)
{
    st_gpu_verify_options go;
    st_gpu_verify_options_init(&go);
    go.compression = ST_COMPRESSION_NONE;
    st_gpu_backend be;
    st_error err;
    st_verify_report rep;
    st_gpu_cpu_backend_create(&be, &err);
    st_stream *s = st_stream_alloc(&failing_ops, "failing", 0);
    CU_ASSERT_EQUAL(st_gpu_verify_stream(s, &go, &be, &rep, &err), ST_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "disk on fire"));

    size_t len;
    uint8_t *gz = read_file("tfrecord/tfx/penguin/Split-eval/data_tfrecord-00000-of-00001.gz", &len);
    if (gz) {
        go.compression = ST_COMPRESSION_AUTO;
        st_gpu_cpu_backend_create(&be, &err);
        CU_ASSERT_EQUAL(st_gpu_verify_stream(open_input(gz, len, true, 0), &go, &be, &rep, &err),
                        ST_EUNSUPPORTED);
        free(gz);
    }
    /* Without CUDA, or without a device, the public entry says so cleanly. */
    char why[256] = "";
    int usable = st_gpu_probe(why, sizeof why);
    CU_ASSERT(usable == 0 || usable == 1);
    CU_ASSERT(why[0] != '\0');
    if (!usable) {
        uint8_t empty = 0;
        CU_ASSERT_EQUAL(st_gpu_verify_tfrecord(open_input(&empty, 0, true, 0), &go, &rep, &err),
                        ST_EUNSUPPORTED);
    }
    CU_ASSERT_EQUAL(ST_GPU_DEFAULT_MAX_RECORD, ST_TFRECORD_DEFAULT_MAX_RECORD);
}

/* One session, many files: buffers are reused, and a file that fails to
 * read (with chunks still in flight) leaves the next file unharmed. */
static void test_driver_session(void)
{
    /* 60 small Examples (repeated empty Features), then the usual shard. */
    st_buf shard = {0};
    for (int i = 0; i < 60; i++) {
        uint8_t ex[40];
        size_t n = 2 * (size_t)(1 + i % 17);
        for (size_t k = 0; k < n; k += 2)
            ex[k] = 0x0a, ex[k + 1] = 0;
        st_tfrecord_append(&shard, ex, n);
    }
    build_shard(&shard, 700, true);
    st_gpu_verify_options go;
    st_gpu_verify_options_init(&go);
    go.compression = ST_COMPRESSION_NONE;
    go.chunk_size = 256;
    go.slots = 3;
    go.example_check = st_example_check;
    st_gpu_backend be;
    st_error err;
    st_gpu_cpu_backend_create(&be, &err);
    st_gpu_session *ses;
    CU_ASSERT_EQUAL_FATAL(st_gpu_session_open_with(&be, &go, &ses, &err), 0);
    unsigned mismatches = 0;
    for (int round = 0; round < 40; round++) {
        size_t len = round % 3 == 0 ? shard.len : rnd_below(shard.len + 1);
        go.decode = round & 1;
        st_verify_options vo = {0};
        vo.decode = go.decode;
        vo.compression = ST_COMPRESSION_NONE;
        st_verify_report cpu, dev;
        st_error e1, e2;
        int rc1 = st_format_tfrecord.verify(open_input(shard.data, len, round & 2, 3), &vo, &cpu, &e1);
        int rc2 = st_gpu_session_verify(ses, open_input(shard.data, len, round & 2, 3), &go, &dev, &e2);
        if (rc1 != rc2 || (rc1 == 0 && !same_report(&cpu, &dev, true)))
            mismatches++;
        if (round % 5 == 4) { /* a read error mid-file, chunks in flight */
            st_stream *s = open_input(shard.data, shard.len, false, 7);
            pipe_stream_fail_at(s, 900 + (size_t)round * 13);
            CU_ASSERT_EQUAL(st_gpu_session_verify(ses, s, &go, &dev, &e2), ST_EIO);
        }
    }
    CU_ASSERT_EQUAL(mismatches, 0);
    st_gpu_session_close(ses);
    st_buf_free(&shard);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        data_dir = argv[1];
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("gpu_host", NULL, NULL);
    CU_add_test(s, "CRC tables and shifts", test_crc_tables);
    CU_add_test(s, "CRC across lanes vs st_crc32c", test_crc_lanes);
    CU_add_test(s, "validator vs st_example_check: generated", test_validator_generated);
    CU_add_test(s, "validator vs st_example_check: random", test_validator_random);
    CU_add_test(s, "validator vs st_example_check: corpus", test_validator_corpus);
    CU_add_test(s, "validator vs st_example_check: replaced values", test_validator_replaced);
    CU_add_test(s, "driver: intact shard, all chunkings", test_driver_intact);
    CU_add_test(s, "driver: not an Example", test_driver_not_example);
    CU_add_test(s, "driver: every bit flipped", test_driver_bit_flips);
    CU_add_test(s, "driver: every truncation", test_driver_truncations);
    CU_add_test(s, "driver: records larger than a chunk", test_driver_big_records);
    CU_add_test(s, "driver: real shards", test_driver_corpus);
    CU_add_test(s, "driver: device false alarms", test_driver_false_alarms);
    CU_add_test(s, "driver: errors and refusals", test_driver_errors);
    CU_add_test(s, "driver: one session, many files", test_driver_session);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    printf("\n%u GPU/CPU verifier comparisons, %u differences\n", compared, differences);
    unsigned failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
