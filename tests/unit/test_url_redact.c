/* URLs without their secrets (src/url_redact.c): passwords, signed and
 * token query parameters, URLs inside messages; what is not a secret stays. */
#include "url_redact.h"

#include <CUnit/Basic.h>
#include <string.h>

static void check(const char *in, const char *want)
{
    char out[1024];
    bool changed = st_url_redact(in, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, want);
    CU_ASSERT_EQUAL(changed, strcmp(in, want) != 0);
    if (strcmp(out, want) != 0)
        fprintf(stderr, "\n  %s\n  gave %s\n  want %s\n", in, out, want);
}

static void test_userinfo(void)
{
    check("http://alice:PW@host/x", "http://alice:***@host/x");
    check("https://alice:p%40ss:w@127.0.0.1:8080/a/b.tfrecord", "https://alice:***@127.0.0.1:8080/a/b.tfrecord");
    check("https://ghp_TOKEN@host/x", "https://***@host/x");
    check("HTTP://u:p@h", "HTTP://u:***@h");
    check("http://host/user@example.com/x", "http://host/user@example.com/x");
    check("http://host:8080/x", "http://host:8080/x");
    /* A password with an unescaped '#' or '?' (curl refuses the URL, and
     * its error shows it back). */
    check("http://alice:abc#PW@127.0.0.1:1/x.tfrecord", "http://alice:***@127.0.0.1:1/x.tfrecord");
    check("http://alice:abc?PW@h/x?token=T", "http://alice:***@h/x?token=***");
    check("http://alice:a#b?c@h", "http://alice:***@h");
    check("http://h/x?e=a@b.com#f", "http://h/x?e=a@b.com#f");
}

static void test_query(void)
{
    check("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F2024"
          "&X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
          "&X-Amz-Security-Token=FQoG&X-Amz-Signature=abc123",
          "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***"
          "&X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
          "&X-Amz-Security-Token=***&X-Amz-Signature=***");
    check("https://storage.googleapis.com/b/o?X-Goog-Credential=sa%40p.iam&X-Goog-Signature=ff00",
          "https://storage.googleapis.com/b/o?X-Goog-Credential=***&X-Goog-Signature=***");
    check("https://a.blob.core.windows.net/c/x?sv=2022&sp=r&sig=SAS%2Bsig",
          "https://a.blob.core.windows.net/c/x?sv=2022&sp=r&sig=***");
    check("http://h/x?token=T&access_token=A&key=K&api_key=Z&Signature=S&versionId=3",
          "http://h/x?token=***&access_token=***&key=***&api_key=***&Signature=***&versionId=3");
    check("http://h/x?X%2DAmz%2DSignature=zz", "http://h/x?X%2DAmz%2DSignature=***");
    check("http://h/x#access_token=T&state=1", "http://h/x#access_token=***&state=1");
    check("http://h/x?sig=", "http://h/x?sig=");
    check("http://h/x?a=1&&b", "http://h/x?a=1&&b");
    check("http://u:p@h/x?sig=1", "http://u:***@h/x?sig=***");
}

static void test_not_urls(void)
{
    check("data/train.tfrecord", "data/train.tfrecord");
    check("s3://bucket/key?sig=literal-key", "s3://bucket/key?sig=literal-key");
    check("gs://bucket/a@b:c", "gs://bucket/a@b:c");
    check("", "");
    char small[12];
    st_url_redact("http://u:secretpassword@h/", small, sizeof small);
    CU_ASSERT_PTR_NULL(strstr(small, "secret"));
    char buf[64];
    const char *plain = "http://h/x";
    CU_ASSERT_PTR_EQUAL(st_url_shown(plain, buf, sizeof buf), plain);
    CU_ASSERT_STRING_EQUAL(st_url_shown("http://a:b@h/", buf, sizeof buf), "http://a:***@h/");
}

static void check_text(const char *in, const char *want)
{
    char text[1024];
    snprintf(text, sizeof text, "%s", in);
    st_text_redact_urls(text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, want);
    if (strcmp(text, want) != 0)
        fprintf(stderr, "\n  %s\n  gave %s\n  want %s\n", in, text, want);
}

static void test_text(void)
{
    check_text("http://alice:PW@127.0.0.1:81/x.tfrecord: HTTP 404 (check the URL)",
               "http://alice:***@127.0.0.1:81/x.tfrecord: HTTP 404 (check the URL)");
    check_text("GET http://h/x?sig=SECRET: 206 in 0.1 s",
               "GET http://h/x?sig=***: 206 in 0.1 s");
    check_text("cannot open 'https://u:pw@h/a' (tried http://h/b?token=T, twice)",
               "cannot open 'https://u:***@h/a' (tried http://h/b?token=***, twice)");
    check_text("no url here: just text", "no url here: just text");
    check_text("odd ://x and s3://b/k?sig=k", "odd ://x and s3://b/k?sig=k");
    check_text("end http://a:b@h", "end http://a:***@h");
}

static const CU_TestInfo suite_tests[] = {
    {"userinfo", test_userinfo},
    {"query and fragment parameters", test_query},
    {"not URLs, s3 and gs, short buffers", test_not_urls},
    {"URLs inside messages", test_text},
    CU_TEST_INFO_NULL,
};
#define SUITE_NAME "url_redact"
#include "cunit_main.h"
