/* .npy members to int64 or float values (see wds_npy.h). */
#include "wds_npy.h"

#include "../../src/float_narrow.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NPY_MAX_HEADER 65536

/* The text after 'KEY': in the header's dict, or NULL. */
static const char *dict_value(const char *h, const char *key)
{
    const char *at = strstr(h, key);
    if (!at)
        return NULL;
    at += strlen(key);
    while (*at == ' ')
        at++;
    if (*at != ':')
        return NULL;
    at++;
    while (*at == ' ')
        at++;
    return at;
}

/* float16 bits to float: exact (every half is a float). */
static float half_to_float(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    float v;
    if (exp == 0)
        v = ldexpf((float)frac, -24);
    else if (exp == 31)
        v = frac ? NAN : INFINITY;
    else
        v = ldexpf((float)(frac | 0x400), exp - 25);
    return sign ? -v : v;
}

static uint64_t load(const uint8_t *p, int size, bool big)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++)
        v |= (uint64_t)p[big ? size - 1 - i : i] << (8 * i);
    return v;
}

int wds_npy_decode(const uint8_t *p, size_t n, const uint8_t *name, size_t name_len, bool strict_float,
                   st_batch *out, wds_npy *res, st_error *err)
{
    memset(res, 0, sizeof *res);
    if (n < 10 || memcmp(p, "\x93NUMPY", 6) != 0)
        return st_error_set(err, ST_EDATA, "not a NumPy .npy file (no \\x93NUMPY magic)");
    int major = p[6];
    size_t hlen, hat;
    if (major == 1) {
        hlen = (size_t)p[8] | (size_t)p[9] << 8;
        hat = 10;
    } else if (major == 2 || major == 3) {
        if (n < 12)
            return st_error_set(err, ST_EDATA, ".npy header cut short");
        hlen = (size_t)load(p + 8, 4, false);
        hat = 12;
    } else {
        return st_error_set(err, ST_EDATA, ".npy format version %d.%d is not 1.0, 2.0 or 3.0", major, p[7]);
    }
    if (hlen > NPY_MAX_HEADER || hlen > n - hat)
        return st_error_set(err, ST_EDATA, ".npy header of %zu bytes runs past the member's %zu bytes", hlen, n);
    char h[NPY_MAX_HEADER + 1];
    memcpy(h, p + hat, hlen);
    h[hlen] = '\0';
    if (strlen(h) != hlen)
        return st_error_set(err, ST_EDATA, ".npy header holds a NUL byte");

    const char *descr = dict_value(h, "'descr'");
    if (!descr || (*descr != '\'' && *descr != '"'))
        return st_error_set(err, ST_EDATA, ".npy header has no 'descr' string");
    char quote = *descr++;
    const char *dend = strchr(descr, quote);
    if (!dend || dend - descr < 2 || dend - descr > 8)
        return st_error_set(err, ST_EDATA, ".npy header: 'descr' is not a simple dtype");
    char dtype[9];
    snprintf(dtype, sizeof dtype, "%.*s", (int)(dend - descr), descr);
    char order = dtype[0], kindc = dtype[1];
    int size = 0;
    if (sscanf(dtype + 2, "%d", &size) != 1 || (size != 1 && size != 2 && size != 4 && size != 8) ||
        !strchr("<>|=", order) || !strchr("biuf", kindc) || (kindc == 'f' && size == 1) ||
        (kindc == 'b' && size != 1) || strspn(dtype + 2, "0123456789") != strlen(dtype + 2))
        return st_error_set(err, ST_EDATA, ".npy dtype '%s' is not one of bool, int8..int64, uint8..uint64, "
                            "float16, float32, float64", dtype);
    bool big = order == '>';

    const char *fo = dict_value(h, "'fortran_order'");
    if (!fo || (strncmp(fo, "True", 4) != 0 && strncmp(fo, "False", 5) != 0))
        return st_error_set(err, ST_EDATA, ".npy header has no 'fortran_order' True or False");
    bool fortran = fo[0] == 'T';

    const char *sh = dict_value(h, "'shape'");
    if (!sh || *sh != '(')
        return st_error_set(err, ST_EDATA, ".npy header has no 'shape' tuple");
    sh++;
    uint64_t dims[3];
    int ndim = 0;
    for (;;) {
        while (*sh == ' ')
            sh++;
        if (*sh == ')')
            break;
        if (*sh < '0' || *sh > '9')
            return st_error_set(err, ST_EDATA, ".npy header: the shape is not a tuple of sizes");
        uint64_t v = 0;
        for (; *sh >= '0' && *sh <= '9'; sh++) {
            if (v > UINT32_MAX)
                return st_error_set(err, ST_EDATA, ".npy header: a dimension past 2^32");
            v = v * 10 + (uint64_t)(*sh - '0');
        }
        if (v > UINT32_MAX)
            return st_error_set(err, ST_EDATA, ".npy header: a dimension past 2^32");
        if (ndim >= 2)
            ndim = 3;
        else
            dims[ndim++] = v;
        while (*sh == ' ')
            sh++;
        if (*sh == ',')
            sh++;
        else if (*sh != ')')
            return st_error_set(err, ST_EDATA, ".npy header: the shape is not a tuple of sizes");
    }
    if (ndim > 2)
        return st_error_set(err, ST_EDATA, ".npy array of more than 2 dimensions: only (), (n,) and (steps, n) "
                            "map to features");
    uint64_t rows = ndim == 2 ? dims[0] : 1, cols = ndim == 0 ? 1 : ndim == 1 ? dims[0] : dims[1];
    uint64_t count = rows * cols; /* both at most 2^32 - 1: no overflow */
    size_t data_at = hat + hlen;
    if (count > (n - data_at) / (uint64_t)size || count * (uint64_t)size != n - data_at)
        return st_error_set(err, ST_EDATA, ".npy header says %" PRIu64 " values of %d bytes but %zu data bytes follow",
                            count, size, n - data_at);
    if (count > UINT32_MAX)
        return st_error_set(err, ST_EDATA, ".npy array of %" PRIu64 " values: more than a feature holds", count);
    const uint8_t *data = p + data_at;
    bool to_float = kindc == 'f';
    void *vals = st_arena_alloc(&out->arena, count ? (size_t)count * (to_float ? sizeof(float) : sizeof(int64_t)) : 1);
    if (!vals)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    uint64_t changed = 0, whole = 0;
    double example = 0;
    for (uint64_t r = 0; r < rows; r++) {
        for (uint64_t c = 0; c < cols; c++) {
            /* Fortran order stores columns first: element (r, c) is at c * rows + r. */
            uint64_t src = fortran && ndim == 2 ? c * rows + r : r * cols + c;
            uint64_t bits = load(data + src * (uint64_t)size, size, big);
            uint64_t dst = r * cols + c;
            if (!to_float) {
                int64_t v;
                if (kindc == 'u') {
                    if (size == 8 && bits > INT64_MAX)
                        return st_error_set(err, ST_EDATA, ".npy uint64 value %" PRIu64 " (index %" PRIu64
                                            ") is past int64", bits, src);
                    v = (int64_t)bits;
                } else if (kindc == 'b') {
                    v = bits != 0;
                } else {
                    int shift = 64 - 8 * size;
                    v = shift ? (int64_t)(bits << shift) >> shift : (int64_t)bits;
                }
                ((int64_t *)vals)[dst] = v;
                continue;
            }
            float f;
            if (size == 2) {
                f = half_to_float((uint16_t)bits);
            } else if (size == 4) {
                uint32_t b32 = (uint32_t)bits;
                memcpy(&f, &b32, sizeof f);
            } else {
                double d;
                memcpy(&d, &bits, sizeof d);
                f = (float)d;
                if (st_double_narrow_changes(d)) {
                    if (strict_float) {
                        char now[64];
                        st_format_narrowed(now, sizeof now, f);
                        return st_error_set(err, ST_EDATA, "float64 value %.17g (index %" PRIu64 ") becomes %s "
                                            "when narrowed to float32 (--strict-float)", d, src, now);
                    }
                    if (!changed++)
                        example = d;
                    whole += d == nearbyint(d);
                }
            }
            ((float *)vals)[dst] = f;
        }
    }
    /* Everything but '<i8', '<f4' (and '<f8', counted above where it
     * changed) is another type than the kind's own: widened, exactly. */
    bool own = (kindc == 'i' && size == 8) || (kindc == 'f' && size >= 4);
    if ((!own || (big && size > 1)) && count &&
        st_batch_add_widened(out, name, name_len, count))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (changed) {
        out->lossy_floats += changed;
        if (st_batch_add_lossy(out, name, name_len, changed, whole, example))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    res->kind = to_float ? ST_KIND_FLOAT : ST_KIND_INT64;
    res->ndim = ndim;
    res->rows = rows;
    res->cols = cols;
    res->values = vals;
    return ST_OK;
}
