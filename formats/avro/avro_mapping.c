/* How Avro types map to tf.train.Example features, and the decoder plan
 * that implements the reading direction.
 *
 * READING (Avro -> features)
 *
 *   Avro type                          feature
 *   ---------------------------------  ---------------------------------------
 *   null                               absent
 *   boolean                            int64, 0 or 1
 *   int, long                          int64
 *     date                             int64, days since 1970-01-01
 *     time-millis, time-micros         int64, in that unit
 *     timestamp-millis/-micros/-nanos, int64, in that unit (no time zone
 *     local-timestamp-millis/-micros/  conversion)
 *     -nanos
 *   float                              float
 *   double                             float, narrowed; values that change (by
 *                                      the rule of src/float_narrow.h) are
 *                                      counted by field, and are an error
 *                                      with --strict-float (NaN and infinities
 *                                      are kept as they are)
 *   string, bytes, fixed               bytes
 *     uuid (string, or fixed 16)       bytes, the 36-character text form
 *   enum                               bytes, the symbol
 *   decimal (bytes or fixed, at most   float: unscaled value / 10^scale, narrowed
 *     256 bits)                        like a double; with --decimal text: bytes,
 *                                      the exact decimal text, e.g. "-12.50"
 *   duration (fixed 12)                int64 x 3: months, days, milliseconds
 *   record                             one feature per leaf field, named by the
 *                                      dotted path: "address.city"; the fields
 *                                      of the top-level record are named plainly
 *   array                              a multi-value feature with every value of
 *                                      the array; an empty array gives a present
 *                                      feature with no values.  Null items are
 *                                      skipped.  Arrays of records give one
 *                                      feature per leaf ("phones.number"), each
 *                                      holding that field's values over all
 *                                      elements.  Arrays below arrays: see
 *                                      NESTING below
 *   map (--maps key-value, default)    read as an array of {key, value}
 *                                      records: "m.key" (bytes) and "m.value"
 *                                      ("m.value.x" for record values), one
 *                                      list level like an array; null values
 *                                      are skipped, their keys kept
 *   map (--maps by-key)                one feature per key, named "name.key"
 *                                      ("m" with key "k1" -> "m.k1"); record
 *                                      values give "name.key.field".  Map
 *                                      features are not listed in the schema
 *                                      (keys are only known per record); a
 *                                      map inside a list, or lists of lists
 *                                      inside a map, are refused
 *   union of null and one type         that type; absent when null
 *   union of several non-null types    one feature per branch, "name.branch",
 *                                      where branch is the type's name (int,
 *                                      long, string, bytes, array, map...) or a
 *                                      named type's name without namespace, as
 *                                      Avro's JSON encoding names branches;
 *                                      only the branch a value has is present
 *   top-level type that is not a       a single feature named "value"
 *     record
 *   recursive types                    refused, naming the field
 *   field attribute "tf_feature"       names the feature instead of the field
 *                                      name (the writer adds it, see below)
 *
 * NESTING (the depth rules every format follows)
 *
 *   A leaf's depth is the number of arrays and key-value maps on its path.
 *
 *   depth   feature
 *   -----   -------------------------------------------------------------
 *   0, 1    context features, as above
 *   2       a FeatureList named by the leaf's dotted name: one step per
 *           element of the outer list (the array at level 0 opens it), the
 *           step's values those of the inner list.  The list at level 1
 *           gives the step its kind when it is there: a null inner list is a
 *           step with no kind (ST_KIND_NONE), an empty one a step of the
 *           leaf's kind with no values.  A null outer list: no FeatureList;
 *           an empty one: a FeatureList with no steps
 *   3       FeatureList "col" (step i: the innermost values of outer element
 *           i, concatenated) and int64 FeatureList "col.row_lengths" (step
 *           i: one length per element of the level-1 list, 0 for a null
 *           innermost list)
 *   >= 4    refused, naming the field, its depth and --exclude
 *
 *   Records of a plan with a kept FeatureList leaf are all SequenceExamples
 *   (plan->sequence); with --nested refuse a depth >= 2 leaf is an error.
 *   Null items of an array / null map values are skipped and counted by
 *   column for a note (avro_decode.c).
 *
 * WRITING (features -> Avro)
 *
 *   The schema is one record "Example" with a field per column of the
 *   schema the caller gives (st_write_options.schema), in its order:
 *   int64 -> "long", float -> "float", bytes -> "bytes" (not "string": values
 *   may be binary), a column that never
 *   had values -> "null".  A column that can hold more or fewer than one
 *   value (repeated, or fixed length other than 1) is {"type": "array",
 *   "items": T}; a column some records lack is ["null", T] with default
 *   null.  Feature names that are not Avro names are rewritten: characters
 *   other than [A-Za-z0-9_] become "_", a leading digit gets a "_" prefix,
 *   an empty name becomes "_", and a name equal to an earlier one gets "_2",
 *   "_3", ...; such a field keeps the original name in the attribute
 *   "tf_feature" (e.g. {"name": "image_encoded", "tf_feature":
 *   "image/encoded"}), which this reader uses as the feature name.  The
 *   16-byte sync marker is derived from the output's final name (and a
 *   seed, 0 unless a caller sets one), so the same records converted to the
 *   same path give the same bytes.  Blocks are closed at 256 KiB of datums
 *   (or 2^20 records); the codec is deflate unless another is chosen.
 *
 * CONTAINER
 *
 *   Codecs read and written: null, deflate, snappy (its CRC-32 is checked),
 *   zstandard ("zstd" accepted), bzip2, xz.  The reader is sequential, so
 *   standard input and remote objects work; block counts and sizes are
 *   checked against limits (--max-record-size, default 256 MiB per block,
 *   at most 2^24 records per block) and against the bytes left before
 *   anything is allocated.  Bytes after the end of a deflate stream are
 *   ignored, as Java does (Python's writer leaves 3 there).  Anything after
 *   the last block that is not a whole block - such as a stray newline - is
 *   an error, reported after the records before it have been read.  Format
 *   version 0 files ("Obj\x00", Avro before 1.3) are refused with a message
 *   that says so.  The reader schema is the writer schema.  --columns and
 *   --exclude name features; a name also selects the features below it
 *   ("address" selects "address.city"), and map keys obey them too. */
#include "avro_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct pbuild {
    av_plan *plan;
    st_error *err;
    st_buf blob;
    st_buf slots;            /* av_slot[] */
    st_buf map_paths;        /* const char *[]: static paths of maps, for projection checks */
    bool reading;            /* reading records; verify only walks the datums */
    bool describe;           /* st_read_options.describe */
    st_nested_mode nested;
    st_map_mode maps;
    const av_schema *leaf;   /* the type being compiled, for its leaf's st_logical */
    /* While compiling below the list at level 0 / 1 of the current path:
     * where the leaves below register for its steps, kinds and rows. */
    struct lvbufs *lv[2];
} pbuild;

struct lvbufs {
    st_buf steps, kinds, rows;   /* av_node *[] */
};

static int oom(pbuild *b)
{
    return st_error_set(b->err, ST_ENOMEM, "out of memory");
}

static char *join(pbuild *b, const char *a, const char *c)
{
    size_t na = strlen(a), nc = strlen(c);
    char *s = st_arena_alloc(&b->plan->arena, na + nc + 2);
    if (!s)
        return NULL;
    size_t k = 0;
    if (na) {
        memcpy(s, a, na);
        k = na;
        if (nc)
            s[k++] = '.';
    }
    memcpy(s + k, c, nc + 1);
    return s;
}

static bool name_matches(const char *pattern, const char *name, size_t len)
{
    /* Exact, or pattern names a parent of name ("address" selects "address.city"). */
    size_t n = strlen(pattern);
    if (n > len || memcmp(pattern, name, n) != 0)
        return false;
    return n == len || name[n] == '.';
}

bool st_avro_plan_selected(const av_plan *plan, const char *name, size_t len)
{
    if (plan->ncolumns) {
        bool found = false;
        for (size_t i = 0; i < plan->ncolumns && !found; i++)
            found = name_matches(plan->columns[i], name, len);
        if (!found)
            return false;
    }
    for (size_t i = 0; i < plan->nexclude; i++)
        if (name_matches(plan->exclude[i], name, len))
            return false;
    return true;
}

static int blob_add(pbuild *b, const char *s, size_t n, uint32_t *off)
{
    if (b->blob.len + n > UINT32_MAX)
        return st_error_set(b->err, ST_EUNSUPPORTED, "schema: too many names");
    *off = (uint32_t)b->blob.len;
    return st_buf_append(&b->blob, s, n) ? oom(b) : 0;
}

static av_node *new_node(pbuild *b, av_op op, const char *path)
{
    av_node *n = st_arena_alloc(&b->plan->arena, sizeof *n);
    if (n) {
        memset(n, 0, sizeof *n);
        n->op = op;
        n->slot = -1;
        n->rl = -1;
        n->keep = true;
        n->path = path;
    }
    return n;
}

typedef struct naming {
    const char *path;        /* feature name (or message path inside maps) */
    bool in_map;
    const char *rel;         /* inside maps: suffix after "<map>.<key>" */
    bool nullable;
    bool repeated;
    const char *list_path;   /* the outermost array above, when repeated */
    int level;               /* lists (arrays, key-value maps) above: a leaf's depth */
} naming;

static int push_node(pbuild *b, st_buf *list, av_node *n)
{
    return st_buf_append(list, &n, sizeof n) ? oom(b) : 0;
}

/* A kept leaf two or three lists deep becomes a FeatureList; it registers
 * with the lists on its path (see struct lvbufs).  Deeper, or with
 * --nested refuse, it is an error naming it and the way out. */
static int nested_leaf(pbuild *b, av_node *n, const naming *nm)
{
    const char *field = nm->path[0] ? nm->path : "value";
    /* stat (describe): the leaf is left out, as --exclude would, and says
     * why (in Parquet's stat words). */
    if (b->describe && (b->nested == ST_NESTED_REFUSE || nm->level > 3)) {
        av_slot *slot = &((av_slot *)b->slots.data)[n->slot];
        slot->keep = false;
        slot->refused = nm->level > 3 ? "nested more than 3 lists deep; leave it out with --exclude"
                                      : "a list of lists, refused with --nested refuse";
        n->keep = false;
        return 0;
    }
    if (b->nested == ST_NESTED_REFUSE)
        return st_error_set(b->err, ST_EUNSUPPORTED,
                            "field \"%s\": nested list (lists %d deep) cannot be held by an Example "
                            "feature without losing the inner lists; leave it out with --exclude %s, "
                            "or drop --nested refuse: --nested sequence (the default) writes "
                            "SequenceExamples", field, nm->level, field);
    if (nm->level > 3)
        return st_error_set(b->err, ST_EUNSUPPORTED,
                            "field \"%s\": lists nested %d deep; a SequenceExample holds at most 3 "
                            "(a FeatureList and its row lengths); leave it out with --exclude %s",
                            field, nm->level, field);
    if (!b->lv[0] || !b->lv[1])
        return st_error_set(b->err, ST_EUNSUPPORTED, "field \"%s\": internal error: lists not tracked", field);
    ((av_slot *)b->slots.data)[n->slot].sequence = true;
    b->plan->sequence = true;
    int rc = push_node(b, &b->lv[0]->steps, n);
    if (!rc)
        rc = push_node(b, &b->lv[1]->kinds, n);
    if (rc || nm->level < 3)
        return rc;
    /* The row lengths: an int64 FeatureList beside the leaf's. */
    static const char suffix[] = ".row_lengths";
    size_t len = strlen(field);
    av_slot r = {0};
    if (blob_add(b, field, len, &r.name_off) || blob_add(b, suffix, sizeof suffix - 1, &(uint32_t){0}))
        return b->err->code;
    r.name_len = (uint32_t)(len + sizeof suffix - 1);
    r.kind = ST_KIND_INT64;
    r.nullable = true;
    r.repeated = true;
    r.fixed_len = -1;
    r.sequence = true;
    r.row_lengths = true;
    r.depth = (uint8_t)nm->level;
    /* --exclude COL.row_lengths leaves the lengths out, keeping the values. */
    r.keep = st_avro_plan_selected(b->plan, (const char *)b->blob.data + r.name_off, r.name_len);
    int32_t slot = (int32_t)(b->slots.len / sizeof r);
    if (slot < 0 || st_buf_append(&b->slots, &r, sizeof r))
        return oom(b);
    if (!r.keep)
        return 0;
    n->rl = slot;
    return push_node(b, &b->lv[1]->rows, n);
}

/* What an Avro type says its values are (record.h), as parquet-avro
 * writes it: timestamp-* are instants (UTC), local-timestamp-* not, and
 * time-* are UTC-adjusted times of day. */
static void leaf_logical(const av_schema *s, st_logical *out)
{
    memset(out, 0, sizeof *out);
    if (!s)
        return;
    switch (s->logical) {
    case AVL_DECIMAL:
        out->type = ST_LOGICAL_DECIMAL;
        out->precision = (int32_t)s->precision;
        out->scale = (int32_t)s->scale;
        return;
    case AVL_UUID: out->type = ST_LOGICAL_UUID; return;
    case AVL_DURATION: out->type = ST_LOGICAL_DURATION; return;
    case AVL_DATE: out->type = ST_LOGICAL_DATE; return;
    case AVL_TIME_MILLIS:
    case AVL_TIME_MICROS:
        out->type = ST_LOGICAL_TIME;
        out->unit = s->logical == AVL_TIME_MILLIS ? ST_UNIT_MILLIS : ST_UNIT_MICROS;
        out->utc = true;
        return;
    case AVL_TIMESTAMP_MILLIS:
    case AVL_TIMESTAMP_MICROS:
    case AVL_TIMESTAMP_NANOS:
    case AVL_LOCAL_TIMESTAMP_MILLIS:
    case AVL_LOCAL_TIMESTAMP_MICROS:
    case AVL_LOCAL_TIMESTAMP_NANOS: {
        int k = s->logical - AVL_TIMESTAMP_MILLIS;
        out->type = ST_LOGICAL_TIMESTAMP;
        out->unit = (uint8_t)(ST_UNIT_MILLIS + k % 3);
        out->utc = k < 3;
        return;
    }
    default:
        break;
    }
    switch (s->type) {
    case AV_BOOLEAN: out->type = ST_LOGICAL_BOOLEAN; return;
    case AV_INT:
        out->type = ST_LOGICAL_INTEGER;
        out->bits = 32;
        out->is_signed = true;
        return;
    case AV_DOUBLE: out->type = ST_LOGICAL_DOUBLE; return;
    case AV_STRING: out->type = ST_LOGICAL_STRING; return;
    case AV_ENUM: out->type = ST_LOGICAL_ENUM; return;
    case AV_BYTES: out->type = ST_LOGICAL_BINARY; return;
    case AV_FIXED:
        out->type = ST_LOGICAL_FIXED;
        out->precision = (int32_t)s->size;
        return;
    default: return;   /* long, float */
    }
}

static int make_leaf(pbuild *b, av_node *n, const naming *nm, st_kind kind, int64_t fixed_len)
{
    n->kind = kind;
    n->in_map = nm->in_map;
    if (nm->in_map) {
        /* --maps by-key: names are made per key, so no FeatureLists here. */
        if (nm->level >= 2 && b->reading && st_avro_plan_selected(b->plan, nm->path, strlen(nm->path)))
            return st_error_set(b->err, ST_EUNSUPPORTED,
                                "field \"%s\": lists of lists in a map read with --maps by-key cannot be "
                                "named per key; use --maps key-value (the default), or leave it out "
                                "with --exclude %s", nm->list_path ? nm->list_path : nm->path,
                                nm->list_path ? nm->list_path : nm->path);
        n->rel = nm->rel;
        n->rel_len = strlen(nm->rel);
        return 0;
    }
    av_slot s = {0};
    size_t len = strlen(nm->path);
    if (blob_add(b, nm->path, len, &s.name_off))
        return b->err->code;
    s.name_len = (uint32_t)len;
    s.kind = kind;
    s.nullable = nm->nullable;
    s.repeated = nm->repeated;
    s.fixed_len = nm->repeated ? -1 : fixed_len;
    s.depth = (uint8_t)(nm->level < 255 ? nm->level : 255);
    s.keep = st_avro_plan_selected(b->plan, nm->path, len);
    leaf_logical(b->leaf, &s.logical);
    n->keep = s.keep;
    n->slot = (int32_t)(b->slots.len / sizeof s);
    if (n->slot < 0 || st_buf_append(&b->slots, &s, sizeof s))
        return oom(b);
    if (s.keep && b->reading && nm->level >= 2)
        return nested_leaf(b, n, nm);
    return 0;
}

static const char *branch_name(const av_schema *s)
{
    switch (s->type) {
    case AV_RECORD:
    case AV_ENUM:
    case AV_FIXED:
        return s->name;
    default:
        return st_avro_type_name(s->type);
    }
}

static int compile(pbuild *b, av_schema *s, const naming *nm, int depth, av_node **out);

/* A map read by key (--maps by-key) inside a list: its per-key features
 * would merge the values of different maps, so it is refused.  A field
 * left out by --columns / --exclude is only skipped, so it does not count. */
static int refuse_keyed_map(pbuild *b, const naming *nm)
{
    if (!b->reading || !st_avro_plan_selected(b->plan, nm->path, strlen(nm->path)))
        return 0;
    const char *field = nm->list_path && nm->list_path[0] ? nm->list_path : "value";
    return st_error_set(b->err, ST_EUNSUPPORTED,
                        "field \"%s\": a map inside a list cannot be read with --maps by-key "
                        "without merging the maps; use --maps key-value (the default), or leave it "
                        "out with --exclude %s", field, field);
}

static int child_naming(pbuild *b, const naming *nm, const char *part, naming *child)
{
    *child = *nm;
    child->path = join(b, nm->path, part);
    if (!child->path)
        return oom(b);
    if (nm->in_map) {
        /* The suffix always follows "<map>.<key>", so it starts with a dot. */
        size_t a = strlen(nm->rel), p = strlen(part);
        char *r = st_arena_alloc(&b->plan->arena, a + p + 2);
        if (!r)
            return oom(b);
        memcpy(r, nm->rel, a);
        r[a] = '.';
        memcpy(r + a + 1, part, p + 1);
        child->rel = r;
    }
    return 0;
}

static int compile_record(pbuild *b, av_schema *s, const naming *nm, int depth, av_node *n)
{
    if (s->on_path)
        return st_error_set(b->err, ST_EUNSUPPORTED,
                            "field \"%s\": recursive type \"%s\" is not supported",
                            nm->path[0] ? nm->path : "value", s->fullname);
    s->on_path = true;
    n->n = s->n;
    n->kids = st_arena_alloc(&b->plan->arena, (s->n ? s->n : 1) * sizeof *n->kids);
    if (!n->kids)
        return oom(b);
    n->min_zero = true;
    for (size_t i = 0; i < s->n; i++) {
        const av_field *f = &s->fields[i];
        naming child;
        int rc = child_naming(b, nm, f->feature ? f->feature : f->name, &child);
        if (!rc)
            rc = compile(b, f->type, &child, depth + 1, &n->kids[i]);
        if (rc)
            return rc;
        n->min_zero = n->min_zero && n->kids[i]->min_zero;
    }
    s->on_path = false;
    return 0;
}

static int compile_union(pbuild *b, av_schema *s, const naming *nm, int depth, av_node *n)
{
    size_t nonnull = 0;
    for (size_t i = 0; i < s->n; i++)
        nonnull += s->branches[i]->type != AV_NULL;
    n->n = s->n;
    n->kids = st_arena_alloc(&b->plan->arena, s->n * sizeof *n->kids);
    if (!n->kids)
        return oom(b);
    for (size_t i = 0; i < s->n; i++) {
        av_schema *br = s->branches[i];
        naming child = *nm;
        child.nullable = true;
        if (nonnull > 1 && br->type != AV_NULL) {
            const char *bn = branch_name(br);
            /* Two named branches with the same short name: use the full name. */
            for (size_t k = 0; k < s->n; k++)
                if (k != i && s->branches[k]->type != AV_NULL &&
                    strcmp(branch_name(s->branches[k]), bn) == 0 && br->fullname)
                    bn = br->fullname;
            int rc = child_naming(b, nm, bn, &child);
            if (rc)
                return rc;
            child.nullable = true;
        }
        int rc = compile(b, br, &child, depth + 1, &n->kids[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* Leaves that an array makes present even when it has no elements: every
 * leaf below it except those below a nested map (their names need keys). */
static int collect_touch(pbuild *b, av_node *n, st_buf *acc)
{
    switch (n->op) {
    case OP_NULL:
    case OP_MAP:
        return 0;
    case OP_RECORD:
    case OP_ARRAY:
    case OP_UNION:
        for (size_t i = 0; i < n->n; i++) {
            int rc = collect_touch(b, n->kids[i], acc);
            if (rc)
                return rc;
        }
        return 0;
    default:
        if (n->in_map || n->keep)
            return st_buf_append(acc, &n, sizeof n) ? oom(b) : 0;
        return 0;
    }
}

static int node_list(pbuild *b, const st_buf *list, av_node ***out, size_t *n)
{
    *n = list->len / sizeof(av_node *);
    *out = NULL;
    if (!*n)
        return 0;
    *out = st_arena_memdup(&b->plan->arena, list->data, list->len);
    return *out ? 0 : oom(b);
}

/* An array, or a map read as the array of its entries (entries = true).
 * Its items are one list deeper; the lists at levels 0 and 1 collect the
 * FeatureList leaves below them. */
static int compile_array(pbuild *b, av_schema *s, const naming *nm, int depth, av_node *n, bool entries)
{
    int rc;
    n->op = OP_ARRAY;
    n->n = 1;
    n->kids = st_arena_alloc(&b->plan->arena, sizeof *n->kids);
    if (!n->kids)
        return oom(b);
    naming child = *nm;
    child.repeated = true;
    child.level = nm->level + 1;
    if (!nm->repeated)
        child.list_path = nm->path;
    struct lvbufs mine = {0};
    struct lvbufs *saved = NULL;
    if (nm->level < 2) {
        saved = b->lv[nm->level];
        b->lv[nm->level] = &mine;
    }
    rc = compile(b, s->items, &child, depth + 1, &n->kids[0]);
    if (nm->level < 2)
        b->lv[nm->level] = saved;
    if (!rc)
        rc = node_list(b, &mine.steps, &n->steps, &n->nsteps);
    if (!rc)
        rc = node_list(b, &mine.kinds, &n->kinds, &n->nkinds);
    if (!rc)
        rc = node_list(b, &mine.rows, &n->rows, &n->nrows);
    st_buf_free(&mine.steps);
    st_buf_free(&mine.kinds);
    st_buf_free(&mine.rows);
    if (rc)
        return rc;
    /* A null item (or map value) is skipped: a list cannot hold it. */
    av_node *item = n->kids[0];
    if (entries)
        item = item->kids[1];
    if (item->op == OP_UNION) {
        /* A null inner list of a FeatureList is a step with no kind, not a
         * skipped value; a null innermost list (depth 3) is counted. */
        bool lists = false;
        for (size_t i = 0; i < item->n; i++)
            lists = lists || item->kids[i]->op == OP_ARRAY || item->kids[i]->op == OP_MAP;
        item->list_item = !lists || nm->level >= 1;
    }
    st_buf acc = {0};
    rc = collect_touch(b, n->kids[0], &acc);
    if (!rc && acc.len) {
        n->ntouch = acc.len / sizeof(av_node *);
        n->touch = st_arena_memdup(&b->plan->arena, acc.data, acc.len);
        if (!n->touch)
            rc = oom(b);
    }
    st_buf_free(&acc);
    return rc;
}

static int compile(pbuild *b, av_schema *s, const naming *nm, int depth, av_node **out)
{
    if (s->logical == AVL_DECIMAL && s->scale > 100)
        return st_error_set(b->err, ST_EUNSUPPORTED, "field \"%s\": decimal scale %lld is above 100",
                            nm->path, (long long)s->scale);
    if (depth > AV_MAX_TYPE_DEPTH)
        return st_error_set(b->err, ST_EUNSUPPORTED, "field \"%s\": types nested too deep", nm->path);
    av_node *n = new_node(b, OP_NULL, nm->path);
    if (!n)
        return oom(b);
    *out = n;
    int rc = 0;
    b->leaf = s;
    switch (s->type) {
    case AV_NULL:
        n->op = OP_NULL;
        n->min_zero = true;
        return 0;
    case AV_BOOLEAN:
        n->op = OP_BOOL;
        return make_leaf(b, n, nm, ST_KIND_INT64, 1);
    case AV_INT:
        n->op = OP_INT;
        return make_leaf(b, n, nm, ST_KIND_INT64, 1);
    case AV_LONG:
        n->op = OP_LONG;
        return make_leaf(b, n, nm, ST_KIND_INT64, 1);
    case AV_FLOAT:
        n->op = OP_FLOAT;
        return make_leaf(b, n, nm, ST_KIND_FLOAT, 1);
    case AV_DOUBLE:
        n->op = OP_DOUBLE;
        return make_leaf(b, n, nm, ST_KIND_FLOAT, 1);
    case AV_STRING:
    case AV_BYTES:
        n->op = OP_BYTES;
        if (s->logical == AVL_DECIMAL) {
            n->op = OP_DEC_BYTES;
            n->scale = (int32_t)s->scale;
            return make_leaf(b, n, nm, b->plan->decimal_text ? ST_KIND_BYTES : ST_KIND_FLOAT, 1);
        }
        return make_leaf(b, n, nm, ST_KIND_BYTES, 1);
    case AV_FIXED:
        n->size = s->size;
        n->min_zero = s->size == 0;
        if (s->logical == AVL_DECIMAL) {
            if (s->size > 32)
                return st_error_set(b->err, ST_EUNSUPPORTED,
                                    "field \"%s\": decimal on fixed(%lld) is wider than 256 bits",
                                    nm->path, (long long)s->size);
            n->op = OP_DEC_FIXED;
            n->scale = (int32_t)s->scale;
            return make_leaf(b, n, nm, b->plan->decimal_text ? ST_KIND_BYTES : ST_KIND_FLOAT, 1);
        }
        if (s->logical == AVL_UUID) {
            n->op = OP_UUID_FIXED;
            return make_leaf(b, n, nm, ST_KIND_BYTES, 1);
        }
        if (s->logical == AVL_DURATION) {
            n->op = OP_DURATION;
            return make_leaf(b, n, nm, ST_KIND_INT64, 3);
        }
        n->op = OP_FIXED;
        return make_leaf(b, n, nm, ST_KIND_BYTES, 1);
    case AV_ENUM: {
        n->op = OP_ENUM;
        n->nsymbols = s->n;
        uint32_t *off = st_arena_alloc(&b->plan->arena, s->n * sizeof *off);
        uint32_t *len = st_arena_alloc(&b->plan->arena, s->n * sizeof *len);
        if (!off || !len)
            return oom(b);
        for (size_t i = 0; i < s->n; i++) {
            size_t l = strlen(s->symbols[i]);
            if ((rc = blob_add(b, s->symbols[i], l, &off[i])))
                return rc;
            len[i] = (uint32_t)l;
        }
        n->sym_off = off;
        n->sym_len = len;
        return make_leaf(b, n, nm, ST_KIND_BYTES, 1);
    }
    case AV_RECORD:
        n->op = OP_RECORD;
        return compile_record(b, s, nm, depth, n);
    case AV_UNION:
        n->op = OP_UNION;
        return compile_union(b, s, nm, depth, n);
    case AV_ARRAY:
        return compile_array(b, s, nm, depth, n, false);
    case AV_MAP: {
        if (b->maps == ST_MAP_KEY_VALUE) {
            /* A map is read as the array of its entries, {key, value}: the
             * encodings are the same (blocks of items; an item is the key
             * string then the value). */
            av_schema *str = st_arena_alloc(&b->plan->arena, sizeof *str);
            av_schema *rec = st_arena_alloc(&b->plan->arena, sizeof *rec);
            av_field *f = st_arena_alloc(&b->plan->arena, 2 * sizeof *f);
            if (!str || !rec || !f)
                return oom(b);
            memset(str, 0, sizeof *str);
            memset(rec, 0, sizeof *rec);
            str->type = AV_STRING;
            f[0] = (av_field){.name = "key", .type = str};
            f[1] = (av_field){.name = "value", .type = s->items};
            rec->type = AV_RECORD;
            rec->fullname = rec->name = "entry";
            rec->n = 2;
            rec->fields = f;
            av_schema entries = *s;
            entries.type = AV_ARRAY;
            entries.items = rec;
            return compile_array(b, &entries, nm, depth, n, true);
        }
        if (nm->repeated && (rc = refuse_keyed_map(b, nm)))
            return rc;
        n->op = OP_MAP;
        n->in_map = nm->in_map;
        n->rel = nm->rel;
        n->rel_len = nm->in_map ? strlen(nm->rel) : 0;
        b->plan->has_maps = true;
        if (!nm->in_map && st_buf_append(&b->map_paths, &nm->path, sizeof nm->path))
            return oom(b);
        n->n = 1;
        n->kids = st_arena_alloc(&b->plan->arena, sizeof *n->kids);
        if (!n->kids)
            return oom(b);
        naming child = *nm;
        child.in_map = true;
        child.rel = "";
        child.nullable = true;
        child.path = join(b, nm->path, "<key>");
        if (!child.path)
            return oom(b);
        return compile(b, s->items, &child, depth + 1, &n->kids[0]);
    }
    }
    return st_error_set(b->err, ST_EUNSUPPORTED, "field \"%s\": unsupported type", nm->path);
}

static int cmp_slot(const void *a, const void *c, void *blob)
{
    const av_slot *x = a, *y = c;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int r = memcmp((char *)blob + x->name_off, (char *)blob + y->name_off, n);
    if (r)
        return r;
    return (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

static int check_unique(pbuild *b)
{
    size_t n = b->slots.len / sizeof(av_slot);
    if (n < 2)
        return 0;
    av_slot *copy = malloc(b->slots.len);
    if (!copy)
        return oom(b);
    memcpy(copy, b->slots.data, b->slots.len);
    qsort_r(copy, n, sizeof *copy, cmp_slot, b->blob.data);
    int rc = 0;
    for (size_t i = 1; i < n && !rc; i++)
        if (cmp_slot(&copy[i - 1], &copy[i], b->blob.data) == 0)
            rc = st_error_set(b->err, ST_EUNSUPPORTED, "two Avro fields map to the feature name \"%.*s\"",
                              (int)copy[i].name_len, (char *)b->blob.data + copy[i].name_off);
    free(copy);
    return rc;
}

static int check_projection(pbuild *b, const char *const *cols, size_t ncols, const char *what)
{
    size_t nslots = b->slots.len / sizeof(av_slot);
    const av_slot *slots = (const av_slot *)b->slots.data;
    const char *const *maps = (const char *const *)b->map_paths.data;
    size_t nmaps = b->map_paths.len / sizeof *maps;
    for (size_t i = 0; i < ncols; i++) {
        bool found = false;
        for (size_t k = 0; k < nslots && !found; k++)
            found = name_matches(cols[i], (char *)b->blob.data + slots[k].name_off, slots[k].name_len);
        for (size_t k = 0; k < nmaps && !found; k++)
            found = name_matches(cols[i], maps[k], strlen(maps[k])) ||
                    name_matches(maps[k], cols[i], strlen(cols[i]));
        if (!found)
            return st_error_set(b->err, ST_EUSAGE, "%s: no field \"%s\" in the Avro schema", what, cols[i]);
    }
    return 0;
}

static const char *const *copy_list(pbuild *b, const char *const *list, size_t n)
{
    if (!n)
        return NULL;
    const char **out = st_arena_alloc(&b->plan->arena, n * sizeof *out);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!(out[i] = st_arena_memdup(&b->plan->arena, list[i], strlen(list[i]) + 1)))
            return NULL;
    return out;
}

int st_avro_plan_build(av_plan *plan, const av_schema *schema, const st_read_options *opt, st_error *err)
{
    memset(plan, 0, sizeof *plan);
    st_arena_init(&plan->arena, 16 * 1024);
    pbuild b = {.plan = plan, .err = err, .reading = opt != NULL};
    if (opt) {
        b.nested = opt->nested;
        b.maps = opt->maps;
        b.describe = opt->describe;
        plan->decimal_text = opt->decimal_text;
        plan->columns = copy_list(&b, opt->columns, opt->ncolumns);
        plan->ncolumns = plan->columns ? opt->ncolumns : 0;
        plan->exclude = copy_list(&b, opt->exclude, opt->nexclude);
        plan->nexclude = plan->exclude ? opt->nexclude : 0;
        if ((opt->ncolumns && !plan->columns) || (opt->nexclude && !plan->exclude))
            return oom(&b);
    }
    av_schema *root = (av_schema *)schema;
    plan->top_is_record = root->type == AV_RECORD;
    naming nm = {.path = plan->top_is_record ? "" : "value", .rel = ""};
    int rc = compile(&b, root, &nm, 0, &plan->root);
    if (!rc)
        rc = check_unique(&b);
    if (!rc && opt)
        rc = check_projection(&b, opt->columns, opt->ncolumns, "--columns");
    /* --exclude of a field this file lacks is fine (a schema that grew
     * over time has it in later files only). */
    if (!rc) {
        plan->nslots = b.slots.len / sizeof(av_slot);
        plan->slots = st_arena_memdup(&plan->arena, b.slots.data, b.slots.len);
        plan->blob = st_arena_memdup(&plan->arena, b.blob.data, b.blob.len);
        plan->blob_len = b.blob.len;
        if (!plan->slots || !plan->blob)
            rc = oom(&b);
    }
    st_buf_free(&b.blob);
    st_buf_free(&b.slots);
    st_buf_free(&b.map_paths);
    return rc;
}

void st_avro_plan_free(av_plan *plan)
{
    st_arena_free(&plan->arena);
    memset(plan, 0, sizeof *plan);
}

int st_avro_plan_columns(const av_plan *plan, st_schema *out, st_error *err)
{
    for (size_t i = 0; i < plan->nslots; i++) {
        const av_slot *s = &plan->slots[i];
        if (!s->keep)
            continue;
        char name[4096];
        size_t n = s->name_len < sizeof name - 1 ? s->name_len : sizeof name - 1;
        memcpy(name, plan->blob + s->name_off, n);
        name[n] = '\0';
        if (st_schema_add(out, name, s->kind))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        st_column *c = &out->columns[out->count - 1];
        c->nullable = s->nullable;
        c->repeated = s->repeated;
        c->fixed_len = s->fixed_len;
        c->sequence = s->sequence;
        c->logical = s->logical;
    }
    return 0;
}
