/* Recomputes every hash of Riegeli/ArrayRecord files with Google's own
 * HighwayHash (Debian's libhighwayhash, C bindings), walking the layout as
 * doc/riegeli_records_file_format.md describes it, with nothing from
 * shardtool: every block header's hash (and its distances to the chunk
 * around it), every chunk header's hash and every chunk's data hash.
 *
 *   ar_highwayhash_check FILE...
 * prints "FILE: N block headers, M chunks" per file, or what is wrong and
 * exits 1. */
#include <highwayhash/c_bindings.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 65536u
#define BLOCK_HEADER 24u
#define USABLE (BLOCK - BLOCK_HEADER)

static const uint64_t key[4] = {0x2f696c6567656952ull, 0x0a7364726f636572ull, 0x2f696c6567656952ull,
                                0x0a7364726f636572ull};

static uint64_t hh(const uint8_t *p, size_t n)
{
    return HighwayHash64(key, (const char *)p, n);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* The chunk's end, from the specification's formulas. */
static uint64_t chunk_end(uint64_t begin, uint64_t data_size, uint64_t num_records)
{
    uint64_t size = 40 + data_size;
    uint64_t blocks = (size + (begin + USABLE - 1) % BLOCK) / USABLE;
    uint64_t by_content = begin + size + blocks * BLOCK_HEADER;
    uint64_t p = begin + num_records;
    uint64_t rem = (BLOCK - p % BLOCK) % BLOCK;
    uint64_t by_records = p + (rem > USABLE - 1 ? rem - (USABLE - 1) : 0);
    return by_content > by_records ? by_content : by_records;
}

static int check_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(size ? (size_t)size : 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        fclose(f);
        return 1;
    }
    fclose(f);
    uint8_t *content = malloc((size_t)size + 64);
    uint64_t pos = 0, blocks = 0, chunks = 0;
    while (pos < (uint64_t)size) {
        uint64_t begin = pos, got = 0, want = 40, end = 0;
        uint64_t seen[4096];
        size_t nseen = 0;
        int stage = 0; /* 0 header, 1 data, 2 padding */
        while (stage < 3) {
            if (stage == 2 && pos >= end)
                break;
            if (pos % BLOCK == 0) {
                if (pos + BLOCK_HEADER > (uint64_t)size) {
                    fprintf(stderr, "%s: truncated block header at %llu\n", path, (unsigned long long)pos);
                    goto bad;
                }
                if (hh(buf + pos + 8, 16) != le64(buf + pos)) {
                    fprintf(stderr, "%s: block header hash wrong at %llu\n", path, (unsigned long long)pos);
                    goto bad;
                }
                if (nseen < 4096)
                    seen[nseen++] = pos;
                blocks++;
                pos += BLOCK_HEADER;
            }
            uint64_t room = BLOCK - pos % BLOCK;
            uint64_t k = stage == 2 ? end - pos : want - got;
            if (k > room)
                k = room;
            if (pos + k > (uint64_t)size) {
                fprintf(stderr, "%s: truncated chunk at %llu\n", path, (unsigned long long)begin);
                goto bad;
            }
            if (stage < 2)
                memcpy(content + got, buf + pos, (size_t)k);
            got += k;
            pos += k;
            if (stage == 0 && got == 40) {
                if (hh(content + 8, 32) != le64(content)) {
                    fprintf(stderr, "%s: chunk header hash wrong at %llu\n", path, (unsigned long long)begin);
                    goto bad;
                }
                uint64_t data_size = le64(content + 8);
                if (data_size > (uint64_t)size) {
                    fprintf(stderr, "%s: chunk at %llu: data_size too large\n", path, (unsigned long long)begin);
                    goto bad;
                }
                end = chunk_end(begin, data_size, le64(content + 24) >> 8);
                want = 40 + data_size;
                stage = 1;
            }
            if (stage == 1 && got == want) {
                if (hh(content + 40, (size_t)(want - 40)) != le64(content + 16)) {
                    fprintf(stderr, "%s: data hash wrong in the chunk at %llu\n", path, (unsigned long long)begin);
                    goto bad;
                }
                stage = 2;
            }
        }
        for (size_t i = 0; i < nseen; i++) {
            uint64_t at = seen[i];
            if (le64(buf + at + 8) != at - begin || le64(buf + at + 16) != end - at) {
                fprintf(stderr, "%s: block header at %llu does not name the chunk %llu..%llu\n", path,
                        (unsigned long long)at, (unsigned long long)begin, (unsigned long long)end);
                goto bad;
            }
        }
        chunks++;
        pos = end;
    }
    printf("%s: %llu block headers, %llu chunks\n", path, (unsigned long long)blocks, (unsigned long long)chunks);
    free(buf);
    free(content);
    return 0;
bad:
    free(buf);
    free(content);
    return 1;
}

int main(int argc, char **argv)
{
    int bad = 0;
    for (int i = 1; i < argc; i++)
        bad |= check_file(argv[i]);
    return bad;
}
