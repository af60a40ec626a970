/* Notes a run says as it goes, through the caller's callback (lib/ never
 * prints): formatted here, one line each. */
#ifndef ST_LIB_NOTES_H
#define ST_LIB_NOTES_H

typedef void (*st_note_fn)(void *ctx, const char *line);

/* Formats the line and hands it to note(ctx, line); nothing when note is
 * NULL.  Lines are cut at 9 KiB (a note names at most a few paths). */
void st_note(st_note_fn note, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
