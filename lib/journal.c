/* PREFIX.journal's lines (see journal.h). */
#include "journal.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>

void journal_parser_init(journal_parser *p, journal_name_rule own_name, void *ctx)
{
    memset(p, 0, sizeof *p);
    p->own_name = own_name;
    p->ctx = ctx;
}

static int fail(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* The next space-separated field of [*p, end): its start and length. */
static bool next_field(const char **p, const char *end, const char **field, size_t *len)
{
    if (*p >= end)
        return false;
    const char *q = memchr(*p, ' ', (size_t)(end - *p));
    *field = *p;
    *len = (size_t)((q ? q : end) - *p);
    *p = q ? q + 1 : end;
    return *len > 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A name as the writer escaped it: only visible bytes, %XX for the rest;
 * the result is one plain name of a directory (no '/', no NUL, not "."
 * or ".."), at most JOURNAL_NAME_MAX bytes. */
static bool unescape_name(const char *s, size_t len, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c == 0x7f)
            return false;
        if (c == '%') {
            int hi = i + 2 < len ? hex_value(s[i + 1]) : -1, lo = i + 2 < len ? hex_value(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            c = (unsigned char)(hi * 16 + lo);
            i += 2;
        }
        if (c == '\0' || c == '/' || n == JOURNAL_NAME_MAX)
            return false;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return n > 0 && strcmp(out, ".") != 0 && strcmp(out, "..") != 0;
}

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
    if (len == 0 || len > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool word_is(const char *field, size_t len, const char *word)
{
    return len == strlen(word) && memcmp(field, word, len) == 0;
}

static int parse_run(journal_parser *p, const char *at, const char *end, journal_entry *out, char *why,
                     size_t cap)
{
    const char *f;
    size_t n;
    uint64_t pid;
    if (p->tag[0])
        return fail(why, cap, "line %lu: a second run line", p->line);
    if (!next_field(&at, end, &f, &n) || !parse_u64(f, n, &pid) || pid == 0 || pid > (uint64_t)LONG_MAX)
        return fail(why, cap, "line %lu: no process id", p->line);
    if (!next_field(&at, end, &f, &n) || n >= sizeof p->tag || at != end)
        return fail(why, cap, "line %lu: not a run's tag", p->line);
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)f[i]) && !(f[i] >= 'a' && f[i] <= 'f'))
            return fail(why, cap, "line %lu: not a run's tag", p->line);
    memcpy(p->tag, f, n);
    p->tag[n] = '\0';
    out->kind = JOURNAL_RUN;
    out->pid = (long)pid;
    memcpy(out->tag, p->tag, n + 1);
    return 0;
}

/* "aside NAME TMP INO SIZE" or "rename TMP NAME INO SIZE". */
static int parse_move(journal_parser *p, journal_kind kind, const char *at, const char *end, journal_entry *out,
                      char *why, size_t cap)
{
    const char *f[4];
    size_t n[4];
    for (int i = 0; i < 4; i++)
        if (!next_field(&at, end, &f[i], &n[i]))
            return fail(why, cap, "line %lu: too few fields", p->line);
    if (at != end)
        return fail(why, cap, "line %lu: too many fields", p->line);
    if (!p->tag[0])
        return fail(why, cap, "line %lu: a file before the run line", p->line);
    int name_at = kind == JOURNAL_ASIDE ? 0 : 1, tmp_at = 1 - name_at;
    if (!unescape_name(f[name_at], n[name_at], out->name) || !unescape_name(f[tmp_at], n[tmp_at], out->tmp))
        return fail(why, cap, "line %lu: not a plain name in the output directory", p->line);
    if (!parse_u64(f[2], n[2], &out->ino) || !parse_u64(f[3], n[3], &out->size))
        return fail(why, cap, "line %lu: no inode and size", p->line);
    /* The run's own temporary names, and never one as a final name. */
    size_t mark = strlen(JOURNAL_TMP_MARK), tag = strlen(p->tag);
    if (strncmp(out->tmp, JOURNAL_TMP_MARK, mark) != 0 || strncmp(out->tmp + mark, p->tag, tag) != 0 ||
        out->tmp[mark + tag] != '-' || !out->tmp[mark + tag + 1])
        return fail(why, cap, "line %lu: %s is not a temporary name of this run", p->line, out->tmp);
    if (strncmp(out->name, JOURNAL_TMP_MARK, mark) == 0 || !p->own_name(p->ctx, out->name))
        return fail(why, cap, "line %lu: %s is not a name this output set's run writes", p->line, out->name);
    out->kind = kind;
    return 0;
}

int journal_parse_line(journal_parser *p, const char *line, size_t len, journal_entry *out, char *why,
                       size_t cap)
{
    memset(out, 0, sizeof *out);
    p->line++;
    const char *end = line + len;
    if (p->line == 1) {
        if (!word_is(line, len, JOURNAL_MAGIC))
            return fail(why, cap, "its first line is not \"%s\"", JOURNAL_MAGIC);
        return 0;
    }
    if (len && line[0] == '#')
        return 0;
    const char *at = line, *f;
    size_t n;
    if (!next_field(&at, end, &f, &n))
        return fail(why, cap, "line %lu: empty", p->line);
    if (word_is(f, n, "run"))
        return parse_run(p, at, end, out, why, cap);
    if (word_is(f, n, "aside"))
        return parse_move(p, JOURNAL_ASIDE, at, end, out, why, cap);
    if (word_is(f, n, "rename"))
        return parse_move(p, JOURNAL_RENAME, at, end, out, why, cap);
    return fail(why, cap, "line %lu: unknown entry", p->line);
}

static void put_escaped(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= 0x20 || *p == 0x7f || *p == '%')
            fprintf(f, "%%%02X", *p);
        else
            fputc(*p, f);
    }
}

void journal_put(FILE *f, const journal_entry *e)
{
    switch (e->kind) {
    case JOURNAL_RUN:
        fprintf(f, "run %ld %s\n", e->pid, e->tag);
        break;
    case JOURNAL_ASIDE:
    case JOURNAL_RENAME:
        fputs(e->kind == JOURNAL_ASIDE ? "aside " : "rename ", f);
        put_escaped(f, e->kind == JOURNAL_ASIDE ? e->name : e->tmp);
        fputc(' ', f);
        put_escaped(f, e->kind == JOURNAL_ASIDE ? e->tmp : e->name);
        fprintf(f, " %llu %llu\n", (unsigned long long)e->ino, (unsigned long long)e->size);
        break;
    case JOURNAL_NOTHING:
        break;
    }
}
