#include "payload_settings.h"

int payload_settings_apply(const payload_settings *s, st_payload_options *po, st_error *err)
{
    *po = (st_payload_options){0};
    po->depth = s->depth;
    po->max_pixels = s->max_pixels_given ? s->max_pixels : ST_PAYLOAD_DEFAULT_MAX_PIXELS;
    if (po->max_pixels == 0)
        return st_error_set(err, ST_EUSAGE, "--max-pixels must be at least 1");
    if (!po->depth && s->max_pixels_given)
        return st_error_set(err, ST_EUSAGE, "--max-pixels needs --check-payloads (it bounds the images decoded)");
    if (!po->depth && s->skip_corrupt)
        return st_error_set(err, ST_EUSAGE, "--skip-corrupt needs --check-payloads in convert (it leaves out the "
                            "records with a bad payload; split --skip-corrupt skips damaged TFRecord records)");
    return ST_OK;
}
