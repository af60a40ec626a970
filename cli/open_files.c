#include "open_files.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/resource.h>

/* Descriptors a run needs besides its shards: standard streams, inputs
 * (several at once with --jobs), the lock and journal, temporary files of
 * --shuffle, remote connections. */
#define OTHER_FILES 64

int cli_reserve_open_files(const cli_command *cmd, uint64_t shards, uint64_t files_per_shard)
{
    uint64_t need = shards * files_per_shard + OTHER_FILES;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return EXIT_OK;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? (rlim_t)need : rl.rlim_max;
    struct rlimit raised = {want, rl.rlim_max};
    if (want > rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &raised) == 0)
        rl.rlim_cur = want;
    if (rl.rlim_cur >= need)
        return EXIT_OK;
    return cli_usage_error(cmd,
                           "--shards %" PRIu64 " keeps %" PRIu64 " files open at once, but this process may "
                           "open only %" PRIu64 " (ulimit -n; its hard limit is %" PRIu64 "); raise the "
                           "limit (ulimit -n %" PRIu64 "), or use fewer shards, or --shard-size or "
                           "--records-per-shard, which keep one shard open at a time",
                           shards, shards * files_per_shard, (uint64_t)rl.rlim_cur,
                           (uint64_t)rl.rlim_max, need);
}
