/* Mapped file streams (src/stream_map.h): the bytes lent are the file's,
 * small files and pipes are read as before, and a file that another
 * process truncates while it is mapped neither crashes the process
 * (SIGBUS) nor passes for intact: the stream says the file changed.
 * A SIGBUS that is not about one of our maps still ends the process. */
#include "stream.h"
#include "stream_map.h"

#include <CUnit/Basic.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

enum { BIG = 3 << 20 }; /* above the 1 MiB under which files are read */

static void make_file(const char *path, size_t len)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (size_t i = 0; i < len; i++)
        fputc((int)((i * 2654435761u) >> 13) & 0xff, f);
    fclose(f);
}

static uint8_t byte_at(size_t i)
{
    return (uint8_t)(((i * 2654435761u) >> 13) & 0xff);
}

/* Runs first: a program that has not called st_stream_map_allow() (one
 * using the library) gets files read, so no SIGBUS handler is installed
 * behind its back, unless SHARDTOOL_MMAP=1 asks for maps. */
static void test_maps_only_when_allowed(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/big", tmpdir);
    make_file(path, BIG);
    st_stream *s;
    st_error err = {0};
    struct sigaction before, after;
    sigaction(SIGBUS, NULL, &before);
    CU_ASSERT_EQUAL_FATAL(st_stream_open_mapped(path, &s, &err), ST_OK);
    CU_ASSERT_FALSE(st_stream_can_lend(s));
    st_stream_close(s);
    sigaction(SIGBUS, NULL, &after);
    CU_ASSERT_TRUE(before.sa_handler == after.sa_handler);
    setenv("SHARDTOOL_MMAP", "1", 1);
    CU_ASSERT_EQUAL_FATAL(st_stream_open_mapped(path, &s, &err), ST_OK);
    CU_ASSERT_TRUE(st_stream_can_lend(s));
    st_stream_close(s);
    unsetenv("SHARDTOOL_MMAP");
    st_stream_map_allow(); /* the command line's setting, for the tests below */
}

static void test_lends_the_file(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/big", tmpdir);
    make_file(path, BIG);
    st_stream *s;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_stream_open_mapped(path, &s, &err), ST_OK);
    CU_ASSERT_TRUE(st_stream_can_lend(s));
    uint64_t size = 0;
    CU_ASSERT_EQUAL(st_stream_size(s, &size, &err), ST_OK);
    CU_ASSERT_EQUAL(size, BIG);
    /* Lend, consume in odd steps, compare every byte with the file's. */
    size_t at = 0, bad = 0;
    for (;;) {
        const uint8_t *p;
        ssize_t got = st_stream_lend(s, 1000, &p, &err);
        CU_ASSERT_TRUE_FATAL(got >= 0);
        if (got == 0)
            break;
        size_t take = (size_t)got < 777777 ? (size_t)got : 777777;
        for (size_t i = 0; i < take; i++)
            bad += p[i] != byte_at(at + i);
        st_stream_consume(s, take);
        at += take;
    }
    CU_ASSERT_EQUAL(at, BIG);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_FALSE(st_stream_map_changed(s, &err));
    /* pread goes through the descriptor, and agrees. */
    uint8_t b[16];
    CU_ASSERT_EQUAL(st_stream_pread_full(s, b, sizeof b, 2000000, &err), ST_OK);
    CU_ASSERT_EQUAL(b[5], byte_at(2000005));
    st_stream_close(s);
}

static void test_small_files_and_pipes_are_read(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/small", tmpdir);
    make_file(path, 4096);
    st_stream *s;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_stream_open_mapped(path, &s, &err), ST_OK);
    CU_ASSERT_FALSE(st_stream_can_lend(s));
    st_stream_close(s);
    snprintf(path, sizeof path, "%s/fifo", tmpdir);
    CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
    CU_ASSERT_EQUAL_FATAL(st_stream_open_mapped(path, &s, &err), ST_OK);
    CU_ASSERT_FALSE(st_stream_can_lend(s));
    CU_ASSERT_FALSE(st_stream_can_seek(s));
    st_stream_close(s);
    unlink(path);
    CU_ASSERT_TRUE(st_stream_open_mapped("/no/such/file", &s, &err) < 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/no/such/file"));
}

/* The pages are populated, then the file is cut to one page by another
 * descriptor (as another process would): reading past the new end raises
 * SIGBUS, which must come back as zeros and a stream that says so. */
static void test_truncated_while_mapped(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/shrinks", tmpdir);
    make_file(path, BIG);
    st_stream *s;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_stream_open_mapped(path, &s, &err), ST_OK);
    const uint8_t *p;
    ssize_t got = st_stream_lend(s, BIG, &p, &err);
    CU_ASSERT_EQUAL_FATAL(got, BIG);
    CU_ASSERT_EQUAL(p[BIG - 1], byte_at(BIG - 1)); /* mapped and readable */
    CU_ASSERT_EQUAL_FATAL(truncate(path, 4096), 0);
    /* Each of these accesses would end the process without the handler. */
    volatile uint8_t sum = 0;
    for (size_t i = 8192; i < BIG; i += 4096)
        sum |= p[i];
    CU_ASSERT_EQUAL(sum, 0);
    CU_ASSERT_EQUAL(p[10], byte_at(10)); /* the page still in the file */
    CU_ASSERT_TRUE(st_stream_map_changed(s, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "changed while being read"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "shrinks"));
    st_stream_consume(s, 8192);
    err = (st_error){0};
    CU_ASSERT_TRUE(st_stream_lend(s, 100, &p, &err) < 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "changed while being read"));
    st_stream_close(s);
}

/* Cut before the reader gets there: populating the next window fails,
 * and the lend says why (no access ever faults). */
static void test_truncated_before_reading(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/shrinks-early", tmpdir);
    make_file(path, BIG);
    st_stream *s;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_stream_open_mapped(path, &s, &err), ST_OK);
    CU_ASSERT_EQUAL_FATAL(truncate(path, 100), 0);
    const uint8_t *p;
    ssize_t got = st_stream_lend(s, 10, &p, &err);
    if (got > 0) {
        /* A kernel without MADV_POPULATE_READ: the access itself faults. */
        volatile uint8_t x = p[got - 1];
        (void)x;
        CU_ASSERT_TRUE(st_stream_map_changed(s, &err));
    } else {
        CU_ASSERT_TRUE(got < 0);
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "changed while being read"));
    st_stream_close(s);
}

/* The handler is installed (by the mapped opens above); a map of someone
 * else's that faults must still kill the process with SIGBUS. */
static void test_foreign_sigbus_still_kills(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/foreign", tmpdir);
    make_file(path, 8192);
    /* One of ours open meanwhile: the handler is in place and has a map to
     * look at, which is not the one that faults. */
    char ours[300];
    snprintf(ours, sizeof ours, "%s/ours", tmpdir);
    make_file(ours, BIG);
    st_stream *s;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_stream_open_mapped(ours, &s, &err), ST_OK);
    CU_ASSERT_TRUE(st_stream_can_lend(s));
    pid_t pid = fork();
    CU_ASSERT_TRUE_FATAL(pid >= 0);
    if (pid == 0) {
        int fd = open(path, O_RDONLY);
        volatile uint8_t *m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED || truncate(path, 0) != 0)
            _exit(3);
        uint8_t x = m[5000];
        _exit(x == 0 ? 4 : 5); /* reached only if SIGBUS was swallowed */
    }
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    /* Never swallowed: the child must not get past the access. */
    CU_ASSERT_FALSE(WIFEXITED(status) && (WEXITSTATUS(status) == 4 || WEXITSTATUS(status) == 5));
#ifdef __SANITIZE_ADDRESS__
    /* The sanitizer's own handler was there before ours: it reports the
     * fault and exits non-zero, or aborts (ASAN_OPTIONS=abort_on_error=1). */
    CU_ASSERT_TRUE((WIFSIGNALED(status) && (WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT)) ||
                   (WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3));
#else
    CU_ASSERT_TRUE(WIFSIGNALED(status));
    if (WIFSIGNALED(status))
        CU_ASSERT_EQUAL(WTERMSIG(status), SIGBUS);
#endif
    st_stream_close(s);
}

static void test_turned_off(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/big", tmpdir);
    setenv("SHARDTOOL_MMAP", "0", 1);
    st_stream *s;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_stream_open_mapped(path, &s, &err), ST_OK);
    CU_ASSERT_FALSE(st_stream_can_lend(s));
    st_stream_close(s);
    unsetenv("SHARDTOOL_MMAP");
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/st-test-map-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        return 2;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("stream-map", NULL, NULL);
    CU_add_test(s, "maps only where the program allows it", test_maps_only_when_allowed);
    CU_add_test(s, "lends the file's bytes", test_lends_the_file);
    CU_add_test(s, "small files and pipes are read", test_small_files_and_pipes_are_read);
    CU_add_test(s, "truncated while mapped: no crash, reported", test_truncated_while_mapped);
    CU_add_test(s, "truncated before reading: reported", test_truncated_before_reading);
    CU_add_test(s, "a foreign SIGBUS still ends the process", test_foreign_sigbus_still_kills);
    CU_add_test(s, "SHARDTOOL_MMAP=0 reads", test_turned_off);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        return 2;
    return failures ? 1 : 0;
}
