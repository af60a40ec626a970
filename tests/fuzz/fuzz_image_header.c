/* Fuzz target for the JPEG and PNG header reader (src/image_header.c) that
 * convert --tfds --image runs on every image: nothing may crash or read
 * past the bytes given (they are copied to a buffer of exactly their size,
 * so AddressSanitizer sees any read beyond), and what it accepts must be a
 * size TFDS can take: width and height above 0, 1 to 4 channels, 8 or 16
 * bits, "png" or "jpeg". */
#include "../../src/image_header.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact)
        return 0;
    memcpy(exact, data, size);
    st_image_header h;
    const char *why = NULL;
    if (st_image_header_read(exact, size, &h, &why) == 0) {
        bool png = strcmp(h.format, "png") == 0, jpeg = strcmp(h.format, "jpeg") == 0;
        if ((!png && !jpeg) || h.width == 0 || h.height == 0 || h.channels < 1 || h.channels > 4 ||
            (h.bit_depth != 8 && h.bit_depth != 16) || (jpeg && h.bit_depth != 8))
            abort();
    } else if (!why || !why[0]) {
        abort(); /* every refusal says why */
    }
    free(exact);
    return 0;
}
