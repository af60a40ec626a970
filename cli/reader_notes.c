/* Reader notes, each printed once as "shardtool CMD: note: ...". */
#include "reader_notes.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void reader_note_once(void *ctx, const char *text)
{
    const cli_command *cmd = ctx;
    static char *said[64];
    static size_t nsaid;
    for (size_t i = 0; i < nsaid; i++)
        if (strcmp(said[i], text) == 0)
            return;
    if (nsaid < sizeof said / sizeof *said)
        said[nsaid++] = strdup(text);
    fprintf(stderr, "shardtool %s: note: %s\n", cmd ? cmd->name : "", text);
}
