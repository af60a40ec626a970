/* Registered when the build was configured with -Davro=disabled. */
#include "../format.h"

const st_format st_format_avro = {
    .name = "avro",
    .description = "Avro object container file (not in this build)",
    .unavailable = "built without Avro support",
};
