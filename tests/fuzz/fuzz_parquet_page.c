/* Fuzz target: the page-level decoders on raw bytes.  The first byte picks
 * what to run, the second its parameter (bit width, value width, codec),
 * the rest is the input:
 *   0 page header      1 RLE/bit-packed     2 RLE levels     3 BIT_PACKED levels
 *   4 PLAIN booleans   5 PLAIN byte arrays  6 DELTA_BINARY_PACKED
 *   7 DELTA_LENGTH_BYTE_ARRAY  8 DELTA_BYTE_ARRAY  9 BYTE_STREAM_SPLIT
 *  10 decompression (codec = parameter % 8, declared size from 2 more bytes)
 *  11 decimal text
 *  12 snappy restart marks: every segment decompressed alone must equal the
 *     same bytes of the whole decompression (size from 3 more bytes) */
#include "../../formats/parquet/codec.h"
#include "../../formats/parquet/convert.h"
#include "../../formats/parquet/encoding.h"
#include "../../formats/parquet/metadata.h"
#include "../../formats/parquet/page_marks.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Value counts asked of the decoders: enough to run past any input. */
#define N 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int what = data[0] % 13, param = data[1];
    const uint8_t *p = data + 2;
    size_t len = size - 2;
    st_error err;
    size_t used;
    static uint32_t u32[N];
    static uint16_t u16[N];
    static uint8_t u8[N * 16];
    static int64_t i64[2 * N];
    static st_bytes bv[N];
    size_t n = len * 8 + 1 < N ? len * 8 + 1 : N;
    switch (what) {
    case 0: {
        st_pq_page_header h;
        bool trunc;
        st_pq_read_page_header(p, len, &h, &used, &trunc, &err);
        break;
    }
    case 1:
        st_pq_rle_decode(p, len, param % 34, u32, n, &err);
        break;
    case 2:
        st_pq_rle_decode_levels(p, len, param % 18, u16, n, param, &err);
        break;
    case 3:
        st_pq_bitpacked_decode_levels(p, len, param % 18, u16, n, param, &err);
        break;
    case 4:
        st_pq_plain_bool_decode(p, len, u8, n, &err);
        break;
    case 5:
        st_pq_plain_bytes_decode(p, len, bv, param, &used, &err);
        break;
    case 6:
        st_pq_delta_decode(p, len, i64, n, &used, &err);
        st_pq_delta_decode(p, len, i64, param, &used, &err);
        break;
    case 7:
        st_pq_delta_length_decode(p, len, bv, param, i64, &used, &err);
        break;
    case 8: {
        st_buf store = {0};
        st_pq_delta_byte_array_decode(p, len, bv, param, i64, &store, 1 << 20, &err);
        st_buf_free(&store);
        break;
    }
    case 9: {
        size_t w = (size_t)param % 16 + 1;
        st_pq_byte_stream_split_decode(p, len, w, u8, len / w < N ? len / w : N, &err);
        break;
    }
    case 10: {
        if (len < 2)
            break;
        size_t out_len = (size_t)p[0] << 8 | p[1];
        uint8_t *out = malloc(out_len ? out_len : 1);
        if (out) {
            st_pq_decompress(param % 8, p + 2, len - 2, out, out_len, &err);
            free(out);
        }
        break;
    }
    case 11: {
        char text[1024];
        st_pq_decimal_text(p, len, param % 80, text, sizeof text, &err);
        break;
    }
    case 12: {
        if (len < 3)
            break;
        size_t out_len = (size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2];
        st_pq_marks m;
        p += 1;
        len -= 1;
        if (st_pq_marks_snappy(p + 2, len - 2, out_len, &m))
            break;
        uint8_t *whole = malloc(out_len + 1), *part = malloc(out_len + 1), *scratch = NULL;
        size_t cap = 0;
        if (whole && part && !st_pq_decompress(PQ_CODEC_SNAPPY, p + 2, len - 2, whole, out_len, &err)) {
            for (size_t k = 0; k < m.n; k++) {
                size_t a = k, b = k + 1 + (k + param) % 3 < m.n ? k + 1 + (k + param) % 3 : m.n;
                if (st_pq_marks_decode(&m, a, b, p + 2 + m.comp[a], part, &scratch, &cap, &err) ||
                    memcmp(part, whole + m.out[a], m.out[b] - m.out[a]))
                    abort();  /* marks that do not decompress alone */
            }
        }
        free(whole);
        free(part);
        free(scratch);
        st_pq_marks_free(&m);
        break;
    }
    }
    return 0;
}
