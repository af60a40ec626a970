/* verify for ArrayRecord files: every block header (hash, previous_chunk,
 * next_chunk), every chunk header hash and data hash, chunk sizes and the
 * padding they imply, every simple chunk's record sizes against its
 * header and the decompressed size its values state, the footer against
 * the data chunks (count, offsets, records, sizes), and the postscript.
 * The values are not decompressed: the data hash already proves them the
 * bytes the writer hashed, as TFRecord's CRCs do without parsing Examples.
 * With --decode every chunk's values are decompressed too (a writer's
 * damaged compression under good hashes shows there) and every record is
 * parsed as an Example.  The first failure is reported with its chunk's
 * byte offset. */
#include "ar_internal.h"

#include "example.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report(st_verify_report *rep, const char *kind, uint64_t record, uint64_t offset, const char *detail)
{
    rep->ok = false;
    rep->failure_kind = kind;
    rep->failure_record = record;
    rep->failure_offset = offset;
    snprintf(rep->failure_detail, sizeof rep->failure_detail, "%.500s", detail);
}

/* A chunk whose data did not check or decode, with why. */
static void report_chunk(st_verify_report *rep, const ar_unit_chunk *ch, const st_error *why)
{
    char detail[512];
    snprintf(detail, sizeof detail, "chunk %llu: %.400s", (unsigned long long)ch->index, why->msg);
    report(rep, why->code == ST_EUNSUPPORTED ? "unsupported codec" : "bad chunk", ch->first_record, ch->offset,
           detail);
}

/* A unit's chunks [from, to) checked (with decode, decoded; checked:
 * their simple check passed as they were read); returns false after
 * reporting a failure. */
static bool check_unit(const ar_reader *a, const ar_unit *u, size_t from, size_t to, bool decode, bool checked,
                       st_verify_report *rep)
{
    /* Set by whatever fails; not cleared per chunk (a kilobyte each). */
    st_error why;
    why.code = ST_OK;
    why.msg[0] = '\0';
    for (size_t k = from; k < to; k++) {
        const ar_unit_chunk *ch = &u->chunks[k];
        if (ch->h.type == ST_RIEGELI_CHUNK_TRANSPOSED) {
            /* Intact as far as its hashes and the footer tell; its records
             * are not decoded: said beside the verdict, not as damage. */
            if (!rep->unsupported_kind) {
                rep->unsupported_kind = "unsupported chunk";
                snprintf(rep->unsupported, sizeof rep->unsupported,
                         "chunk %llu at byte offset %llu is transposed ('t'): its hashes and place in the footer "
                         "were checked, its records not decoded (shardtool reads simple chunks only)",
                         (unsigned long long)ch->index, (unsigned long long)ch->offset);
            }
            rep->records += ch->h.num_records;
            continue;
        }
        if (!decode) {
            if (!checked && st_riegeli_simple_check(ar_unit_chunk_bytes(u, ch), (size_t)ch->h.data_size, &ch->h, a->max_record * 4,
                                        &why) < 0) {
                report_chunk(rep, ch, &why);
                return false;
            }
            rep->records += ch->h.num_records;
            continue;
        }
        st_riegeli_simple s;
        if (st_riegeli_simple_decode(ar_unit_chunk_bytes(u, ch), (size_t)ch->h.data_size, &ch->h, a->max_record * 4, &s,
                                     &why) < 0) {
            report_chunk(rep, ch, &why);
            return false;
        }
        const uint8_t *p;
        size_t n;
        for (uint64_t i = 0; st_riegeli_simple_next(&s, &p, &n); i++) {
            if (st_example_check(p, n, &why) < 0) {
                char detail[512];
                snprintf(detail, sizeof detail, "record %llu in chunk %llu: %.400s",
                         (unsigned long long)(ch->first_record + i), (unsigned long long)ch->index, why.msg);
                report(rep, "not an Example", ch->first_record + i, ch->offset, detail);
                st_riegeli_simple_free(&s);
                return false;
            }
            rep->records++;
        }
        st_riegeli_simple_free(&s);
    }
    return true;
}

int st_ar_verify(st_stream *in, const st_verify_options *opt, st_verify_report *rep, st_error *err)
{
    memset(rep, 0, sizeof *rep);
    st_error ignored;
    if (st_stream_size(in, &rep->file_bytes, &ignored) != ST_OK)
        rep->file_bytes = 0;
    rep->compression = ST_COMPRESSION_NONE;
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.payload_only = true;
    ro.max_record_size = opt->max_record_size;
    /* Units of a few hundred KiB: the chunks copied into one are checked
     * while they are still in the core's cache. */
    ro.unit_bytes = (size_t)256 << 10;
    ar_reader *a = calloc(1, sizeof *a);
    if (!a) {
        st_stream_close(in);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    int rc = st_ar_reader_ops.open(a, in, &ro, err);
    /* A mapped file: the chunks are checked where they lie, not copied
     * into the unit (the unit is checked before the stream closes). */
    a->rr.in_place = rc == ST_OK && st_stream_lends_until_close(in);
    a->check_simple = !opt->decode;
    rep->ok = true;
    ar_unit unit = {0}; /* one, reused for the whole file */
    while (rc == ST_OK) {
        st_error why = {0};
        int r = st_ar_fill_unit(a, &unit, &why);
        if (r == 0)
            break;
        if (r < 0) {
            /* Damage met while the unit was being filled, past chunks whose
             * record sizes are checked only once it is whole: those, and
             * the chunks still held back, are checked first, so that the
             * first damage in file order is the one reported.  The held
             * ones may be the footer (when the damage is the postscript's),
             * so their records are not parsed as Examples. */
            if ((a->rr.fault || why.code == ST_EDATA) && !a->end_failed) {
                size_t filled = unit.count;
                if (st_ar_unit_add_held(a, &unit) < 0) {
                    rc = st_error_set(err, ST_ENOMEM, "out of memory");
                    break;
                }
                if (!check_unit(a, &unit, 0, filled, opt->decode, a->check_simple, rep) ||
                    !check_unit(a, &unit, filled, unit.count, false, false, rep))
                    break;
            }
            if (a->rr.fault)
                report(rep, a->rr.fault, a->records, a->rr.fault_offset, why.msg);
            else if (why.code == ST_EDATA)
                report(rep, a->end_failed ? AR_FAULT_FOOTER : "bad chunk", a->records,
                       a->end_failed ? a->end_offset : a->rr.pos, why.msg);
            else {
                *err = why;
                rc = r;
            }
            break;
        }
        if (a->simple_failed) {
            /* (the unit's last chunk) */
            if (check_unit(a, &unit, 0, unit.count - 1, false, true, rep))
                report_chunk(rep, &unit.chunks[unit.count - 1], &a->simple_why);
            break;
        }
        if (a->check_simple && unit.transposed == 0) {
            /* every chunk checked already: only their records counted */
            rep->records += unit.records;
            continue;
        }
        if (!check_unit(a, &unit, 0, unit.count, opt->decode, a->check_simple, rep))
            break;
    }
    st_buf_free(&unit.data);
    free(unit.chunks);
    rep->bytes = a->rr.pos;
    if (rep->file_bytes == 0)
        rep->file_bytes = a->rr.pos;
    st_ar_reader_ops.close(a);
    free(a);
    st_stream_close(in);
    return rc;
}
