/* JPEG: libjpeg-turbo's libjpeg API (the library jpeginfo uses), one
 * scanline at a time into a one-row buffer, so memory stays bounded by the
 * image's width whatever its height.  Any warning the library raises
 * ("Corrupt JPEG data: premature end of data segment", extraneous bytes
 * before a marker) is damage, as jpeginfo -c says it is: a lenient loader
 * would hand out a grey or smeared image.  A baseline image whose one scan
 * is proven clean by jpeg_scan.c (a fifth less CPU than libjpeg's decode)
 * is not decoded again: the proof holds only where libjpeg would say
 * nothing, and everything else is libjpeg's to judge. */
#include "payload.h"

#include "st_config.h"

#include <stdio.h>

#if ST_HAVE_LIBJPEG
#include "jpeg_scan.h"

#include <jpeglib.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* Progressive files with thousands of tiny scans cost quadratic time
 * (libjpeg-turbo's own TJFLAG_LIMITSCANS uses 500). */
#define MAX_SCANS 500

typedef struct jpeg_guard {
    struct jpeg_error_mgr pub;
    struct jpeg_progress_mgr progress;
    jmp_buf escape;
    char *why;
    size_t cap;
    bool warned;
    bool too_many_scans;
    JSAMPROW row;      /* here, not a local: set after setjmp, freed after longjmp */
} jpeg_guard;

static void on_error(j_common_ptr c)
{
    jpeg_guard *g = (jpeg_guard *)c->err;
    char msg[JMSG_LENGTH_MAX];
    c->err->format_message(c, msg);
    if (!g->warned)
        snprintf(g->why, g->cap, "%s", msg);
    longjmp(g->escape, 1);
}

/* level -1: a warning (corrupt data the library worked around); the first
 * one is kept, and decoding stops there. */
static void on_message(j_common_ptr c, int level)
{
    jpeg_guard *g = (jpeg_guard *)c->err;
    if (level >= 0)
        return; /* trace messages */
    char msg[JMSG_LENGTH_MAX];
    c->err->format_message(c, msg);
    snprintf(g->why, g->cap, "%s", msg);
    g->warned = true;
    longjmp(g->escape, 1);
}

static void on_progress(j_common_ptr c)
{
    jpeg_guard *g = (jpeg_guard *)c->err;
    j_decompress_ptr d = (j_decompress_ptr)c;
    if (d->is_decompressor && d->input_scan_number > MAX_SCANS) {
        g->too_many_scans = true;
        snprintf(g->why, g->cap, "more than %d progressive scans", MAX_SCANS);
        longjmp(g->escape, 1);
    }
}

st_payload_verdict st_payload_check_jpeg(const uint8_t *d, size_t n, const st_payload_options *opt,
                                         st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    struct jpeg_decompress_struct c;
    jpeg_guard g = {.why = why, .cap = cap};
    c.err = jpeg_std_error(&g.pub);
    g.pub.error_exit = on_error;
    g.pub.emit_message = on_message;
    volatile st_payload_verdict verdict = ST_PAYLOAD_DAMAGED;
    jpeg_create_decompress(&c);
    if (setjmp(g.escape)) {
        /* The source manager knows how far the decoder read. */
        if (c.src && n >= c.src->bytes_in_buffer)
            *where = n - c.src->bytes_in_buffer;
        goto done;
    }
    g.progress.progress_monitor = on_progress;
    c.progress = &g.progress;
    jpeg_mem_src(&c, d, (unsigned long)n);
    jpeg_read_header(&c, TRUE);
    info->width = c.image_width;
    info->height = c.image_height;
    info->channels = (uint32_t)c.num_components;
    info->bit_depth = (uint32_t)c.data_precision;
    info->frames = 1;
    if ((verdict = st_payload_pixels_allowed(opt, info, why, cap)) != ST_PAYLOAD_INTACT)
        goto done;
    verdict = ST_PAYLOAD_DAMAGED;
    if (opt->depth == ST_PAYLOAD_HEADERS) {
        verdict = ST_PAYLOAD_INTACT;
        goto done;
    }
    /* Every marker is read and every coefficient of every component is
     * entropy-decoded: that is where libjpeg finds damage (the inverse
     * DCT, upsampling and colour conversion cannot fail).  The pixels are
     * then made at 1/8 scale, in grey, as jpeginfo -c makes them: the same
     * verdict for a fraction of the work of full-size RGB. */
    c.scale_num = 1;
    c.scale_denom = 8;
    c.out_color_space = JCS_GRAYSCALE;
    c.dct_method = JDCT_IFAST;
    c.do_fancy_upsampling = FALSE;
    c.do_block_smoothing = FALSE;
    jpeg_start_decompress(&c);
    /* A baseline scan proven clean by a walk of its codes is what libjpeg
     * would accept with no warning (jpeg_scan.c); anything else, damage
     * included, is decoded by libjpeg, whose message is the one given. */
    if (st_jpeg_scan_proven_clean(&c)) {
        verdict = ST_PAYLOAD_INTACT;
        goto done;
    }
    g.row = malloc((size_t)c.output_width * (size_t)c.output_components);
    if (!g.row) {
        snprintf(why, cap, "out of memory for one row of %u pixels", c.output_width);
        goto done;
    }
    /* Skipped rows are still entropy-decoded (libjpeg-turbo decodes and
     * discards their coefficients), so every warning is still raised; only
     * the inverse DCT and the output of those rows are spared. */
    if (c.output_height > 1)
        jpeg_skip_scanlines(&c, c.output_height - 1);
    while (c.output_scanline < c.output_height)
        jpeg_read_scanlines(&c, &g.row, 1);
    jpeg_finish_decompress(&c);
    verdict = ST_PAYLOAD_INTACT;
done:
    free(g.row);
    jpeg_destroy_decompress(&c);
    return verdict;
}

#else

st_payload_verdict st_payload_check_jpeg(const uint8_t *d, size_t n, const st_payload_options *opt,
                                         st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    (void)d, (void)n, (void)opt, (void)info, (void)where;
    snprintf(why, cap, "built without libjpeg-turbo");
    return ST_PAYLOAD_UNCHECKED;
}

#endif
