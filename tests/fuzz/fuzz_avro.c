/* Fuzz target for the Avro reader: container framing, codecs, the schema
 * parser and datum decoding, verify and inspect.
 *
 * An input starting with "Obj" is a container file.  Anything else is
 * "SCHEMA JSON" NUL "datums": it is wrapped in a one-block container (null
 * codec, record count from the datum bytes' length) so that the fuzzer
 * reaches the datum decoder without having to build the framing. */
#include "avro_internal.h"
#include "../support/fuzz_read.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_reader(const uint8_t *data, size_t size, bool decimal_text, st_map_mode maps)
{
    st_read_options opt;
    memset(&opt, 0, sizeof opt);
    opt.max_record_size = 1 << 22;
    opt.decimal_text = decimal_text;
    opt.maps = maps;
    fuzz_read_all(st_format_avro.reader, fuzz_stream(data, size, 0, "fuzz.avro"), &opt, FUZZ_READ_SCHEMA, NULL,
                  NULL);
}

static void run_checks(const uint8_t *data, size_t size)
{
    st_stream *in;
    st_error err;
    st_verify_options vo = {.decode = true, .max_record_size = 1 << 22};
    st_verify_report rep;
    if (st_stream_open_memory(data, size, "fuzz.avro", &in, &err) == 0)
        st_format_avro.verify(in, &vo, &rep, &err);
    if (st_stream_open_memory(data, size, "fuzz.avro", &in, &err) == 0) {
        st_buf out = {0};
        st_jsonw w;
        st_jsonw_init(&w, &out, false);
        st_json_begin_object(&w);
        st_format_avro.inspect(in, NULL, &w, &err);
        st_buf_free(&out);
        st_stream_close(in);
    }
}

static void put_long(st_buf *b, int64_t v)
{
    if (st_buf_reserve(b, 10) == 0)
        b->len += av_put_varint(b->data + b->len, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 3 && memcmp(data, "Obj", 3) == 0) {
        run_reader(data, size, false, ST_MAP_KEY_VALUE);
        run_reader(data, size, false, ST_MAP_BY_KEY);
        run_checks(data, size);
        return 0;
    }
    const uint8_t *nul = memchr(data, 0, size);
    if (!nul)
        return 0;
    size_t slen = (size_t)(nul - data);
    const uint8_t *datums = nul + 1;
    size_t dlen = size - slen - 1;
    static const uint8_t sync[16] = "fuzzsyncmarker!!";
    st_buf f = {0};
    st_buf_append(&f, "Obj\x01", 4);
    put_long(&f, 1);
    put_long(&f, 11);
    st_buf_append(&f, "avro.schema", 11);
    put_long(&f, (int64_t)slen);
    st_buf_append(&f, data, slen);
    put_long(&f, 0);
    st_buf_append(&f, sync, 16);
    /* Record count: the first datum byte, so inputs can pick it. */
    put_long(&f, dlen ? datums[0] % 64 : 0);
    put_long(&f, dlen ? (int64_t)dlen - 1 : 0);
    if (dlen)
        st_buf_append(&f, datums + 1, dlen - 1);
    st_buf_append(&f, sync, 16);
    /* Its bits 6 and 7 pick --decimal text and --maps by-key. */
    run_reader(f.data, f.len, (dlen && (datums[0] & 64)), dlen && (datums[0] & 128) ? ST_MAP_BY_KEY : ST_MAP_KEY_VALUE);
    run_checks(f.data, f.len);
    st_buf_free(&f);
    return 0;
}
