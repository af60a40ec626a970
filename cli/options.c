/* Parsing command lines against a command's option tables, and --help. */
#include "cli.h"
#include "hints.h"
#include "suggest.h"
#include "progress.h"
#include "../lib/error_text.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../src/shard.h"

static size_t count_options(const cli_command *cmd)
{
    size_t n = 0;
    for (const cli_option *const *g = cmd->groups; *g; g++)
        for (const cli_option *o = *g; o->name; o++)
            n++;
    return n;
}

static cli_value *find_long(cli_values *v, const char *name, size_t len)
{
    for (size_t i = 0; i < v->count; i++)
        if (strlen(v->values[i].option->name) == len &&
            strncmp(v->values[i].option->name, name, len) == 0)
            return &v->values[i];
    return NULL;
}

static cli_value *find_short(cli_values *v, char c)
{
    for (size_t i = 0; i < v->count; i++)
        if (v->values[i].option->short_name == c)
            return &v->values[i];
    return NULL;
}

/* The closest long option, for "did you mean" hints. */
static const char *closest(const cli_values *v, const char *name, size_t len)
{
    const char *names[256];
    size_t n = 0;
    for (size_t i = 0; i < v->count && n < sizeof names / sizeof *names; i++)
        names[n++] = v->values[i].option->name;
    return cli_suggest(name, len, names, n);
}

static int add_list_values(cli_value *val, const char *text)
{
    /* Commas separate values so "--columns a,b" equals "--columns a --columns b". */
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char **list = realloc(val->list, (val->nlist + 2) * sizeof *list);
        if (!list)
            return -1;
        val->list = list;
        list[val->nlist] = strndup(p, len);
        if (!list[val->nlist])
            return -1;
        list[++val->nlist] = NULL;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* Choices are matched in any case (TensorFlow spells compression GZIP and
 * ZLIB); *canonical becomes the table's spelling, so that the commands
 * compare with one spelling only. */
static int check_choice(const cli_command *cmd, const cli_value *val, const char *text,
                        const char **canonical)
{
    const char *const *c = val->option->choices;
    *canonical = text;
    if (!c)
        return EXIT_OK;
    for (; *c; c++) {
        if (strcasecmp(*c, text) == 0) {
            *canonical = *c;
            return EXIT_OK;
        }
    }
    char allowed[512] = "";
    for (c = val->option->choices; *c; c++) {
        strncat(allowed, *c, sizeof allowed - strlen(allowed) - 1);
        if (c[1])
            strncat(allowed, ", ", sizeof allowed - strlen(allowed) - 1);
    }
    size_t nchoices = (size_t)(c - val->option->choices);
    const char *near = cli_suggest(text, strlen(text), val->option->choices, nchoices);
    if (near)
        return cli_usage_error(cmd, "--%s: '%s' is not one of: %s (did you mean %s?)",
                               val->option->name, text, allowed, near);
    return cli_usage_error(cmd, "--%s: '%s' is not one of: %s", val->option->name, text, allowed);
}

static int set_value(const cli_command *cmd, cli_value *val, const char *text)
{
    val->set = true;
    if (val->option->arg == ARG_NONE)
        return EXIT_OK;
    if (val->option->arg == ARG_OPTIONAL && !text)
        return EXIT_OK;
    int rc = check_choice(cmd, val, text, &text);
    if (rc)
        return rc;
    if (val->option->arg == ARG_TEXT || val->option->arg == ARG_OPTIONAL) {
        val->text = text;
        return EXIT_OK;
    }
    if (add_list_values(val, text)) {
        cli_error(cmd, "out of memory");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_values *v, bool *help)
{
    memset(v, 0, sizeof *v);
    *help = false;
    v->count = count_options(cmd);
    v->values = calloc(v->count ? v->count : 1, sizeof *v->values);
    v->positional = calloc((size_t)argc + 1, sizeof *v->positional);
    if (!v->values || !v->positional) {
        cli_error(cmd, "out of memory");
        return EXIT_USAGE;
    }
    size_t k = 0;
    for (const cli_option *const *g = cmd->groups; *g; g++)
        for (const cli_option *o = *g; o->name; o++)
            v->values[k++].option = o;

    bool options_done = false;
    for (int i = 0; i < argc; i++) {
        char *arg = argv[i];
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            v->positional[v->npositional++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = true;
            return EXIT_OK;
        }
        cli_value *val;
        const char *inline_value = NULL;
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            val = find_long(v, name, len);
            if (!val && len == 4 && strncmp(name, "json", 4) == 0)
                /* stat, verify and version take --json; say what the others give instead */
                return cli_usage_error(cmd, "unknown option '--json' (%s)",
                                       strcmp(cmd->name, "cat") == 0
                                           ? "cat writes JSON lines by default: --format json"
                                           : "the run's report in JSON is its manifest, PREFIX.manifest.json");
            if (!val) {
                const char *hint = closest(v, name, len);
                if (hint)
                    return cli_usage_error(cmd, "unknown option '%.*s' (did you mean --%s?)",
                                           (int)(len + 2), arg, hint);
                return cli_usage_error(cmd, "unknown option '%.*s'", (int)(len + 2), arg);
            }
            if (eq)
                inline_value = eq + 1;
        } else {
            /* A long option given one dash ("-force", "-shards 4") would read
             * as -f with the value "orce" or -s with "hards", or as an
             * unknown -d: name the option meant instead. */
            const char *name = arg + 1;
            size_t len = strcspn(name, "=");
            if (len > 1 && find_long(v, name, len))
                return cli_usage_error(cmd, "unknown option '%.*s' (long options take two dashes: --%.*s)",
                                       (int)(len + 1), arg, (int)len, name);
            val = find_short(v, arg[1]);
            if (!val) {
                const char *hint = len > 1 ? closest(v, name, len) : NULL;
                if (hint)
                    return cli_usage_error(cmd, "unknown option '%.*s' (did you mean --%s?)",
                                           (int)(len + 1), arg, hint);
                return cli_usage_error(cmd, "unknown option '-%c'", arg[1]);
            }
            /* Flags group as getopt groups them: -qf is -q -f, and the first
             * option of the group that takes a value takes the rest (-qn3). */
            const char *p = arg + 1;
            while (val->option->arg == ARG_NONE && p[1]) {
                val->via_short = true;
                set_value(cmd, val, NULL);
                val = find_short(v, *++p);
                if (!val)
                    return cli_usage_error(cmd, "unknown option '-%c' (in '%s')", *p, arg);
            }
            if (p[1])
                inline_value = p + 1;
        }
        val->via_short = arg[1] != '-';
        if (val->option->arg == ARG_NONE) {
            if (inline_value)
                return cli_usage_error(cmd, "--%s takes no value", val->option->name);
            set_value(cmd, val, NULL);
            continue;
        }
        if (val->option->arg == ARG_OPTIONAL) {
            if (inline_value && arg[1] != '-')
                return cli_usage_error(cmd, "--%s takes its value after '=' only", val->option->name);
            int rc = set_value(cmd, val, inline_value);
            if (rc)
                return rc;
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= argc)
                return cli_usage_error(cmd, "--%s needs a value (%s)", val->option->name,
                                       val->option->metavar ? val->option->metavar : "VALUE");
            inline_value = argv[++i];
        }
        int rc = set_value(cmd, val, inline_value);
        if (rc)
            return rc;
    }
    return EXIT_OK;
}

void cli_values_free(cli_values *v)
{
    for (size_t i = 0; i < v->count; i++) {
        for (size_t j = 0; j < v->values[i].nlist; j++)
            free(v->values[i].list[j]);
        free(v->values[i].list);
    }
    free(v->values);
    free(v->positional);
    memset(v, 0, sizeof *v);
}

static const cli_value *lookup(const cli_values *v, const char *name)
{
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->values[i].option->name, name) == 0)
            return &v->values[i];
    return NULL;
}

bool cli_has(const cli_values *v, const char *name)
{
    const cli_value *val = lookup(v, name);
    return val && val->set;
}

bool cli_given_short(const cli_values *v, const char *name)
{
    const cli_value *val = lookup(v, name);
    return val && val->set && val->via_short;
}

const char *cli_text(const cli_values *v, const char *name, const char *fallback)
{
    const cli_value *val = lookup(v, name);
    return val && val->set && val->text ? val->text : fallback;
}

const char *const *cli_list(const cli_values *v, const char *name, size_t *n)
{
    const cli_value *val = lookup(v, name);
    *n = val ? val->nlist : 0;
    return val && val->nlist ? (const char *const *)val->list : NULL;
}

int cli_uint(const cli_values *v, const cli_command *cmd, const char *name,
             uint64_t fallback, uint64_t *out)
{
    const char *text = cli_text(v, name, NULL);
    if (!text) {
        *out = fallback;
        return EXIT_OK;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    if (errno == ERANGE && end != text && !*end && text[0] != '-')
        return cli_usage_error(cmd, "--%s: '%s' is too large (at most %llu)", name, text, ULLONG_MAX);
    if (errno || end == text || *end || text[0] == '-')
        return cli_usage_error(cmd, "--%s: '%s' is not a non-negative integer", name, text);
    *out = n;
    return EXIT_OK;
}

int cli_size(const cli_values *v, const cli_command *cmd, const char *name,
             uint64_t fallback, uint64_t *out)
{
    const char *text = cli_text(v, name, NULL);
    if (!text) {
        *out = fallback;
        return EXIT_OK;
    }
    if (st_parse_size(text, out) != ST_OK)
        return cli_usage_error(cmd, "--%s: '%s' is not a size (e.g. 256MiB, 1G, 500000)", name, text);
    return EXIT_OK;
}

/* The width help is wrapped to: the terminal's, else $COLUMNS, else 80;
 * never below 60, which leaves the descriptions 30 columns. */
static size_t help_width(void)
{
    long width = 0;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        width = ws.ws_col;
    const char *columns = getenv("COLUMNS");
    if (width == 0 && columns)
        width = strtol(columns, NULL, 10);
    if (width <= 0)
        width = 80;
    return width < 60 ? 60 : (size_t)width;
}

/* Prints `text` from column `col` (where the cursor already is), breaking
 * at spaces so that no line passes `width`; continuation lines start at
 * column `indent` (a hanging indent).  A word longer than a line is
 * printed whole. */
static void print_wrapped(const char *text, size_t col, size_t indent, size_t width)
{
    const char *p = text;
    while (*p) {
        size_t room = width > col ? width - col : 0;
        size_t len = strlen(p);
        if (len <= room) {
            fputs(p, stdout);
            break;
        }
        size_t cut = room;
        while (cut > 0 && p[cut] != ' ')
            cut--;
        if (cut == 0) {  /* one long word: print it whole */
            cut = strcspn(p, " ");
            if (!p[cut]) {
                fputs(p, stdout);
                break;
            }
        }
        printf("%.*s\n%*s", (int)cut, p, (int)indent, "");
        p += cut;
        while (*p == ' ')
            p++;
        col = indent;
    }
    putchar('\n');
}

void cli_print_help(const cli_command *cmd)
{
    size_t width = help_width();
    enum { LEFT = 26, DESC_COL = 2 + LEFT + 2 };
    char line[1024];
    int used = snprintf(line, sizeof line, "Usage: shardtool %s ", cmd->name);
    fputs(line, stdout);
    print_wrapped(cmd->usage, (size_t)used, 4, width);
    putchar('\n');
    print_wrapped(cmd->summary, 0, 0, width);
    if (cmd->description) {
        /* Paragraphs are reflowed to the width: the line breaks in the
         * source text are only where 80 columns would end them. */
        const char *p = cmd->description;
        while (*p) {
            const char *end = strstr(p, "\n\n");
            size_t len = end ? (size_t)(end - p) : strlen(p);
            char *para = strndup(p, len);
            if (!para)
                break;
            for (char *c = para; *c; c++)
                if (*c == '\n')
                    *c = ' ';
            putchar('\n');
            print_wrapped(para, 0, 0, width);
            free(para);
            p += len;
            while (*p == '\n')
                p++;
        }
    }
    printf("\nOptions:\n");
    for (const cli_option *const *g = cmd->groups; *g; g++) {
        for (const cli_option *o = *g; o->name; o++) {
            char left[64];
            const char *space = o->metavar && o->arg != ARG_OPTIONAL ? " " : "";
            if (o->short_name)
                snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, space,
                         o->metavar ? o->metavar : "");
            else
                snprintf(left, sizeof left, "    --%s%s%s", o->name, space, o->metavar ? o->metavar : "");
            if (strlen(left) > LEFT)
                printf("  %s\n  %-*s  ", left, LEFT, "");
            else
                printf("  %-*s  ", LEFT, left);
            print_wrapped(o->help, DESC_COL, DESC_COL, width);
        }
    }
    printf("  %-*s  %s\n", LEFT, "-h, --help", "show this help");
    printf("\nSee shardtool-%s(1) for details.\n", cmd->name);
}

static void vreport(const cli_command *cmd, const char *fmt, va_list ap)
{
    /* Messages quote URLs as given: their passwords, signatures and
     * tokens are masked here, for every message at once. */
    char msg[4096];
    vsnprintf(msg, sizeof msg, fmt, ap);
    st_text_redact_urls(msg, sizeof msg);
    /* A message starts on its own line, never after a progress line. */
    cli_progress_break_line();
    if (strstr(msg, "interrupted"))
        cli_said_interrupted = true;
    fprintf(stderr, "shardtool%s%s: %s\n", cmd ? " " : "", cmd ? cmd->name : "", msg);
}

void cli_error(const cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, fmt, ap);
    va_end(ap);
}

void cli_error_at(const cli_command *cmd, const char *path, const st_error *err)
{
    char text[4096];
    st_error_text(path, err, text, sizeof text);
    cli_error(cmd, "%s", text);
    cli_hint_for(cmd, err);
    cli_hint_side_file(cmd, path, err);
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'shardtool %s%s--help' for more information.\n", cmd ? cmd->name : "",
            cmd ? " " : "");
    return EXIT_USAGE;
}

int cli_exit_for_input(int code)
{
    switch (code) {
    case ST_OK:
        return EXIT_OK;
    case ST_EDATA:          /* the bytes are there but damaged */
    case ST_EUNSUPPORTED:   /* as convert says of a value it cannot convert */
    case ST_ENOMEM:
    case ST_ECANCELED:      /* an interrupt is a stopped run, not a bad input */
        return EXIT_DAMAGED;
    default:                /* missing, unreadable, refused by a server, misused */
        return EXIT_USAGE;
    }
}

int cli_exit_for(int code)
{
    switch (code) {
    case ST_OK:
        return EXIT_OK;
    case ST_EUSAGE:
    case ST_ENOTFOUND:
    case ST_EUNREACHABLE:   /* like a missing file: the input is not there to read */
    case ST_EEXIST:
        return EXIT_USAGE;
    default:
        return EXIT_DAMAGED;
    }
}
