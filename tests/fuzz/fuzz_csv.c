/* Fuzz target for the text formats: the first byte picks the format (csv,
 * tsv, jsonl) and the options (no header, skip bad rows, no quoting, a
 * non-seekable input, a tiny chunk size); the rest is the input.  Every
 * record read is written again with the CSV and JSON lines encoders.
 * Nothing may crash, hang or allocate beyond the record limit. */
#include "../../formats/csv/csv.h"
#include "../support/pipe_stream.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern const st_format st_format_csv, st_format_tsv, st_format_jsonl;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t flags = data[0];
    data++;
    size--;
    const st_format *fmt = (flags & 3) == 0 ? &st_format_csv
                         : (flags & 3) == 1 ? &st_format_tsv : &st_format_jsonl;
    st_csv_options co;
    st_csv_options_init(&co);
    co.no_header = flags & 4;
    co.skip_bad_rows = flags & 8;
    co.no_quote = (flags & 0x30) == 0x30;
    co.chunk_size = flags & 0x40 ? 3 : 0;
    co.infer_rows = 3;
    co.empty = (enum st_empty_policy)((flags >> 4) % 3);
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.format_options = &co;
    ro.max_record_size = 1 << 16;
    st_stream *in = NULL;
    st_error err;
    if (flags & 0x80) {
        in = pipe_stream_open(data, size, 0, "fuzz");
        if (!in)
            return 0;
    } else if (st_stream_open_memory(data, size, "fuzz", &in, &err) < 0) {
        return 0;
    }
    const st_reader_ops *ops = fmt->reader;
    void *priv = calloc(1, ops->priv_size);
    st_batch batch;
    st_batch_init(&batch);
    st_schema schema = {0};
    st_buf line = {0};
    if (priv && ops->open(priv, in, &ro, &err) == ST_OK && ops->schema(priv, &schema, &err) == ST_OK) {
        st_write_options wo;
        memset(&wo, 0, sizeof wo);
        wo.schema = &schema;
        st_unit unit;
        while (ops->next_unit(priv, &unit, &err) > 0) {
            if (ops->decode_unit(priv, &unit, &batch, &err) == ST_OK) {
                for (size_t i = 0; i < batch.count; i++) {
                    line.len = 0;
                    st_format_csv.writer->encode(&wo, &batch.records[i], &line, &err);
                    line.len = 0;
                    st_format_jsonl.writer->encode(&wo, &batch.records[i], &line, &err);
                }
            }
            ops->free_unit(priv, &unit);
            st_batch_reset(&batch);
        }
    }
    if (priv)
        ops->close(priv);
    free(priv);
    st_buf_free(&line);
    st_schema_free(&schema);
    st_batch_free(&batch);
    st_stream_close(in);
    return 0;
}
