/* The WebDataset format descriptor. */
#include "wds_format.h"
#include "wds_write.h"

static const char *const wds_extensions[] = {".tar", NULL};

const st_format st_format_webdataset = {
    .name = "webdataset",
    .description = "WebDataset tar shard",
    .extensions = wds_extensions,
    .reader = NULL,
    .writer = &st_wds_writer_ops,
};
