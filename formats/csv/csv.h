/* CSV, TSV and JSON lines: text tables in, text tables out.
 *
 * Options specific to text inputs, passed as st_read_options.format_options
 * (and as st_write_options.format_options for --to csv / tsv).
 *
 * ---- Reading CSV / TSV -------------------------------------------------
 *
 * The grammar is RFC 4180 with the usual relaxations:
 *   - records end with LF or CRLF; the last one may lack it.  A CR that is
 *     not followed by LF is data.  A UTF-8 byte order mark at the start of
 *     the input is skipped.
 *   - a field is quoted only when its FIRST character is the quote; inside,
 *     a doubled quote is one quote and delimiters, CR and LF are data.
 *     Text between a closing quote and the next delimiter is kept as is
 *     ("ab"cd -> abcd); a quote inside an unquoted field is an ordinary
 *     character.  An unterminated quote is an error naming its line.
 *   - backslash is an ordinary character: files that escape quotes as \"
 *     (not RFC 4180, e.g. some database dumps) are read by the RFC rules,
 *     so such a line usually has a wrong field count and is reported (or
 *     skipped with skip_bad_rows).  Re-export them with RFC quoting.
 *   - a blank line (nothing, or only CR, before LF) is skipped when the
 *     table has more than one column; with one column it is an empty cell.
 *     An input of blank lines only (and no header option) is an empty
 *     input: no columns, no records.
 *   - every record must have as many fields as the header; otherwise the
 *     row is an error naming its line and both counts, or it is skipped
 *     and counted in st_batch.skipped_rows with skip_bad_rows.
 *   - duplicate header names get a suffix ("x", "x_1", "x_2"); an empty
 *     header cell is named c<index>, as every column is with no_header.
 *
 * Column types (unless forced through `types`):
 *   - int64 when every non-empty value is an integer within int64
 *     (optional sign, ASCII digits, nothing else: no spaces, no "1.0");
 *   - float when every non-empty value is a number: decimal with optional
 *     fraction and exponent ("1", "-.5", "1e-3", "2.E+5"), or inf,
 *     infinity, nan with optional sign, case-insensitive.  Values are
 *     parsed as the nearest double and narrowed to float32;
 *   - bytes (the cell text) otherwise, or when the column is always empty.
 * A quoted value is typed by its content ("345" is an integer).
 * On a local file the whole input is classified by a first pass (a gzip
 * file named by its path is decompressed twice for this); otherwise (stdin,
 * remote objects, no_full_scan) the first infer_rows rows decide, and a
 * later value that does not fit is an error naming its line, row and column.
 *
 * Empty cells: an unquoted empty cell follows `empty`; a quoted empty cell
 * ("") is an empty string in a bytes column and an empty cell otherwise.
 *
 * Float narrowing: a value counts as lossy (st_batch.lossy_floats, an error
 * with st_read_options.strict_float) when its float32 is not exactly the
 * parsed double AND printing the float32 with as many significant digits as
 * the text has (at most 9; more digits are always lossy) does not give the
 * text's number back.  So "0.1", "41.98", "123456", "0.30000001" and "1e30"
 * are not lossy (float32 prints them back), while "16777217" (becomes
 * 16777216), "3.141592653589793" (3.1415927), "41.985015101" and "1e39"
 * (overflow) are.  Integers in a float column follow the same rule.
 *
 * Records keep the columns' order in the file; feature names point at the
 * reader's column names, which outlive every batch.
 *
 * ---- Reading JSON lines -------------------------------------------------
 *
 * One object per record, in one of three shapes picked from the first bytes
 * (json_split.h): one object per line (blank lines skipped), one top-level
 * array of objects (streamed), or objects one after another over several
 * lines (jq .).  Anything else is an error naming the record, line and byte
 * offset ("JSON record R (line L, byte offset B): ...").  Numbers written without
 * fraction or exponent that fit int64 are int64, other numbers float;
 * strings are bytes; true/false are int64 1/0; null is a missing feature.
 * An array is a multi-value feature: its elements must be all numbers
 * (ints and floats mixed give float) or all strings, anything else is an
 * error naming the line and key, as are arrays of arrays or of objects,
 * null inside an array and a key given twice; an empty array is a present
 * feature with no values.  Nested objects become dotted names
 * ({"a": {"b": 1}} gives "a.b"; depth at most 64).  So that what `cat` and --to jsonl print reads back unchanged:
 * the strings "NaN", "Infinity", "-Infinity" beside numbers are floats, and
 * {"base64": "..."} is a bytes value.  A key's kind is what the inference
 * pass saw over all its values (any string makes it bytes, numbers kept as
 * their text; any float makes it float); keys first seen after the
 * inference rows keep the kind of their values.  The SequenceExample form
 * of record_json.h is not read back.  Keys are byte strings: a \u0000 in a
 * key is kept.
 *
 * Limits: at most 2^20 columns (CSV) or distinct keys (JSON lines); a record
 * longer than st_read_options.max_record_size (0 = 64 MiB) is an error.
 *
 * ---- Writing ------------------------------------------------------------
 *
 * CSV / TSV: a header with the columns of st_write_options.schema (required),
 * then one line per record.  A cell is empty for a missing feature (or a
 * feature with no list set); a single value is written bare; a list of
 * another length is a JSON array ([1,2], ["a","b"], []).  Floats use the
 * shortest text that reads back as the same float32 ("NaN", "Infinity").
 * Bytes are written as text when valid UTF-8 and as standard base64 (RFC
 * 4648, no marker) otherwise; an empty string is written as "".  Cells are
 * quoted by RFC 4180 when they contain the delimiter, the quote, CR or LF.
 * A record with a feature that is not a column is an error.
 * JSON lines: one object per record, as src/record_json.h describes. */
#ifndef ST_CSV_H
#define ST_CSV_H

#include "../format.h"

enum st_empty_policy {
    ST_EMPTY_OMIT = 0,   /* an empty cell leaves the feature out (TensorFlow's "missing") */
    ST_EMPTY_EMPTY = 1,  /* an empty cell is a present feature with no values */
    ST_EMPTY_ERROR = 2,  /* an empty cell is an error naming row and column */
};

typedef struct st_csv_options {
    char delimiter;            /* 0 = the format's default: ',' for csv, '\t' for tsv */
    char quote;                /* 0 = '"'; set no_quote to disable quoting */
    bool no_quote;
    bool no_header;            /* columns are named c0, c1, ... */
    const char *header;        /* "a,b,c": names to use instead of the first line's
                                * (the first line is still skipped unless no_header) */
    bool skip_bad_rows;        /* ragged rows are skipped and counted instead of failing */
    enum st_empty_policy empty;
    uint64_t infer_rows;       /* rows used for type inference when the input cannot be read twice (0 = 10000) */
    uint64_t max_columns;      /* a header with more columns is refused (0 = 100000) */
    /* Column types forced by --schema / --type; ST_KIND_NONE means "skip this column". */
    const st_schema *types;
    /* Kinds for the columns an input has, below `types` (convert --widen
     * gives every input the widest kind of each column); unlike `types`, a
     * column the input lacks is not an error. */
    const st_schema *widen_types;
    /* JSON lines: a key holding text in some records and numbers or
     * booleans in others is written as bytes (convert --widen) instead of
     * being an error; note(), when set, is told of each such key. */
    bool widen_mixed_kinds;
    void (*note)(void *ctx, const char *text);
    void *note_ctx;
    size_t chunk_size;         /* bytes of text per unit (0 = 1 MiB); tests use tiny ones */
    bool no_full_scan;         /* infer from infer_rows even when the input could be read twice */
    unsigned infer_threads;    /* threads of the whole-input inference pass (0 = the cores
                                * online, at most 8); the types never depend on it */
    /* Skip the whole-input pass and decode with the types of the first
     * infer_rows rows, a guess that holds for most files.  Decoding then
     * fails on any value that would have changed the types (a value that
     * does not fit its column, a value in a column the first rows left
     * empty), and on every other error too: the caller converts again
     * without this, so that types, errors and output are those of the
     * whole-input pass (convert does so for local files). */
    bool speculate;
} st_csv_options;

void st_csv_options_init(st_csv_options *o);

#endif
