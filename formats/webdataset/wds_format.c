/* The WebDataset format descriptor. */
#include "wds_format.h"

static const char *const wds_extensions[] = {".tar", NULL};

const st_format st_format_webdataset = {
    .name = "webdataset",
    .description = "WebDataset tar shard",
    .extensions = wds_extensions,
    .reader = NULL,
    .writer = NULL,
};
