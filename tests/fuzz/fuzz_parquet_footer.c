/* Fuzz target: a whole Parquet file.  Opens it from memory with the reader
 * ops, decodes every unit (small units, a 16 MiB page limit; maps as
 * key/value lists, then by key; every page that can be is decompressed in
 * pieces by its units -- each its own segments, then segments shared by
 * all (page_marks.h, shared_segments.h) -- from the shared chunk bytes and
 * read a window at a time), then runs verify and inspect on it.  Any outcome but a crash, a hang or a runaway
 * allocation is fine. */
#include "../../formats/format.h"
#include "../../formats/parquet/checkpoint.h"
#include "../../formats/parquet/chunk_cache.h"
#include "../../formats/parquet/parquet.h"
#include "../../formats/parquet/sparse_page.h"
#include "../support/fuzz_read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_all(const uint8_t *data, size_t size, bool decimal_text, st_map_mode maps)
{
    st_read_options o;
    memset(&o, 0, sizeof o);
    o.max_record_size = 16u << 20;
    o.unit_records = 100;
    o.decimal_text = decimal_text;
    o.maps = maps;
    fuzz_read_all(st_format_parquet.reader, fuzz_stream(data, size, 0, "fuzz.parquet"), &o,
                  FUZZ_READ_SCHEMA | FUZZ_READ_STOP_AT_ERROR, NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    st_pq_sparse_map_min = 0;
    st_pq_whole_row_group_bytes = 0;  /* snappy pages read in pieces, marked or shared */
    for (int shared = 0; shared < 2; shared++) {
        st_pq_mark_always_bytes = shared ? SIZE_MAX : 0;
        read_all(data, size, false, ST_MAP_KEY_VALUE);
        st_pq_share_max_bytes = 0;
        read_all(data, size, true, ST_MAP_BY_KEY);   /* maps named by their keys (rows.c) */
        st_pq_share_max_bytes = ST_PQ_SHARE_MAX_BYTES;
    }

    st_error err;
    st_stream *in;
    if (st_stream_open_memory(data, size, "fuzz.parquet", &in, &err) == 0) {
        st_verify_options vo = {.decode = true, .max_record_size = 16u << 20};
        st_verify_report rep;
        memset(&rep, 0, sizeof rep);
        st_format_parquet.verify(in, &vo, &rep, &err); /* closes in */
    }
    if (st_stream_open_memory(data, size, "fuzz.parquet", &in, &err) == 0) {
        st_buf b = {0};
        st_jsonw w;
        st_jsonw_init(&w, &b, false);
        st_json_begin_object(&w);
        st_read_options o;
        memset(&o, 0, sizeof o);
        o.max_record_size = 16u << 20;
        st_format_parquet.inspect(in, &o, &w, &err);
        st_buf_free(&b);
        st_stream_close(in);
    }
    return 0;
}
