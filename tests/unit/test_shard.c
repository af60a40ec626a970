/* The shard sink: names, sizes, rotation, checksums, indexes, abort. */
#include "../../formats/tfrecord/tfrecord.h"
#include "../../src/crc32c.h"
#include "../../src/replaced_files.h"
#include "../../src/shard.h"

#include <CUnit/CUnit.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void fresh_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/st-shard-test-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
}

static int count_files(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")))
            n++;
    closedir(d);
    return n;
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(*len + 1);
    *len = fread(data, 1, *len, f);
    fclose(f);
    return data;
}

static int write_records(st_shard_options *opt, int n, st_shard_sink **out)
{
    st_error err;
    int rc = st_shard_sink_open(opt, out, &err);
    if (rc < 0)
        return rc;
    st_buf enc = {0};
    for (int i = 0; i < n && rc == 0; i++) {
        char payload[32];
        int len = snprintf(payload, sizeof payload, "record %d", i);
        st_buf_clear(&enc);
        st_tfrecord_append(&enc, payload, (size_t)len);
        rc = st_shard_sink_write(*out, enc.data, enc.len, &err);
    }
    st_buf_free(&enc);
    return rc ? rc : st_shard_sink_finish(*out, &err);
}

static void base_options(st_shard_options *opt, st_write_options *wopt, char *prefix)
{
    memset(opt, 0, sizeof *opt);
    memset(wopt, 0, sizeof *wopt);
    snprintf(prefix, 300, "%s/train", dir);
    opt->prefix = prefix;
    opt->writer = st_format_tfrecord.writer;
    opt->wopt = wopt;
}

/* A record handed over in pieces of 3 bytes (st_shard_sink_write_pieces). */
typedef struct pieces_of {
    const uint8_t *data;
    size_t len;
} pieces_of;

static int fill_in_threes(void *ctx, st_piece_fn put, void *put_ctx, st_error *err)
{
    (void)err;
    const pieces_of *p = ctx;
    for (size_t off = 0; off < p->len; off += 3) {
        int rc = put(put_ctx, p->data + off, p->len - off < 3 ? p->len - off : 3);
        if (rc)
            return rc;
    }
    return 0;
}

/* Records given in pieces make the same shards as records given whole, and
 * pieces that do not add up to the length said are an error. */
static void test_records_in_pieces(void)
{
    fresh_dir();
    st_shard_options opt;
    st_write_options wopt;
    char prefix[300];
    base_options(&opt, &wopt, prefix);
    opt.mode = ST_SHARD_BY_COUNT;
    opt.count = 2;
    st_shard_sink *whole;
    CU_ASSERT_EQUAL_FATAL(write_records(&opt, 5, &whole), 0);
    char pprefix[300];
    snprintf(pprefix, sizeof pprefix, "%s/pieces", dir);
    opt.prefix = pprefix;
    st_shard_sink *s;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_shard_sink_open(&opt, &s, &err), 0);
    st_buf enc = {0};
    for (int i = 0; i < 5; i++) {
        char payload[32];
        int len = snprintf(payload, sizeof payload, "record %d", i);
        st_buf_clear(&enc);
        st_tfrecord_append(&enc, payload, (size_t)len);
        pieces_of p = {enc.data, enc.len};
        CU_ASSERT_EQUAL(st_shard_sink_write_pieces(s, enc.len, fill_in_threes, &p, &err), 0);
    }
    pieces_of shorter = {enc.data, enc.len - 1};
    CU_ASSERT(st_shard_sink_write_pieces(s, enc.len, fill_in_threes, &shorter, &err) < 0);
    pieces_of longer = {enc.data, enc.len};
    CU_ASSERT(st_shard_sink_write_pieces(s, enc.len - 1, fill_in_threes, &longer, &err) < 0);
    st_buf_free(&enc);
    st_shard_sink_abort(s);
    st_shard_sink_free(s);
    /* Again, without the failures, to finish. */
    CU_ASSERT_EQUAL_FATAL(st_shard_sink_open(&opt, &s, &err), 0);
    for (int i = 0; i < 5; i++) {
        char payload[32];
        int len = snprintf(payload, sizeof payload, "record %d", i);
        st_buf_clear(&enc);
        st_tfrecord_append(&enc, payload, (size_t)len);
        pieces_of p = {enc.data, enc.len};
        CU_ASSERT_EQUAL(st_shard_sink_write_pieces(s, enc.len, fill_in_threes, &p, &err), 0);
    }
    st_buf_free(&enc);
    CU_ASSERT_EQUAL(st_shard_sink_finish(s, &err), 0);
    for (size_t i = 0; i < 2; i++) {
        const st_shard_info *a = st_shard_sink_shard(whole, i), *b = st_shard_sink_shard(s, i);
        CU_ASSERT_EQUAL(a->records, b->records);
        CU_ASSERT_EQUAL(a->crc32c, b->crc32c);
        size_t la, lb;
        uint8_t *da = read_file(a->path, &la), *db = read_file(b->path, &lb);
        CU_ASSERT_FATAL(da && db);
        CU_ASSERT(la == lb && memcmp(da, db, la) == 0);
        free(da);
        free(db);
    }
    st_shard_sink_free(whole);
    st_shard_sink_free(s);
    remove_dir();
}

static void test_names_and_sizes(void)
{
    char name[256];
    CU_ASSERT_EQUAL(st_shard_name(name, sizeof name, "out/x", NULL, 3, 8, ".tfrecord.gz"), 0);
    CU_ASSERT_STRING_EQUAL(name, "out/x-00003-of-00008.tfrecord.gz");
    CU_ASSERT_EQUAL(st_shard_name(name, sizeof name, "x", "-task00001-of-00004", 0, 2, ".tfrecord"), 0);
    CU_ASSERT_STRING_EQUAL(name, "x-task00001-of-00004-00000-of-00002.tfrecord");
    uint64_t v;
    CU_ASSERT_EQUAL(st_parse_size("256MiB", &v), 0);
    CU_ASSERT_EQUAL(v, 256ull << 20);
    CU_ASSERT_EQUAL(st_parse_size("1G", &v), 0);
    CU_ASSERT_EQUAL(v, 1ull << 30);
    CU_ASSERT_EQUAL(st_parse_size("64k", &v), 0);
    CU_ASSERT_EQUAL(v, 65536);
    CU_ASSERT_EQUAL(st_parse_size("500MB", &v), 0);
    CU_ASSERT_EQUAL(v, 500000000);
    CU_ASSERT_EQUAL(st_parse_size("123", &v), 0);
    CU_ASSERT_EQUAL(v, 123);
    CU_ASSERT_NOT_EQUAL(st_parse_size("12Q", &v), 0);
    CU_ASSERT_NOT_EQUAL(st_parse_size("-1", &v), 0);
    CU_ASSERT_NOT_EQUAL(st_parse_size("", &v), 0);
}

/* Both naming styles written and read back (src/shard_names.h). */
static void test_naming_styles(void)
{
    char name[256];
    CU_ASSERT_EQUAL(st_shard_name_styled(name, sizeof name, ST_SHARD_NAMES_TFDS, "d/mnist-train", NULL, 3, 8,
                                         ".tfrecord", ""), 0);
    CU_ASSERT_STRING_EQUAL(name, "d/mnist-train.tfrecord-00003-of-00008");
    CU_ASSERT_EQUAL(st_shard_name_styled(name, sizeof name, ST_SHARD_NAMES_TFDS, "m-test", NULL, 0, 1,
                                         ".array_record", ".idx"), 0);
    CU_ASSERT_STRING_EQUAL(name, "m-test.array_record-00000-of-00001.idx");
    CU_ASSERT_NOT_EQUAL(st_shard_name_styled(name, 8, ST_SHARD_NAMES_TFDS, "m-test", NULL, 0, 1, ".tfrecord", ""),
                        0);
    unsigned long long i, n;
    st_shard_naming style;
    CU_ASSERT_EQUAL(st_shard_numbers(".tfrecord-00003-of-00008", &i, &n, &style), 24);
    CU_ASSERT(i == 3 && n == 8 && style == ST_SHARD_NAMES_TFDS);
    CU_ASSERT_EQUAL(st_shard_numbers("-00003-of-00008.tfrecord.gz", &i, &n, &style), 15);
    CU_ASSERT(i == 3 && n == 8 && style == ST_SHARD_NAMES_TENSORFLOW);
    CU_ASSERT_EQUAL(st_shard_numbers(".array_record-00000-of-00001.idx", NULL, NULL, NULL), 28);
    /* only TFDS's file formats before the numbers; five digits or more */
    CU_ASSERT_EQUAL(st_shard_numbers(".notes-00000-of-00001", NULL, NULL, NULL), 0);
    CU_ASSERT_EQUAL(st_shard_numbers(".tfrecord.gz-00000-of-00001", NULL, NULL, NULL), 0);
    CU_ASSERT_EQUAL(st_shard_numbers("-0003-of-00008.tfrecord", NULL, NULL, NULL), 0);
    CU_ASSERT_EQUAL(st_shard_numbers("_extra.tfrecord-00000-of-00001", NULL, NULL, NULL), 0);
    CU_ASSERT_EQUAL(st_shard_numbers("-00000-of-", NULL, NULL, NULL), 0);
}

static void test_round_robin_with_checksums_and_index(void)
{
    fresh_dir();
    st_shard_options opt;
    st_write_options wopt;
    char prefix[300];
    base_options(&opt, &wopt, prefix);
    opt.mode = ST_SHARD_BY_COUNT;
    opt.count = 3;
    opt.index = true;
    st_shard_sink *s;
    CU_ASSERT_EQUAL_FATAL(write_records(&opt, 10, &s), 0);
    CU_ASSERT_EQUAL(st_shard_sink_count(s), 3);
    CU_ASSERT_EQUAL(st_shard_sink_records(s), 10);
    uint64_t want[3] = {4, 3, 3};
    for (size_t i = 0; i < 3; i++) {
        const st_shard_info *info = st_shard_sink_shard(s, i);
        char name[512];
        snprintf(name, sizeof name, "%s/train-%05zu-of-00003.tfrecord", dir, i);
        CU_ASSERT_STRING_EQUAL(info->path, name);
        CU_ASSERT_EQUAL(info->records, want[i]);
        size_t len;
        uint8_t *data = read_file(name, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(data);
        CU_ASSERT_EQUAL(info->bytes, len);
        CU_ASSERT_EQUAL(info->crc32c, st_crc32c(0, data, len));
        /* The index names each record's offset and framed size. */
        char idx_name[600];
        snprintf(idx_name, sizeof idx_name, "%s.idx", name);
        size_t idx_len = 0;
        char *idx = (char *)read_file(idx_name, &idx_len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(idx);
        idx[idx_len] = '\0';
        unsigned long long off, size, at = 0;
        int lines = 0, consumed;
        for (char *p = idx; sscanf(p, "%llu %llu\n%n", &off, &size, &consumed) == 2; p += consumed) {
            CU_ASSERT_EQUAL(off, at);
            CU_ASSERT_TRUE(st_tfrecord_header_valid(data + off, NULL));
            at += size;
            lines++;
        }
        CU_ASSERT_EQUAL(at, len);
        CU_ASSERT_EQUAL(lines, (int)want[i]);
        free(idx);
        free(data);
    }
    CU_ASSERT_EQUAL(count_files(), 6);
    st_shard_sink_free(s);

    /* The same again without --force: refused, nothing changed. */
    st_error err;
    CU_ASSERT_EQUAL(st_shard_sink_open(&opt, &s, &err), ST_EEXIST);
    CU_ASSERT_EQUAL(count_files(), 6);
    remove_dir();
}

/* A task's share of a distributed set: shards numbered from number_base
 * of number_total; with keep, a kept shard is counted, not written, and
 * survives an abort. */
static void test_task_numbers_and_kept_shards(void)
{
    fresh_dir();
    st_shard_options opt;
    st_write_options wopt;
    char prefix[300];
    base_options(&opt, &wopt, prefix);
    opt.mode = ST_SHARD_BY_COUNT;
    opt.count = 2;
    opt.number_base = 4; /* task 2 of 4, --shards 2 */
    opt.number_total = 8;
    st_shard_sink *s;
    CU_ASSERT_EQUAL_FATAL(write_records(&opt, 5, &s), 0);
    char name[512];
    snprintf(name, sizeof name, "%s/train-00004-of-00008.tfrecord", dir);
    CU_ASSERT_STRING_EQUAL(st_shard_sink_shard(s, 0)->path, name);
    snprintf(name, sizeof name, "%s/train-00005-of-00008.tfrecord", dir);
    CU_ASSERT_STRING_EQUAL(st_shard_sink_shard(s, 1)->path, name);
    st_shard_info first = *st_shard_sink_shard(s, 0);
    struct stat before;
    CU_ASSERT_EQUAL_FATAL(stat(first.path, &before), 0);
    char kept_path[512];
    snprintf(kept_path, sizeof kept_path, "%s", first.path);
    st_shard_sink_free(s);

    /* Shard 4 kept: the same records are dealt to it but not written. */
    unlink(name);
    st_shard_keep keep[2] = {{.keep = true, .records = first.records, .bytes = first.bytes,
                              .crc32c = first.crc32c}};
    opt.keep = keep;
    opt.force = true;
    CU_ASSERT_EQUAL_FATAL(write_records(&opt, 5, &s), 0);
    CU_ASSERT_TRUE(st_shard_sink_shard(s, 0)->kept);
    CU_ASSERT_EQUAL(st_shard_sink_shard(s, 0)->crc32c, first.crc32c);
    CU_ASSERT_EQUAL(st_shard_sink_shard(s, 1)->records, 2);
    struct stat after;
    CU_ASSERT_EQUAL(stat(kept_path, &after), 0);
    CU_ASSERT_TRUE(after.st_ino == before.st_ino && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    CU_ASSERT_EQUAL(access(name, F_OK), 0);
    st_shard_sink_abort(s); /* an abort removes what this run wrote, not the kept shard */
    CU_ASSERT_EQUAL(access(kept_path, F_OK), 0);
    CU_ASSERT_NOT_EQUAL(access(name, F_OK), 0);
    st_shard_sink_free(s);

    /* Other inputs deal the kept shard another count: refused. */
    st_error err;
    CU_ASSERT_EQUAL(st_shard_sink_open(&opt, &s, &err), 0);
    CU_ASSERT_EQUAL(st_shard_sink_finish(s, &err), ST_EDATA);
    st_shard_sink_abort(s);
    st_shard_sink_free(s);
    CU_ASSERT_EQUAL(access(kept_path, F_OK), 0);
    remove_dir();
}

static void test_rotation_renames_at_the_end(void)
{
    fresh_dir();
    st_shard_options opt;
    st_write_options wopt;
    char prefix[300];
    base_options(&opt, &wopt, prefix);
    opt.mode = ST_SHARD_BY_RECORDS;
    opt.max_records = 4;
    st_shard_sink *s;
    CU_ASSERT_EQUAL_FATAL(write_records(&opt, 10, &s), 0);
    CU_ASSERT_EQUAL(st_shard_sink_count(s), 3);
    char name[512];
    snprintf(name, sizeof name, "%s/train-00002-of-00003.tfrecord", dir);
    CU_ASSERT_STRING_EQUAL(st_shard_sink_shard(s, 2)->path, name);
    CU_ASSERT_EQUAL(st_shard_sink_shard(s, 2)->records, 2);
    CU_ASSERT_EQUAL(access(name, F_OK), 0);
    CU_ASSERT_EQUAL(count_files(), 3); /* no .partial left */
    st_shard_sink_free(s);
    remove_dir();

    fresh_dir();
    base_options(&opt, &wopt, prefix);
    opt.mode = ST_SHARD_BY_SIZE;
    opt.max_bytes = 60; /* each framed record is 24-25 bytes: two fit */
    CU_ASSERT_EQUAL_FATAL(write_records(&opt, 10, &s), 0);
    CU_ASSERT_EQUAL(st_shard_sink_count(s), 5);
    for (size_t i = 0; i < 5; i++)
        CU_ASSERT_TRUE(st_shard_sink_shard(s, i)->bytes <= 60);
    st_shard_sink_free(s);
    remove_dir();
}

static void test_abort_removes_everything(void)
{
    fresh_dir();
    st_shard_options opt;
    st_write_options wopt;
    char prefix[300];
    base_options(&opt, &wopt, prefix);
    opt.mode = ST_SHARD_BY_RECORDS;
    opt.max_records = 2;
    st_error err;
    st_shard_sink *s;
    CU_ASSERT_EQUAL_FATAL(st_shard_sink_open(&opt, &s, &err), 0);
    st_buf enc = {0};
    for (int i = 0; i < 7; i++) {
        st_buf_clear(&enc);
        st_tfrecord_append(&enc, "abc", 3);
        CU_ASSERT_EQUAL(st_shard_sink_write(s, enc.data, enc.len, &err), 0);
    }
    CU_ASSERT_TRUE(count_files() >= 3); /* finished .partial shards + one in progress */
    st_shard_sink_abort(s);
    st_shard_sink_free(s);
    CU_ASSERT_EQUAL(count_files(), 0);
    st_buf_free(&enc);
    remove_dir();
}

static void test_gzip_shards(void)
{
    fresh_dir();
    st_shard_options opt;
    st_write_options wopt;
    char prefix[300];
    base_options(&opt, &wopt, prefix);
    wopt.compression = ST_COMPRESSION_GZIP;
    wopt.compression_level = 6;
    opt.mode = ST_SHARD_BY_COUNT;
    opt.count = 2;
    st_shard_sink *s;
    CU_ASSERT_EQUAL_FATAL(write_records(&opt, 5, &s), 0);
    const st_shard_info *info = st_shard_sink_shard(s, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(info->path, "-00000-of-00002.tfrecord.gz"));
    size_t len = 0;
    uint8_t *data = read_file(info->path, &len);
    CU_ASSERT_TRUE(len > 2 && data[0] == 0x1f && data[1] == 0x8b);
    CU_ASSERT_EQUAL(info->bytes, len);
    CU_ASSERT_EQUAL(info->crc32c, st_crc32c(0, data, len));
    free(data);
    st_shard_sink_free(s);
    remove_dir();
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* Files held open across the renames over them are closed on other
 * threads: the renames go through, the new bytes are under the names, and
 * no descriptor is left once waited for.  A path that is no regular file
 * is not held. */
static void test_replaced_files_let_go(void)
{
    fresh_dir();
    char old_path[300], new_path[300], sub[300];
    int fds_before = open("/dev/null", O_RDONLY);
    CU_ASSERT_TRUE_FATAL(fds_before >= 0);
    close(fds_before);
    st_replaced_files r = {0};
    for (int i = 0; i < 6; i++) {
        snprintf(old_path, sizeof old_path, "%s/shard-%d", dir, i);
        write_text(old_path, "old");
        st_replaced_files_hold(&r, old_path);
    }
    snprintf(sub, sizeof sub, "%s/a-directory", dir);
    CU_ASSERT_EQUAL(mkdir(sub, 0700), 0);
    st_replaced_files_hold(&r, sub);
    snprintf(old_path, sizeof old_path, "%s/missing", dir);
    st_replaced_files_hold(&r, old_path);
    CU_ASSERT_EQUAL(r.count, 6);
    for (int i = 0; i < 6; i++) {
        snprintf(new_path, sizeof new_path, "%s/new-%d", dir, i);
        snprintf(old_path, sizeof old_path, "%s/shard-%d", dir, i);
        write_text(new_path, "new");
        CU_ASSERT_EQUAL(rename(new_path, old_path), 0);
    }
    st_replaced_files_release(&r);
    st_replaced_files_wait(&r);
    CU_ASSERT_EQUAL(r.count, 0);
    for (int i = 0; i < 6; i++) {
        snprintf(old_path, sizeof old_path, "%s/shard-%d", dir, i);
        size_t len;
        uint8_t *data = read_file(old_path, &len);
        CU_ASSERT_TRUE(len == 3 && memcmp(data, "new", 3) == 0);
        free(data);
    }
    /* Every descriptor held was closed: the next open gets the same number. */
    int fd = open("/dev/null", O_RDONLY);
    CU_ASSERT_EQUAL(fd, fds_before);
    close(fd);
    rmdir(sub);
    remove_dir();
}

#define SUITE_NAME "shard"
static const CU_TestInfo suite_tests[] = {
    {"names and sizes", test_names_and_sizes},
    {"naming styles", test_naming_styles},
    {"records in pieces make the same shards", test_records_in_pieces},
    {"round robin, checksums, DALI index, no overwrite", test_round_robin_with_checksums_and_index},
    {"rotation by records and bytes, renamed at the end", test_rotation_renames_at_the_end},
    {"abort removes everything", test_abort_removes_everything},
    {"gzip shards: checksum of the stored bytes", test_gzip_shards},
    {"task numbers of a distributed set, kept shards (--resume)", test_task_numbers_and_kept_shards},
    {"files replaced by the renames are let go of on other threads", test_replaced_files_let_go},
    CU_TEST_INFO_NULL,
};
#include "cunit_main.h"
