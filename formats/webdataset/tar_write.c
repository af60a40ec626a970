/* ustar and pax headers (POSIX.1-2001, "pax Interchange Format").
 *
 * A name that fits is written whole in the 100-byte name field; the
 * prefix field is not used, since WebDataset member names have no '/' to
 * split at.  Otherwise a pax header "././@PaxHeader" (typeflag 'x') comes
 * first, holding "path=" (and "size=" for 8 GiB or more), and the ustar
 * header after it keeps the name's first bytes (cut on a UTF-8 boundary)
 * and size 0 where the size is in the pax header, as Python's tarfile
 * does.  GNU tar and bsdtar read both without a warning. */
#include "tar_write.h"

#include <stdio.h>
#include <string.h>

bool st_tar_name_needs_pax(const uint8_t *name, size_t name_len)
{
    if (name_len > 100)
        return true;
    for (size_t i = 0; i < name_len; i++)
        if (name[i] < 0x20 || name[i] >= 0x7f)
            return true;
    return false;
}

/* One pax record "LEN key=value\n", where LEN counts the whole record,
 * its own digits included. */
static size_t pax_record_len(size_t key_len, size_t value_len)
{
    size_t body = 1 + key_len + 1 + value_len + 1; /* ' ' key '=' value '\n' */
    size_t digits = 1;
    for (;;) {
        size_t total = body + digits;
        size_t d = 1;
        for (size_t t = total; t >= 10; t /= 10)
            d++;
        if (d == digits)
            return total;
        digits = d;
    }
}

static size_t pax_record_put(uint8_t *out, const char *key, const uint8_t *value, size_t value_len)
{
    size_t key_len = strlen(key), n = pax_record_len(key_len, value_len);
    int w = snprintf((char *)out, 24, "%zu %s=", n, key);
    memcpy(out + w, value, value_len);
    out[w + value_len] = '\n';
    return n;
}

static size_t pax_data_len(const uint8_t *name, size_t name_len, uint64_t size)
{
    (void)name;
    size_t n = 0;
    if (st_tar_name_needs_pax(name, name_len))
        n += pax_record_len(4, name_len);
    if (size > ST_TAR_OCTAL_MAX) {
        char digits[24];
        n += pax_record_len(4, (size_t)snprintf(digits, sizeof digits, "%llu", (unsigned long long)size));
    }
    return n;
}

size_t st_tar_header_len(const uint8_t *name, size_t name_len, uint64_t size)
{
    size_t pax = pax_data_len(name, name_len, size);
    return pax ? 2 * ST_TAR_BLOCK + pax + st_tar_padding(pax) : ST_TAR_BLOCK;
}

/* An octal field of `width` bytes: width - 1 digits and a NUL. */
static void octal(uint8_t *field, size_t width, uint64_t v)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%0*llo", (int)(width - 1), (unsigned long long)v);
    memcpy(field, tmp, width - 1);
    field[width - 1] = '\0';
}

void st_tar_checksum_set(uint8_t *h)
{
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < ST_TAR_BLOCK; i++)
        sum += h[i];
    char tmp[8];
    snprintf(tmp, sizeof tmp, "%06o", sum);
    memcpy(h + 148, tmp, 6);
    h[154] = '\0';
    h[155] = ' ';
}

static void ustar_block(uint8_t *h, const uint8_t *name, size_t name_len, uint64_t size, uint64_t mtime,
                        char type)
{
    memset(h, 0, ST_TAR_BLOCK);
    memcpy(h, name, name_len > 100 ? 100 : name_len);
    octal(h + 100, 8, 0644);                 /* mode */
    octal(h + 108, 8, 0);                    /* uid */
    octal(h + 116, 8, 0);                    /* gid */
    octal(h + 124, 12, size);                /* size */
    octal(h + 136, 12, mtime);               /* mtime */
    h[156] = (uint8_t)type;
    memcpy(h + 257, "ustar", 6);             /* magic "ustar\0" */
    memcpy(h + 263, "00", 2);                /* version */
    /* uname, gname empty: the ids (0) say who owns it */
    octal(h + 329, 8, 0);                    /* devmajor */
    octal(h + 337, 8, 0);                    /* devminor */
    st_tar_checksum_set(h);
}

/* How many of the name's first bytes the ustar name field keeps when the
 * full name is in a pax header: at most 100, not splitting a UTF-8
 * sequence, printable ASCII kept as it is and other bytes as '_'. */
static size_t short_name(uint8_t *out, const uint8_t *name, size_t name_len)
{
    size_t n = name_len > 100 ? 100 : name_len;
    while (n > 0 && n < name_len && (name[n] & 0xC0) == 0x80)
        n--;
    for (size_t i = 0; i < n; i++)
        out[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '_';
    return n;
}

void st_tar_header_write(uint8_t *out, const uint8_t *name, size_t name_len, uint64_t size, uint64_t mtime)
{
    size_t pax = pax_data_len(name, name_len, size);
    if (!pax) {
        ustar_block(out, name, name_len, size, mtime, '0');
        return;
    }
    static const uint8_t pax_name[] = "././@PaxHeader";
    ustar_block(out, pax_name, sizeof pax_name - 1, pax, mtime, 'x');
    uint8_t *p = out + ST_TAR_BLOCK;
    if (st_tar_name_needs_pax(name, name_len))
        p += pax_record_put(p, "path", name, name_len);
    if (size > ST_TAR_OCTAL_MAX) {
        char digits[24];
        int d = snprintf(digits, sizeof digits, "%llu", (unsigned long long)size);
        p += pax_record_put(p, "size", (const uint8_t *)digits, (size_t)d);
    }
    memset(p, 0, st_tar_padding(pax));
    p += st_tar_padding(pax);
    uint8_t shown[100];
    size_t n = st_tar_name_needs_pax(name, name_len) ? short_name(shown, name, name_len) : name_len;
    ustar_block(p, st_tar_name_needs_pax(name, name_len) ? shown : name, n,
                size > ST_TAR_OCTAL_MAX ? 0 : size, mtime, '0');
}
