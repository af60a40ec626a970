/* The public view of a record (shardtool_record, shardtool.h) over the
 * core's st_record: the same pointers, laid out as the header promises. */
#ifndef ST_LIB_RECORD_VIEW_H
#define ST_LIB_RECORD_VIEW_H

#define SHARDTOOL_BUILDING 1
#include "../include/shardtool.h"
#include "../src/record.h"

/* Fills *view with arrays carved from `arena` (values are not copied: they
 * stay where rec's point).  Returns ST_OK or ST_ENOMEM. */
int record_view(const st_record *rec, st_arena *arena, shardtool_record *view);

#endif
