/* convert --tfds DIR --name NAME --split SPLIT [--version X.Y.Z] [--image
 * COL,...] [--label COL=NAMES|N]: the options of a prepared TFDS
 * directory (tfds_dir.h) checked and turned into the run's output target,
 * refusing what does not go with them.  One place for the command line
 * (cli/output_tfds.c) and shardtool_convert, so that both refuse the same
 * combinations with the same words.  Nothing here prints. */
#ifndef ST_TFDS_SETTINGS_H
#define ST_TFDS_SETTINGS_H

#include "output_run.h"

#include "../formats/format.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct tfds_settings {
    const char *dir;                /* --tfds DIR, or NULL: no TFDS directory */
    const char *name;               /* --name, or NULL */
    const char *split;              /* --split, or NULL */
    const char *version;            /* --version, or NULL: 1.0.0 */
    const char *const *images;      /* --image COL,... */
    size_t nimages;
    const char *const *labels;      /* --label COL=NAMES.txt or COL=N */
    size_t nlabels;
    bool output_given;              /* -o PREFIX was given too */
    bool compression_given;         /* --compression (whole-file) was given */
} tfds_settings;

/* Without dir: ST_EUSAGE when another of these options is given, else
 * ST_OK with out untouched.  With it: fills out->tfds (malloc'd, freed
 * by output_run_free) and the TFDS naming of the shards, reading the
 * --label files and checking an existing dataset_info.json (another
 * format or version is refused before anything is read); ST_EUSAGE with
 * why, or ST_ENOMEM. */
int tfds_settings_apply(const tfds_settings *s, const st_format *format, output_run *out, st_error *err);

#endif
