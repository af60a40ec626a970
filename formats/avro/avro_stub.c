/* Registered when the build was configured with -Davro=disabled. */
#include "avro_format.h"

const st_format st_format_avro = {
    .name = "avro",
    .description = "Avro object container file (not in this build)",
    .unavailable = "built without Avro support",
};

/* Nothing is written as Avro without the module: no names to give. */
int st_avro_field_names(const st_schema *schema, char ***out, st_error *err)
{
    (void)schema;
    *out = NULL;
    return st_error_set(err, ST_EUNSUPPORTED, "built without Avro support");
}

/* Whole-block copying (split) answers like the format. */

int st_avro_blocks_open(st_stream *in, const st_read_options *opt, st_avro_blocks **out,
                        st_error *err)
{
    (void)opt;
    *out = NULL;
    st_stream_close(in);
    return st_error_set(err, ST_EUNSUPPORTED, "built without Avro support");
}

int st_avro_blocks_compatible(const st_avro_blocks *first, const st_avro_blocks *other,
                              st_error *err)
{
    (void)first;
    (void)other;
    return st_error_set(err, ST_EUNSUPPORTED, "built without Avro support");
}

int st_avro_blocks_next(st_avro_blocks *b, st_avro_block *block, st_error *err)
{
    (void)b;
    (void)block;
    return st_error_set(err, ST_EUNSUPPORTED, "built without Avro support");
}

uint64_t st_avro_blocks_skipped(const st_avro_blocks *b)
{
    (void)b;
    return 0;
}

const char *st_avro_blocks_codec(const st_avro_blocks *b)
{
    (void)b;
    return "null";
}

bool st_avro_blocks_checks_codec(const st_avro_blocks *b)
{
    (void)b;
    return false;
}

void st_avro_blocks_close(st_avro_blocks *b)
{
    (void)b;
}

int st_avro_copy_header_new(const st_avro_blocks *from, st_avro_copy_header **out, st_error *err)
{
    (void)from;
    *out = NULL;
    return st_error_set(err, ST_EUNSUPPORTED, "built without Avro support");
}

void st_avro_copy_header_free(st_avro_copy_header *h)
{
    (void)h;
}

const st_writer_ops st_avro_block_writer_ops = {
    .extension = ".avro",
};
