/* split's writer for WebDataset: whole samples copied as stored into new
 * tar shards, each closed by two zero blocks (wds_copy.c).  Records must
 * have been read with st_read_options.members_only. */
#ifndef ST_WDS_COPY_H
#define ST_WDS_COPY_H

#include "../format.h"

extern const st_writer_ops st_wds_copy_writer_ops;
/* Not registered: the output side of split, with the copier as its writer
 * (so shard names end in .tar); reading goes through st_format_webdataset. */
extern const st_format st_wds_copy_format;

#endif
