#include "../format.h"

const st_format st_format_avro = {
    .name = "avro",
    .description = "avro (not available in this build)",
    .unavailable = "avro support is not available in this build",
};
