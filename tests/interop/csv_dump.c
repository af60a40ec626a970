/* Prints the cells of a CSV / TSV file as the csv reader sees them, every
 * column read as text, one JSON array of strings per record (a missing cell
 * is ""), for csv_interop.py to compare with Python's csv module.
 *
 *   csv_dump FORMAT DELIMITER FILE [CHUNK]     (FORMAT csv|tsv, no header) */
#include "csv.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const st_format st_format_csv, st_format_tsv;

static int open_reader(const st_format *f, const char *path, st_csv_options *co, void **priv,
                       st_stream **in, st_error *err)
{
    if (st_stream_open(path, in, err))
        return -1;
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.format_options = co;
    *priv = calloc(1, f->reader->priv_size);
    return f->reader->open(*priv, *in, &ro, err);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: csv_dump csv|tsv DELIMITER FILE [CHUNK]\n");
        return 2;
    }
    const st_format *f = strcmp(argv[1], "tsv") == 0 ? &st_format_tsv : &st_format_csv;
    st_csv_options co;
    st_csv_options_init(&co);
    co.delimiter = argv[2][0];
    co.no_header = true;
    co.empty = ST_EMPTY_EMPTY;
    co.chunk_size = argc > 4 ? (size_t)atol(argv[4]) : 0;
    st_error err = {0};
    void *priv;
    st_stream *in;
    /* First the column names, then again with every column as text. */
    if (open_reader(f, argv[3], &co, &priv, &in, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    st_schema names = {0}, types = {0};
    f->reader->schema(priv, &names, &err);
    f->reader->close(priv);
    free(priv);
    st_stream_close(in);
    for (size_t i = 0; i < names.count; i++)
        st_schema_add(&types, names.columns[i].name, ST_KIND_BYTES);
    co.types = &types;
    if (open_reader(f, argv[3], &co, &priv, &in, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    st_batch b;
    st_batch_init(&b);
    st_buf out = {0};
    st_unit u;
    int rc;
    while ((rc = f->reader->next_unit(priv, &u, &err)) > 0) {
        st_batch_reset(&b);
        if (f->reader->decode_unit(priv, &u, &b, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        for (size_t i = 0; i < b.count; i++) {
            st_jsonw w;
            out.len = 0;
            st_jsonw_init(&w, &out, false);
            st_json_begin_array(&w);
            const st_record *r = &b.records[i];
            for (uint32_t k = 0; k < r->nfeatures; k++) {
                const st_feature *ft = &r->features[k];
                if (ft->count)
                    st_json_bytes(&w, ft->v.bytes[0].data, ft->v.bytes[0].len);
                else
                    st_json_string(&w, "");
            }
            st_json_end_array(&w);
            fwrite(out.data, 1, out.len, stdout);
            fputc('\n', stdout);
        }
        f->reader->free_unit(priv, &u);
    }
    if (rc < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    st_buf_free(&out);
    st_batch_free(&b);
    f->reader->close(priv);
    free(priv);
    st_stream_close(in);
    st_schema_free(&names);
    st_schema_free(&types);
    return 0;
}
