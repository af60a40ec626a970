/* Credentials for S3 and GCS.
 *
 * S3: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the
 * profile AWS_PROFILE (default "default") from AWS_SHARED_CREDENTIALS_FILE or
 * ~/.aws/credentials, then AWS_CONFIG_FILE or ~/.aws/config.  Region:
 * AWS_REGION, AWS_DEFAULT_REGION, the profile's region, else us-east-1.
 * GCS: GOOGLE_OAUTH_ACCESS_TOKEN, else the first line of a token file.
 *
 * Secret values live only in these structs, are wiped when freed, and are
 * never formatted into a message: errors name the file and the profile. */
#ifndef ST_REMOTE_CREDS_H
#define ST_REMOTE_CREDS_H

#include "error.h"

#include <stdbool.h>

typedef struct st_aws_creds {
    char *access_key;  /* NULL when anonymous */
    char *secret;
    char *token;       /* session token or NULL */
    char *region;      /* never NULL after a successful load */
    char *source;      /* "environment", "~/.aws/credentials [profile]", ... (no secrets) */
} st_aws_creds;

/* Loads from the environment and files; anonymous (no keys) when none are
 * found or when no_sign is set.  Errors only for unreadable or malformed
 * files that were named explicitly, and for a named profile that is absent. */
int st_aws_creds_load(st_aws_creds *c, bool no_sign, st_error *err);
void st_aws_creds_free(st_aws_creds *c);

/* Reads "key = value" from section [section] of an INI file into *value
 * (malloc'ed).  Returns 1 found, 0 not found (or no file), negative on error. */
int st_ini_lookup(const char *path, const char *section, const char *key, char **value,
                  st_error *err);

/* GCS bearer token: GOOGLE_OAUTH_ACCESS_TOKEN, else token_file (may be NULL).
 * *token is NULL when anonymous. */
int st_gcs_token_load(const char *token_file, char **token, st_error *err);

/* Frees a secret string after overwriting it. */
void st_secret_free(char *s);

#endif
