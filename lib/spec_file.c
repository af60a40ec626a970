#include "spec_file.h"

#include "../src/json.h"
#include "../src/stream.h"

int spec_file_text(const st_feature_stats *stats, const st_spec_defaults *defaults, st_buf *out,
                   st_error *err)
{
    st_buf_clear(out);
    st_spec spec;
    int rc = st_spec_build(stats, defaults, &spec, err);
    if (rc)
        return rc;
    st_jsonw w;
    st_jsonw_init(&w, out, true);
    rc = st_spec_json(&spec, &w) || st_buf_append(out, "\n", 1) ? ST_ENOMEM : ST_OK;
    st_spec_free(&spec);
    return rc ? st_error_set(err, ST_ENOMEM, "out of memory") : ST_OK;
}

int spec_file_write(const char *path, const st_buf *text, st_error *err)
{
    st_ostream *o;
    int rc = st_ostream_create(path, 0, &o, err);
    if (rc != ST_OK)
        return rc;
    rc = st_ostream_write(o, text->data, text->len, err);
    if (rc == ST_OK)
        rc = st_ostream_commit(o, err);
    else
        st_ostream_abort(o);
    st_ostream_close(o);
    return rc;
}
