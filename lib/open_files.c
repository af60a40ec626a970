#include "open_files.h"

#include <sys/resource.h>

/* Descriptors a run needs besides its shards: standard streams, inputs
 * (several at once with --jobs), the lock and journal, temporary files of
 * --shuffle, remote connections. */
#define OTHER_FILES 64

bool open_files_reserve(uint64_t shards, uint64_t files_per_shard, open_files_limit *lim)
{
    uint64_t need = shards * files_per_shard + OTHER_FILES;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return true;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? (rlim_t)need : rl.rlim_max;
    struct rlimit raised = {want, rl.rlim_max};
    if (want > rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &raised) == 0)
        rl.rlim_cur = want;
    if (rl.rlim_cur >= need)
        return true;
    *lim = (open_files_limit){need, (uint64_t)rl.rlim_cur, (uint64_t)rl.rlim_max};
    return false;
}
