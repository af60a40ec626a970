/* What convert -v and split -v say of each input before the run reads
 * it: the format and compression it will be read as, and the --exclude
 * names it has no column for.  Opens the input to learn it; prints
 * nothing. */
#ifndef ST_LIB_INPUT_DETECT_H
#define ST_LIB_INPUT_DETECT_H

#include "../formats/format.h"

/* Opens path as the run will (format NULL: detected) and says what it is.
 * Returns ST_OK, or the opening's error (the run's to report). */
int input_detect(const char *path, const st_format *format, const st_read_options *ro,
                 const st_format **detected, st_compression *compression);

/* Calls fn for each of ro->exclude that names no column of path read as
 * `format` (a dotted name covers the columns below it).  The schema is
 * read a second time without the projection, which hides the columns it
 * leaves out; an input that cannot be opened so calls nothing. */
void input_missing_excluded(const char *path, const st_format *format, const st_read_options *ro,
                            void (*fn)(void *ctx, const char *name), void *ctx);

#endif
