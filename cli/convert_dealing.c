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
