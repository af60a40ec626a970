/* Shared by the files of the Avro module only: the JSON reader for schemas,
 * the schema model, the compiled decoder plan, the block codecs and the
 * container framing. */
#ifndef ST_AVRO_INTERNAL_H
#define ST_AVRO_INTERNAL_H

#include "avro_format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AV_MAGIC_SIZE 4
#define AV_SYNC_SIZE 16
/* Default cap on a block's stored and decompressed size (max_record_size
 * overrides it). */
#define AV_DEFAULT_MAX_BLOCK ((uint64_t)256 << 20)
/* Cap on the header's metadata (the schema is in it). */
#define AV_MAX_HEADER ((uint64_t)64 << 20)
/* Cap on records in one block, whatever its size says: keeps the record
 * array of one batch bounded. */
#define AV_MAX_BLOCK_RECORDS ((int64_t)1 << 24)
/* Nesting limits for schema JSON and types. */
#define AV_MAX_JSON_DEPTH 256
#define AV_MAX_TYPE_DEPTH 128

/* ---- JSON (avro_json.c) ------------------------------------------------- */

typedef enum av_json_type {
    AVJ_NULL,
    AVJ_BOOL,
    AVJ_NUMBER,
    AVJ_STRING,
    AVJ_ARRAY,
    AVJ_OBJECT,
} av_json_type;

typedef struct av_json av_json;
struct av_json {
    av_json_type type;
    bool boolean;
    const char *str;      /* string value (NUL-terminated), or a number's text */
    size_t len;
    const char *key;      /* member name when inside an object */
    size_t key_len;
    av_json *first;       /* first element / member */
    av_json *next;        /* next sibling */
    size_t count;         /* elements / members */
};

/* Parses one JSON document (RFC 8259; trailing whitespace only). */
int st_avro_json_parse(const char *text, size_t len, st_arena *arena, av_json **out, st_error *err);
const av_json *st_avro_json_member(const av_json *obj, const char *key);
/* The member as a string, or NULL when absent or not a string. */
const char *st_avro_json_string(const av_json *obj, const char *key);
/* Integer-valued number member; false when absent or not an integer. */
bool st_avro_json_int(const av_json *obj, const char *key, int64_t *out);
/* Writes the DOM through the JSON writer (numbers as their source text). */
void st_avro_json_write(st_jsonw *w, const av_json *v);

/* ---- schema (avro_schema.c) --------------------------------------------- */

typedef enum av_type {
    AV_NULL,
    AV_BOOLEAN,
    AV_INT,
    AV_LONG,
    AV_FLOAT,
    AV_DOUBLE,
    AV_BYTES,
    AV_STRING,
    AV_RECORD,
    AV_ENUM,
    AV_ARRAY,
    AV_MAP,
    AV_UNION,
    AV_FIXED,
} av_type;

/* The logical types: decimal, uuid and duration change how a value is
 * decoded; the others (date, time-*, timestamp-*, local-timestamp-*) are
 * their int / long, remembered for the column's type (st_logical). */
typedef enum av_logical {
    AVL_NONE,
    AVL_DECIMAL,
    AVL_UUID,
    AVL_DURATION,
    AVL_DATE,
    AVL_TIME_MILLIS,
    AVL_TIME_MICROS,
    AVL_TIMESTAMP_MILLIS,
    AVL_TIMESTAMP_MICROS,
    AVL_TIMESTAMP_NANOS,
    AVL_LOCAL_TIMESTAMP_MILLIS,
    AVL_LOCAL_TIMESTAMP_MICROS,
    AVL_LOCAL_TIMESTAMP_NANOS,
} av_logical;

typedef struct av_schema av_schema;

typedef struct av_field {
    const char *name;
    const char *feature;  /* the "tf_feature" attribute, or NULL */
    av_schema *type;
} av_field;

struct av_schema {
    av_type type;
    av_logical logical;
    const char *fullname;    /* named types */
    const char *name;        /* named types: without namespace */
    int64_t size;            /* fixed */
    int64_t precision, scale;/* decimal */
    size_t n;                /* fields, symbols or branches */
    av_field *fields;
    const char **symbols;
    av_schema **branches;
    av_schema *items;        /* array items, map values */
    bool on_path;            /* recursion guard while compiling */
};

const char *st_avro_type_name(av_type t);
int st_avro_schema_parse(const char *json, size_t len, st_arena *arena, av_schema **out,
                    av_json **dom, st_error *err);

/* ---- decoder plan (avro_mapping.c) -------------------------------------- */

typedef enum av_op {
    OP_NULL,
    OP_BOOL,
    OP_INT,
    OP_LONG,
    OP_FLOAT,
    OP_DOUBLE,
    OP_BYTES,        /* bytes and string */
    OP_FIXED,
    OP_ENUM,
    OP_DEC_BYTES,
    OP_DEC_FIXED,
    OP_UUID_FIXED,
    OP_DURATION,
    OP_RECORD,
    OP_ARRAY,
    OP_MAP,
    OP_UNION,
} av_op;

typedef struct av_node av_node;
struct av_node {
    av_op op;
    st_kind kind;            /* leaves: the feature's kind */
    bool in_map;             /* named relative to the innermost map entry */
    bool keep;               /* static leaves: selected by the projection */
    bool min_zero;           /* may encode as zero bytes */
    int32_t slot;            /* static leaves: slot index; else -1 */
    int64_t size;            /* fixed size */
    int32_t scale;           /* decimal scale */
    const char *path;        /* dotted path for messages ("m.<key>.x" in maps) */
    const char *rel;         /* in maps: name suffix after "<map>.<key>" */
    size_t rel_len;
    size_t n;                /* children: record fields, union branches, 1 item / value */
    av_node **kids;
    size_t nsymbols;         /* enum: symbols live in plan->blob */
    const uint32_t *sym_off;
    const uint32_t *sym_len;
    av_node **touch;         /* array: leaves present whenever the array is */
    size_t ntouch;
    /* Nested lists (the depth rules of avro_mapping.c).  An array (or a
     * key-value map) that is the outermost list of depth-2/3 leaves opens
     * a FeatureList step for each of them per element; the second list on
     * their path gives the step its kind when present, and, for depth-3
     * leaves, starts a new row length per element. */
    av_node **steps;         /* array at list level 0: leaves it opens steps for */
    size_t nsteps;
    av_node **kinds;         /* array at list level 1: leaves whose step it sets the kind of */
    size_t nkinds;
    av_node **rows;          /* array at list level 1: depth-3 leaves it starts a row for */
    size_t nrows;
    int32_t rl;              /* depth-3 leaves: the slot of "<leaf>.row_lengths"; else -1 */
    bool list_item;          /* union that is an array item or a map value: a null is skipped */
};

typedef struct av_slot {
    uint32_t name_off;       /* in plan->blob */
    uint32_t name_len;
    st_kind kind;
    bool nullable;
    bool repeated;
    int64_t fixed_len;
    bool keep;
    bool sequence;           /* a FeatureList (depth-2/3 leaf, or its row_lengths) */
    bool row_lengths;        /* the row lengths of the slot before it (depth 3) */
    uint8_t depth;           /* arrays and key-value maps on its path */
    /* st_read_options.describe: why convert refuses this leaf, which is
     * then left out of the records; NULL otherwise. */
    const char *refused;
    st_logical logical;      /* what the Avro type says the values are */
} av_slot;

typedef struct av_plan {
    st_arena arena;          /* everything below */
    av_node *root;
    av_slot *slots;
    size_t nslots;
    char *blob;              /* slot names and enum symbols, copied per unit */
    size_t blob_len;
    bool has_maps;           /* maps read by key (--maps by-key) */
    bool sequence;           /* some kept leaf is a FeatureList: records are SequenceExamples */
    bool top_is_record;
    bool decimal_text;
    /* Projection, for names made at decode time (map keys). */
    const char *const *columns;
    size_t ncolumns;
    const char *const *exclude;
    size_t nexclude;
} av_plan;

/* Builds the plan for a writer schema; the projection lists are copied. */
int st_avro_plan_build(av_plan *plan, const av_schema *schema, const st_read_options *opt,
                  st_error *err);
void st_avro_plan_free(av_plan *plan);
int st_avro_plan_columns(const av_plan *plan, st_schema *out, st_error *err);
bool st_avro_plan_selected(const av_plan *plan, const char *name, size_t len);

/* ---- datum decoding (avro_decode.c) ------------------------------------- */

typedef struct av_decoder av_decoder;

typedef struct av_decode_ctx {
    uint64_t block;          /* for messages */
    uint64_t block_offset;
    uint64_t first_record;
} av_decode_ctx;

/* One decoder per decode_unit call (or verify run); not shared. */
int st_avro_decoder_new(const av_plan *plan, const st_read_options *opt, av_decoder **out,
                   st_error *err);
void st_avro_decoder_free(av_decoder *d);
/* Decodes `count` datums filling exactly `data`; appends records to `out`,
 * or only checks them when out is NULL.  Pointers in the records point into
 * `data` and out's arena. */
int st_avro_decode_block(av_decoder *d, const av_decode_ctx *ctx, const uint8_t *data, size_t len,
                    uint64_t count, st_batch *out, st_error *err);

/* ---- codecs (avro_codec.c) ---------------------------------------------- */

typedef enum av_codec {
    AVC_NULL,
    AVC_DEFLATE,
    AVC_SNAPPY,
    AVC_ZSTD,
    AVC_BZIP2,
    AVC_XZ,
} av_codec;

/* Parses the avro.codec value; unknown or not built in: ST_EUNSUPPORTED. */
int st_avro_codec_parse(const char *name, size_t len, av_codec *out, st_error *err);
const char *st_avro_codec_name(av_codec c);
/* Decompresses a block into out (cleared first), at most `max` bytes.
 * On failure *kind is "bad compressed block" or "block crc". */
int st_avro_decompress(av_codec c, const uint8_t *in, size_t n, st_buf *out, uint64_t max,
                  const char **kind, st_error *err);
/* A deflate block (raw deflate) into out, which is empty, at most `max`
 * bytes: st_avro_inflate with ISA-L where the build has it, deciding every
 * failure with zlib; st_avro_inflate_zlib with zlib alone (the reference
 * the unit tests hold the fast path to). */
int st_avro_inflate(const uint8_t *in, size_t n, st_buf *out, uint64_t max, const char **kind,
                    st_error *err);
int st_avro_inflate_zlib(const uint8_t *in, size_t n, st_buf *out, uint64_t max, const char **kind,
                         st_error *err);
/* Compresses a block into out (cleared first); level -1 = codec default. */
int st_avro_compress(av_codec c, int level, const uint8_t *in, size_t n, st_buf *out, st_error *err);

/* ---- container framing (avro_container.c) ------------------------------- */

/* Buffered sequential reading of the input stream. */
typedef struct av_input {
    st_stream *s;
    uint8_t *buf;
    size_t cap, pos, len;
    uint64_t offset;         /* input offset of buf[pos] */
    bool eof;
    bool size_known;
    uint64_t size;
} av_input;

void st_avro_input_init(av_input *in, st_stream *s);
void st_avro_input_free(av_input *in);

typedef struct av_header {
    st_arena arena;
    char *schema_json;
    size_t schema_len;
    const char *codec_name;  /* "null" when the key is absent */
    av_codec codec;
    uint8_t sync[AV_SYNC_SIZE];
    uint64_t size;           /* bytes from the magic to the end of the sync marker */
    size_t nmeta;
} av_header;

/* Reads magic, metadata and sync marker.  Damage is ST_EDATA with *kind
 * "bad header" or "truncated"; version 0 and unknown codecs are
 * ST_EUNSUPPORTED. */
int st_avro_header_read(av_input *in, av_header *h, const char **kind, st_error *err);
void st_avro_header_free(av_header *h);

typedef struct av_block_info {
    uint64_t offset;         /* of the block's record count */
    int64_t count;
    int64_t size;
} av_block_info;

/* Reads the next block header: 1 = read, 0 = clean end of input, < 0 =
 * error (*kind "truncated" or "bad block header"). */
int st_avro_block_begin(av_input *in, uint64_t max_block, uint64_t index, av_block_info *b,
                   const char **kind, st_error *err);
/* Appends the block's data to out (growing it as bytes arrive) and checks
 * the sync marker after it (*kind "truncated" or "bad sync marker"). */
int st_avro_block_read(av_input *in, const av_header *h, const av_block_info *b, uint64_t index,
                  st_buf *out, const char **kind, st_error *err);
/* Same, discarding the data (inspect). */
int st_avro_block_skip(av_input *in, const av_header *h, const av_block_info *b, uint64_t index,
                  const char **kind, st_error *err);

/* ---- the descriptor's parts -------------------------------------------- */

extern const st_reader_ops st_avro_reader_ops;
extern const st_writer_ops st_avro_writer_ops;
/* The sync marker of an output, from its name and the seed (avro_write.c):
 * the same name gives the same marker, so runs are reproducible. */
void st_avro_derive_sync(const char *name, uint64_t seed, uint8_t sync[AV_SYNC_SIZE]);
int st_avro_verify(st_stream *s, const st_verify_options *opt, st_verify_report *rep, st_error *err);
int st_avro_inspect(st_stream *s, const st_read_options *opt, st_jsonw *w, st_error *err);

/* ---- varints ---------------------------------------------------------- */

/* Avro long: zigzag varint of at most 10 bytes.  Returns bytes used, 0 when
 * the input ends first, -1 when it is too long. */
static inline int av_varint(const uint8_t *p, const uint8_t *end, int64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (p + i >= end)
            return 0;
        uint8_t b = p[i];
        if (i == 9 && b > 1)
            return -1;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return i + 1;
        }
    }
    return -1;
}

static inline size_t av_put_varint(uint8_t *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    while (z >= 0x80) {
        p[n++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    p[n++] = (uint8_t)z;
    return n;
}

#endif
