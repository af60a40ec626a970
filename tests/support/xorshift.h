/* A fixed-seed xorshift64 generator for tests: the same "random" inputs on
 * every run, so a failure reproduces from its seed alone. */
#ifndef ST_TESTS_XORSHIFT_H
#define ST_TESTS_XORSHIFT_H

#include <stdint.h>

typedef struct {
    uint64_t state; /* never 0 */
} xorshift64;

static inline uint64_t xorshift64_next(xorshift64 *r)
{
    r->state ^= r->state << 13;
    r->state ^= r->state >> 7;
    r->state ^= r->state << 17;
    return r->state;
}

#endif
