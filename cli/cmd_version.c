/* shardtool version: the version and what this build can do, for bug
 * reports and scripts (as curl --version lists its protocols and
 * features); --json for scripts.  `shardtool --version` prints the same. */
#include "cli.h"
#include "json_version.h"

#include "st_config.h"
#include "remote.h"
#include "../src/crc32c.h"
#include "../lib/verify_gpu.h"

#include <stdio.h>

static const char *gpu_name(void)
{
    return verify_gpu_backend();
}

/* The remote schemes, when this process can reach them: a build with
 * remote support whose libcurl.so.4 (or libcrypto) is missing reaches
 * none, and says why. */
static bool remote_ready(st_error *why)
{
    *why = (st_error){0};
    return st_remote_loadable(why);
}

static void print_text(void)
{
    printf("shardtool %s\n", ST_VERSION);
    printf("formats:");
    for (size_t i = 0; st_formats[i]; i++)
        if (!st_formats[i]->unavailable)
            printf(" %s", st_formats[i]->name);
    st_error why;
    if (remote_ready(&why))
        printf("\nremote: http https s3 gs\n");
    else
        printf("\nremote: none (%s)\n", why.msg);
    printf("gpu: %s\n", gpu_name() ? gpu_name() : "none");
    printf("crc32c: %s\n", st_crc32c_active());
    /* verify --payloads: the kinds this build decodes, and those it cannot
     * check for want of a library (counted as "not checked" when met). */
    printf("payloads:");
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
        if (st_payload_kind_available(k))
            printf(" %s", st_payload_kind_name(k));
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
        if (!st_payload_kind_available(k))
            printf(" (no %s: built without %s)", st_payload_kind_name(k), st_payload_kind_library(k));
    printf("\n");
}

/* Every name printed is a fixed ASCII word: no escaping needed. */
static void print_json(void)
{
    printf("{\"version\": %d, \"shardtool\": \"%s\", \"formats\": [", CLI_JSON_VERSION, ST_VERSION);
    const char *sep = "";
    for (size_t i = 0; st_formats[i]; i++) {
        if (st_formats[i]->unavailable)
            continue;
        printf("%s\"%s\"", sep, st_formats[i]->name);
        sep = ", ";
    }
    st_error why;
    printf("], \"remote\": [%s], ", remote_ready(&why) ? "\"http\", \"https\", \"s3\", \"gs\"" : "");
    if (gpu_name())
        printf("\"gpu\": [\"%s\"], ", gpu_name());
    else
        printf("\"gpu\": [], ");
    printf("\"crc32c\": \"%s\", ", st_crc32c_active());
    printf("\"payloads\": [");
    sep = "";
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
        if (st_payload_kind_available(k)) {
            printf("%s\"%s\"", sep, st_payload_kind_name(k));
            sep = ", ";
        }
    printf("]}\n");
}

void cli_print_version(bool json)
{
    if (json)
        print_json();
    else
        print_text();
}

static const cli_option version_options[] = {
    {"json", 0, ARG_NONE, NULL, NULL, "print one JSON object (version, formats, remote, gpu)"},
    CLI_OPTIONS_END,
};

static const cli_option *const version_groups[] = {version_options, NULL};

static int run_version(const cli_command *cmd, cli_values *v)
{
    if (v->npositional) {
        return cli_usage_error(cmd, "takes no arguments");
    }
    cli_print_version(cli_has(v, "json"));
    return EXIT_OK;
}

const cli_command cmd_version = {
    .name = "version",
    .summary = "print the version and what this build can read, write and reach",
    .usage = "[--json]",
    .description =
        "Prints the version, the formats this build reads and writes, the remote\n"
        "schemes it reaches and whether it verifies on a GPU: what a bug report\n"
        "needs.  The same as 'shardtool --version'.",
    .groups = version_groups,
    .run = run_version,
};
