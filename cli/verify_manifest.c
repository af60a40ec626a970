/* verify --manifest: the shards a manifest lists are all there, intact, and
 * as the manifest describes them; and no other shard of the same set lies
 * beside them. */
#include "verify.h"

#include "json_read.h"
#include "manifest_read.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failure found without a file result: a missing or unlisted shard, an
 * entry that cannot be used.  Damage to the data set (status 1). */
static void report_failure(verify_ctx *vc, const char *path, const char *kind, const char *message)
{
    vc->files++;
    vc->damaged++;
    if (vc->json) {
        st_jsonw *w = &vc->w;
        st_json_begin_object(w);
        st_json_member_string(w, "path", path);
        st_json_member_bool(w, "ok", false);
        st_json_key(w, "failure");
        st_json_begin_object(w);
        st_json_member_string(w, "kind", kind);
        st_json_member_string(w, "message", message);
        st_json_end_object(w);
        st_json_end_object(w);
    } else {
        printf("%s: DAMAGED: %s: %s\n", path, kind, message);
    }
}

/* What differs between a checked shard and its entry, or "" when nothing. */
static void compare(const manifest_entry *e, const file_result *res, char *problem, size_t cap)
{
    problem[0] = '\0';
    if (e->has_records && res->rep.ok && e->records != res->rep.records) {
        snprintf(problem, cap, "%" PRIu64 " records, the manifest says %" PRIu64, res->rep.records,
                 e->records);
    } else if (e->has_bytes && res->have_crc && e->bytes != res->size) {
        snprintf(problem, cap, "%" PRIu64 " bytes, the manifest says %" PRIu64, res->size, e->bytes);
    } else if (e->has_crc && res->have_crc) {
        char have[16];
        snprintf(have, sizeof have, "%08x", res->crc);
        if (strcmp(have, e->crc32c) != 0)
            snprintf(problem, cap, "crc32c %s, the manifest says %s", have, e->crc32c);
    }
}

static int open_shard(void *arg, const char *path, st_stream **out, st_error *err)
{
    (void)arg;
    return st_stream_open(path, out, err);
}

static void verify_entry(verify_ctx *vc, const manifest_entry *e, const char *path)
{
    file_result res;
    verify_opened(vc, path, open_shard, NULL, vc->forced, vc->opt.compression, true, &res);
    if (!res.readable && res.err.code == ST_ENOTFOUND) {
        /* A missing shard is damage to the data set, not a usage error. */
        char msg[600];
        snprintf(msg, sizeof msg, "missing shard (%.500s)", res.err.msg);
        report_failure(vc, path, "manifest mismatch", msg);
        return;
    }
    char problem[512] = "";
    if (res.readable)
        compare(e, &res, problem, sizeof problem);
    account(vc, path, &res, problem[0] ? problem : NULL);
}

/* ---- shards beside the listed ones ------------------------------------------------ */

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One directory's files that follow a pattern of the set but are not
 * listed (listed: sorted).  Local directories only: listing a bucket
 * prefix is not done here. */
static void report_unlisted_in(verify_ctx *vc, const shard_pattern *p, char **listed, size_t nlisted)
{
    DIR *d = opendir(p->dir[0] ? p->dir : ".");
    if (!d)
        return; /* the listed shards in it are reported missing */
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && !cli_interrupted) {
        size_t shard_len;
        if (!shard_pattern_matches(p, de->d_name, &shard_len))
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s%.*s", p->dir, (int)shard_len, de->d_name);
        char *key = path;
        if (bsearch(&key, listed, nlisted, sizeof *listed, compare_strings))
            continue;
        if (n == cap) {
            char **more = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof *names);
            if (!more)
                break;
            names = more;
        }
        if (!(names[n] = strdup(de->d_name)))
            break;
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, compare_strings);
    for (size_t i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s%s", p->dir, names[i]);
        bool index = strlen(names[i]) > 4 && strcmp(names[i] + strlen(names[i]) - 4, ".idx") == 0;
        report_failure(vc, path, "unlisted shard",
                       index ? "an index of a shard the manifest does not list (left by an earlier "
                               "run? remove it)"
                             : "named like the manifest's shards but not listed in it (left by an "
                               "earlier run? remove it, or a reader globbing the set reads it too)");
        free(names[i]);
    }
    free(names);
}

/* Every distinct pattern of the listed local shards, each directory read once. */
static void report_unlisted(verify_ctx *vc, char **listed, size_t nlisted)
{
    qsort(listed, nlisted, sizeof *listed, compare_strings);
    shard_pattern *seen = NULL;
    size_t nseen = 0;
    for (size_t i = 0; i < nlisted && !cli_interrupted; i++) {
        shard_pattern p;
        if (st_path_is_remote(listed[i]) || !shard_pattern_of(listed[i], &p))
            continue;
        bool known = false;
        for (size_t j = 0; j < nseen && !known; j++)
            known = !strcmp(seen[j].dir, p.dir) && !strcmp(seen[j].prefix, p.prefix) &&
                    !strcmp(seen[j].ext, p.ext);
        if (known)
            continue;
        shard_pattern *more = realloc(seen, (nseen + 1) * sizeof *seen);
        if (!more)
            break;
        seen = more;
        seen[nseen++] = p;
        report_unlisted_in(vc, &p, listed, nlisted);
    }
    free(seen);
}

/* ---- the manifest ------------------------------------------------------------------- */

int verify_manifest(verify_ctx *vc, const char *manifest_path, bool trust_paths)
{
    size_t len;
    st_error err = {0};
    char *text = json_read_file(manifest_path, &len, &err);
    if (!text) {
        cli_error_at(vc->cmd, manifest_path, &err);
        return EXIT_USAGE;
    }
    manifest m;
    char msg[256];
    int rc = manifest_parse(text, len, &m, msg, sizeof msg);
    free(text);
    if (rc) {
        cli_error(vc->cmd, "%s: %s", manifest_path, msg);
        return EXIT_USAGE;
    }
    char **listed = calloc(m.count ? m.count : 1, sizeof *listed);
    size_t nlisted = 0;
    if (!listed) {
        cli_error(vc->cmd, "%s: out of memory", manifest_path);
        manifest_free(&m);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < m.count && !cli_interrupted; i++) {
        const manifest_entry *e = &m.entries[i];
        char where[64];
        snprintf(where, sizeof where, "shard %zu", i);
        if (e->problem) {
            char name[4200];
            snprintf(name, sizeof name, "%s: %s", manifest_path, e->path ? e->path : where);
            report_failure(vc, name, "bad manifest entry", e->problem);
            continue;
        }
        char path[4096], why[300];
        if (manifest_resolve(manifest_path, e->path, trust_paths, path, sizeof path, why, sizeof why)) {
            char name[4200];
            snprintf(name, sizeof name, "%s: %s", manifest_path, e->path);
            report_failure(vc, name, "unsafe path", why);
            continue;
        }
        if ((listed[nlisted] = strdup(path)) != NULL)
            nlisted++;
        verify_entry(vc, e, path);
        if (!vc->json)
            fflush(stdout);
    }
    if (!cli_interrupted)
        report_unlisted(vc, listed, nlisted);
    for (size_t i = 0; i < nlisted; i++)
        free(listed[i]);
    free(listed);
    manifest_free(&m);
    return EXIT_OK;
}
