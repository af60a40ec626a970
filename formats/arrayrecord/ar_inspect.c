/* stat's details of an ArrayRecord file, from its postscript and footer
 * (read by offset, without the data): the writer's options, the group
 * size, the chunks and their record counts, the codec, where the footer
 * lies. */
#include "ar_internal.h"

#include <string.h>

int st_ar_inspect(st_stream *in, const st_read_options *opt, st_jsonw *w, st_error *err)
{
    st_riegeli_reader r;
    int rc = st_riegeli_reader_init(&r, in, true, opt ? opt->max_record_size : 0, err);
    st_ar_index ix = {0};
    if (rc == ST_OK)
        rc = st_ar_index_read(&r, &ix, err);
    if (rc == ST_OK) {
        const st_ar_footer *f = &ix.footer;
        st_json_member_uint(w, "version", f->version);
        st_json_member_string(w, "writer_options", f->writer_options);
        st_json_member_uint(w, "group_size", ix.group_size);
        st_json_member_uint(w, "data_chunks", f->num_chunks);
        st_json_member_uint(w, "footer_records", f->num_records);
        st_json_member_string(w, "footer_codec", st_riegeli_codec_name(ix.footer_compression));
        st_json_member_uint(w, "footer_offset", ix.footer_offset);
        st_json_member_uint(w, "postscript_offset", ix.file_size - ST_RIEGELI_BLOCK_SIZE);
        /* The data chunks' codec: the first one's compression byte. */
        if (f->num_chunks) {
            st_buf data = {0};
            st_riegeli_chunk c;
            st_riegeli_reader_seek(&r, f->chunks[0].offset, 1);
            if (st_riegeli_next_chunk(&r, &c, &data, err) > 0 && data.len > 0 && c.h.type == ST_RIEGELI_CHUNK_SIMPLE)
                st_json_member_string(w, "codec", st_riegeli_codec_name(data.data[0]));
            else if (c.h.type == ST_RIEGELI_CHUNK_TRANSPOSED)
                st_json_member_string(w, "codec", "transposed");
            st_buf_free(&data);
            uint64_t bytes = 0;
            for (uint64_t i = 0; i < f->num_chunks; i++)
                bytes += f->chunks[i].decoded_data_size;
            st_json_member_uint(w, "decoded_bytes", bytes);
        }
        /* The first chunks, as the footer lists them (stat --json). */
        st_json_key(w, "chunks");
        st_json_begin_array(w);
        for (uint64_t i = 0; i < f->num_chunks && i < 16; i++) {
            st_json_begin_object(w);
            st_json_member_uint(w, "offset", f->chunks[i].offset);
            st_json_member_uint(w, "records", f->chunks[i].num_records);
            st_json_member_uint(w, "decoded_bytes", f->chunks[i].decoded_data_size);
            st_json_end_object(w);
        }
        st_json_end_array(w);
    }
    st_ar_index_free(&ix);
    if (r.buf)
        st_riegeli_reader_free(&r);
    return rc;
}
