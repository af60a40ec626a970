/* WebDataset: POSIX tar shards in which a sample is the run of adjacent
 * members sharing a key (the member name up to the first '.' of its last
 * path component); the rest of the name is the field, and its last
 * extension says how the bytes decode.  The reading side (tar parsing,
 * members to features) and the writing side (features to members, tar
 * headers) live in their own files; this header names what the format
 * descriptor (wds_format.c) takes from each. */
#ifndef ST_WDS_FORMAT_H
#define ST_WDS_FORMAT_H

#include "../format.h"

#endif
