/* Walking the members of samples this writer encoded (wds_encode.c): the
 * sequential steps after encoding (numbering the keys, the DALI index)
 * find each member's name, header and data by it.  Only our own headers
 * are walked, so the walk trusts them. */
#ifndef ST_WDS_MEMBERS_H
#define ST_WDS_MEMBERS_H

#include <stddef.h>
#include <stdint.h>

typedef struct wds_member {
    size_t ustar;            /* offset of its ustar header block */
    size_t data;             /* offset of its data */
    uint64_t size;
    const uint8_t *name;     /* the whole name (from the pax header when it has one) */
    size_t name_len;
    uint8_t *pax_path;       /* the name in the pax data, or NULL */
    size_t next;             /* offset of the next member */
} wds_member;

/* The member whose first header block is at `at` in buf[0, len): 1, or 0
 * at the end. */
int wds_member_at(uint8_t *buf, size_t len, size_t at, wds_member *m);

#endif
