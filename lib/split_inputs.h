/* Which kind of input split is given, told by content (then by name, as
 * every command does), and the parts of the split engine that tell it
 * (lib/split.h). */
#ifndef ST_LIB_SPLIT_INPUTS_H
#define ST_LIB_SPLIT_INPUTS_H

#include "split.h"

#include <signal.h>
#include <stdbool.h>

bool split_is_stdin(const char *path);
/* Inputs that can be opened twice and give the same bytes again: regular
 * local files. */
bool split_is_local(const char *path);
/* Whether path is a pipe or FIFO that is not Avro (see split_inputs.c). */
bool split_is_pipe_not_avro(const char *path, const volatile sig_atomic_t *cancel);
/* What a local input that is plainly not a shard looks like ("jsonl",
 * "csv", "parquet"), or NULL. */
const char *split_not_a_shard(const char *path);
/* Opens path and tells whether it is an Avro file; when it is and `keep`
 * is given, the stream is kept there, nothing consumed. */
int split_probe_avro(const char *path, bool *avro, st_stream **keep, st_error *err);
/* Whether an input is a WebDataset tar shard. */
bool split_is_webdataset(const char *path);
/* Whether an input is an ArrayRecord file (by its signature; an object in
 * a store or a pipe by its name). */
bool split_is_arrayrecord(const char *path);

/* A local input that is a file shardtool writes beside its shards (a
 * manifest, an index: a shell's glob of the directory names them) is
 * refused, naming it and the way out; likewise, when the first input is
 * TFRecord (avro false) or ArrayRecord, a local input of another kind that
 * the copy would read as damage (a tar or an ArrayRecord file among
 * TFRecords, a TFRecord among ArrayRecord files).  first: the index of the
 * first named input. */
int split_check_inputs(split_run *r, size_t first);

/* A failure of the run: how, the code it failed with, the input it names
 * (or NULL), and why.  Returns rc. */
int split_fail(split_run *r, int how, int rc, const char *path, const st_error *err);
/* A usage error of the run, worded here. */
int split_usage(split_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The parts of split_open and split_copy for Avro inputs (split_avro.c). */
int split_avro_classify(split_run *r, bool *avro);
int split_avro_open(split_run *r);
int split_avro_copy(split_run *r);
/* The parts for ArrayRecord inputs (split_arrayrecord.c). */
int split_arrayrecord_open(split_run *r);
int split_arrayrecord_copy(split_run *r);

#endif
