/* Copying whole samples between tar shards (split): a record read with
 * members_only carries its sample's members as stored (header blocks,
 * data, padding), checked on the way in by the tar reader; they are written
 * out as they are, and each shard ends with the end-of-archive marker.  No
 * member is decoded, and no header rewritten. */
#include "wds_copy.h"

#include "tar_read.h"

typedef struct copy_writer {
    st_ostream *out;
} copy_writer;

static int copy_encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err)
{
    (void)opt;
    return st_buf_append(out, rec->payload.data, rec->payload.len) ? st_error_set(err, ST_ENOMEM, "out of memory")
                                                                   : ST_OK;
}

static int copy_open(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    (void)opt;
    (void)err;
    ((copy_writer *)priv)->out = out;
    return ST_OK;
}

static int copy_write(void *priv, const uint8_t *encoded, size_t len, st_error *err)
{
    return st_ostream_write(((copy_writer *)priv)->out, encoded, len, err);
}

static int copy_finish(void *priv, st_error *err)
{
    return st_ostream_write(((copy_writer *)priv)->out, st_tar_end_marker, sizeof st_tar_end_marker, err);
}

static void copy_close(void *priv)
{
    (void)priv;
}

const st_writer_ops st_wds_copy_writer_ops = {
    .priv_size = sizeof(copy_writer),
    .extension = ".tar",
    .encode = copy_encode,
    .open = copy_open,
    .write = copy_write,
    .finish = copy_finish,
    .close = copy_close,
};

static const char *const copy_extensions[] = {".tar", NULL};

const st_format st_wds_copy_format = {
    .name = "webdataset",
    .description = "WebDataset tar shard (samples copied as stored)",
    .extensions = copy_extensions,
    .writer = &st_wds_copy_writer_ops,
};
