/* A quick proof that a baseline JPEG's one scan is clean, so that libjpeg
 * need not decode it (jpeg_scan.c).  It can only say "clean": anything it
 * is not sure of is left to libjpeg, whose verdict then stands. */
#ifndef ST_JPEG_SCAN_H
#define ST_JPEG_SCAN_H

#include <stdbool.h>
#include <stdio.h> /* jpeglib.h needs FILE and size_t */

#include <jpeglib.h>

/* c: after jpeg_start_decompress, nothing of the entropy-coded data read
 * yet.  True only when libjpeg would decode the scan and reach the end of
 * the image with no error and no warning: a sequential Huffman-coded
 * scan of every component, no restart markers, every code in its table,
 * the data ending within its last byte, then the EOI marker.  False means
 * "not proven" (damage, or a form this does not handle): decode as usual. */
bool st_jpeg_scan_proven_clean(j_decompress_ptr c);

#endif
