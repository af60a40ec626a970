/* What shardtool_verify_file and shardtool_verify_manifest share: a check
 * (lib/verify_file.h) as the public report. */
#ifndef ST_LIB_API_VERIFY_INTERNAL_H
#define ST_LIB_API_VERIFY_INTERNAL_H

#include "api_common.h"
#include "verify_file.h"

/* Fills report from a check of path that could be read (c->readable);
 * manifest_problem: how the shard differs from its manifest entry, or NULL. */
void api_verify_report(const char *path, const st_file_check *c, const char *manifest_problem,
                       shardtool_verify_report *report);

#endif
