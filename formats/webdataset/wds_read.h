/* The reading side of WebDataset, as the format descriptor takes it. */
#ifndef ST_WDS_READ_H
#define ST_WDS_READ_H

#include "../format.h"

extern const st_reader_ops st_wds_reader_ops;
int st_wds_probe(const uint8_t *buf, size_t len);
int st_wds_verify(st_stream *in, const st_verify_options *opt, st_verify_report *rep, st_error *err);
int st_wds_inspect(st_stream *in, const st_read_options *opt, st_jsonw *w, st_error *err);

#endif
