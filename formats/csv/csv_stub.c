#include "../format.h"

const st_format st_format_csv = {
    .name = "csv",
    .description = "csv (not available in this build)",
    .unavailable = "csv support is not available in this build",
};
const st_format st_format_tsv = {
    .name = "tsv",
    .unavailable = "tsv support is not available in this build",
};
const st_format st_format_jsonl = {
    .name = "jsonl",
    .unavailable = "jsonl support is not available in this build",
};
