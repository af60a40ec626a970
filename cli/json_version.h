/* The version of the documents `--json` prints (stat, verify): the first
 * member of each, "version".  Members are only ever added within one
 * version; removing or changing one would be a new version. */
#ifndef ST_CLI_JSON_VERSION_H
#define ST_CLI_JSON_VERSION_H

#define CLI_JSON_VERSION 1

#endif
