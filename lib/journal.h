/* PREFIX.journal, line by line: what an unfinished commit has done and how
 * to undo it (see output_set.h for when it is written and removed).
 *
 *   shardtool-journal 2
 *   # a comment
 *   run PID TAG
 *   aside NAME TMP INO SIZE    an earlier set's file moved from NAME to TMP
 *   rename TMP NAME INO SIZE   a new file renamed from TMP to NAME
 *
 * A journal is a file in the output directory that anyone who can write
 * there can plant, so this parser accepts only what a run itself writes:
 * NAME and TMP are plain names in the prefix's own directory (no '/', no
 * NUL, never "." or ".."), every TMP starts with ".tmp-st" TAG "-" (the
 * run's own temporary names), every NAME is one the caller's rules accept
 * (a file of the output set), and each entry carries the inode and size of
 * the file it moved.  Bytes that would break a line are escaped as %XX.
 * Kept apart from the output set so that a fuzz target can link it. */
#ifndef ST_LIB_JOURNAL_H
#define ST_LIB_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JOURNAL_MAGIC "shardtool-journal 2"
#define JOURNAL_TMP_MARK ".tmp-st"
#define JOURNAL_NAME_MAX 255

typedef enum { JOURNAL_NOTHING, JOURNAL_RUN, JOURNAL_ASIDE, JOURNAL_RENAME } journal_kind;

typedef struct journal_entry {
    journal_kind kind;
    long pid;                          /* run */
    char tag[41];                      /* run: lower-case hex */
    char name[JOURNAL_NAME_MAX + 1];   /* aside, rename: the output set's name */
    char tmp[JOURNAL_NAME_MAX + 1];    /* aside, rename: the run's temporary name */
    uint64_t ino, size;                /* of the file moved */
} journal_entry;

/* Whether name is one the output set's own run writes (a shard, an index,
 * its manifest or feature spec). */
typedef bool (*journal_name_rule)(void *ctx, const char *name);

typedef struct journal_parser {
    journal_name_rule own_name;
    void *ctx;
    unsigned long line;     /* lines seen */
    char tag[41];           /* from the run line; "" before it */
} journal_parser;

void journal_parser_init(journal_parser *p, journal_name_rule own_name, void *ctx);
/* Parses one line (without its '\n').  0 and *out filled (JOURNAL_NOTHING
 * for the magic and comments), or -1 with why set: the journal is not one
 * a run wrote, and nothing it names may be touched. */
int journal_parse_line(journal_parser *p, const char *line, size_t len, journal_entry *out, char *why,
                       size_t cap);
/* Writes one entry as its line (with '\n'). */
void journal_put(FILE *f, const journal_entry *e);

#endif
