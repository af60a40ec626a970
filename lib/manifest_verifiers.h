/* How verify --manifest checks an entry: by the manifest's own "format" and
 * "compression", not by guessing from the file, so that every output of
 * convert and split can be checked, text formats included. */
#ifndef ST_LIB_MANIFEST_VERIFIERS_H
#define ST_LIB_MANIFEST_VERIFIERS_H

#include "manifest_read.h"

#include "../formats/format.h"

/* The verifier for the entries of `m`: a registered format (TFRecord,
 * Parquet, plain Avro), Avro inside a gzip or zlib stream, or a record
 * counter for CSV, TSV and JSON lines (which checks the compressed stream,
 * and counts records as the lines ending outside quoted cells, less the
 * header).  NULL when the manifest names no format shardtool knows: the
 * format is then detected from each file.  The returned descriptor is valid
 * until the next call on the same thread, and its checks must run on that
 * thread. */
const st_format *manifest_verifier(const manifest *m);

#endif
