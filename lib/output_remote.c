/* An output set in object storage (see output_set.h): the lock object, the
 * earlier set found by listing the prefix, and its removal after the new
 * manifest is written.
 *
 * Objects cannot be renamed, so there is no journal: each shard appears
 * under its final name when its upload completes, and the manifest is
 * written last.  What keeps an earlier set whole until then is that
 * nothing of it is deleted before the new manifest exists; a run killed
 * before that leaves the earlier set as it was (beside any new shards of
 * other names), and its lock, which the next run takes over.
 *
 * The lock is PREFIX[INFIX].lock, created with a conditional write (S3
 * If-None-Match: *, GCS ifGenerationMatch=0) so that of two runs only one
 * creates it, holding "PID@HOST TAG TIME".  Nothing tells whether the run
 * holding it is alive, except on the same host: a lock of a process that
 * no longer exists there is taken over as a dead run's; any other is
 * refused, and --force (or --resume) takes it over, for a run known to
 * be gone. */
#include "output_set.h"

#include "json_read.h"
#include "manifest_read.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if ST_HAVE_REMOTE_MODULE
#include "../src/remote/remote.h"

static void this_host(char *out, size_t cap)
{
    if (gethostname(out, cap) != 0)
        snprintf(out, cap, "unknown");
    out[cap - 1] = '\0';
}

typedef struct lock_holder {
    long pid;
    char host[256];
    long long since;
    bool parsed;
} lock_holder;

static void parse_holder(const char *text, lock_holder *h)
{
    memset(h, 0, sizeof *h);
    char tag[64];
    h->parsed = sscanf(text, "%ld@%255s %63s %lld", &h->pid, h->host, tag, &h->since) >= 2;
}

/* Whether the holder is a process of this host that no longer exists. */
static bool holder_dead_here(const lock_holder *h)
{
    char host[256];
    this_host(host, sizeof host);
    return h->parsed && h->pid > 0 && strcmp(h->host, host) == 0 && kill((pid_t)h->pid, 0) != 0 && errno == ESRCH;
}

static bool holder_alive_here(const lock_holder *h)
{
    char host[256];
    this_host(host, sizeof host);
    return h->parsed && h->pid > 0 && strcmp(h->host, host) == 0 && (kill((pid_t)h->pid, 0) == 0 || errno == EPERM);
}

static void describe_holder(const lock_holder *h, char *out, size_t cap)
{
    if (!h->parsed) {
        snprintf(out, cap, "a run whose lock does not say which");
        return;
    }
    long long age = h->since > 0 ? (long long)time(NULL) - h->since : -1;
    if (age >= 0)
        snprintf(out, cap, "run (pid %ld on %s, started %lld s ago)", h->pid, h->host, age);
    else
        snprintf(out, cap, "run (pid %ld on %s)", h->pid, h->host);
}

static int refuse_lock(const output_set *set, const lock_holder *h, bool alive)
{
    char who[400];
    describe_holder(h, who, sizeof who);
    if (alive)
        return output_set_refuse(set, ST_EUSAGE, "%s: another %s is writing outputs with the prefix %s; wait for "
                                 "it to finish",
                                 set->lock_url, who, set->prefix);
    return output_set_refuse(set, ST_EUSAGE, "%s: another %s is writing outputs with the prefix %s; wait for it to "
                             "finish.  An object store cannot tell whether that run is alive: if it is gone "
                             "(killed, or its machine lost), --force (or --resume) takes the lock over",
                             set->lock_url, who, set->prefix);
}

/* Creates the lock object, or takes over a dead run's (or, with --force,
 * any run's not alive on this host). */
static int take_lock(output_set *set)
{
    char host[256];
    this_host(host, sizeof host);
    snprintf(set->lock_url, sizeof set->lock_url, "%s%s.lock", set->prefix, set->infix);
    snprintf(set->lock_record, sizeof set->lock_record, "%ld@%s %s %lld\n", (long)getpid(), host, set->tag,
             (long long)time(NULL));
    for (int attempt = 0; attempt < 3; attempt++) {
        st_error err = {0};
        char *text = NULL;
        size_t len;
        /* Looked at first: a store that ignores the condition would
         * otherwise replace a lock that stands. */
        int rc = st_remote_get_small(set->lock_url, &text, &len, &err);
        if (rc == ST_ENOTFOUND) {
            rc = st_remote_put_new(set->lock_url, set->lock_record, strlen(set->lock_record), &err);
            if (rc == ST_OK) {
                set->lock_object_held = true;
                /* Read back: where the condition was ignored, the last of
                 * two runs' writes stands, and the other run learns here
                 * that the lock is not its own. */
                rc = st_remote_get_small(set->lock_url, &text, &len, &err);
                if (rc == ST_OK && strcmp(text, set->lock_record) == 0) {
                    free(text);
                    return ST_OK;
                }
                set->lock_object_held = false;
                if (rc == ST_ENOTFOUND) {
                    free(text);
                    continue;
                }
            } else if (rc == ST_EEXIST) {
                continue; /* another run created it first: read whose */
            }
        }
        if (rc != ST_OK) {
            free(text);
            return output_set_refuse(set, rc, "%s: cannot take the lock of the prefix %s: %s",
                                     set->lock_url, set->prefix, err.msg);
        }
        if (strcmp(text, set->lock_record) == 0) {
            /* Ours: the conditional write went through but its answer was
             * lost, and the retry found the key taken (by this run). */
            free(text);
            set->lock_object_held = true;
            return ST_OK;
        }
        lock_holder h;
        parse_holder(text, &h);
        free(text);
        bool dead = holder_dead_here(&h);
        if (!dead && (!set->force || holder_alive_here(&h)))
            return refuse_lock(set, &h, holder_alive_here(&h));
        char who[400];
        describe_holder(&h, who, sizeof who);
        if ((rc = st_remote_delete(set->lock_url, &err)) != ST_OK)
            return output_set_refuse(set, rc, "%s: cannot remove the lock to take it over: %s",
                                     set->lock_url, err.msg);
        if (dead)
            output_set_note(set, "%s: took over the lock of a run that is no longer running (pid %ld on %s)",
                            set->lock_url, h.pid, h.host);
        else
            output_set_note(set, "%s: --force: took over the lock of a %s", set->lock_url, who);
    }
    return output_set_refuse(set, ST_EUSAGE, "%s: the lock object keeps changing; is another run starting?",
                             set->lock_url);
}

static int compare_urls(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool listed(char **urls, size_t n, const char *url)
{
    return n && bsearch(&url, urls, n, sizeof *urls, compare_urls) != NULL;
}

/* The shards an earlier manifest lists that are objects under the prefix's
 * "directory" (found in the listing): its set, whatever their names. */
static void add_manifest_shards(output_set *set, const char *manifest_url, char **urls, size_t n)
{
    st_error err = {0};
    size_t len;
    char *text = json_read_file(manifest_url, &len, &err);
    manifest m;
    char msg[256];
    if (!text || manifest_parse(text, len, &m, msg, sizeof msg) != 0) {
        free(text);
        return;
    }
    size_t dirlen = strlen(set->dir);
    for (size_t i = 0; i < m.count; i++) {
        char path[8400];
        shard_pattern pat;
        if (m.entries[i].problem || !m.entries[i].path ||
            manifest_resolve(manifest_url, m.entries[i].path, false, path, sizeof path, msg, sizeof msg) != 0 ||
            strncmp(path, set->dir, dirlen) != 0 || strchr(path + dirlen, '/') || !shard_pattern_of(path, &pat) ||
            !listed(urls, n, path))
            continue;
        output_set_add_earlier(set, path);
    }
    manifest_free(&m);
    free(text);
}

/* Whether url is an object (a --manifest or --feature-spec named elsewhere). */
static bool object_exists(const char *url)
{
    char **urls;
    size_t n;
    st_error err = {0};
    if (st_remote_list_prefix(url, &urls, &n, &err) != ST_OK)
        return false;
    bool found = listed(urls, n, url);
    st_remote_free_urls(urls, n);
    return found;
}

/* Lists the prefix for the outputs of an earlier run (and the shards its
 * manifest lists); refused without --force. */
static int look_for_earlier(output_set *set)
{
    for (size_t i = 0; i < set->nearlier; i++)
        free(set->earlier[i]);
    set->nearlier = 0;
    char **urls;
    size_t n;
    st_error err = {0};
    int rc = st_remote_list_prefix(set->prefix, &urls, &n, &err);
    if (rc != ST_OK)
        return output_set_refuse(set, rc, "%s: cannot list the prefix to look for an earlier output set: %s",
                                 set->prefix, err.msg);
    size_t dirlen = strlen(set->dir);
    for (size_t i = 0; i < n; i++) {
        const char *name = urls[i] + dirlen;
        if (strncmp(urls[i], set->dir, dirlen) == 0 && output_set_own_name(set, name))
            output_set_add_earlier(set, urls[i]);
    }
    /* A --manifest or --feature-spec named outside the prefix is looked
     * for on its own. */
    for (size_t i = 0; i < 2; i++)
        if (set->side[i][0] && (strncmp(set->side[i], set->prefix, strlen(set->prefix)) == 0
                                    ? listed(urls, n, set->side[i])
                                    : object_exists(set->side[i])))
            output_set_add_earlier(set, set->side[i]);
    size_t found = set->nearlier;
    for (size_t i = 0; i < found; i++) {
        size_t l = strlen(set->earlier[i]);
        if ((l > 14 && strcmp(set->earlier[i] + l - 14, ".manifest.json") == 0) ||
            strcmp(set->earlier[i], set->side[0]) == 0)
            add_manifest_shards(set, set->earlier[i], urls, n);
    }
    st_remote_free_urls(urls, n);
    return output_set_check_earlier(set);
}

int output_remote_open(output_set *set, const char *manifest_url, const char *feature_spec)
{
    const char *named[] = {manifest_url, feature_spec};
    for (size_t i = 0; i < 2; i++)
        if (named[i] && st_path_is_remote(named[i]))
            snprintf(set->side[i], sizeof set->side[i], "%s", named[i]);
    /* Looked for first, so that a run refused for an earlier set writes
     * nothing, not even its lock; then again with the lock held, the look
     * that counts (a run that finished in between is seen). */
    int status = set->force ? ST_OK : look_for_earlier(set);
    if (status == ST_OK)
        status = take_lock(set);
    return status ? status : look_for_earlier(set);
}

static bool in_new_set(const output_set *set, const st_shard_sink *sink, const char *url)
{
    for (size_t k = 0; k < st_shard_sink_count(sink); k++) {
        const st_shard_info *d = st_shard_sink_shard(sink, k);
        if ((d->path && strcmp(d->path, url) == 0) || (d->index_path && strcmp(d->index_path, url) == 0))
            return true;
    }
    for (size_t i = 0; i < OUTPUT_SET_SIDES; i++)
        if (strcmp(url, set->side[i]) == 0)
            return true;
    return false;
}

int output_remote_commit(output_set *set, const st_shard_sink *sink, char *const *inputs, size_t ninputs,
                         st_error *err)
{
    (void)err;
    size_t removed = 0, kept = 0, failed = 0;
    const char *first = NULL, *failed_one = NULL, *first_kept = NULL;
    char why[1100] = "";
    for (size_t i = 0; i < set->nearlier; i++) {
        const char *url = set->earlier[i];
        if (in_new_set(set, sink, url))
            continue; /* replaced by the new set's object of that name */
        bool input = false;
        for (size_t k = 0; k < ninputs && !input; k++)
            input = strcmp(inputs[k], url) == 0;
        if (input) {
            if (!kept++)
                first_kept = url;
            continue;
        }
        st_error e = {0};
        if (st_remote_delete(url, &e) != ST_OK) {
            if (!failed++) {
                failed_one = url;
                snprintf(why, sizeof why, "%s", e.msg);
            }
            continue;
        }
        if (!removed++)
            first = url;
        if (set->verbose)
            output_set_note(set, "removed %s (earlier set)", url);
    }
    /* As for local files (output_commit.c): named, since no manifest lists them now. */
    if (kept)
        output_set_note(set,
                        "--force: kept %zu object%s of the earlier output set that %s this run's input%s (%s%s): "
                        "the new manifest does not list %s; remove %s when no longer needed",
                        kept, kept == 1 ? "" : "s", kept == 1 ? "was" : "were", kept == 1 ? "" : "s", first_kept,
                        kept > 1 ? ", ..." : "", kept == 1 ? "it" : "them", kept == 1 ? "it" : "them");
    if (removed)
        output_set_note(set, "--force: removed %zu object%s of the earlier output set (%s%s)%s", removed,
                        removed == 1 ? "" : "s", first, removed > 1 ? ", ..." : "",
                        set->verbose ? "" : "; -v names them");
    if (failed)
        /* The new set is complete and its manifest written: the run has
         * done its work, and what is left over is named. */
        output_set_note(set, "warning: %zu object%s of the earlier output set could not be removed (%s: %s); "
                        "remove %s by hand, or verify --manifest names %s",
                        failed, failed == 1 ? "" : "s", failed_one, why, failed == 1 ? "it" : "them",
                        failed == 1 ? "it" : "them");
    return ST_OK;
}

void output_remote_close(output_set *set)
{
    if (!set->lock_object_held)
        return;
    set->lock_object_held = false;
    st_error err = {0};
    /* Only a lock that is still ours goes: one taken over meanwhile (by a
     * --force run that took this one for dead) stays its new holder's. */
    char *text = NULL;
    size_t len;
    if (st_remote_get_small(set->lock_url, &text, &len, &err) == ST_OK && strcmp(text, set->lock_record) == 0)
        st_remote_delete(set->lock_url, &err);
    free(text);
}

#else

int output_remote_open(output_set *set, const char *manifest_url, const char *feature_spec)
{
    (void)set;
    (void)manifest_url;
    (void)feature_spec;
    return ST_OK; /* without remote support the first upload says so */
}

int output_remote_commit(output_set *set, const st_shard_sink *sink, char *const *inputs, size_t ninputs,
                         st_error *err)
{
    (void)set;
    (void)sink;
    (void)inputs;
    (void)ninputs;
    (void)err;
    return ST_OK;
}

void output_remote_close(output_set *set)
{
    (void)set;
}

#endif
