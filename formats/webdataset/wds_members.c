#include "wds_members.h"
#include "tar_write.h"

#include <stdbool.h>
#include <string.h>

static uint64_t octal_field(const uint8_t *f, size_t width)
{
    uint64_t v = 0;
    for (size_t i = 0; i < width && f[i] >= '0' && f[i] <= '7'; i++)
        v = v * 8 + (uint64_t)(f[i] - '0');
    return v;
}

/* The "path" and "size" records of pax data p[0, n). */
static void pax_records(uint8_t *p, size_t n, wds_member *m)
{
    size_t i = 0;
    while (i < n) {
        size_t rec = 0, j = i;
        while (j < n && p[j] >= '0' && p[j] <= '9')
            rec = rec * 10 + (size_t)(p[j++] - '0');
        if (rec == 0 || i + rec > n || j >= n || p[j] != ' ')
            return;
        uint8_t *key = p + j + 1, *end = p + i + rec - 1; /* the '\n' */
        uint8_t *eq = memchr(key, '=', (size_t)(end - key));
        if (eq) {
            if (eq - key == 4 && memcmp(key, "path", 4) == 0) {
                m->pax_path = eq + 1;
                m->name = eq + 1;
                m->name_len = (size_t)(end - eq - 1);
            } else if (eq - key == 4 && memcmp(key, "size", 4) == 0) {
                uint64_t v = 0;
                for (uint8_t *d = eq + 1; d < end; d++)
                    v = v * 10 + (uint64_t)(*d - '0');
                m->size = v;
            }
        }
        i += rec;
    }
}

int wds_member_at(uint8_t *buf, size_t len, size_t at, wds_member *m)
{
    if (at + ST_TAR_BLOCK > len)
        return 0;
    memset(m, 0, sizeof *m);
    uint8_t *h = buf + at;
    bool have_size = false;
    if (h[156] == 'x') {
        uint64_t n = octal_field(h + 124, 12);
        pax_records(h + ST_TAR_BLOCK, (size_t)n, m);
        have_size = m->size != 0;
        at += ST_TAR_BLOCK + (size_t)n + st_tar_padding(n);
        h = buf + at;
    }
    m->ustar = at;
    if (!have_size)
        m->size = octal_field(h + 124, 12);
    if (!m->pax_path) {
        m->name = h;
        m->name_len = strnlen((const char *)h, 100);
    }
    m->data = at + ST_TAR_BLOCK;
    m->next = m->data + (size_t)m->size + st_tar_padding(m->size);
    return 1;
}
