/* Rolling back the unfinished commit a journal describes (journal.h).
 *
 * A journal is a file in the output directory that anyone who can write
 * there could have planted, so it is read in full and checked before
 * anything is touched: every name it holds is a plain name in the prefix's
 * own directory that the run itself writes (output_set_own_name), every
 * temporary name is the run's own, every entry has the inode and size of
 * the file it moved.  A journal that breaks any of this is left alone and
 * nothing is removed.  Then only the very files the journal recorded (same
 * inode, same size) are removed or moved back. */
#include "output_set.h"

#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool own_name_rule(void *ctx, const char *name)
{
    return output_set_own_name(ctx, name);
}

/* Whether the file at dir/name is the one recorded: a regular file (not a
 * link to one) with that inode and size. */
static bool is_recorded(const output_set *set, const char *name, uint64_t ino, uint64_t size, char *path,
                        size_t cap)
{
    struct stat st;
    snprintf(path, cap, "%s%s", set->dir, name);
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_ino == ino &&
           (uint64_t)st.st_size == size;
}

/* Moves an earlier file back to its name, never over another file. */
static bool move_back(const char *from, const char *to)
{
    if (link(from, to) == 0) {
        (void)unlink(from); /* a second name for the file at worst: nothing lost */
        return true;
    }
    if (errno == EEXIST)
        return false;
    /* A filesystem without hard links: rename, only where the name is free. */
    struct stat st;
    return lstat(to, &st) != 0 && errno == ENOENT && rename(from, to) == 0;
}

/* One pass over the journal's complete lines: pass 0 checks them all,
 * pass 1 undoes the renames (removes the new files), pass 2 moves the
 * earlier set's files back.  A last line without its '\n' was cut by a
 * kill while the journal was written: nothing it names was moved yet (the
 * journal is synced before the first move), so it is skipped. */
static bool pass(const output_set *set, FILE *f, int which, output_rollback *r)
{
    journal_parser p;
    journal_parser_init(&p, own_name_rule, (void *)set);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    bool ok = true;
    rewind(f);
    while (ok && (n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] != '\n') {
            /* Cut inside the first line: the run died creating it. */
            if (p.line == 0 && ((size_t)n > strlen(JOURNAL_MAGIC) || strncmp(line, JOURNAL_MAGIC, (size_t)n) != 0))
                ok = false, snprintf(r->why, sizeof r->why, "not a journal (no \"%s\" line)", JOURNAL_MAGIC);
            break;
        }
        journal_entry e;
        if (journal_parse_line(&p, line, (size_t)n - 1, &e, r->why, sizeof r->why) != 0) {
            ok = false;
            break;
        }
        char path[8400], tmp[8400];
        if (which == 1 && e.kind == JOURNAL_RENAME) {
            if (is_recorded(set, e.name, e.ino, e.size, path, sizeof path) && unlink(path) == 0)
                r->removed++;
            if (is_recorded(set, e.tmp, e.ino, e.size, tmp, sizeof tmp) && unlink(tmp) == 0)
                r->removed++;
        } else if (which == 2 && e.kind == JOURNAL_ASIDE) {
            snprintf(path, sizeof path, "%s%s", set->dir, e.name);
            if (is_recorded(set, e.tmp, e.ino, e.size, tmp, sizeof tmp)) {
                if (move_back(tmp, path))
                    r->restored++;
                else
                    r->stuck++;
            }
        }
    }
    if (ok && ferror(f))
        ok = false, snprintf(r->why, sizeof r->why, "%s", strerror(errno));
    free(line);
    return ok;
}

bool output_set_roll_back(const output_set *set, const char *journal, output_rollback *r)
{
    memset(r, 0, sizeof *r);
    /* Only a regular file, not through a link: a FIFO planted at the name
     * would block the open, a link could lead anywhere. */
    int fd = open(journal, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(r->why, sizeof r->why, "%s", fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        return false;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(r->why, sizeof r->why, "%s", strerror(errno));
        close(fd);
        return false;
    }
    bool ok = pass(set, f, 0, r) && pass(set, f, 1, r) && pass(set, f, 2, r);
    fclose(f);
    return ok;
}
