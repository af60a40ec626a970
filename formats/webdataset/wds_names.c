/* Escaping feature names in member names (see wds_names.h). */
#include "wds_names.h"

int wds_name_escape(st_buf *out, const uint8_t *name, size_t len)
{
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        const char *esc = name[i] == '/' ? "%2F" : name[i] == '%' ? "%25" : NULL;
        if (!esc)
            continue;
        if (st_buf_append(out, name + from, i - from) || st_buf_append(out, esc, 3))
            return -1;
        from = i + 1;
    }
    return st_buf_append(out, name + from, len - from);
}

/* The byte an escape at field[i] stands for, or 0 when there is none. */
static char escape_at(const char *field, size_t len, size_t i)
{
    if (field[i] != '%' || len - i < 3 || field[i + 1] != '2')
        return 0;
    char c = field[i + 2];
    return c == 'F' || c == 'f' ? '/' : c == '5' ? '%' : 0;
}

bool wds_name_has_escape(const char *field, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (escape_at(field, len, i))
            return true;
    return false;
}

size_t wds_name_unescape(uint8_t *out, const char *field, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = escape_at(field, len, i);
        out[n++] = (uint8_t)(c ? c : field[i]);
        if (c)
            i += 2;
    }
    return n;
}
