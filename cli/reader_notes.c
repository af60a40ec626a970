/* Reader notes, each printed once as "shardtool CMD: note: ...". */
#include "reader_notes.h"
#include "cli.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void reader_note_once(void *ctx, const char *text)
{
    const cli_command *cmd = ctx;
    /* Inputs may be opened on several threads at once. */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char *said[64];
    static size_t nsaid;
    pthread_mutex_lock(&lock);
    bool again = false;
    for (size_t i = 0; i < nsaid && !again; i++)
        again = strcmp(said[i], text) == 0;
    if (!again) {
        if (nsaid < sizeof said / sizeof *said)
            said[nsaid++] = strdup(text);
        fprintf(stderr, "shardtool %s: note: %s\n", cmd ? cmd->name : "", text);
    }
    pthread_mutex_unlock(&lock);
}
