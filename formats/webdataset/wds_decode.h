/* WebDataset members to features: the default mapping of the writer, in
 * reverse.  For a member KEY.FIELD, the feature's name is FIELD without its
 * last extension ("label.cls" -> "label"), or the extension itself when
 * nothing else remains ("jpg" -> "jpg").  A last extension ".gz" is
 * inflated first (at most max_member bytes) and the name read again without
 * it ("txt.gz" -> "txt").  The name is then unescaped: "%2F" is '/' and
 * "%25" is '%', as the writer escapes them; any other '%' stays
 * (wds_names.h).  By the (inner) last extension:
 *   cls    int64, one value: decimal text, optional surrounding whitespace
 *   txt    bytes, one value
 *   json   an object: its members become features as a JSON lines record's
 *          do (formats/csv/jsonl_reader.c); anything else (an array, a
 *          number): the feature named as above, as {"NAME": value} reads
 *   npy    int64 or float list (wds_npy.h); (steps, n) a FeatureList
 *   other  bytes, one value: the member's bytes (jpg, png, webp, bin, ...)
 * A feature name met twice in one sample is an error naming it.
 * With key_feature set, the sample's key is one more bytes feature. */
#ifndef ST_WDS_DECODE_H
#define ST_WDS_DECODE_H

#include "wds_group.h"
#include "wds_name_log.h"

#include <locale.h>

typedef struct wds_decoder {
    locale_t loc;             /* the C locale, for JSON numbers */
    bool strict_float;
    uint64_t max_member;
    const char *key_feature;  /* NULL: the key is not a feature */
    const char *path;         /* for messages */
    wds_name_log *names;      /* names unescaped, counted (NULL: not counted) */
} wds_decoder;

int wds_decoder_init(wds_decoder *d, const st_read_options *opt, const char *path, st_error *err);
void wds_decoder_free(wds_decoder *d);

/* Decodes sample s of g into rec (memory in out's arena or in g). */
int wds_decode_sample(const wds_decoder *d, const wds_group *g, const wds_sample *s, st_batch *out,
                      st_record *rec, st_error *err);

/* The last extension of a field ("seg.png" -> "png"), and the feature name
 * it gives (see above), without looking through ".gz". */
void wds_field_parts(const char *field, size_t len, const char **ext, size_t *ext_len, const char **name,
                     size_t *name_len);

/* Whether bytes begin as an image of this extension says (jpg, jpeg, png,
 * webp, gif); true for other extensions.  For verify --decode. */
bool wds_image_magic_ok(const char *ext, size_t ext_len, const uint8_t *p, size_t n);

#endif
