/* Reading a regular local file through a memory map, for readers that read
 * in place (st_stream_lend): verify's CRC then reads the page cache with no
 * copy into a buffer of ours.  A file that another process truncates while
 * it is mapped is caught (SIGBUS is handled, see stream_map.c) and reported
 * as changed while being read, never as damage and never as a crash. */
#ifndef ST_STREAM_MAP_H
#define ST_STREAM_MAP_H

#include "stream.h"

/* Lets st_stream_open_mapped() map files in this process: the command line
 * calls it at start.  Without it (a program using the library) files are
 * mapped only with SHARDTOOL_MMAP=1 in the environment, so that no SIGBUS
 * handler is installed behind the program's back. */
void st_stream_map_allow(void);

/* Like st_stream_open(), with a regular local file of 1 MiB or more mapped
 * (where allowed, above);
 * anything else ("-", URLs, pipes, small files, a map that fails) is opened
 * as st_stream_open() would.  SHARDTOOL_MMAP=0 in the environment turns
 * mapping off (to compare, or where maps misbehave). */
int st_stream_open_mapped(const char *path, st_stream **out, st_error *err);

/* For a stream from st_stream_open_mapped(): true, with *err saying so, when
 * the file shrank while it was mapped (the bytes read past its new end were
 * not the file's).  False for any other stream. */
bool st_stream_map_changed(st_stream *s, st_error *err);

#endif
