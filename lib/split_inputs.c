/* Which kind of input split is given.  The inputs' kind is told by
 * content, as the other commands tell it, and by name where a look would
 * take bytes that the copy after it needs (pipes, standard input) or cost
 * a request (objects in a store). */
#include "split_inputs.h"

#include "pipe_peek.h"
#include "side_files.h"

#include "../formats/arrayrecord/arrayrecord.h"
#include "../formats/tfrecord/tfrecord.h"
#include "../src/stream.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int split_fail(split_run *r, int how, int rc, const char *path, const st_error *err)
{
    r->fail = how;
    r->rc = rc;
    snprintf(r->path, sizeof r->path, "%s", path ? path : "");
    if (err != &r->err)
        r->err = *err;
    return rc;
}

int split_usage(split_run *r, const char *fmt, ...)
{
    r->fail = SPLIT_FAIL_USAGE;
    r->rc = ST_EUSAGE;
    r->path[0] = '\0';
    r->err.code = ST_EUSAGE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    snprintf(r->err.msg, sizeof r->err.msg, "%.*s", (int)sizeof r->err.msg - 1, r->msg);
    return ST_EUSAGE;
}

bool split_is_stdin(const char *path)
{
    return strcmp(path, "-") == 0;
}

/* A FIFO, a character device or the pipe of a process substitution
 * (/dev/fd/63) gives its bytes once: looked at first, the bytes looked at
 * would be lost to the copy that follows (records read from the middle of
 * the stream, or a reopening that waits for ever). */
bool split_is_local(const char *path)
{
    struct stat st;
    return !split_is_stdin(path) && !st_path_is_remote(path) && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The TFRecord way opens the first input again, so a pipe's bytes must not
 * be taken: the pipe of a process substitution (/dev/fd/N, held open by
 * this process) is looked at with pipe_peek; a named FIFO is told by its
 * name (.avro or not), as looking would take its bytes, or lose them with
 * the look's reader. */
bool split_is_pipe_not_avro(const char *path, const volatile sig_atomic_t *cancel)
{
    struct stat st;
    if (st_path_is_remote(path) || stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
        return false;
    if (strncmp(path, "/dev/fd/", 8) == 0 || strncmp(path, "/proc/self/fd/", 14) == 0 ||
        strcmp(path, "/dev/stdin") == 0) {
        uint8_t head[4];
        int n = pipe_peek(path, head, sizeof head, cancel);
        if (n >= 0)
            return n < 4 || memcmp(head, "Obj\x01", 4) != 0;
    }
    const st_format *f = st_format_by_extension(path);
    return !f || strcmp(f->name, "avro") != 0;
}

/* Split copies TFRecord or Avro, and a table read as TFRecord would only
 * be reported as damage (status 1) where it is the wrong input (status 2,
 * as verify says of text).  A name that says TFRecord, a compressed input,
 * or bytes that detect as TFRecord are left to the TFRecord way. */
const char *split_not_a_shard(const char *path)
{
    static const char *const tables[] = {"csv", "tsv", "jsonl", "parquet", NULL};
    const st_format *by_name = st_format_by_extension(path);
    /* An object in a store is judged by its name alone (reading its first
     * bytes would cost a request), so that a table gives the same status
     * there as on a local disk. */
    if (!split_is_local(path) && !split_is_stdin(path)) {
        for (size_t i = 0; by_name && tables[i]; i++)
            if (strcmp(by_name->name, tables[i]) == 0)
                return tables[i];
        return NULL;
    }
    struct stat st;
    if (!split_is_local(path) || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    if (by_name && strcmp(by_name->name, "tfrecord") == 0)
        return NULL;
    st_stream *s;
    st_error err;
    if (st_stream_open(path, &s, &err) < 0)
        return NULL;
    uint8_t head[64];
    ssize_t n = st_stream_peek(&s, head, sizeof head, &err);
    st_stream_close(s);
    if (n <= 0 || st_compression_sniff(head, (size_t)n) != ST_COMPRESSION_NONE)
        return NULL;
    /* Named as text and holding anything: text whatever its size (as verify says). */
    static const char *const texts[] = {"csv", "tsv", "jsonl", NULL};
    for (size_t i = 0; by_name && texts[i]; i++)
        if (strcmp(by_name->name, texts[i]) == 0)
            return texts[i];
    if (n < ST_TFRECORD_HEADER_SIZE)
        return NULL;
    /* The content first: a CSV named .parquet is CSV. */
    const st_format *f = st_format_detect(NULL, head, (size_t)n);
    if (!f || (strcmp(f->name, "csv") && strcmp(f->name, "tsv") && strcmp(f->name, "jsonl")))
        f = st_format_detect(path, head, (size_t)n);
    if (!f)
        return NULL;
    for (size_t i = 0; tables[i]; i++)
        if (strcmp(f->name, tables[i]) == 0)
            return tables[i];
    return NULL;
}

/* By the first bytes (then the name, as every command does); otherwise
 * the stream is closed. */
int split_probe_avro(const char *path, bool *avro, st_stream **keep, st_error *err)
{
    *avro = false;
    st_stream *s;
    int rc = st_stream_open(path, &s, err);
    if (rc < 0)
        return rc;
    uint8_t head[64];
    ssize_t n = st_stream_peek(&s, head, sizeof head, err);
    if (n < 0) {
        st_stream_close(s);
        return (int)n;
    }
    const st_format *f = st_format_detect(path, head, (size_t)n);
    *avro = f && strcmp(f->name, "avro") == 0;
    if (*avro && keep)
        *keep = s;
    else
        st_stream_close(s);
    return ST_OK;
}

/* By its first header (magic and checksum) or, compressed, by its name
 * (.tar.gz, .tgz).  Pipes, FIFOs and standard input are told by their names
 * only (a look would take bytes that the reader after it needs), and so
 * are objects in a store (a look would cost a request). */
bool split_is_webdataset(const char *path)
{
    const st_format *wds = st_format_by_name("webdataset");
    struct stat st;
    if (split_is_stdin(path) || st_path_is_remote(path) || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return st_format_by_extension(path) == wds;
    st_stream *s;
    st_error err;
    if (st_stream_open(path, &s, &err) < 0)
        return false;
    uint8_t head[512];
    ssize_t n = st_stream_peek(&s, head, sizeof head, &err);
    st_stream_close(s);
    return n > 0 && st_format_detect(path, head, (size_t)n) == wds;
}

bool split_is_arrayrecord(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || st_path_is_remote(path) || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        /* By name: TFDS puts the extension before the shard numbers
         * (NAME-train.array_record-00000-of-00008). */
        return strcmp(path, "-") != 0 && strstr(path, ".array_record") != NULL;
    }
    st_stream *s;
    st_error err;
    if (st_stream_open(path, &s, &err) < 0)
        return false;
    uint8_t head[ST_RIEGELI_SIGNATURE_SIZE];
    ssize_t n = st_stream_peek(&s, head, sizeof head, &err);
    st_stream_close(s);
    return n > 0 && st_format_arrayrecord.probe(head, (size_t)n) > 0;
}

/* What split copies a local input as, for the messages. */
static const char *copied_kind(const char *path)
{
    return split_is_arrayrecord(path) ? "an ArrayRecord file" : "a WebDataset tar shard";
}

int split_check_inputs(split_run *r, size_t first)
{
    char **paths = r->s->paths;
    size_t npaths = r->s->npaths;
    for (size_t i = first; i < npaths; i++) {
        const char *side = split_is_local(paths[i]) ? st_side_file_kind(paths[i]) : NULL;
        if (side)
            return split_usage(r, "%s: this is %s written by shardtool, not a shard; name the shards, or quote "
                                  "the glob ('DIR/train-*') so that shardtool expands it and leaves such "
                                  "files out", paths[i], side);
    }
    if (first >= npaths || !split_is_local(paths[first]) || split_is_webdataset(paths[first]))
        return ST_OK; /* tar shards: check_webdataset_inputs (split.c) */
    /* The TFRecord way read a tar or an ArrayRecord file as a damaged
     * record (exit 1, --skip-corrupt suggested), and the ArrayRecord way a
     * TFRecord file as a damaged chunk header. */
    bool arrayrecord = split_is_arrayrecord(paths[first]);
    for (size_t i = first + 1; i < npaths; i++) {
        if (!split_is_local(paths[i]))
            continue;
        bool other = arrayrecord ? !split_is_arrayrecord(paths[i])
                                 : split_is_arrayrecord(paths[i]) || split_is_webdataset(paths[i]);
        if (other)
            return split_usage(r, "%s: %s, unlike %s; split copies one kind of input at a time", paths[i],
                               arrayrecord ? "not an ArrayRecord file" : copied_kind(paths[i]), paths[first]);
    }
    return ST_OK;
}
