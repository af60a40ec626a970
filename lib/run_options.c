#include "run_options.h"

#include "../src/json.h"
#include "../src/url_redact.h"

#include <stdlib.h>
#include <string.h>

/* The options that shape the output, in the order the manifest lists them. */
static const char *const shaping[] = {
    "from", "shards", "shard-size", "records-per-shard", "compression", "columns", "exclude",
    "decimal", "nested", "maps", "delimiter", "quote", "no-header", "header", "skip-bad-rows", "empty",
    "schema", "type", "shuffle", "seed", "task", "tasks", "avro-codec", "widen", "parquet-codec",
    "row-group-size", "page-version", "bytes-as",
    "key", "wds-member", "mtime", "key-feature", "union-by-name", "compression-level", "arrayrecord-codec",
    "arrayrecord-group-size", "check-payloads", "skip-corrupt", "max-pixels", NULL,
};

/* Those that are counts or sizes, once more as JSON numbers under
 * "numbers": the members above keep the text given ("shards": "8"), as
 * version 1 has always had them; "numbers" has "shards": 8, and sizes in
 * bytes ("shard-size": "64MiB" is 67108864).  Derived from those texts,
 * it is left out where --resume and combine compare options, so that
 * manifests written before it was added compare the same. */
static const char *const numbers[] = {
    "shards", "records-per-shard", "seed", "tasks", "arrayrecord-group-size", "mtime", "shard-size",
    "row-group-size", "compression-level", "max-pixels", NULL,
};

static void write_shaping(st_jsonw *w, run_option_fn option, void *ctx)
{
    for (const char *const *name = shaping; *name; name++) {
        run_option_value v;
        memset(&v, 0, sizeof v);
        if (!option(ctx, *name, &v))
            continue;
        st_json_key(w, *name);
        if (v.list) {
            st_json_begin_array(w);
            for (size_t i = 0; i < v.nlist; i++)
                st_json_string(w, v.list[i]);
            st_json_end_array(w);
        } else if (v.text) {
            st_json_string(w, v.text);
        } else {
            st_json_bool(w, true);
        }
    }
}

static void write_numbers(st_jsonw *w, run_option_fn option, void *ctx)
{
    bool any = false;
    for (const char *const *name = numbers; *name; name++) {
        run_option_value v;
        memset(&v, 0, sizeof v);
        if (!option(ctx, *name, &v) || !v.has_number)
            continue;
        if (!any) {
            st_json_key(w, "numbers");
            st_json_begin_object(w);
            any = true;
        }
        st_json_member_uint(w, *name, v.number);
    }
    if (any)
        st_json_end_object(w);
}

/* Which share of the distributed set this task wrote: what `shardtool
 * combine` checks (every task once, shard numbers without gap or
 * overlap).  Under --tasks the index comes from the environment, so it is
 * recorded here. */
static void write_task_share(st_jsonw *w, const st_shard_options *sopt, const convert_whole_share *share)
{
    st_json_key(w, "task_share");
    st_json_begin_object(w);
    st_json_member_uint(w, "task", share->task);
    st_json_member_uint(w, "tasks", share->tasks);
    st_json_member_uint(w, "first_shard", sopt->number_base);
    st_json_member_uint(w, "shards", sopt->count);
    st_json_member_uint(w, "total_shards", sopt->number_total);
    /* The rule that shared the inputs out, the same in every task of one
     * run (combine checks): "bytes" (the units whose first byte lies in
     * this task's range of the inputs concatenated), "files" (whole inputs
     * I, I+N, ...) or "units" (every N-th unit). */
    st_json_member_string(w, "dealing", share->dealing);
    if (share->starts) {
        st_json_member_uint(w, "input_bytes", share->starts[share->npaths]);
        st_json_member_uint(w, "range_begin", share->range_begin);
        st_json_member_uint(w, "range_end", share->range_end);
    }
    st_json_end_object(w);
}

char *run_options_json(run_option_fn option, void *ctx, const char *to, const st_shard_options *sopt,
                       const convert_whole_share *share)
{
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    st_json_begin_object(&w);
    st_json_key(&w, "inputs");
    st_json_begin_array(&w);
    for (size_t i = 0; i < share->npaths; i++) {
        /* Stored without the passwords and signatures of URLs. */
        char shown[4096];
        st_json_string(&w, st_url_shown(share->paths[i], shown, sizeof shown));
    }
    st_json_end_array(&w);
    /* Every input of the run (of every task), with what tells a changed
     * one apart: what --resume and combine compare (input_identity.h). */
    if (share->input_files) {
        st_json_key(&w, "input_files");
        st_json_raw(&w, share->input_files, strlen(share->input_files));
    }
    st_json_member_string(&w, "to", to);
    write_shaping(&w, option, ctx);
    write_numbers(&w, option, ctx);
    if (share->tasks > 1)
        write_task_share(&w, sopt, share);
    st_json_end_object(&w);
    if (st_buf_append(&b, "", 1) != 0) {
        free(b.data);
        return NULL;
    }
    return (char *)b.data;
}
