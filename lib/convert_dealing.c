#include "convert_dealing.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether the file is compressed as a whole stream, as the reader would
 * find it (the same sniff of the first bytes). */
static bool whole_stream_compressed(const char *path, st_compression asked)
{
    if (asked == ST_COMPRESSION_GZIP || asked == ST_COMPRESSION_ZLIB)
        return true;
    if (asked == ST_COMPRESSION_NONE)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;  /* unreadable: the reader reports it; no byte dealing */
    uint8_t head[4];
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n < 0 || st_compression_sniff(head, (size_t)n) != ST_COMPRESSION_NONE;
}

uint64_t *convert_dealing_starts(char *const *paths, size_t npaths, st_compression asked)
{
    uint64_t *starts = malloc((npaths + 1) * sizeof *starts);
    if (!starts)
        return NULL;
    starts[0] = 0;
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") == 0 || st_path_is_remote(paths[i]) || stat(paths[i], &st) != 0 ||
            !S_ISREG(st.st_mode) || whole_stream_compressed(paths[i], asked)) {
            free(starts);
            return NULL;
        }
        starts[i + 1] = starts[i] + (uint64_t)st.st_size;
    }
    return starts;
}

static uint64_t share_start(uint64_t total, uint64_t task, uint64_t tasks)
{
    /* floor(task * total / tasks), with task < tasks keeping every
     * product below total. */
    return task * (total / tasks) + (task * (total % tasks)) / tasks;
}

void convert_dealing_range(uint64_t total, uint64_t task, uint64_t tasks, uint64_t *begin, uint64_t *end)
{
    *begin = share_start(total, task, tasks);
    *end = task + 1 == tasks ? total : share_start(total, task + 1, tasks);
}

size_t convert_dealing_chunk(uint64_t total, uint64_t tasks)
{
    uint64_t chunk = total / tasks / 128;
    if (chunk < ((uint64_t)16 << 10))
        chunk = (uint64_t)16 << 10;
    if (chunk > ((uint64_t)1 << 20))
        chunk = (uint64_t)1 << 20;
    return (size_t)chunk;
}

void convert_dealing_select_inputs(char **paths, size_t *npaths, uint64_t task, uint64_t tasks)
{
    size_t kept = 0;
    for (size_t i = 0; i < *npaths; i++) {
        if (i % tasks == task)
            paths[kept++] = paths[i];
        else
            free(paths[i]);
    }
    *npaths = kept;
}

void convert_dealing_plan(char **paths, size_t *npaths, st_compression asked, uint64_t task, uint64_t tasks,
                          convert_dealing *out)
{
    memset(out, 0, sizeof *out);
    out->how = "files";
    if (tasks <= 1)
        return;
    /* Best: local inputs whose units carry file offsets are dealt by
     * bytes, so that tasks get shares within a unit of the mean whatever
     * the inputs' sizes. */
    out->starts = convert_dealing_starts(paths, *npaths, asked);
    if (out->starts) {
        out->how = "bytes";
        uint64_t total = out->starts[*npaths];
        convert_dealing_range(total, task, tasks, &out->range_begin, &out->range_end);
        /* Units small enough that a share holds many of them, the same in
         * every task (they derive from the total and the task count only),
         * so that all tasks cut the same units. */
        out->chunk = convert_dealing_chunk(total, tasks);
    } else if (*npaths < tasks) {
        /* Fewer inputs than tasks (one large compressed or remote file):
         * every task reads them all and keeps its share of their units. */
        out->how = "units";
        out->unit_task = task;
        out->unit_tasks = tasks;
    } else {
        /* Enough inputs: each task takes whole files. */
        convert_dealing_select_inputs(paths, npaths, task, tasks);
    }
}
