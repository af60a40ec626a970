#include "output_type_notes.h"

#include "../lib/output_type_notes.h"

#include <stdio.h>

static void say(void *ctx, const char *column, const char *what)
{
    const cli_command *cmd = ctx;
    fprintf(stderr, "shardtool %s: note: column '%s': %s\n", cmd->name, column, what);
}

void cli_output_type_notes(const cli_command *cmd, const cli_output *out)
{
    output_type_notes(out, say, (void *)cmd);
}
