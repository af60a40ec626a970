/* Fuzz target for the payload path (verify --payloads, convert
 * --check-payloads, stat): every decoder behind st_payload_check, and the
 * record walk and tally of lib/payload_check.c.  The seed corpus
 * (corpus/payload) holds small real images and audio made by ImageMagick,
 * cwebp, img2webp, sox and flac, and damaged ones.
 *
 * Properties checked on every input (abort() on violation):
 *   - the kind sniffed is the kind reported;
 *   - anything but INTACT comes with a message, and an offset inside the
 *     value when one is given;
 *   - what a full check accepts, the headers-only check accepts too, with
 *     the same dimensions, channels and sample rate;
 *   - a record holding the value twice counts two payloads, and as many bad
 *     values as the full check says (0 or 2); merging the tally into an
 *     empty one keeps every count and failure.
 * The pixel limit is low (2^22) so that a fuzzer's huge headers are refused
 * unread, as --max-pixels refuses them. */
#include "payload.h"
#include "../../lib/payload_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_payload: %s\n", what);
    abort();
}

static st_payload_verdict check(const uint8_t *data, size_t size, st_payload_depth depth, st_payload_info *info)
{
    st_payload_options opt = {.depth = depth, .max_pixels = (uint64_t)1 << 22};
    char why[512];
    uint64_t where;
    st_payload_verdict v = st_payload_check(data, size, &opt, info, why, sizeof why, &where);
    if (v > ST_PAYLOAD_UNCHECKED)
        fail("verdict out of range");
    if (info->kind != st_payload_sniff(data, size))
        fail("reported kind is not the sniffed kind");
    if (v != ST_PAYLOAD_INTACT && !why[0])
        fail("a verdict without a message");
    if (where != UINT64_MAX && where > size)
        fail("an offset past the value");
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    st_payload_info full, head;
    st_payload_verdict vf = check(data, size, ST_PAYLOAD_FULL, &full);
    st_payload_verdict vh = check(data, size, ST_PAYLOAD_HEADERS, &head);
    if (vf == ST_PAYLOAD_INTACT) {
        if (vh != ST_PAYLOAD_INTACT)
            fail("intact when decoded, bad by its header");
        if (full.width != head.width || full.height != head.height || full.channels != head.channels ||
            full.sample_rate != head.sample_rate)
            fail("the header says another size than the full check");
    }

    st_bytes values[2] = {{data, size}, {data, size}};
    st_feature f = {.name = {(const uint8_t *)"image.jpg", 9}, .kind = ST_KIND_BYTES, .count = 2};
    f.v.bytes = values;
    st_record rec = {.features = &f, .nfeatures = 1};
    st_payload_options opt = {.depth = ST_PAYLOAD_FULL, .max_pixels = (uint64_t)1 << 22};
    payload_tally t, merged;
    payload_tally_init(&t);
    payload_tally_init(&merged);
    int bad = payload_check_record(&opt, &rec, 7, &t);
    if (bad < 0)
        fail("out of memory");
    bool is_payload = size > 0 && st_payload_sniff(data, size) != ST_PAYLOAD_NONE;
    int want_bad = is_payload && (vf == ST_PAYLOAD_DAMAGED || vf == ST_PAYLOAD_TOO_LARGE) ? 2 : 0;
    if (bad != want_bad || t.bad != (uint64_t)want_bad || t.payloads != (is_payload ? 2u : 0u))
        fail("the record walk disagrees with the check");
    if (payload_tally_merge(&merged, &t) < 0)
        fail("out of memory merging");
    if (merged.bad != t.bad || merged.payloads != t.payloads || merged.nfailures != t.nfailures)
        fail("a merge lost counts");
    for (size_t i = 0; i < merged.nfailures; i++) {
        char text[4096];
        payload_failure_text(&merged.failures[i], text, sizeof text);
        if (merged.failures[i].at.record != 7 || !strstr(text, "image.jpg"))
            fail("a failure lost its place");
    }
    char summary[512];
    payload_tally_summary(&merged, summary, sizeof summary);
    payload_tally_free(&t);
    payload_tally_free(&merged);
    return 0;
}
