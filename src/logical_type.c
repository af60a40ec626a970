/* Names and comparison of st_logical (record.h): what a typed input said a
 * column is, named as a Parquet user reads it. */
#include "record.h"

#include <stdio.h>

static const char *unit_name(int unit)
{
    switch (unit) {
    case ST_UNIT_MILLIS: return "MILLIS";
    case ST_UNIT_MICROS: return "MICROS";
    case ST_UNIT_NANOS: return "NANOS";
    default: return "?";
    }
}

const char *st_logical_name(const st_logical *l, char *out, size_t cap)
{
    if (!cap)
        return out;
    switch (l->type) {
    case ST_LOGICAL_BINARY: snprintf(out, cap, "BINARY"); break;
    case ST_LOGICAL_STRING: snprintf(out, cap, "STRING"); break;
    case ST_LOGICAL_ENUM: snprintf(out, cap, "ENUM"); break;
    case ST_LOGICAL_JSON: snprintf(out, cap, "JSON"); break;
    case ST_LOGICAL_BSON: snprintf(out, cap, "BSON"); break;
    case ST_LOGICAL_DATE: snprintf(out, cap, "DATE"); break;
    case ST_LOGICAL_TIME:
        snprintf(out, cap, "TIME(%s%s)", unit_name(l->unit), l->utc ? ", UTC" : "");
        break;
    case ST_LOGICAL_TIMESTAMP:
        snprintf(out, cap, "TIMESTAMP(%s%s)", unit_name(l->unit), l->utc ? ", UTC" : "");
        break;
    case ST_LOGICAL_INTEGER:
        snprintf(out, cap, "%sINT_%d", l->is_signed ? "" : "U", (int)l->bits);
        break;
    case ST_LOGICAL_DECIMAL: snprintf(out, cap, "DECIMAL(%d,%d)", (int)l->precision, (int)l->scale); break;
    case ST_LOGICAL_UUID: snprintf(out, cap, "UUID"); break;
    case ST_LOGICAL_INTERVAL: snprintf(out, cap, "INTERVAL"); break;
    case ST_LOGICAL_DURATION: snprintf(out, cap, "duration"); break;
    case ST_LOGICAL_FLOAT16: snprintf(out, cap, "FLOAT16"); break;
    case ST_LOGICAL_DOUBLE: snprintf(out, cap, "DOUBLE"); break;
    case ST_LOGICAL_BOOLEAN: snprintf(out, cap, "BOOLEAN"); break;
    case ST_LOGICAL_INT96: snprintf(out, cap, "INT96"); break;
    case ST_LOGICAL_FIXED: snprintf(out, cap, "FIXED_LEN_BYTE_ARRAY(%d)", (int)l->precision); break;
    default: out[0] = '\0'; break;
    }
    return out;
}

bool st_logical_equal(const st_logical *a, const st_logical *b)
{
    return a->type == b->type && a->unit == b->unit && a->bits == b->bits && a->is_signed == b->is_signed &&
           a->utc == b->utc && a->precision == b->precision && a->scale == b->scale;
}
