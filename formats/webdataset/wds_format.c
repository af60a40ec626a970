/* The WebDataset format descriptor. */
#include "wds_format.h"
#include "wds_write.h"

#include "wds_read.h"

static const char *const wds_extensions[] = {".tar", ".tgz", NULL};

const st_format st_format_webdataset = {
    .name = "webdataset",
    .description = "WebDataset tar shard",
    .extensions = wds_extensions,
    .probe = st_wds_probe,
    .reader = &st_wds_reader_ops,
    .verify = st_wds_verify,
    .inspect = st_wds_inspect,
    .writer = &st_wds_writer_ops,
};
