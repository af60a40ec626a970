#include "creds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_secret_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void st_aws_creds_free(st_aws_creds *c)
{
    free(c->access_key);
    st_secret_free(c->secret);
    st_secret_free(c->token);
    free(c->region);
    free(c->source);
    memset(c, 0, sizeof *c);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

int st_ini_lookup(const char *path, const char *section, const char *key, char **value,
                  st_error *err)
{
    *value = NULL;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        return st_error_errno(err, errno, "%s", path);
    }
    char line[8192];
    int in_section = 0, found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *s = trim(line);
        if (*s == '#' || *s == ';' || *s == '\0')
            continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (!end)
                continue;
            *end = '\0';
            in_section = strcmp(trim(s + 1), section) == 0;
            continue;
        }
        if (!in_section)
            continue;
        char *eq = strchr(s, '=');
        if (!eq)
            continue;
        *eq = '\0';
        if (strcmp(trim(s), key) != 0)
            continue;
        *value = strdup(trim(eq + 1));
        found = *value ? 1 : ST_ENOMEM;
    }
    /* A directory opens but cannot be read: say so instead of taking it
     * for an empty file. */
    int read_errno = ferror(f) ? (errno ? errno : EIO) : 0;
    /* The line buffer may have held a secret. */
    explicit_bzero(line, sizeof line);
    fclose(f);
    if (found != ST_ENOMEM && read_errno) {
        free(*value);
        *value = NULL;
        return st_error_errno(err, read_errno, "%s", path);
    }
    if (found == ST_ENOMEM)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return found;
}

static char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? strdup(v) : NULL;
}

static char *home_path(const char *env_name, const char *rel)
{
    const char *explicit_path = getenv(env_name);
    if (explicit_path && *explicit_path)
        return strdup(explicit_path);
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    size_t n = strlen(home) + strlen(rel) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", home, rel);
    return p;
}

/* Looks the three keys up in one file/section; 1 when a key pair was found. */
static int keys_from(const char *path, const char *section, st_aws_creds *c, st_error *err)
{
    char *id = NULL, *secret = NULL, *token = NULL;
    int rc = st_ini_lookup(path, section, "aws_access_key_id", &id, err);
    if (rc == 1)
        rc = st_ini_lookup(path, section, "aws_secret_access_key", &secret, err);
    if (rc == 1 && st_ini_lookup(path, section, "aws_session_token", &token, err) < 0)
        rc = err->code;
    if (rc == 1) {
        c->access_key = id;
        c->secret = secret;
        c->token = token;
        return 1;
    }
    free(id);
    st_secret_free(secret);
    st_secret_free(token);
    return rc;
}

static int set_source(st_aws_creds *c, const char *what, const char *profile)
{
    size_t n = strlen(what) + strlen(profile) + 16;
    c->source = malloc(n);
    if (!c->source)
        return ST_ENOMEM;
    snprintf(c->source, n, "%s [%s]", what, profile);
    return ST_OK;
}

/* A settings file that exists but cannot be read or parsed: the message
 * names it (st_ini_lookup starts with the path) and says the way out. */
static int file_failed(st_error *err, const char *env_name)
{
    if (err->code == ST_ENOMEM)
        return err->code;
    char what[sizeof err->msg];
    snprintf(what, sizeof what, "%s", err->msg);
    return st_error_set(err, ST_EUSAGE,
                        "cannot read AWS settings: %.700s (s3:// addresses need it readable: "
                        "fix or remove it, or set %s to another file)",
                        what, env_name);
}

int st_aws_creds_load(st_aws_creds *c, bool no_sign, st_error *err)
{
    memset(c, 0, sizeof *c);
    int rc = ST_OK;
    const char *profile_env = getenv("AWS_PROFILE");
    bool profile_named = profile_env && *profile_env;
    const char *profile = profile_named ? profile_env : "default";
    char *cred_file = home_path("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
    char *conf_file = home_path("AWS_CONFIG_FILE", ".aws/config");
    /* ~/.aws/config names sections "profile NAME", except "default". */
    char conf_section[512];
    if (strcmp(profile, "default") == 0)
        snprintf(conf_section, sizeof conf_section, "default");
    else
        snprintf(conf_section, sizeof conf_section, "profile %s", profile);

    c->region = env_nonempty("AWS_REGION");
    if (!c->region)
        c->region = env_nonempty("AWS_DEFAULT_REGION");
    if (!c->region && conf_file) {
        rc = st_ini_lookup(conf_file, conf_section, "region", &c->region, err);
        rc = rc < 0 ? file_failed(err, "AWS_CONFIG_FILE") : ST_OK;
    }
    if (rc == ST_OK && !c->region && !(c->region = strdup("us-east-1")))
        rc = st_error_set(err, ST_ENOMEM, "out of memory");

    if (rc == ST_OK && !no_sign) {
        char *id = env_nonempty("AWS_ACCESS_KEY_ID");
        char *secret = env_nonempty("AWS_SECRET_ACCESS_KEY");
        if (id && secret) {
            c->access_key = id;
            c->secret = secret;
            c->token = env_nonempty("AWS_SESSION_TOKEN");
            c->source = strdup("environment (AWS_ACCESS_KEY_ID)");
        } else {
            free(id);
            st_secret_free(secret);
            int found = cred_file ? keys_from(cred_file, profile, c, err) : 0;
            if (found == 1)
                rc = set_source(c, cred_file, profile);
            else if (found < 0)
                rc = file_failed(err, "AWS_SHARED_CREDENTIALS_FILE");
            if (rc == ST_OK && found == 0 && conf_file) {
                found = keys_from(conf_file, conf_section, c, err);
                if (found == 1)
                    rc = set_source(c, conf_file, conf_section);
                else if (found < 0)
                    rc = file_failed(err, "AWS_CONFIG_FILE");
            }
            if (rc == ST_OK && found == 0 && profile_named)
                rc = st_error_set(err, ST_EUSAGE,
                                  "AWS profile '%s' (AWS_PROFILE) has no aws_access_key_id/"
                                  "aws_secret_access_key in %s or %s",
                                  profile, cred_file ? cred_file : "~/.aws/credentials",
                                  conf_file ? conf_file : "~/.aws/config");
        }
    }
    if (rc == ST_OK && !c->source)
        c->source = strdup(no_sign ? "anonymous (no-sign-request)" : "anonymous (no credentials found)");
    free(cred_file);
    free(conf_file);
    if (rc)
        st_aws_creds_free(c);
    return rc;
}

int st_gcs_token_load(const char *token_file, char **token, st_error *err)
{
    *token = env_nonempty("GOOGLE_OAUTH_ACCESS_TOKEN");
    if (*token || !token_file || !*token_file)
        return ST_OK;
    FILE *f = fopen(token_file, "r");
    if (!f)
        return st_error_errno(err, errno, "GCS token file %s", token_file);
    char line[8192];
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    if (got) {
        char *t = trim(line);
        if (*t)
            *token = strdup(t);
    }
    explicit_bzero(line, sizeof line);
    if (!*token)
        return st_error_set(err, ST_EUSAGE, "GCS token file %s is empty", token_file);
    return ST_OK;
}
