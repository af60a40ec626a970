/* Which names found in a directory or by a glob are inputs: tables and
 * shards only, so that the README.txt, _SUCCESS and .crc files that Spark,
 * Hadoop and people leave beside their data are never read as CSV. */
#ifndef ST_LIB_INPUT_NAMES_H
#define ST_LIB_INPUT_NAMES_H

#include <stdbool.h>

/* Whether the last component of `path` names a table or a shard (the rule
 * is in input_names.c and shardtool(1) under INPUTS).  A file named on the
 * command line is read whatever its name; this is for the files a
 * directory or a glob brings. */
bool st_is_table_name(const char *path);

#endif
