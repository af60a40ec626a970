/* Fuzz target for the journal parser (lib/journal.c): the bytes are a
 * journal, read line by line as a rollback reads it.  Nothing may crash,
 * and the path rules must hold for whatever the parser accepts, as the
 * manifest fuzzer checks them for manifests: every name is one plain name
 * of the prefix's directory (no '/', no NUL, not "." or "..", at most
 * JOURNAL_NAME_MAX bytes), every temporary name is the run's own
 * (".tmp-st" TAG "-..."), every final name one the caller's rule accepts
 * and never a temporary one; no entry comes before the run line.  What is
 * accepted is written back and parsed again to the same entry. */
#include "../../lib/journal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The set's names in this target: beginning with "t" (the prefix "t"). */
static bool own_name(void *ctx, const char *name)
{
    (void)ctx;
    return name[0] == 't';
}

static bool plain_name(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= JOURNAL_NAME_MAX && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static void check_entry(const journal_parser *p, const journal_entry *e)
{
    if (e->kind != JOURNAL_ASIDE && e->kind != JOURNAL_RENAME)
        return;
    if (!p->tag[0] || !plain_name(e->name) || !plain_name(e->tmp) || !own_name(NULL, e->name))
        abort();
    char mark[64];
    snprintf(mark, sizeof mark, "%s%s-", JOURNAL_TMP_MARK, p->tag);
    if (strncmp(e->tmp, mark, strlen(mark)) != 0 || strlen(e->tmp) == strlen(mark) ||
        strncmp(e->name, JOURNAL_TMP_MARK, strlen(JOURNAL_TMP_MARK)) == 0)
        abort();
    /* Written back, the line reads as the same entry. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        abort();
    fprintf(f, "%s\nrun 1 %s\n", JOURNAL_MAGIC, p->tag);
    journal_put(f, e);
    fclose(f);
    journal_parser q;
    journal_parser_init(&q, own_name, NULL);
    journal_entry again;
    char why[300];
    const char *line = text;
    for (int i = 0; i < 3; i++) {
        const char *nl = strchr(line, '\n');
        if (!nl || journal_parse_line(&q, line, (size_t)(nl - line), &again, why, sizeof why) != 0)
            abort();
        line = nl + 1;
    }
    if (again.kind != e->kind || strcmp(again.name, e->name) != 0 || strcmp(again.tmp, e->tmp) != 0 ||
        again.ino != e->ino || again.size != e->size)
        abort();
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    journal_parser p;
    journal_parser_init(&p, own_name, NULL);
    const char *s = (const char *)data, *end = s + size;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl)
            break; /* a cut last line is never acted on */
        journal_entry e;
        char why[300];
        if (journal_parse_line(&p, s, (size_t)(nl - s), &e, why, sizeof why) != 0) {
            if (!why[0])
                abort(); /* a refusal always says why */
            break;
        }
        check_entry(&p, &e);
        s = nl + 1;
    }
    return 0;
}
