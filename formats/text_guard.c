/* Binary data is never read as text.  CSV, TSV and JSON lines accept
 * almost any bytes, so without this an 8-byte scrap of a Parquet file reads
 * as a CSV header and "0 records", exit 0.  The rule, documented in
 * shardtool(1) under INPUTS, looks at the first KiB of the (decompressed)
 * input:
 *
 *   - the magic of a binary format (Parquet "PAR1" beside binary bytes at
 *     the start, or at the end of a file shorter than the 4 KiB looked at;
 *     Avro "Obj\x01") means that file cut short or damaged;
 *   - a NUL byte is never text;
 *   - unless --from named the format, neither is a control byte other than
 *     TAB, CR, LF, FF and VT;
 *   - when nothing but the content suggested text (no --from, no .csv,
 *     .tsv or .jsonl name), bytes that are not UTF-8 mean binary data too;
 *     a text name or --from reads text in other encodings (Latin-1);
 *   - a file named .csv or .tsv whose first line begins a JSON object
 *     ('{' and then '"' or '}') or an array of them ('[' alone, or '['
 *     and then '{') is JSON, whose lines would otherwise become a header
 *     of names like '{"a":1' and records of fragments, exit 0. */
#include "format.h"

#include <stdio.h>
#include <string.h>

#define TEXT_WINDOW 1024

/* Length of the valid UTF-8 sequence at p (1..4), 0 when invalid, -1 when
 * cut off by the end of the buffer. */
static int utf8_len(const uint8_t *p, size_t avail)
{
    uint8_t c = p[0];
    int n;
    uint32_t min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, min = 0x10000;
    else
        return 0;
    uint32_t cp = c & (0x3F >> (n - 1));
    for (int i = 1; i < n; i++) {
        if ((size_t)i >= avail)
            return -1;
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static bool is_text_byte(uint8_t c)
{
    return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r';
}

/* Whether the text starts like JSON: an object with a quoted key (or
 * none), or an array that holds objects or opens alone on its line.  A
 * CSV header cell is almost never so; --from csv reads it anyway. */
static bool begins_like_json(const uint8_t *p, size_t n)
{
    size_t i = 0;
    if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (i >= n || (p[i] != '{' && p[i] != '['))
        return false;
    bool array = p[i++] == '[';
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (i >= n)
        return false;
    if (array)
        return p[i] == '{' || p[i] == '\n' || p[i] == '\r';
    return p[i] == '"' || p[i] == '}' || p[i] == '\n' || p[i] == '\r';
}

int st_text_guard(const st_format *f, st_text_evidence how, const uint8_t *head, size_t n,
                  bool whole, st_error *err)
{
    /* "PAR1" is also four letters of text: a Parquet file follows it with
     * a binary page header and precedes its closing one with a binary
     * footer length. */
    if (n >= 4 && memcmp(head, "PAR1", 4) == 0 && (n == 4 || !is_text_byte(head[4])))
        return st_error_set(err, ST_EDATA, "this looks like a Parquet file cut short or damaged "
                                           "(it begins with the PAR1 magic), not %s text", f->name);
    if (whole && n >= 8 && memcmp(head + n - 4, "PAR1", 4) == 0 &&
        (!is_text_byte(head[n - 8]) || !is_text_byte(head[n - 7]) || !is_text_byte(head[n - 6]) ||
         !is_text_byte(head[n - 5])))
        return st_error_set(err, ST_EDATA, "this looks like a Parquet file cut short or damaged "
                                           "(it ends with the PAR1 magic), not %s text", f->name);
    if (n >= 4 && memcmp(head, "Obj\x01", 4) == 0)
        return st_error_set(err, ST_EDATA, "this looks like an Avro file cut short or damaged "
                                           "(it begins with the Obj\\x01 magic), not %s text",
                            f->name);
    if (how == ST_TEXT_NAMED_BY_FILE_NAME && (!strcmp(f->name, "csv") || !strcmp(f->name, "tsv")) &&
        begins_like_json(head, n))
        return st_error_set(err, ST_EDATA,
                            "this looks like JSON (its first line begins a JSON %s), not %s text; "
                            "name the format with --from jsonl (or --from %s to read it as %s "
                            "anyway)", head[strspn((const char *)head, "\xEF\xBB\xBF \t")] == '['
                                           ? "array" : "object", f->name, f->name, f->name);
    size_t len = n < TEXT_WINDOW ? n : TEXT_WINDOW;
    bool cut = len < n || !whole;
    const char *hint = how != ST_TEXT_NAMED_BY_OPTION
                           ? "; if it is in a format shardtool reads, name it with --from"
                           : "";
    for (size_t i = 0; i < len;) {
        uint8_t c = head[i];
        if (c == 0)
            return st_error_set(err, ST_EDATA,
                                "binary data, not %s text: a NUL byte at byte offset %zu%s",
                                f->name, i, hint);
        if (how == ST_TEXT_NAMED_BY_OPTION) {
            i++;
            continue;
        }
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') ||
            c == 0x7f)
            return st_error_set(err, ST_EDATA,
                                "binary data, not %s text: control byte 0x%02x at byte offset "
                                "%zu%s", f->name, c, i, hint);
        if (how == ST_TEXT_NAMED_BY_FILE_NAME) {
            i++;
            continue;
        }
        int k = utf8_len(head + i, len - i);
        if (k < 0 && cut)
            break; /* a character cut by the window's end */
        if (k <= 0)
            return st_error_set(err, ST_EDATA,
                                "binary data, not text: byte 0x%02x at byte offset %zu is not "
                                "UTF-8 (for %s text in another encoding, name the format with "
                                "--from %s)", c, i, f->name, f->name);
        i += (size_t)k;
    }
    return ST_OK;
}
