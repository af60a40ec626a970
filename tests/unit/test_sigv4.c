/* Remote module, without a network: AWS Signature V4 against AWS's published
 * test-suite vectors and the S3 documentation's examples; address parsing
 * and request targets; credential files (under a temporary HOME); globs and
 * the XML reader; and that no secret ever reaches an error message. */
#include "address.h"
#include "creds.h"
#include "remote.h"
#include "remote_internal.h"
#include "sigv4.h"
#include "stream.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_DATE "20150830T123600Z"
#define EMPTY_HASH "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define STS_TOKEN                                                                                  \
    "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPf" \
    "IeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT" \
    "7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKml" \
    "zm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="

/* One request of the AWS SigV4 test suite (service "service", us-east-1,
 * AKIDEXAMPLE): headers as the suite's .req lists them, expected canonical
 * request (.creq) and signature (.authz). */
typedef struct vector {
    const char *name;
    const char *method;
    const char *path;
    const char *query;
    st_sigv4_header headers[6];
    size_t nheaders;
    const char *body;
    const char *creq;          /* NULL: not checked */
    const char *signed_headers;
    const char *signature;
} vector;

#define H(n, v) {n, v}
static const vector suite[] = {
    {"get-vanilla", "GET", "/", "", {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "",
     "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_HASH,
     "host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
    {"get-vanilla-empty-query-key", "GET", "/", "Param1=value1",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "",
     "GET\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_HASH,
     "host;x-amz-date", "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb"},
    {"get-vanilla-query-order-key", "GET", "/", "Param1=value2&Param1=Value1",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "",
     "GET\n/\nParam1=Value1&Param1=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_HASH,
     "host;x-amz-date", "eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1"},
    {"get-vanilla-query-order-key-case", "GET", "/", "Param2=value2&Param1=value1",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "",
     "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_HASH,
     "host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
    {"get-vanilla-query-order-value", "GET", "/", "Param1=value2&Param1=value1",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "", NULL,
     "host;x-amz-date", "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694"},
    {"get-vanilla-query-unreserved", "GET", "/",
     "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "", NULL,
     "host;x-amz-date", "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"},
    {"get-vanilla-utf8-query", "GET", "/", "\xe1\x88\xb4=bar",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "",
     "GET\n/\n%E1%88%B4=bar\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_HASH,
     "host;x-amz-date", "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"},
    {"get-unreserved", "GET", "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "", NULL,
     "host;x-amz-date", "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"},
    {"get-space", "GET", "/example space/", "",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "",
     "GET\n/example%20space/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_HASH,
     "host;x-amz-date", "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"},
    {"get-header-key-duplicate", "GET", "/", "",
     {H("Host", "example.amazonaws.com"), H("My-Header1", "value2"), H("My-Header1", "value2"),
      H("My-Header1", "value1"), H("X-Amz-Date", SUITE_DATE)}, 5, "",
     "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value2,value2,value1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n" EMPTY_HASH,
     "host;my-header1;x-amz-date", "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"},
    {"get-header-value-order", "GET", "/", "",
     {H("Host", "example.amazonaws.com"), H("My-Header1", "value4"), H("My-Header1", "value1"),
      H("My-Header1", "value3"), H("My-Header1", "value2"), H("X-Amz-Date", SUITE_DATE)}, 6, "", NULL,
     "host;my-header1;x-amz-date", "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01"},
    {"get-header-value-trim", "GET", "/", "",
     {H("Host", "example.amazonaws.com"), H("My-Header1", " value1"), H("My-Header2", " \"a   b   c\""),
      H("X-Amz-Date", SUITE_DATE)}, 4, "",
     "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\nx-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n" EMPTY_HASH,
     "host;my-header1;my-header2;x-amz-date", "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"},
    {"post-vanilla", "POST", "/", "", {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "",
     "POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_HASH,
     "host;x-amz-date", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
    {"post-vanilla-query", "POST", "/", "Param1=value1",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE)}, 2, "", NULL,
     "host;x-amz-date", "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"},
    {"post-header-key-sort", "POST", "/", "",
     {H("Host", "example.amazonaws.com"), H("My-Header1", "value1"), H("X-Amz-Date", SUITE_DATE)}, 3, "", NULL,
     "host;my-header1;x-amz-date", "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"},
    {"post-header-value-case", "POST", "/", "",
     {H("Host", "example.amazonaws.com"), H("My-Header1", "VALUE1"), H("X-Amz-Date", SUITE_DATE)}, 3, "", NULL,
     "host;my-header1;x-amz-date", "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"},
    {"post-x-www-form-urlencoded", "POST", "/", "",
     {H("Content-Type", "application/x-www-form-urlencoded"), H("Host", "example.amazonaws.com"),
      H("X-Amz-Date", SUITE_DATE)}, 3, "Param1=value1", NULL,
     "content-type;host;x-amz-date", "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"},
    {"post-sts-header-before", "POST", "/", "",
     {H("Host", "example.amazonaws.com"), H("X-Amz-Date", SUITE_DATE), H("X-Amz-Security-Token", STS_TOKEN)}, 3, "",
     NULL, "host;x-amz-date;x-amz-security-token",
     "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"},
};

static void check_vector(const vector *v)
{
    char hash[65];
    st_sha256_hex(v->body, strlen(v->body), hash);
    st_sigv4_request r = {
        .method = v->method, .path = v->path, .query = v->query, .headers = v->headers,
        .nheaders = v->nheaders, .payload_hash = hash, .amz_date = SUITE_DATE,
        .region = "us-east-1", .service = "service",
    };
    st_buf creq = {0}, sh = {0}, auth = {0};
    CU_ASSERT_EQUAL_FATAL(st_sigv4_canonical_request(&r, &creq, &sh), 0);
    if (v->creq && strcmp((char *)creq.data, v->creq) != 0) {
        fprintf(stderr, "\n%s: canonical request\n%s\n--- expected\n%s\n", v->name, (char *)creq.data, v->creq);
        CU_FAIL("canonical request differs");
    }
    CU_ASSERT_STRING_EQUAL((char *)sh.data, v->signed_headers);
    CU_ASSERT_EQUAL_FATAL(st_sigv4_authorization(&r, "AKIDEXAMPLE", SUITE_SECRET, &auth), 0);
    char expect[512];
    snprintf(expect, sizeof expect,
             "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
             "SignedHeaders=%s, Signature=%s", v->signed_headers, v->signature);
    if (strcmp((char *)auth.data, expect) != 0) {
        fprintf(stderr, "\n%s:\n  got      %s\n  expected %s\n", v->name, (char *)auth.data, expect);
        CU_FAIL("signature differs");
    }
    st_buf_free(&creq);
    st_buf_free(&sh);
    st_buf_free(&auth);
}

static void test_suite_vectors(void)
{
    for (size_t i = 0; i < sizeof suite / sizeof suite[0]; i++)
        check_vector(&suite[i]);
}

static void test_string_to_sign(void)
{
    /* get-vanilla's .sts file */
    const vector *v = &suite[0];
    st_sigv4_request r = {
        .method = "GET", .path = "/", .query = "", .headers = v->headers, .nheaders = 2,
        .payload_hash = EMPTY_HASH, .amz_date = SUITE_DATE, .region = "us-east-1", .service = "service",
    };
    st_buf creq = {0}, sh = {0}, sts = {0};
    CU_ASSERT_EQUAL(st_sigv4_canonical_request(&r, &creq, &sh), 0);
    CU_ASSERT_EQUAL(st_sigv4_string_to_sign(&r, (char *)creq.data, &sts), 0);
    CU_ASSERT_STRING_EQUAL((char *)sts.data,
                           "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
                           "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
    st_buf_free(&creq);
    st_buf_free(&sh);
    st_buf_free(&sts);
}

static void test_signing_key(void)
{
    /* The AWS documentation's key-derivation example (IAM, 2012-02-15). */
    uint8_t key[32];
    char hex[65];
    st_sigv4_signing_key(SUITE_SECRET, "20120215", "us-east-1", "iam", key);
    st_hex_encode(key, 32, hex);
    CU_ASSERT_STRING_EQUAL(hex, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

/* S3 examples from "Signature Calculations for the Authorization Header":
 * bucket examplebucket, AKIAIOSFODNN7EXAMPLE, 2013-05-24, us-east-1. */
#define S3_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define S3_DATE "20130524T000000Z"

static void s3_example(const char *method, const char *path, const char *query,
                       const st_sigv4_header *h, size_t nh, const char *payload,
                       const char *creq_expect, const char *sig)
{
    st_sigv4_request r = {
        .method = method, .path = path, .query = query, .headers = h, .nheaders = nh,
        .payload_hash = payload, .amz_date = S3_DATE, .region = "us-east-1", .service = "s3",
    };
    st_buf creq = {0}, sh = {0}, auth = {0};
    CU_ASSERT_EQUAL_FATAL(st_sigv4_canonical_request(&r, &creq, &sh), 0);
    if (creq_expect)
        CU_ASSERT_STRING_EQUAL((char *)creq.data, creq_expect);
    CU_ASSERT_EQUAL_FATAL(st_sigv4_authorization(&r, "AKIAIOSFODNN7EXAMPLE", S3_SECRET, &auth), 0);
    const char *s = strstr((char *)auth.data, "Signature=");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    if (strcmp(s + 10, sig) != 0) {
        fprintf(stderr, "\n%s %s: got %s expected %s\n", method, path, s + 10, sig);
        CU_FAIL("S3 example signature differs");
    }
    st_buf_free(&creq);
    st_buf_free(&sh);
    st_buf_free(&auth);
}

static void test_s3_examples(void)
{
    st_sigv4_header get_obj[] = {
        {"Host", "examplebucket.s3.amazonaws.com"},
        {"Range", "bytes=0-9"},
        {"x-amz-content-sha256", EMPTY_HASH},
        {"x-amz-date", S3_DATE},
    };
    s3_example("GET", "/test.txt", "", get_obj, 4, EMPTY_HASH,
               "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
               "x-amz-content-sha256:" EMPTY_HASH "\nx-amz-date:20130524T000000Z\n\n"
               "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY_HASH,
               "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");

    /* PUT "Welcome to Amazon S3." as test$file.text: the key goes through
     * our own S3 path encoding first. */
    char body_hash[65];
    st_sha256_hex("Welcome to Amazon S3.", 21, body_hash);
    CU_ASSERT_STRING_EQUAL(body_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    st_s3_site site = {.region = "us-east-1"};
    st_target t;
    CU_ASSERT_EQUAL_FATAL(st_s3_target(&site, "examplebucket", "test$file.text", NULL, &t), 0);
    CU_ASSERT_STRING_EQUAL((char *)t.path.data, "/test%24file.text");
    st_sigv4_header put_obj[] = {
        {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
        {"Host", "examplebucket.s3.amazonaws.com"},
        {"x-amz-content-sha256", body_hash},
        {"x-amz-date", S3_DATE},
        {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
    };
    s3_example("PUT", (char *)t.path.data, "", put_obj, 5, body_hash, NULL,
               "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    st_target_free(&t);

    st_sigv4_header bucket_req[] = {
        {"Host", "examplebucket.s3.amazonaws.com"},
        {"x-amz-content-sha256", EMPTY_HASH},
        {"x-amz-date", S3_DATE},
    };
    /* "?lifecycle" (no '=') signs as "lifecycle=". */
    s3_example("GET", "/", "lifecycle", bucket_req, 3, EMPTY_HASH,
               "GET\n/\nlifecycle=\nhost:examplebucket.s3.amazonaws.com\n"
               "x-amz-content-sha256:" EMPTY_HASH "\nx-amz-date:20130524T000000Z\n\n"
               "host;x-amz-content-sha256;x-amz-date\n" EMPTY_HASH,
               "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
    s3_example("GET", "/", "max-keys=2&prefix=J", bucket_req, 3, EMPTY_HASH, NULL,
               "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

/* ---- addresses ---------------------------------------------------------- */

static void test_url_parse(void)
{
    st_rurl u;
    st_error err;
    CU_ASSERT_EQUAL_FATAL(st_rurl_parse("s3://my-bucket/dir/a b+c.tfrecord", &u, &err), 0);
    CU_ASSERT_EQUAL(u.kind, ST_RURL_S3);
    CU_ASSERT_STRING_EQUAL(u.bucket, "my-bucket");
    CU_ASSERT_STRING_EQUAL(u.key, "dir/a b+c.tfrecord");
    st_rurl_free(&u);
    CU_ASSERT_EQUAL_FATAL(st_rurl_parse("gs://b/x", &u, &err), 0);
    CU_ASSERT_EQUAL(u.kind, ST_RURL_GCS);
    st_rurl_free(&u);
    CU_ASSERT_EQUAL_FATAL(st_rurl_parse("https://example.com/p?q=1", &u, &err), 0);
    CU_ASSERT_EQUAL(u.kind, ST_RURL_HTTP);
    st_rurl_free(&u);
    CU_ASSERT_EQUAL(st_rurl_parse("s3:///key", &u, &err), ST_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing bucket"));
    CU_ASSERT_EQUAL(st_rurl_parse("s3://bad@host/key", &u, &err), ST_EUSAGE);
    CU_ASSERT_EQUAL(st_rurl_parse("ftp://x/y", &u, &err), ST_EUSAGE);
    CU_ASSERT_EQUAL(st_rurl_parse("https://", &u, &err), ST_EUSAGE);

    char shown[256];
    st_rurl_display("https://h/p?X-Amz-Signature=abc&token=zzz", shown, sizeof shown);
    CU_ASSERT_STRING_EQUAL(shown, "https://h/p?X-Amz-Signature=***&token=***");
}

static void test_targets(void)
{
    st_target t;
    st_s3_site aws = {.region = "eu-west-1"};
    CU_ASSERT_EQUAL_FATAL(st_s3_target(&aws, "bkt", "dir/a b+c~.tfr", NULL, &t), 0);
    CU_ASSERT_STRING_EQUAL((char *)t.url.data, "https://bkt.s3.eu-west-1.amazonaws.com/dir/a%20b%2Bc~.tfr");
    CU_ASSERT_STRING_EQUAL((char *)t.host.data, "bkt.s3.eu-west-1.amazonaws.com");
    CU_ASSERT_STRING_EQUAL((char *)t.path.data, "/dir/a%20b%2Bc~.tfr");
    st_target_free(&t);
    /* dotted buckets go path-style */
    CU_ASSERT_EQUAL_FATAL(st_s3_target(&aws, "my.bkt", "k", NULL, &t), 0);
    CU_ASSERT_STRING_EQUAL((char *)t.url.data, "https://s3.eu-west-1.amazonaws.com/my.bkt/k");
    st_target_free(&t);
    st_s3_site local = {.endpoint = "http://127.0.0.1:9000", .region = "us-east-1", .path_style = true};
    CU_ASSERT_EQUAL_FATAL(st_s3_target(&local, "bkt", "k/1", "partNumber=1&uploadId=x", &t), 0);
    CU_ASSERT_STRING_EQUAL((char *)t.url.data, "http://127.0.0.1:9000/bkt/k/1?partNumber=1&uploadId=x");
    CU_ASSERT_STRING_EQUAL((char *)t.host.data, "127.0.0.1:9000");
    CU_ASSERT_STRING_EQUAL((char *)t.path.data, "/bkt/k/1");
    CU_ASSERT_STRING_EQUAL((char *)t.query.data, "partNumber=1&uploadId=x");
    st_target_free(&t);
    CU_ASSERT_EQUAL_FATAL(st_s3_target(&local, "bkt", "", "list-type=2", &t), 0);
    CU_ASSERT_STRING_EQUAL((char *)t.path.data, "/bkt");
    st_target_free(&t);

    CU_ASSERT_EQUAL_FATAL(st_gcs_media_target("https://storage.googleapis.com", "b", "dir/x y.tfr", &t), 0);
    CU_ASSERT_STRING_EQUAL((char *)t.url.data,
                           "https://storage.googleapis.com/storage/v1/b/b/o/dir%2Fx%20y.tfr?alt=media");
    st_target_free(&t);
    CU_ASSERT_EQUAL_FATAL(st_gcs_list_target("http://127.0.0.1:4443", "b", "dir/", "tok/=", &t), 0);
    CU_ASSERT_STRING_EQUAL((char *)t.url.data,
                           "http://127.0.0.1:4443/storage/v1/b/b/o?prefix=dir%2F&pageToken=tok%2F%3D"
                           "&fields=items%28name%29%2CnextPageToken");
    st_target_free(&t);
    CU_ASSERT_EQUAL_FATAL(st_plain_target("https://user:pw@h.example:8443/a/b?x=1#frag", &t), 0);
    CU_ASSERT_STRING_EQUAL((char *)t.host.data, "h.example:8443");
    CU_ASSERT_STRING_EQUAL((char *)t.path.data, "/a/b");
    CU_ASSERT_STRING_EQUAL((char *)t.query.data, "x=1");
    st_target_free(&t);
}

static void test_glob_and_xml(void)
{
    CU_ASSERT_TRUE(st_glob_match("data/*.parquet", "data/part-0.parquet"));
    CU_ASSERT_FALSE(st_glob_match("data/*.parquet", "data/sub/part-0.parquet"));
    CU_ASSERT_TRUE(st_glob_match("data/part-?.csv", "data/part-7.csv"));
    CU_ASSERT_TRUE(st_glob_match("d/[a-c]x", "d/bx"));
    CU_ASSERT_FALSE(st_glob_match("d/[!a-c]x", "d/bx"));
    CU_ASSERT_TRUE(st_glob_match("*", "abc"));
    CU_ASSERT_FALSE(st_glob_match("*", "a/b"));
    CU_ASSERT_TRUE(st_glob_match("*/*", "a/b"));
    CU_ASSERT_TRUE(st_remote_is_pattern("s3://b/dir/"));
    CU_ASSERT_TRUE(st_remote_is_pattern("gs://b/x*.csv"));
    CU_ASSERT_TRUE(st_remote_is_pattern("s3://b"));
    CU_ASSERT_FALSE(st_remote_is_pattern("s3://b/x.csv"));
    CU_ASSERT_FALSE(st_remote_is_pattern("https://h/x?y=*"));

    const char *xml = "<R><Key>a&amp;b&lt;c&#x41;&#66;</Key><Key>two</Key><Key>unterminated";
    st_buf out = {0};
    size_t pos = 0;
    CU_ASSERT_EQUAL(st_xml_next(xml, strlen(xml), "Key", &pos, &out), 1);
    CU_ASSERT_STRING_EQUAL((char *)out.data, "a&b<cAB");
    CU_ASSERT_EQUAL(st_xml_next(xml, strlen(xml), "Key", &pos, &out), 1);
    CU_ASSERT_STRING_EQUAL((char *)out.data, "two");
    CU_ASSERT_EQUAL(st_xml_next(xml, strlen(xml), "Key", &pos, &out), 0);
    st_buf_free(&out);
}

/* ---- credentials ---------------------------------------------------------- */

static char home[256];

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static void clear_aws_env(void)
{
    const char *vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                          "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
                          "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_ENDPOINT_URL",
                          "AWS_ENDPOINT_URL_S3", "GOOGLE_OAUTH_ACCESS_TOKEN", "CURL_CA_BUNDLE",
                          "SSL_CERT_FILE", "STORAGE_EMULATOR_HOST", "http_proxy", "https_proxy",
                          "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    setenv("HOME", home, 1);
}

static void test_credentials(void)
{
    char dir[300], path[320];
    snprintf(dir, sizeof dir, "%s/.aws", home);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/credentials", dir);
    write_text(path,
               "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\n"
               "aws_secret_access_key = secretDEFAULTsecret\n\n"
               "[prod]\n  aws_access_key_id=AKIDPROD  \naws_secret_access_key= secretPRODsecret\n"
               "aws_session_token = tokenPRODtoken\n");
    snprintf(path, sizeof path, "%s/config", dir);
    write_text(path, "[default]\nregion = eu-central-1\n[profile prod]\nregion=ap-south-1\n"
                     "[profile onlyconf]\naws_access_key_id=AKIDCONF\naws_secret_access_key=secretCONF\n");
    clear_aws_env();
    st_aws_creds c;
    st_error err;

    CU_ASSERT_EQUAL_FATAL(st_aws_creds_load(&c, false, &err), 0);
    CU_ASSERT_STRING_EQUAL(c.access_key, "AKIDDEFAULT");
    CU_ASSERT_STRING_EQUAL(c.secret, "secretDEFAULTsecret");
    CU_ASSERT_PTR_NULL(c.token);
    CU_ASSERT_STRING_EQUAL(c.region, "eu-central-1");
    CU_ASSERT_PTR_NULL(strstr(c.source, "secret"));
    st_aws_creds_free(&c);

    setenv("AWS_PROFILE", "prod", 1);
    CU_ASSERT_EQUAL_FATAL(st_aws_creds_load(&c, false, &err), 0);
    CU_ASSERT_STRING_EQUAL(c.access_key, "AKIDPROD");
    CU_ASSERT_STRING_EQUAL(c.secret, "secretPRODsecret");
    CU_ASSERT_STRING_EQUAL(c.token, "tokenPRODtoken");
    CU_ASSERT_STRING_EQUAL(c.region, "ap-south-1");
    st_aws_creds_free(&c);

    setenv("AWS_PROFILE", "onlyconf", 1);
    setenv("AWS_REGION", "us-west-2", 1);
    CU_ASSERT_EQUAL_FATAL(st_aws_creds_load(&c, false, &err), 0);
    CU_ASSERT_STRING_EQUAL(c.access_key, "AKIDCONF");
    CU_ASSERT_STRING_EQUAL(c.region, "us-west-2");
    st_aws_creds_free(&c);

    setenv("AWS_PROFILE", "missing", 1);
    CU_ASSERT_EQUAL(st_aws_creds_load(&c, false, &err), ST_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "secretDEFAULTsecret"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "secretPRODsecret"));

    /* environment keys win over files; no_sign gives anonymous */
    setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "secretENVsecret", 1);
    CU_ASSERT_EQUAL_FATAL(st_aws_creds_load(&c, false, &err), 0);
    CU_ASSERT_STRING_EQUAL(c.access_key, "AKIDENV");
    st_aws_creds_free(&c);
    CU_ASSERT_EQUAL_FATAL(st_aws_creds_load(&c, true, &err), 0);
    CU_ASSERT_PTR_NULL(c.access_key);
    CU_ASSERT_PTR_NULL(c.secret);
    st_aws_creds_free(&c);

    /* no files, no env: anonymous, default region */
    clear_aws_env();
    setenv("HOME", "/nonexistent-home-for-test", 1);
    CU_ASSERT_EQUAL_FATAL(st_aws_creds_load(&c, false, &err), 0);
    CU_ASSERT_PTR_NULL(c.access_key);
    CU_ASSERT_STRING_EQUAL(c.region, "us-east-1");
    st_aws_creds_free(&c);
    setenv("HOME", home, 1);

    char *tok = NULL;
    snprintf(path, sizeof path, "%s/gcs-token", home);
    write_text(path, "  ya29.secretGCStoken  \n");
    CU_ASSERT_EQUAL(st_gcs_token_load(path, &tok, &err), 0);
    CU_ASSERT_STRING_EQUAL(tok, "ya29.secretGCStoken");
    st_secret_free(tok);
    CU_ASSERT_EQUAL(st_gcs_token_load("/nonexistent/token", &tok, &err), ST_ENOTFOUND);
    setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "envGCStoken", 1);
    CU_ASSERT_EQUAL(st_gcs_token_load("/nonexistent/token", &tok, &err), 0);
    CU_ASSERT_STRING_EQUAL(tok, "envGCStoken");
    st_secret_free(tok);
    clear_aws_env();
}

/* Requests that fail (nothing listens on the port, a bad TLS file, an
 * unknown profile) must not show the secrets in their messages. */
static void assert_no_secret(const char *msg)
{
    const char *secrets[] = {"secretENVsecret", "sessionTOKENsecret", "ya29.secretGCStoken",
                             "secretPRODsecret"};
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++) {
        if (strstr(msg, secrets[i])) {
            fprintf(stderr, "\nsecret in message: %s\n", msg);
            CU_FAIL("secret in an error message");
        }
    }
}

static void log_collect(void *ctx, const char *line)
{
    st_buf *b = ctx;
    st_buf_printf(b, "%s\n", line);
}

static void test_no_secret_in_errors(void)
{
    clear_aws_env();
    setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "secretENVsecret", 1);
    setenv("AWS_SESSION_TOKEN", "sessionTOKENsecret", 1);
    setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.secretGCStoken", 1);
    st_buf log = {0};
    st_remote_config cfg;
    st_remote_config_init(&cfg);
    cfg.retries = 1;
    cfg.endpoint = "http://127.0.0.1:1";
    cfg.verbose = 2;
    cfg.log = log_collect;
    cfg.log_ctx = &log;
    st_error err;
    CU_ASSERT_EQUAL_FATAL(st_remote_init(&cfg, &err), 0);
    st_stream *s = NULL;
    int rc = st_stream_open("s3://bucket/key.tfrecord", &s, &err);
    CU_ASSERT_EQUAL(rc, ST_EUNREACHABLE); /* a refused connection */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "s3://bucket/key.tfrecord"));
    assert_no_secret(err.msg);
    setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:1", 1);
    st_remote_shutdown();
    CU_ASSERT_EQUAL_FATAL(st_remote_init(&cfg, &err), 0);
    rc = st_stream_open("gs://bucket/key.tfrecord", &s, &err);
    CU_ASSERT_EQUAL(rc, ST_EUNREACHABLE); /* a refused connection */
    assert_no_secret(err.msg);
    st_ostream *o = NULL;
    rc = st_ostream_create("s3://bucket/out.tfrecord", 0, &o, &err);
    CU_ASSERT_NOT_EQUAL(rc, 0);
    assert_no_secret(err.msg);
    rc = st_ostream_create("https://example.com/x", 0, &o, &err);
    CU_ASSERT_EQUAL(rc, ST_EUNSUPPORTED);
    char **urls = NULL;
    size_t n = 0;
    rc = st_remote_expand("s3://bucket/dir/*.csv", &urls, &n, &err);
    CU_ASSERT_EQUAL(rc, ST_EUNREACHABLE); /* a refused connection */
    assert_no_secret(err.msg);
    rc = st_remote_expand("s3://bucket/plain.csv", &urls, &n, &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(n, 1);
    st_remote_free_urls(urls, n);
    st_remote_shutdown();
    CU_ASSERT_PTR_NOT_NULL(log.data); /* verbose lines were produced */
    if (log.data)
        assert_no_secret((char *)log.data);
    st_buf_free(&log);

    /* After shutdown, URLs are refused cleanly. */
    rc = st_stream_open("s3://bucket/key", &s, &err);
    CU_ASSERT_EQUAL(rc, ST_EUNSUPPORTED);
    clear_aws_env();
}

int main(void)
{
    snprintf(home, sizeof home, "/tmp/st-sigv4-home-XXXXXX");
    if (!mkdtemp(home))
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("remote", NULL, NULL);
    CU_add_test(s, "sigv4 test-suite vectors", test_suite_vectors);
    CU_add_test(s, "sigv4 string to sign", test_string_to_sign);
    CU_add_test(s, "sigv4 signing key", test_signing_key);
    CU_add_test(s, "sigv4 S3 examples", test_s3_examples);
    CU_add_test(s, "url parsing", test_url_parse);
    CU_add_test(s, "request targets", test_targets);
    CU_add_test(s, "glob and xml", test_glob_and_xml);
    CU_add_test(s, "credentials", test_credentials);
    CU_add_test(s, "no secret in errors", test_no_secret_in_errors);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", home);
    return failures ? 1 : 0;
}
