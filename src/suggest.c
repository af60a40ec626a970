/* "Did you mean" hints: the nearest name by edit distance, else by prefix.
 * One matcher for commands, options, option values and column names. */
#include "suggest.h"

#include <string.h>

#define MAX_NAME 64

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and swaps of adjacent letters each cost one ("covnert" is one edit from
 * "convert"). */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t d[MAX_NAME + 1][MAX_NAME + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

static size_t common_prefix(const char *a, size_t la, const char *b)
{
    size_t n = 0;
    while (n < la && b[n] && a[n] == b[n])
        n++;
    return n;
}

const char *st_suggest(const char *typed, size_t len, const char *const *candidates,
                        size_t ncandidates)
{
    const char *by_distance = NULL, *by_prefix = NULL;
    size_t best_distance = (size_t)-1, best_prefix = 0;
    for (size_t i = 0; i < ncandidates; i++) {
        const char *cand = candidates[i];
        size_t lc = strlen(cand);
        if (len <= MAX_NAME && lc <= MAX_NAME) {
            size_t dist = edit_distance(typed, len, cand, lc);
            if (dist < best_distance) {
                best_distance = dist;
                by_distance = cand;
            }
        }
        size_t prefix = common_prefix(typed, len, cand);
        if (prefix > best_prefix) {
            best_prefix = prefix;
            by_prefix = cand;
        }
    }
    /* Two edits are a typo in a name of five letters or more; in a shorter
     * one they change half of it. */
    size_t allowed = len >= 5 ? 2 : 1;
    if (by_distance && best_distance <= allowed && best_distance < len)
        return by_distance;
    return best_prefix >= 2 ? by_prefix : NULL;
}
