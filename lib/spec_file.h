/* stat --feature-spec FILE: the spec convert writes, built from the
 * statistics stat gathered, as JSON text, and the new file it goes to.
 * Nothing here prints. */
#ifndef ST_LIB_SPEC_FILE_H
#define ST_LIB_SPEC_FILE_H

#include "../src/buf.h"
#include "../src/error.h"
#include "../src/feature_spec.h"

/* The spec's JSON document, with its newline, into out (cleared first).
 * Returns ST_OK, or the failure with err saying why: the spec's own
 * refusal (st_spec_build), or ST_ENOMEM. */
int spec_file_text(const st_feature_stats *stats, const st_spec_defaults *defaults, st_buf *out,
                   st_error *err);

/* Writes text to path as a new file, committed whole or not at all;
 * ST_EEXIST when the file exists (nothing is replaced). */
int spec_file_write(const char *path, const st_buf *text, st_error *err);

#endif
