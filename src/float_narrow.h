/* Float narrowing: does a value change in a way a reader would notice when
 * it is narrowed to float32?
 *
 * The rule is the one CSV and JSON text follow (see formats/csv/csv.h): a
 * value counts as changed when its float32 is not exactly it AND printing
 * the float32 with as many significant digits as the value's own shortest
 * decimal text has (at most 9; a value that needs more is always changed)
 * does not give that text back.  For a binary double (Avro, Parquet) the
 * "text" is its shortest round-trip decimal, as Python's repr prints it:
 * 0.1, 1e30, 123456.0 and 41.98 do not change; 3.141592653589793 (becomes
 * 3.1415927), 16777217.0 (16777216), 17031832200.0 (17031832576) and 1e39
 * (overflow) do.  NaN and infinities never change. */
#ifndef ST_FLOAT_NARROW_H
#define ST_FLOAT_NARROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool st_double_narrow_changes(double d);
bool st_int64_narrow_changes(int64_t v);

/* The same over n doubles at once, as a Parquet page stores them (little
 * endian, any alignment): out[i] = (float)d[i] and changed[i] =
 * st_double_narrow_changes(d[i]) (0 or 1).  On CPUs with AVX-512 eight
 * values are decided at a time, with AVX2 four; the values the vector steps cannot settle
 * exactly as the one-at-a-time rule would (far exponents, ties in the
 * float's digits) go to it, so the answers are the same bit for bit. */
void st_double_narrow_bulk(const void *src, size_t n, float *out, uint8_t *changed);
/* One implementation by name ("avx512", "avx2", "scalar"), for tests that check
 * every path this CPU can run; false (nothing written) when it cannot run
 * that one. */
bool st_double_narrow_bulk_with(const char *impl, const void *src, size_t n, float *out, uint8_t *changed);

/* What a value became, for messages: whole numbers in full (17031832576),
 * others as the shortest text of the float32 (3.1415927). */
void st_format_narrowed(char *out, size_t cap, float f);

#endif
