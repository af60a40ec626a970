/* combine's first step: the task manifests of PREFIX, found by one
 * directory listing (combine_state.h). */
#include "combine_state.h"
#include "task_infix.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int combine_find_tasks(combine_state *c)
{
    DIR *d = opendir(c->dir[0] ? c->dir : ".");
    if (!d)
        return combine_say(c, COMBINE_REFUSED, "%s: %s", c->dir[0] ? c->dir : ".", strerror(errno));
    size_t blen = strlen(c->base);
    struct dirent *e;
    int status = COMBINE_OK;
    while (status == COMBINE_OK && (e = readdir(d))) {
        unsigned long long i, n;
        if (strncmp(e->d_name, c->base, blen) != 0 ||
            !st_task_infix_parse(e->d_name + blen, ".manifest.json", &i, &n) || n == 0 || i >= n)
            continue;
        char path[8400];
        snprintf(path, sizeof path, "%s%s", c->dir, e->d_name);
        if (!c->tasks) {
            c->tasks = n;
            c->docs = calloc(n, sizeof *c->docs);
            if (!c->docs) {
                status = combine_say(c, COMBINE_FAILED, "out of memory");
                break;
            }
        } else if (n != c->tasks) {
            status = combine_fail(c, path, "a task manifest of a run of %llu tasks beside those of a run of %llu; "
                          "one prefix holds one distributed run: remove the other run's files",
                          n, c->tasks);
            break;
        }
        if (c->docs[i].path) {
            /* Two spellings of one number ("-task1-of-4" is not written,
             * but "-task000001" would parse): the same task twice. */
            status = combine_fail(c, path, "task %llu of %llu has two manifests (also %s)", i, n, c->docs[i].path);
            break;
        }
        if (!(c->docs[i].path = strdup(path))) {
            status = combine_say(c, COMBINE_FAILED, "out of memory");
        }
    }
    closedir(d);
    if (status)
        return status;
    if (!c->tasks) {
        /* A run without --task wrote the set's manifest itself. */
        char whole[8400];
        struct stat st;
        snprintf(whole, sizeof whole, "%s.manifest.json", c->prefix);
        bool have_whole = stat(whole, &st) == 0 && S_ISREG(st.st_mode);
        return combine_say(c, COMBINE_REFUSED, "%s: no task manifest (%s-taskIIIII-of-NNNNN.manifest.json); combine "
                           "is for the task manifests that `convert --task I/N` writes%s%s%s", c->prefix, c->prefix,
                           have_whole ? "; " : "", have_whole ? whole : "",
                           have_whole ? " is the manifest of a whole set already (verify --manifest checks it)" : "");
    }
    size_t missing = 0;
    char list[512] = "";
    for (unsigned long long i = 0; i < c->tasks; i++) {
        if (c->docs[i].path)
            continue;
        if (missing++ < 8) {
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s%llu", n ? ", " : "", i);
        }
    }
    if (missing) {
        return combine_say(c, COMBINE_FAILED, "%s: %zu of %llu tasks have no manifest (task%s %s%s): they have "
                           "not finished; run them (again: --resume keeps the finished ones)",
                           c->prefix, missing, c->tasks, missing == 1 ? "" : "s", list, missing > 8 ? ", ..." : "");
    }
    return COMBINE_OK;
}
