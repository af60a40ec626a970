/* Notes from a reader while it opens an input (a JSON key widened to
 * bytes), printed once each. */
#ifndef ST_CLI_READER_NOTES_H
#define ST_CLI_READER_NOTES_H

/* st_csv_options.note: ctx is the cli_command.  Printed at once and only
 * once however often the input is opened (--widen reads every input's
 * columns first, then converts). */
void reader_note_once(void *ctx, const char *text);

#endif
