/* Test helper for tests/interop/example_interop.py: decodes payloads that
 * an independent encoder (python3-protobuf) wrote, and re-encodes them for
 * the independent decoder to read back.
 *
 * Input and output files are sequences of records, each a little-endian
 * uint32 length followed by that many bytes.
 *
 *   example_dump json IN          one JSON line per record (st_record_to_json),
 *                                 or {"error": "..."} when it does not decode
 *   example_dump reencode IN OUT  decodes each record and writes
 *                                 st_example_encode's bytes to OUT
 *
 * Both modes also check that st_example_check agrees with the decoder and
 * that st_example_encoded_size matches what the encoder wrote; a
 * disagreement is exit status 1. */
#include "example.h"
#include "json.h"
#include "record_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    st_buf b = {0};
    uint8_t chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (st_buf_append(&b, chunk, n)) {
            fclose(f);
            st_buf_free(&b);
            return NULL;
        }
    }
    fclose(f);
    *len = b.len;
    return b.data ? b.data : calloc(1, 1);
}

static int put_u32(FILE *f, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return fwrite(b, 1, 4, f) == 4 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "json") != 0 && strcmp(argv[1], "reencode") != 0) ||
        (strcmp(argv[1], "reencode") == 0 && argc < 4)) {
        fprintf(stderr, "usage: %s json IN | reencode IN OUT\n", argv[0]);
        return 2;
    }
    bool reencode = strcmp(argv[1], "reencode") == 0;
    size_t len = 0;
    uint8_t *data = read_all(argv[2], &len);
    if (!data)
        return 2;
    FILE *out = stdout;
    if (reencode && !(out = fopen(argv[3], "wb"))) {
        perror(argv[3]);
        return 2;
    }
    st_arena arena;
    st_arena_init(&arena, 0);
    st_buf text = {0}, enc = {0};
    int status = 0;
    size_t off = 0;
    for (size_t index = 0; off + 4 <= len; index++) {
        uint32_t n = (uint32_t)data[off] | (uint32_t)data[off + 1] << 8 |
                     (uint32_t)data[off + 2] << 16 | (uint32_t)data[off + 3] << 24;
        off += 4;
        if (n > len - off) {
            fprintf(stderr, "record %zu: length %u runs past the end of %s\n", index, n, argv[2]);
            status = 2;
            break;
        }
        const uint8_t *payload = data + off;
        off += n;
        st_arena_reset(&arena);
        st_record rec;
        st_error err = {0}, cerr = {0};
        int rc = st_example_decode(payload, n, &arena, &rec, &err);
        int crc = st_example_check(payload, n, &cerr);
        if ((rc == 0) != (crc == 0)) {
            fprintf(stderr, "record %zu: decode says %d (%s), check says %d (%s)\n", index, rc,
                    err.msg, crc, cerr.msg);
            status = 1;
        }
        st_jsonw w;
        st_buf_clear(&text);
        st_jsonw_init(&w, &text, false);
        if (reencode) {
            if (rc) {
                fprintf(stderr, "record %zu: %s\n", index, err.msg);
                status = 1;
                continue;
            }
            st_buf_clear(&enc);
            if (st_example_encode(&rec, &enc)) {
                fprintf(stderr, "record %zu: out of memory\n", index);
                status = 2;
                break;
            }
            if (enc.len != st_example_encoded_size(&rec)) {
                fprintf(stderr, "record %zu: encoded %zu bytes, size said %zu\n", index, enc.len,
                        st_example_encoded_size(&rec));
                status = 1;
            }
            if (put_u32(out, (uint32_t)enc.len) || fwrite(enc.data, 1, enc.len, out) != enc.len) {
                perror(argv[3]);
                status = 2;
                break;
            }
            continue;
        }
        if (rc) {
            st_json_begin_object(&w);
            st_json_key(&w, "error");
            st_json_string(&w, err.msg);
            st_json_end_object(&w);
        } else if (st_record_to_json(&rec, &w)) {
            fprintf(stderr, "record %zu: JSON writer failed\n", index);
            status = 2;
            break;
        }
        st_buf_append(&text, "\n", 1);
        fwrite(text.data, 1, text.len, out);
    }
    if (reencode && fclose(out) != 0) {
        perror(argv[3]);
        status = 2;
    }
    st_buf_free(&text);
    st_buf_free(&enc);
    st_arena_free(&arena);
    free(data);
    return status;
}
