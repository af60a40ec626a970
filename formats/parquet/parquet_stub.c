#include "../format.h"

const st_format st_format_parquet = {
    .name = "parquet",
    .description = "parquet (not available in this build)",
    .unavailable = "parquet support is not available in this build",
};
