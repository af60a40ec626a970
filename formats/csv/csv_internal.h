/* Shared pieces of the text formats: the chunker that cuts input on record
 * boundaries, the field tokenizer, number parsing, and the reader state. */
#ifndef ST_CSV_INTERNAL_H
#define ST_CSV_INTERNAL_H

#include "csv.h"

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Every chunk buffer has this many readable bytes after its end, so that
 * scans may load 16 bytes, or a 64-byte block and the byte after it, past
 * the last record.  The byte right after the end is always '\n' (a
 * sentinel that stops unquoted scans). */
#define CSV_PAD 128
#define CSV_DEFAULT_CHUNK ((size_t)1 << 20)
#define CSV_MAX_CHUNK ((size_t)4 << 20)
#define CSV_DEFAULT_MAX_RECORD ((uint64_t)64 << 20)
#define CSV_DEFAULT_INFER_ROWS 10000
/* Bounds on what a header or a key set may grow to (memory per record and
 * per reader grows with them). */
#define CSV_DEFAULT_MAX_COLUMNS ((size_t)100000) /* --max-columns */
#define JSONL_MAX_KEYS ((size_t)1 << 20)

/* How text is cut into records and fields. */
typedef struct csv_dialect {
    uint8_t delim;
    uint8_t quote;
    bool quoting;      /* false: quotes are data; a record is one line */
    uint8_t line_ends; /* enum csv_line_ends */
} csv_dialect;

/* Which bytes end a record.  The parsers know only LF (and CRLF); files
 * with classic-Mac CR-only line ends have their CRs outside quoted fields
 * turned into LFs as the chunker reads them (same length, so offsets and
 * pread positions are unchanged; a CR inside quotes stays data), which
 * reads them as Python's csv module and DuckDB do. */
enum csv_line_ends {
    CSV_LF = 0,        /* LF or CRLF (JSON lines always) */
    CSV_DETECT,        /* decide from the first chunk: CR-only when it holds
                        * a CR and no LF */
    CSV_CR,            /* CR-only */
};

/* Where the CR translation stands between reads: a quote opens a quoted
 * field only at a field start, as the chunker and field parser decide. */
enum { CR_FIELD_START, CR_UNQUOTED, CR_QUOTED, CR_QUOTE_SEEN };

/* A run of whole records, cut by the chunker; the unit payload. */
typedef struct csv_chunk {
    uint8_t *data;     /* malloc'd; data[len] == '\n', then zeros up to CSV_PAD */
    size_t len;
    size_t cap;        /* data holds cap + CSV_PAD bytes */
    size_t start;      /* where records begin (past a BOM or the header) */
    uint64_t offset;   /* byte offset of data[0] in the (uncompressed) input */
    uint64_t line;     /* 1-based line number of data[start] */
    uint64_t row;      /* index of its first record (the header is not a record) */
    bool has_quote;    /* a quote character occurs in data[start, len) */
} csv_chunk;

/* Reads a stream and hands out chunks that end on record boundaries. */
typedef struct csv_chunker {
    st_stream *in;          /* borrowed */
    bool use_pread;         /* read with pread at read_pos (first pass of a file) */
    uint64_t read_pos;
    csv_dialect d;
    size_t chunk_size;
    uint64_t max_record;
    uint8_t *carry;         /* bytes after the last boundary, for the next chunk */
    size_t carry_len, carry_cap;
    bool eof;
    bool started;           /* a chunk has been handed out (BOM check done) */
    uint64_t offset, line, row;
    uint8_t *spare;         /* a recycled chunk buffer (first pass) */
    size_t spare_cap;
    size_t *spans;          /* scratch: quoted spans as (begin, end) pairs */
    size_t nspans, spans_cap;
    size_t first_quote;     /* offset of the first quote byte seen by the walk */
    uint8_t cr_state;       /* CR-only input: the translation's state */
    uint64_t cr_bytes;      /* bytes translated so far */
} csv_chunker;

void csv_chunker_init(csv_chunker *c, st_stream *in, const csv_dialect *d, size_t chunk_size,
                      uint64_t max_record, bool use_pread);
/* 1 = *out filled (caller frees out->data), 0 = end of input, < 0 = error. */
int csv_chunker_next(csv_chunker *c, csv_chunk *out, st_error *err);
void csv_chunker_free(csv_chunker *c);
/* Hands a chunk's buffer back for the next chunk (instead of freeing it). */
void csv_chunker_recycle(csv_chunker *c, csv_chunk *ch);
void csv_chunk_free(csv_chunk *ch);
/* Chunks read during open() (for type inference on inputs that cannot be
 * read twice), handed out again before the chunker goes on. */
typedef struct csv_chunk_queue {
    csv_chunk *items;
    size_t count, head;
} csv_chunk_queue;

int csv_chunk_queue_push(csv_chunk_queue *q, const csv_chunk *ch, st_error *err);
/* True and *out set when a queued chunk remains. */
bool csv_chunk_queue_pop(csv_chunk_queue *q, csv_chunk *out);
void csv_chunk_queue_free(csv_chunk_queue *q);

/* Hands a chunk to the pipeline as a unit that owns it (CSV, TSV and JSON
 * lines units are all chunks); on failure the chunk is freed. */
int csv_chunk_to_unit(csv_chunk *ch, uint64_t first_record, st_unit *unit, st_error *err);
/* The readers' free_unit. */
void csv_chunk_unit_free(const void *priv, st_unit *unit);
/* Number of '\n' bytes in p[0, n). */
size_t csv_count_newlines(const uint8_t *p, size_t n);

/* ---- fields -------------------------------------------------------------- */

enum {
    CSV_SPAN_QUOTED = 1,   /* began with a quote */
    CSV_SPAN_ESCAPED = 2,  /* raw text needs csv_unescape (doubled quotes, text after the quote) */
    CSV_SPAN_BAD = 4,      /* quote not closed before the end of the chunk */
};

typedef struct csv_span {
    const uint8_t *ptr;    /* the value (inside the quotes) or, when ESCAPED, the raw field */
    size_t len;
    unsigned flags;
    size_t newlines;       /* '\n' bytes inside a quoted field */
} csv_span;

/* Finds the first delim or '\n' at or after p; the '\n' sentinel after the
 * chunk stops it. */
static inline const uint8_t *csv_find_sep(const uint8_t *p, uint8_t delim)
{
#if defined(__SSE2__)
    const __m128i vd = _mm_set1_epi8((char)delim);
    const __m128i vn = _mm_set1_epi8('\n');
    for (;;) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, vd), _mm_cmpeq_epi8(x, vn)));
        if (m)
            return p + __builtin_ctz((unsigned)m);
        p += 16;
    }
#else
    while (*p != delim && *p != '\n')
        p++;
    return p;
#endif
}

/* Length of the run of ASCII digits at p.  Reads 16 bytes at a time (the
 * chunk padding makes that safe) so that the end of a short number costs
 * no mispredicted loop exit. */
static inline size_t csv_digit_run(const uint8_t *p)
{
#if defined(__SSE2__)
    size_t n = 0;
    for (;;) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + n));
        __m128i t = _mm_sub_epi8(x, _mm_set1_epi8((char)('0' + 128)));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(t, _mm_set1_epi8(-128 + 9)));
        if (m)
            return n + (size_t)__builtin_ctz(m);
        n += 16;
    }
#else
    size_t n = 0;
    while ((unsigned)(p[n] - '0') < 10)
        n++;
    return n;
#endif
}

/* The value of n (<= 8) ASCII digits at p, reading 8 bytes. */
static inline uint64_t csv_digits8(const uint8_t *p, size_t n)
{
    if (n == 0)
        return 0;
    uint64_t x;
    memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x -= 0x3030303030303030ull;
    x <<= 8 * (8 - n); /* drop what follows; leading zero digits fill in */
    x = (x & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
    x = (x & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
    return (x & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32;
#else
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(p[i] - '0');
    return v;
#endif
}

/* The value of n (<= 19) ASCII digits at p. */
static inline uint64_t csv_digits(const uint8_t *p, size_t n)
{
    if (n <= 8)
        return csv_digits8(p, n);
    if (n <= 16)
        return csv_digits8(p, n - 8) * 100000000u + csv_digits8(p + n - 8, 8);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(p[i] - '0');
    return v;
}

#if defined(__SSE2__)
typedef struct csv_block_masks {
    uint64_t sep, nl, other, dot, sign;
} csv_block_masks;

/* Bit i of each mask describes byte p[i]: separators (delimiter or LF),
 * LF, '.', '+'/'-', and "other" (none of those, not a digit, and not a CR
 * that ends a line). */
static inline void csv_masks64(const uint8_t *p, uint8_t delim, csv_block_masks *m)
{
    const __m128i vd = _mm_set1_epi8((char)delim), vn = _mm_set1_epi8('\n');
    const __m128i vdot = _mm_set1_epi8('.'), vminus = _mm_set1_epi8('-'), vplus = _mm_set1_epi8('+');
    const __m128i vcr = _mm_set1_epi8('\r');
    const __m128i bias = _mm_set1_epi8((char)('0' + 128)), lim = _mm_set1_epi8(-128 + 9);
    uint64_t sep = 0, nl = 0, nondigit = 0, dot = 0, sign = 0, cr = 0;
    for (int k = 0; k < 4; k++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        __m128i n = _mm_cmpeq_epi8(x, vn);
        uint64_t mn = (uint64_t)(unsigned)_mm_movemask_epi8(n);
        nl |= mn << (16 * k);
        sep |= (mn | (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, vd))) << (16 * k);
        nondigit |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(_mm_sub_epi8(x, bias), lim))
                    << (16 * k);
        dot |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, vdot)) << (16 * k);
        sign |= (uint64_t)(unsigned)_mm_movemask_epi8(
                    _mm_or_si128(_mm_cmpeq_epi8(x, vminus), _mm_cmpeq_epi8(x, vplus)))
                << (16 * k);
        cr |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, vcr)) << (16 * k);
    }
    uint64_t before_nl = nl >> 1 | (uint64_t)(p[64] == '\n') << 63;
    m->sep = sep;
    m->nl = nl;
    m->dot = dot;
    m->sign = sign;
    m->other = nondigit & ~dot & ~sign & ~sep & ~(cr & before_nl);
}

#endif

/* Whether a chunk can take the bit-mask paths: no quote in its records (or
 * quoting off) and a delimiter that cannot be part of a number. */
static inline bool csv_plain_chunk(const csv_dialect *d, const csv_chunk *ch)
{
#if defined(__SSE2__)
    uint8_t c = d->delim;
    if (!c || c == '\r' || c == '.' || c == '+' || c == '-' || (c >= '0' && c <= '9'))
        return false;
    return !d->quoting || !ch->has_quote;
#else
    (void)d;
    (void)ch;
    return false;
#endif
}

/* Reads the field at p (a field start) up to its terminator, which it
 * returns (a delimiter, the '\n' ending the record, or `end`). */
const uint8_t *csv_field_slow(const csv_dialect *d, const uint8_t *p, const uint8_t *end,
                              csv_span *out);

static inline const uint8_t *csv_field(const csv_dialect *d, const uint8_t *p, const uint8_t *end,
                                       csv_span *out)
{
    if (d->quoting && *p == d->quote && p < end)
        return csv_field_slow(d, p, end, out);
    const uint8_t *t = csv_find_sep(p, d->delim);
    if (t > end)
        t = end;
    size_t n = (size_t)(t - p);
    if (*t == '\n' && n && t[-1] == '\r')
        n--;
    out->ptr = p;
    out->len = n;
    out->flags = 0;
    out->newlines = 0;
    return t;
}

/* Writes the value of an ESCAPED span to dst (at most span->len bytes);
 * returns its length. */
size_t csv_unescape(const csv_dialect *d, const csv_span *s, uint8_t *dst);

/* ---- numbers ------------------------------------------------------------- */

/* Whether p[0, n) is a number (the float syntax of csv.h). */
bool csv_is_number(const uint8_t *p, size_t n);
/* Parses an integer within int64 (sign and digits only). */
bool csv_parse_int64(const uint8_t *p, size_t n, int64_t *out);
/* Parses a number as the nearest double; *sig receives the count of
 * significant decimal digits (0 for inf/nan/zero).  loc is a "C" locale
 * for the rare strtod fallback. */
bool csv_parse_double(const uint8_t *p, size_t n, double *out, int *sig, locale_t loc);
/* Whether narrowing d, read from the text p[0, n), to float32 loses it
 * (the rule of csv.h).  The _dec form takes the text's value as
 * V = mant * 10^exp10, exact when ndigits <= 19 (more: surely lossy). */
bool csv_float_lossy(double d, const uint8_t *p, size_t n, locale_t loc);
bool csv_float_lossy_dec(double d, uint64_t mant, int64_t exp10, int ndigits, locale_t loc);
/* Whether d, parsed by csv_parse_double from a decimal with `sig`
 * significant digits, left a double's range: a non-zero text that became
 * 0, or a finite one that became Infinity.  Such a value narrows to itself,
 * so callers test this beside (double)(float)d != d. */
bool csv_float_out_of_range(double d, int sig);

/* Powers of ten that are exact doubles, for the fast path. */
extern const double csv_pow10[23];

/* ---- columns and the CSV reader ------------------------------------------ */

enum csv_action {
    CSV_SKIP = 0,   /* projected away or typed NONE */
    CSV_INT64,
    CSV_FLOAT,
    CSV_BYTES,
    CSV_UNSEEN,     /* bytes, speculated: no value in the first rows, and a
                     * later one would change the type (csv.h, speculate) */
};

typedef struct csv_column {
    char *name;             /* NUL-terminated, owned */
    uint32_t name_len;
    st_kind kind;
    uint8_t action;         /* enum csv_action */
    bool forced;            /* kind given by opt->types */
    bool nullable;          /* an empty cell was seen */
    bool saw_value;         /* a non-empty cell was seen */
    bool can_int, can_float;/* inference state */
    uint32_t slot;          /* offset of its value slot in a record block */
} csv_column;

typedef struct csv_reader {
    st_stream *in;          /* borrowed from the caller */
    const char *name;       /* in->name, for messages */
    csv_dialect d;
    enum st_empty_policy empty;
    bool skip_bad;
    bool strict_float;
    bool full_pass;         /* types come from the whole input */
    bool speculative;       /* types guessed from the first rows (csv.h, speculate) */
    uint64_t infer_rows;
    size_t max_columns;     /* a longer header is refused */
    csv_column *cols;
    size_t ncols;
    size_t nkept;
    size_t block_size;      /* bytes per record: features then value slots */
    locale_t cloc;
    csv_chunker ch;
    csv_chunk_queue pending; /* chunks read during open(), replayed first */
    size_t header_end;      /* offset of the first data record in the input */
    uint64_t header_line;   /* line of the first data record */
    uint64_t row_bias;      /* 1 when the chunker counted a header row */
    /* "; the header ... --delimiter ';'" when the header is one column
     * whose name holds another likely delimiter; appended to the errors of
     * rows with more fields.  Empty otherwise. */
    char delimiter_hint[128];
    /* scratch for the inference pass (sequential, open() only) */
    uint8_t *scratch;
    size_t scratch_cap;
} csv_reader;

/* Makes the column names unique (csv_names.c): empty ones become c<i>,
 * repeated ones NAME_1, NAME_2, ...; linear time.  Polls st_interrupted(). */
int csv_fix_names(csv_reader *r, st_error *err);

/* Message helper: a printable excerpt of a value (at most 40 bytes). */
void csv_excerpt(const uint8_t *p, size_t n, char *out, size_t cap);

/* The inference pass over one chunk (csv_infer.c).  Rows seen are added to
 * *rows; stops after `limit` rows when limit != 0. */
int csv_infer_chunk(csv_reader *r, const csv_chunk *ch, uint64_t *rows, uint64_t limit,
                    st_error *err);
/* Whether any column still needs looking at. */
bool csv_infer_open_columns(const csv_reader *r);

/* The same pass in pieces, for inferring chunks on several threads: what a
 * chunk's rows say depends only on its text and a snapshot of which columns
 * are still open, and the sayings of chunks are merged (in input order, so
 * that errors and the early stop come out as with one thread) into the
 * columns by csv_infer_apply. */
enum {
    CSV_JUDGE = 1,      /* the column is still int64 or float */
    CSV_JUDGE_INT = 2,  /* ... and still int64 */
};
/* judge: ncols + 1 bytes. */
void csv_infer_snapshot(const csv_reader *r, uint8_t *judge);
/* verdicts, said: ncols + 1 bytes each; reads only r's dialect and
 * options, never its columns, so it may run beside csv_infer_apply. */
int csv_infer_scan(const csv_reader *r, const csv_chunk *ch, const uint8_t *judge,
                   uint8_t *verdicts, uint8_t *said, uint64_t *rows, uint64_t limit, st_error *err);
void csv_infer_apply(csv_reader *r, const uint8_t *said);
/* The pass over a whole input (csv_infer_full.c), on up to `threads`
 * threads (0 = the cores online) with chunks of chunk_size bytes. */
int csv_infer_full(csv_reader *r, st_stream *src, bool use_pread, size_t chunk_size,
                   unsigned threads, st_error *err);

/* Shared between the readers (csv_reader.c). */
locale_t csv_c_locale(st_error *err);
st_stream *csv_reopen_for_pass(st_stream *in, st_error *err);

extern const st_reader_ops st_csv_reader_ops;
extern const st_reader_ops st_tsv_reader_ops;
extern const st_reader_ops st_jsonl_reader_ops;
extern const st_writer_ops st_csv_writer_ops;
extern const st_writer_ops st_tsv_writer_ops;
extern const st_writer_ops st_jsonl_writer_ops;

int csv_probe(const uint8_t *buf, size_t len);
int tsv_probe(const uint8_t *buf, size_t len);
int jsonl_probe(const uint8_t *buf, size_t len);

#endif
