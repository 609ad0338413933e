/*
 * test_records.c — records, stats, redaction and who answered from C (issue 6): the
 * redaction functions (buffers, NULLs, bytes that are not UTF-8), recuo_who_answered per CDN
 * and proxy with negative cases, the record builders for programs driving the state machine,
 * the record sink of recuo_retry_http — the exact JSON lines of a seeded run on a fake clock,
 * with no secret reaching the sink — and of recuo_retry, stats merging and the stats
 * recorder, alone and under recuo_retry_http.
 *
 * Every case of tests/vectors/redaction.json and origin.json is run by test_vectors.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recuo.h"

#include "check.h"

/* The numbers are ABI: they may never change. */
_Static_assert(RECUO_ORIGIN_API == 1 && RECUO_ORIGIN_PROXY == 2 && RECUO_ORIGIN_CDN == 3 &&
                   RECUO_ORIGIN_UNKNOWN == 4,
               "recuo_origin");
_Static_assert(RECUO_CONFIDENCE_LOW == 1 && RECUO_CONFIDENCE_MEDIUM == 2 &&
                   RECUO_CONFIDENCE_HIGH == 3,
               "recuo_confidence");
_Static_assert(RECUO_ERR_NO_RESPONSE == 11 && RECUO_ERR_INVALID_STATS == 12, "statuses");

/* A header from two string literals, with their exact lengths (no NUL needed). */
#define HDR(name, value) {(name), sizeof(name) - 1, (value), sizeof(value) - 1}
#define LIT(s) (s), (sizeof(s) - 1)

static int streq(const char *a, const char *b) {
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* ---- redaction -------------------------------------------------------------------------- */

static void redact_url_calls(void) {
    char buf[256];
    size_t written = 999;
    bool malformed = true;
    CHECK_STATUS(recuo_redact_url(LIT("https://alice:pw@api.example.com/v1/u/ana@example.com"
                                      "?api_key=K1&cpf=123.456.789-09&page=2"),
                                  buf, sizeof buf, &written, &malformed),
                 RECUO_OK);
    CHECK_CTX(streq(buf, "https://api.example.com/v1/u/[email]?api_key=[redacted]&cpf=[number]"
                         "&page=2"),
              "%s", buf);
    CHECK(written == strlen(buf) && !malformed);

    /* Optional outputs may be NULL; the empty URL may be NULL with length 0. */
    CHECK_STATUS(recuo_redact_url(NULL, 0, buf, sizeof buf, NULL, NULL), RECUO_OK);
    CHECK(buf[0] == '\0');

    /* Too small: what fits, NUL-terminated; the flag is still written. */
    malformed = true;
    CHECK_STATUS(recuo_redact_url(LIT("https://h.io/x?token=abc"), buf, 10, &written, &malformed),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK_CTX(streq(buf, "https://h") && written == 9 && !malformed, "%s %zu", buf, written);
    CHECK_STATUS(recuo_redact_url(LIT("https://h.io/"), buf, 0, &written, NULL),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(written == 0);

    /* The documented bound: 3 * len + 11 bytes, reached by empty secret values. */
    const char grow[] = "/?sid=&sid=&sid=";
    char exact[3 * (sizeof grow - 1) + 11];
    CHECK_STATUS(recuo_redact_url(LIT(grow), exact, sizeof exact, &written, NULL), RECUO_OK);
    CHECK_CTX(streq(exact, "/?sid=[redacted]&sid=[redacted]&sid=[redacted]"), "%s", exact);

    /* NULLs and lengths: nothing written. */
    buf[0] = 'x';
    written = 7;
    malformed = true;
    CHECK_STATUS(recuo_redact_url(NULL, 3, buf, sizeof buf, &written, &malformed),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK(buf[0] == 'x' && written == 7 && malformed);
    CHECK_STATUS(recuo_redact_url(LIT("x"), NULL, 8, &written, &malformed),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_redact_url("x", SIZE_MAX, buf, sizeof buf, NULL, NULL),
                 RECUO_ERR_LENGTH_TOO_LARGE);

    /* Malformed: redacted as far as it can be read, and said so. */
    CHECK_STATUS(recuo_redact_url(LIT("ht!tp://user:pw@host/a b?token=x"), buf, sizeof buf,
                                  NULL, &malformed),
                 RECUO_OK);
    CHECK_CTX(malformed && strstr(buf, "pw@") == NULL && strstr(buf, "token=x") == NULL, "%s",
              buf);

    /* Bytes that are not UTF-8: replaced by U+FFFD (EF BF BD), never passed through; the URL
     * is malformed. A NUL inside is a byte like any other (a control character). */
    CHECK_STATUS(recuo_redact_url(LIT("https://h.io/a\xff\xfe?token=\xc3\x28&q=\x80"), buf,
                                  sizeof buf, &written, &malformed),
                 RECUO_OK);
    CHECK_CTX(streq(buf, "https://h.io/a\xef\xbf\xbd\xef\xbf\xbd?token=[redacted]&q=\xef\xbf\xbd"),
              "%s", buf);
    CHECK(malformed && strchr(buf, '\xff') == NULL && strchr(buf, '\x80') == NULL);
    CHECK_STATUS(recuo_redact_url(LIT("https://h.io/a\0b?key=s"), buf, sizeof buf, &written,
                                  &malformed),
                 RECUO_OK);
    CHECK(malformed && written == 31 && memcmp(buf, "https://h.io/a\0b?key=[redacted]", 32) == 0);
}

static void redact_header_calls(void) {
    static const struct {
        const char *name, *value, *expected;
    } table[] = {
        {"Authorization", "Bearer s3cr3t", "[redacted]"},
        {"proxy-authorization", "Basic eA==", "[redacted]"},
        {"COOKIE", "sid=abc", "[redacted]"},
        {"Set-Cookie", "PHPSESSID=1", "[redacted]"},
        {"X-Api-Key", "k", "[redacted]"},
        {"X-Auth-Token", "t", "[redacted]"},
        {"Location", "https://u:p@h.io/next?access_token=z&page=2", "https://h.io/next?"
                                                                     "access_token=[redacted]"
                                                                     "&page=2"},
        {"Link", "<https://h.io/v1/items?page=2&token=x>; rel=\"next\"",
         "<https://h.io/v1/items?page=2&token=[redacted]>; rel=\"next\""},
        {"Content-Type", "application/json", "application/json"},
        {"X-Request-Id", "req-7", "req-7"},
    };
    char buf[128];
    size_t written;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        CHECK_STATUS(recuo_redact_header_value(table[i].name, strlen(table[i].name),
                                               table[i].value, strlen(table[i].value), buf,
                                               sizeof buf, &written),
                     RECUO_OK);
        CHECK_CTX(streq(buf, table[i].expected) && written == strlen(buf), "%s: %s",
                  table[i].name, buf);
        CHECK_CTX(recuo_is_sensitive_name(table[i].name, strlen(table[i].name)) ==
                      streq(table[i].expected, "[redacted]"),
                  "%s", table[i].name);
    }
    CHECK(recuo_is_sensitive_name(LIT("api%5Fkey")));
    CHECK(!recuo_is_sensitive_name(NULL, 3) && !recuo_is_sensitive_name(NULL, 0));

    /* A name that is not UTF-8 cannot be judged: its value is taken for a secret. A value's
     * invalid bytes become U+FFFD. */
    CHECK(recuo_is_sensitive_name(LIT("Cook\xffie")));
    CHECK_STATUS(recuo_redact_header_value(LIT("X-\xff"), LIT("plain"), buf, sizeof buf, NULL),
                 RECUO_OK);
    CHECK(streq(buf, "[redacted]"));
    CHECK_STATUS(recuo_redact_header_value(LIT("Via"), LIT("1.1 \xfe"), buf, sizeof buf, NULL),
                 RECUO_OK);
    CHECK(streq(buf, "1.1 \xef\xbf\xbd"));

    /* Truncation, NULLs. */
    CHECK_STATUS(recuo_redact_header_value(LIT("Cookie"), LIT("a"), buf, 5, &written),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(streq(buf, "[red") && written == 4);
    CHECK_STATUS(recuo_redact_header_value(NULL, 1, LIT("v"), buf, sizeof buf, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_redact_header_value(LIT("n"), NULL, 1, buf, sizeof buf, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_redact_header_value(LIT("n"), LIT("v"), NULL, 8, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
}

/* ---- who answered ----------------------------------------------------------------------- */

/* Whether one of the evidence lines of the answer contains `part`. */
static int evidence_has(const recuo_header *h, size_t n, const char *expected, size_t count,
                        const char *part) {
    for (size_t i = 0; i < count; i++) {
        char line[256];
        if (recuo_who_answered_evidence(h, n, expected, expected ? strlen(expected) : 0, i, line,
                                        sizeof line, NULL) == RECUO_OK &&
            strstr(line, part) != NULL) {
            return 1;
        }
    }
    return 0;
}

static void who_answered_calls(void) {
    /* Each CDN the issue names, behind an HTML page where JSON was expected. */
    static const struct {
        recuo_header header;
        const char *vendor;
    } cdns[] = {
        {HDR("CF-Ray", "8a1b2c3d4e5f-GRU"), "Cloudflare"},
        {HDR("X-Amz-Cf-Id", "abc=="), "CloudFront"},
        {HDR("X-Fastly-Request-ID", "f00"), "Fastly"},
        {HDR("X-Served-By", "cache-gru1234-GRU"), "Fastly"},
        {HDR("X-Akamai-Transformed", "9 - 0 pmb=mRUM,1"), "Akamai"},
        {HDR("Akamai-GRN", "0.1.2"), "Akamai"},
        {HDR("X-Azure-Ref", "0abc"), "Azure Front Door"},
    };
    const char *json = "application/json";
    for (size_t i = 0; i < sizeof cdns / sizeof cdns[0]; i++) {
        recuo_header h[] = {cdns[i].header, HDR("Content-Type", "text/html")};
        recuo_who_answered_result w = {0, 0, 0};
        CHECK_STATUS(recuo_who_answered(h, 2, json, strlen(json), &w), RECUO_OK);
        CHECK_CTX(w.origin == RECUO_ORIGIN_CDN && w.confidence == RECUO_CONFIDENCE_HIGH,
                  "%s: %s, %s", cdns[i].vendor, recuo_origin_name(w.origin),
                  recuo_confidence_name(w.confidence));
        CHECK_CTX(evidence_has(h, 2, json, w.evidence_count, cdns[i].vendor), "%s",
                  cdns[i].vendor);
    }

    /* Proxies; a brand alone; the API through a CDN; nothing at all. */
    static const struct {
        recuo_header h[3];
        size_t n;
        const char *expected;
        recuo_origin origin;
        recuo_confidence confidence;
        const char *evidence;
    } cases[] = {
        {{HDR("Via", "1.1 squid"), HDR("Content-Type", "text/html")}, 2, "application/json",
         RECUO_ORIGIN_PROXY, RECUO_CONFIDENCE_MEDIUM, "via: 1.1 squid"},
        {{HDR("Server", "nginx")}, 1, NULL, RECUO_ORIGIN_PROXY, RECUO_CONFIDENCE_LOW, "nginx"},
        {{HDR("X-Cache", "Hit from cloudfront")}, 1, NULL, RECUO_ORIGIN_CDN, RECUO_CONFIDENCE_LOW,
         "x-cache"},
        {{HDR("Server", "cloudflare"), HDR("Content-Type", "text/html")}, 2, "application/json",
         RECUO_ORIGIN_CDN, RECUO_CONFIDENCE_MEDIUM, "weak evidence"},
        {{HDR("CF-Ray", "x"), HDR("Content-Type", "application/json; charset=utf-8"),
          HDR("X-Request-Id", "r-1")},
         3, "application/json", RECUO_ORIGIN_API, RECUO_CONFIDENCE_HIGH, "set by the API"},
        {{HDR("Date", "Sun, 06 Nov 1994 08:49:37 GMT")}, 1, NULL, RECUO_ORIGIN_UNKNOWN,
         RECUO_CONFIDENCE_LOW, NULL},
        {{HDR("Content-Type", "text/html")}, 1, "application/json", RECUO_ORIGIN_UNKNOWN,
         RECUO_CONFIDENCE_LOW, "not the application/json"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *e = cases[i].expected;
        recuo_who_answered_result w = {0, 0, 0};
        CHECK_STATUS(recuo_who_answered(cases[i].h, cases[i].n, e, e ? strlen(e) : 0, &w),
                     RECUO_OK);
        CHECK_CTX(w.origin == cases[i].origin && w.confidence == cases[i].confidence,
                  "case %zu: %s, %s", i, recuo_origin_name(w.origin),
                  recuo_confidence_name(w.confidence));
        if (cases[i].evidence != NULL) {
            CHECK_CTX(evidence_has(cases[i].h, cases[i].n, e, w.evidence_count,
                                   cases[i].evidence),
                      "case %zu: no \"%s\"", i, cases[i].evidence);
        } else {
            CHECK(w.evidence_count == 0);
        }
    }

    /* Arguments: names, NULLs, text that is not UTF-8, an index past the end. */
    CHECK(streq(recuo_origin_name(RECUO_ORIGIN_API), "api") &&
          streq(recuo_origin_name(RECUO_ORIGIN_PROXY), "proxy") &&
          streq(recuo_origin_name(RECUO_ORIGIN_CDN), "cdn") &&
          streq(recuo_origin_name(RECUO_ORIGIN_UNKNOWN), "unknown") &&
          streq(recuo_origin_name(0), "unknown"));
    CHECK(streq(recuo_confidence_name(RECUO_CONFIDENCE_LOW), "low") &&
          streq(recuo_confidence_name(RECUO_CONFIDENCE_MEDIUM), "medium") &&
          streq(recuo_confidence_name(RECUO_CONFIDENCE_HIGH), "high") &&
          streq(recuo_confidence_name(99), "unknown"));
    recuo_header h[] = {HDR("CF-Ray", "x")};
    recuo_who_answered_result w = {RECUO_ORIGIN_API, RECUO_CONFIDENCE_LOW, 42};
    CHECK_STATUS(recuo_who_answered(h, 1, NULL, 0, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_who_answered(NULL, 1, NULL, 0, &w), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_who_answered(h, 1, LIT("text/\xff"), &w), RECUO_ERR_NOT_UTF8);
    CHECK(w.origin == RECUO_ORIGIN_API && w.evidence_count == 42);
    CHECK_STATUS(recuo_who_answered(NULL, 0, NULL, 0, &w), RECUO_OK);
    CHECK(w.origin == RECUO_ORIGIN_UNKNOWN && w.evidence_count == 0);
    char line[8];
    size_t written = 0;
    CHECK_STATUS(recuo_who_answered_evidence(h, 1, NULL, 0, 1, line, sizeof line, NULL),
                 RECUO_ERR_INDEX_OUT_OF_RANGE);
    CHECK_STATUS(recuo_who_answered_evidence(h, 1, NULL, 0, 0, NULL, 8, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_who_answered_evidence(h, 1, NULL, 0, 0, line, sizeof line, &written),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(streq(line, "cf-ray ") && written == 7);
    /* Header bytes that are not UTF-8 never fail the call. */
    recuo_header odd[] = {HDR("Via", "1.1 \xff")};
    CHECK_STATUS(recuo_who_answered(odd, 1, NULL, 0, &w), RECUO_OK);
    CHECK(w.origin == RECUO_ORIGIN_PROXY);
}

/* ---- the record builders ---------------------------------------------------------------- */

static void record_builders(void) {
    recuo_outcome outcome = {RECUO_OUTCOME_STATUS, 429, 0};
    recuo_header headers[] = {
        HDR("Authorization", "Bearer s3cr3t"), HDR("Retry-After", "12"),
        HDR("X-RateLimit-Remaining", "0"),     HDR("X-Request-Id", "req-7"),
        HDR("Set-Cookie", "sid=abc"),
    };
    recuo_verdict verdict = {RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED, RECUO_WAIT_MS, 12000};
    recuo_decision decision = {RECUO_DECISION_RETRY, 12345, 1, RECUO_GIVE_UP_NONE, false, 0};
    const char url[] = "https://u:pw@api.example.com/users/ana@example.com?api_key=k1&page=2";
    char line[512];
    size_t written = 0;
    CHECK_STATUS(recuo_record_attempt_json(INT64_C(784111777123), 250, LIT("GET"), LIT(url),
                                           &outcome, headers, 5, &verdict, &decision, line,
                                           sizeof line, &written),
                 RECUO_OK);
    CHECK_CTX(streq(line, "{\"type\":\"attempt\",\"start\":\"1994-11-06T08:49:37.123Z\","
                          "\"elapsed_ms\":250,\"method\":\"GET\",\"url\":\"https://"
                          "api.example.com/users/[email]?api_key=[redacted]&page=2\","
                          "\"status\":429,\"request_id\":\"req-7\",\"wait_headers\":{"
                          "\"Retry-After\":\"12\",\"X-RateLimit-Remaining\":\"0\"},"
                          "\"delay_ms\":12345,\"decision\":\"retry\",\"reason\":"
                          "\"rate_limited\"}"),
              "%s", line);
    CHECK(written == strlen(line));

    /* A transport failure given up for a reason of the loop's own. */
    recuo_outcome reset = {RECUO_OUTCOME_TRANSPORT, 0, RECUO_TRANSPORT_RESET};
    recuo_verdict server = {RECUO_VERDICT_RETRY, RECUO_CAUSE_RESET, RECUO_WAIT_NONE, 0};
    recuo_decision exhausted = {RECUO_DECISION_GIVE_UP, 0, 0, RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED,
                                false, 0};
    CHECK_STATUS(recuo_record_attempt_json(0, 7, LIT("PUT"), LIT("/a"), &reset, NULL, 0, &server,
                                           &exhausted, line, sizeof line, NULL),
                 RECUO_OK);
    CHECK_CTX(streq(line, "{\"type\":\"attempt\",\"start\":\"1970-01-01T00:00:00.000Z\","
                          "\"elapsed_ms\":7,\"method\":\"PUT\",\"url\":\"/a\",\"transport\":"
                          "\"reset\",\"request_id\":null,\"wait_headers\":{},\"delay_ms\":null,"
                          "\"decision\":\"give_up\",\"reason\":\"attempts_exhausted\"}"),
              "%s", line);

    /* Too small: truncated, terminated; a larger buffer gets the same line. */
    char small[32];
    CHECK_STATUS(recuo_record_attempt_json(0, 7, LIT("PUT"), LIT("/a"), &reset, NULL, 0, &server,
                                           &exhausted, small, sizeof small, &written),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(written == 31 && strncmp(small, line, 31) == 0 && small[31] == '\0');

    /* Bad arguments: nothing written. */
    line[0] = 'x';
    recuo_decision retired = {4, 0, 1, RECUO_GIVE_UP_NONE, false, 0}; /* once "proceed" */
    recuo_decision give_up_none = {RECUO_DECISION_GIVE_UP, 0, 0, RECUO_GIVE_UP_NONE, false, 0};
    recuo_outcome bad = {RECUO_OUTCOME_TRANSPORT, 0, 77};
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("GET"), LIT("/"), &outcome, NULL, 0,
                                           &verdict, &retired, line, sizeof line, NULL),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("GET"), LIT("/"), &outcome, NULL, 0,
                                           &verdict, &give_up_none, line, sizeof line, NULL),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("GET"), LIT("/"), &bad, NULL, 0, &verdict,
                                           &decision, line, sizeof line, NULL),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("G\xffT"), LIT("/"), &outcome, NULL, 0,
                                           &verdict, &decision, line, sizeof line, NULL),
                 RECUO_ERR_NOT_UTF8);
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("GET"), LIT("/"), NULL, NULL, 0, &verdict,
                                           &decision, line, sizeof line, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("GET"), LIT("/"), &outcome, NULL, 1,
                                           &verdict, &decision, line, sizeof line, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("GET"), LIT("/"), &outcome, NULL, 0, NULL,
                                           &decision, line, sizeof line, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("GET"), LIT("/"), &outcome, NULL, 0,
                                           &verdict, NULL, line, sizeof line, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("GET"), LIT("/"), &outcome, NULL, 0,
                                           &verdict, &decision, NULL, 8, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK(line[0] == 'x');

    /* A URL that is not UTF-8 is recorded malformed, its bytes replaced. */
    CHECK_STATUS(recuo_record_attempt_json(0, 0, LIT("GET"), LIT("/\xff?token=\xfe"), &outcome,
                                           NULL, 0, &verdict, &decision, line, sizeof line,
                                           NULL),
                 RECUO_OK);
    CHECK_CTX(strstr(line, "\"url\":\"/\xef\xbf\xbd?token=[redacted]\",\"url_malformed\":true") !=
                  NULL,
              "%s", line);

    /* The result, from a report. */
    recuo_report report = {5, RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED, 1234, 4, false, 0,
                           RECUO_GIVE_UP_NONE, false, 0};
    CHECK_STATUS(recuo_record_result_json(0, LIT("POST"), LIT("/pay?token=x\"y"), &report, line,
                                          sizeof line, &written),
                 RECUO_OK);
    CHECK_CTX(streq(line, "{\"type\":\"result\",\"start\":\"1970-01-01T00:00:00.000Z\","
                          "\"method\":\"POST\",\"url\":\"/pay?token=[redacted]\",\"result\":"
                          "\"gave_up\",\"attempts\":5,\"reason\":\"attempts_exhausted\","
                          "\"total_ms\":1234}"),
              "%s", line);
    recuo_report success = {2, RECUO_GIVE_UP_NONE, 40, 1, false, 0, RECUO_GIVE_UP_NONE, false, 0};
    CHECK_STATUS(recuo_record_result_json(INT64_C(784111777000), NULL, 0, NULL, 0, &success, line,
                                          sizeof line, NULL),
                 RECUO_OK);
    CHECK_CTX(streq(line, "{\"type\":\"result\",\"start\":\"1994-11-06T08:49:37.000Z\","
                          "\"method\":\"\",\"url\":\"\",\"result\":\"success\",\"attempts\":2,"
                          "\"reason\":null,\"total_ms\":40}"),
              "%s", line);
    recuo_report odd = {1, 0, 0, 0, false, 0, 0, false, 0};
    odd.reason = 42;
    CHECK_STATUS(recuo_record_result_json(0, NULL, 0, NULL, 0, &odd, line, sizeof line, NULL),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_record_result_json(0, NULL, 0, NULL, 0, NULL, line, sizeof line, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
}

/* ---- the record sink of recuo_retry_http ------------------------------------------------ */

#define MAX_LINES 16

/* A fake server and clock: the attempts answer `statuses` in turn (the last repeats), each
 * taking 25 ms of the fake clock; the sleep advances it. */
struct fake {
    const recuo_policy *policy;
    const uint16_t *statuses;
    size_t nstatuses;
    int skip_response; /* the operation "forgets" recuo_attempt_context_set_response */
    uint64_t now_ms;
    uint32_t calls;
    char *lines[MAX_LINES];
    size_t nlines;
    int overflow;
    int context_errors_ok;
};

static uint64_t fake_monotonic(void *user_data) {
    return ((struct fake *)user_data)->now_ms;
}

static int64_t fake_wall(void *user_data) {
    return INT64_C(1700000000000) + (int64_t)((struct fake *)user_data)->now_ms;
}

static void fake_sleep(uint64_t ms, void *user_data) {
    ((struct fake *)user_data)->now_ms += ms;
}

static void sink(const char *json_line, size_t len, void *user_data) {
    struct fake *f = user_data;
    if (f->nlines == MAX_LINES || strlen(json_line) != len) {
        f->overflow = 1;
        return;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        f->overflow = 1;
        return;
    }
    memcpy(copy, json_line, len + 1);
    f->lines[f->nlines++] = copy;
}

static void free_lines(struct fake *f) {
    for (size_t i = 0; i < f->nlines; i++) {
        free(f->lines[i]);
    }
    f->nlines = 0;
}

static void fetch(uint32_t attempt, const char *key, recuo_attempt_context *context,
                  recuo_verdict *verdict, void *user_data) {
    (void)key;
    struct fake *f = user_data;
    f->calls++;
    f->now_ms += 25;
    uint16_t status = f->statuses[attempt < f->nstatuses ? attempt : f->nstatuses - 1];
    /* What a real server might send back, secrets included: none may reach the sink. */
    recuo_header headers[] = {
        HDR("Retry-After", "1"),
        HDR("X-Request-Id", "req-42"),
        HDR("Set-Cookie", "session=SECRET-COOKIE"),
        HDR("Location", "https://bob:hunter2@api.example.com/v1/pay?token=LEAKED"),
        HDR("Content-Type", "application/json"),
    };
    recuo_outcome outcome = {RECUO_OUTCOME_STATUS, status, 0};
    if (attempt == 0) {
        /* The context refuses what is wrong, and keeps nothing of it. */
        recuo_outcome bad = {0, 200, 0};
        f->context_errors_ok =
            recuo_attempt_context_set_response(NULL, &outcome, headers, 5) ==
                RECUO_ERR_NULL_ARGUMENT &&
            recuo_attempt_context_set_response(context, NULL, NULL, 0) ==
                RECUO_ERR_NULL_ARGUMENT &&
            recuo_attempt_context_set_response(context, &bad, NULL, 0) ==
                RECUO_ERR_INVALID_ENUM &&
            recuo_attempt_context_set_response(context, &outcome, NULL, 2) ==
                RECUO_ERR_NULL_ARGUMENT;
    }
    if (!f->skip_response) {
        recuo_attempt_context_set_response(context, &outcome, headers, 5);
    }
    recuo_classify(f->policy, &outcome, "POST", 4, true, headers, 5, fake_wall(f), verdict);
}

static const char *const SECRETS[] = {"s3cret",  "alice",  "K123",          "ana@",
                                      "hunter2", "LEAKED", "SECRET-COOKIE", "bob:"};

static void no_secret_in(const struct fake *f) {
    for (size_t i = 0; i < f->nlines; i++) {
        for (size_t s = 0; s < sizeof SECRETS / sizeof SECRETS[0]; s++) {
            CHECK_CTX(strstr(f->lines[i], SECRETS[s]) == NULL, "%s in %s", SECRETS[s],
                      f->lines[i]);
        }
    }
}

static recuo_retry_options *fake_options(void) {
    recuo_retry_options *o = recuo_retry_options_new();
    CHECK(o != NULL);
    CHECK_STATUS(recuo_retry_options_set_seed(o, 7), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_sleep(o, fake_sleep), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_clock(o, fake_monotonic, fake_wall), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_record_sink(o, sink), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_request(
                     o, LIT("POST"),
                     LIT("https://alice:s3cret@api.example.com/v1/pay?api_key=K123"
                         "&to=ana@example.com&n=2")),
                 RECUO_OK);
    return o;
}

static void check_lines(const struct fake *f, const char *const *expected, size_t n) {
    CHECK_CTX(!f->overflow && f->nlines == n, "%zu lines, expected %zu", f->nlines, n);
    for (size_t i = 0; i < n && i < f->nlines; i++) {
        CHECK_CTX(streq(f->lines[i], expected[i]), "line %zu:\n  got      %s\n  expected %s", i,
                  f->lines[i], expected[i]);
    }
    no_secret_in(f);
}

static void sink_through_recuo_retry_http(void) {
    recuo_policy *policy = recuo_policy_new();
    recuo_retry_options *o = fake_options();
    recuo_stats_recorder *stats = recuo_stats_recorder_new();
    CHECK_STATUS(recuo_retry_options_set_stats_recorder(o, stats), RECUO_OK);

    /* 503, then 429, then 201: two retries (the server's second plus the spread, drawn by the
     * core's Operation from the options' seed: the key no longer draws from it), a success. */
    static const uint16_t statuses[] = {503, 429, 201};
    struct fake f = {policy, statuses, 3, 0, 1000, 0, {NULL}, 0, 0, 0};
    recuo_report report;
    uint64_t delays[4];
    size_t ndelays = 0;
    CHECK_STATUS(recuo_retry_http(policy, fetch, &f, o, &report, delays, 4, &ndelays), RECUO_OK);
    CHECK(f.calls == 3 && report.attempts == 3 && ndelays == 2 && f.context_errors_ok);
    static const char *const success[] = {
        "{\"type\":\"attempt\",\"start\":\"2023-11-14T22:13:21.000Z\",\"elapsed_ms\":25,"
        "\"method\":\"POST\",\"url\":\"https://api.example.com/v1/pay?api_key=[redacted]"
        "&to=[email]&n=2\",\"status\":503,\"request_id\":\"req-42\",\"wait_headers\":{"
        "\"Retry-After\":\"1\"},\"delay_ms\":1006,\"decision\":\"retry\",\"reason\":"
        "\"unavailable\"}",
        "{\"type\":\"attempt\",\"start\":\"2023-11-14T22:13:22.031Z\",\"elapsed_ms\":25,"
        "\"method\":\"POST\",\"url\":\"https://api.example.com/v1/pay?api_key=[redacted]"
        "&to=[email]&n=2\",\"status\":429,\"request_id\":\"req-42\",\"wait_headers\":{"
        "\"Retry-After\":\"1\"},\"delay_ms\":1123,\"decision\":\"retry\",\"reason\":"
        "\"rate_limited\"}",
        "{\"type\":\"attempt\",\"start\":\"2023-11-14T22:13:23.179Z\",\"elapsed_ms\":25,"
        "\"method\":\"POST\",\"url\":\"https://api.example.com/v1/pay?api_key=[redacted]"
        "&to=[email]&n=2\",\"status\":201,\"request_id\":\"req-42\",\"wait_headers\":{"
        "\"Retry-After\":\"1\"},\"delay_ms\":null,\"decision\":\"done\",\"reason\":"
        "\"success\"}",
        "{\"type\":\"result\",\"start\":\"2023-11-14T22:13:21.000Z\",\"method\":\"POST\","
        "\"url\":\"https://api.example.com/v1/pay?api_key=[redacted]&to=[email]&n=2\","
        "\"result\":\"success\",\"attempts\":3,\"reason\":null,\"total_ms\":2204}",
    };
    check_lines(&f, success, 4);
    CHECK(delays[0] == 1006 && delays[1] == 1123 && report.elapsed_ms == 2204);
    free_lines(&f);

    /* The same run twice gives the same lines (a seeded run on a fake clock is exact). */
    f.now_ms = 1000;
    f.calls = 0;
    CHECK_STATUS(recuo_retry_http(policy, fetch, &f, o, NULL, NULL, 0, NULL), RECUO_OK);
    check_lines(&f, success, 4);
    free_lines(&f);

    /* 503 forever, two attempts: a retry, then the give-up of the loop's own. */
    CHECK_STATUS(recuo_policy_set_max_attempts(policy, 2), RECUO_OK);
    static const uint16_t unavailable[] = {503};
    struct fake g = {policy, unavailable, 1, 0, 0, 0, {NULL}, 0, 0, 0};
    CHECK_STATUS(recuo_retry_http(policy, fetch, &g, o, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK(report.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED && g.nlines == 3);
    CHECK_CTX(g.nlines == 3 && strstr(g.lines[0], "\"decision\":\"retry\"") != NULL &&
                  strstr(g.lines[1], "\"delay_ms\":null,\"decision\":\"give_up\",\"reason\":"
                                     "\"attempts_exhausted\"}") != NULL &&
                  strstr(g.lines[2], "\"result\":\"gave_up\",\"attempts\":2,\"reason\":"
                                     "\"attempts_exhausted\"") != NULL,
              "%s", g.nlines == 3 ? g.lines[1] : "?");
    no_secret_in(&g);
    free_lines(&g);

    /* A 400 is permanent: one attempt record whose reason is the verdict's cause. */
    static const uint16_t bad_request[] = {400};
    struct fake h = {policy, bad_request, 1, 0, 0, 0, {NULL}, 0, 0, 0};
    CHECK_STATUS(recuo_retry_http(policy, fetch, &h, o, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK_CTX(h.nlines == 2 && strstr(h.lines[0], "\"status\":400") != NULL &&
                  strstr(h.lines[0], "\"decision\":\"give_up\",\"reason\":\"permanent\"") !=
                      NULL &&
                  strstr(h.lines[1], "\"reason\":\"permanent\"") != NULL,
              "%zu lines", h.nlines);
    free_lines(&h);

    /* An operation that sets no response stops the loop as a permanent failure would: its
     * attempt (with no HTTP meaning) and the result are recorded. */
    struct fake n = {policy, unavailable, 1, 1, 0, 0, {NULL}, 0, 0, 0};
    CHECK_STATUS(recuo_retry_http(policy, fetch, &n, o, &report, NULL, 0, NULL),
                 RECUO_ERR_NO_RESPONSE);
    CHECK(n.calls == 1 && report.attempts == 1 && report.reason == RECUO_GIVE_UP_PERMANENT);
    CHECK_CTX(n.nlines == 2 &&
                  strstr(n.lines[0], "\"transport\":\"other\",\"request_id\":null,"
                                     "\"wait_headers\":{},\"delay_ms\":null,\"decision\":"
                                     "\"give_up\",\"reason\":\"permanent\"}") != NULL &&
                  strstr(n.lines[1], "\"result\":\"gave_up\",\"attempts\":1,\"reason\":"
                                     "\"permanent\"") != NULL,
              "%s", n.nlines > 0 ? n.lines[0] : "no line");
    free_lines(&n);
    CHECK_STATUS(recuo_retry_http(policy, NULL, &n, o, NULL, NULL, 0, NULL),
                 RECUO_ERR_NULL_ARGUMENT);

    /* The stats of the four runs that reached the server: starts on the fake clock. */
    recuo_stats s;
    CHECK_STATUS(recuo_stats_recorder_snapshot(stats, &s), RECUO_OK);
    CHECK_CTX(s.initial == 5 && s.retries == 5 && s.successes == 2 && s.failures == 3,
              "%" PRIu64 " + %" PRIu64 ", %" PRIu64 " ok, %" PRIu64 " failed", s.initial,
              s.retries, s.successes, s.failures);
    /* 429s and 503s among the verdicts, the last attempt's too (SPEC §6). */
    CHECK_CTX(s.throttled == 2 && s.unavailable == 4, "%" PRIu64 " 429s, %" PRIu64 " 503s",
              s.throttled, s.unavailable);
    CHECK(s.max_in_flight == 1 && s.has_starts && s.elapsed_ms == 0);

    recuo_stats_recorder_free(stats);
    recuo_retry_options_free(o);
    recuo_policy_free(policy);
}

/* The metric points of a recuo_retry_http loop, as the callback receives them: the callback
 * gets the call's user_data, a fake whose first member is what `fetch` reads. */
struct fake_with_points {
    struct fake f;
    char lines[16][200];
    size_t n;
    int bad;
};

static void keep_point(const recuo_metric_point *p, void *user_data) {
    struct fake_with_points *k = user_data;
    if (k->n == 16) {
        k->bad = 1;
        return;
    }
    char *line = k->lines[k->n++];
    int at = snprintf(line, 200, "%s %s %s %d %.3f", p->prometheus_name, p->otel_name, p->unit,
                      (int)p->kind, p->value);
    for (size_t i = 0; i < p->attribute_count && at > 0 && at < 200; i++) {
        at += snprintf(line + at, 200 - (size_t)at, " %s|%s|%s", p->attributes[i].key,
                       p->attributes[i].label, p->attributes[i].value);
    }
    k->bad |= (p->attribute_count == 0) != (p->attributes == NULL);
}

/* A request retried twice after 503s: an attempt point for each attempt, a delay point (the
 * server's Retry-After) for each retry, under the names every language uses. */
static void metrics_through_recuo_retry_http(void) {
    recuo_policy *policy = recuo_policy_new();
    recuo_retry_options *o = fake_options();
    CHECK_STATUS(recuo_retry_options_set_record_sink(o, NULL), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_metrics(o, keep_point), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_metrics(NULL, keep_point), RECUO_ERR_NULL_ARGUMENT);
    static const uint16_t statuses[] = {503, 503, 201};
    struct fake_with_points k;
    memset(&k, 0, sizeof k);
    k.f = (struct fake){policy, statuses, 3, 0, 1000, 0, {NULL}, 0, 0, 0};
    uint64_t delays[4];
    size_t ndelays = 0;
    recuo_report report;
    CHECK_STATUS(recuo_retry_http(policy, fetch, &k, o, &report, delays, 4, &ndelays), RECUO_OK);
    CHECK(report.attempts == 3 && ndelays == 2 && !k.bad);
    char expected[5][200];
    snprintf(expected[0], 200,
             "recuo_attempts_total recuo.attempts {attempt} 1 1.000"
             " recuo.outcome|recuo_outcome|503 recuo.reason|recuo_reason|unavailable");
    snprintf(expected[1], 200,
             "recuo_retry_delay_seconds recuo.retry.delay s 2 %.3f"
             " recuo.reason|recuo_reason|unavailable recuo.wait.source|recuo_wait_source|server",
             (double)delays[0] / 1000.0);
    snprintf(expected[2], 200, "%s", expected[0]);
    snprintf(expected[3], 200,
             "recuo_retry_delay_seconds recuo.retry.delay s 2 %.3f"
             " recuo.reason|recuo_reason|unavailable recuo.wait.source|recuo_wait_source|server",
             (double)delays[1] / 1000.0);
    snprintf(expected[4], 200,
             "recuo_attempts_total recuo.attempts {attempt} 1 1.000"
             " recuo.outcome|recuo_outcome|201 recuo.reason|recuo_reason|success");
    CHECK_CTX(k.n == 5, "%zu points", k.n);
    for (size_t i = 0; i < 5 && i < k.n; i++) {
        CHECK_CTX(streq(k.lines[i], expected[i]), "point %zu:\n  got      %s\n  expected %s", i,
                  k.lines[i], expected[i]);
    }
    recuo_retry_options_free(o);
    recuo_policy_free(policy);
}

/* recuo_retry's operation tells nothing of the response: its attempts are recorded with no
 * HTTP meaning (a failure as transport `other`), then the result. */
static void plain_operation(uint32_t attempt, const char *key, recuo_verdict *verdict,
                            void *user_data) {
    (void)key;
    struct fake *f = user_data;
    f->calls++;
    f->now_ms += 10;
    verdict->verdict = attempt == 0 ? RECUO_VERDICT_RETRY : RECUO_VERDICT_SUCCESS;
    verdict->cause = attempt == 0 ? RECUO_CAUSE_TIMEOUT : RECUO_CAUSE_SUCCESS;
}

static void sink_through_recuo_retry(void) {
    recuo_policy *policy = recuo_policy_new();
    recuo_retry_options *o = fake_options();
    struct fake f = {policy, NULL, 0, 0, 0, 0, {NULL}, 0, 0, 0};
    CHECK_STATUS(recuo_retry(policy, plain_operation, &f, o, NULL, NULL, 0, NULL), RECUO_OK);
    CHECK_CTX(f.calls == 2 && f.nlines == 3 &&
                  streq(f.lines[0], "{\"type\":\"attempt\",\"start\":\"2023-11-14T22:13:20.000Z\","
                                    "\"elapsed_ms\":10,\"method\":\"POST\",\"url\":\"https://"
                                    "api.example.com/v1/pay?api_key=[redacted]&to=[email]&n=2\","
                                    "\"transport\":\"other\",\"request_id\":null,\"wait_headers\":"
                                    "{},\"delay_ms\":6,\"decision\":\"retry\",\"reason\":"
                                    "\"timeout\"}") &&
                  strstr(f.lines[1], "\"decision\":\"done\",\"reason\":\"success\"}") != NULL &&
                  streq(f.lines[2], "{\"type\":\"result\",\"start\":\"2023-11-14T22:13:20.000Z\","
                                    "\"method\":\"POST\",\"url\":\"https://api.example.com/v1/"
                                    "pay?api_key=[redacted]&to=[email]&n=2\",\"result\":"
                                    "\"success\",\"attempts\":2,\"reason\":null,\"total_ms\":"
                                    "26}"),
              "%zu lines: %s / %s", f.nlines, f.nlines > 1 ? f.lines[1] : "-", f.nlines > 2 ? f.lines[2] : "-");
    free_lines(&f);

    /* No sink: nothing is handed over. The request is checked and copied. */
    CHECK_STATUS(recuo_retry_options_set_record_sink(o, NULL), RECUO_OK);
    CHECK_STATUS(recuo_retry(policy, plain_operation, &f, o, NULL, NULL, 0, NULL), RECUO_OK);
    CHECK(f.nlines == 0);
    CHECK_STATUS(recuo_retry_options_set_request(o, LIT("G\xffT"), LIT("/")), RECUO_ERR_NOT_UTF8);
    CHECK_STATUS(recuo_retry_options_set_request(o, NULL, 3, LIT("/")), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_request(NULL, LIT("GET"), LIT("/")),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_request(o, NULL, 0, LIT("/\xff")), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_record_sink(NULL, sink), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_clock(NULL, NULL, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_stats_recorder(NULL, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_stats_recorder(o, NULL), RECUO_OK);
    recuo_retry_options_free(o);
    recuo_policy_free(policy);
}

/* ---- stats ------------------------------------------------------------------------------ */

/* Field by field: the padding of a struct recuo wrote holds nothing to compare. */
static int stats_equal(const recuo_stats *a, const recuo_stats *b) {
    return a->initial == b->initial && a->retries == b->retries &&
           a->successes == b->successes && a->failures == b->failures &&
           a->not_started == b->not_started && a->throttled == b->throttled &&
           a->unavailable == b->unavailable && a->max_in_flight == b->max_in_flight &&
           a->has_spacing == b->has_spacing && a->min_spacing_ns == b->min_spacing_ns &&
           a->mean_spacing_ns == b->mean_spacing_ns && a->has_starts == b->has_starts &&
           a->first_start_ns == b->first_start_ns && a->last_start_ns == b->last_start_ns &&
           a->elapsed_ms == b->elapsed_ms;
}

static void stats_merge(void) {
    recuo_stats a = {0}, b = {0}, out;
    a.initial = 2;
    a.throttled = 1;
    a.max_in_flight = 1;
    a.has_spacing = true;
    a.min_spacing_ns = 10;
    a.has_starts = true;
    a.first_start_ns = 5;
    a.last_start_ns = 15;
    a.elapsed_ms = 40;
    b.initial = 1;
    b.retries = 1;
    b.failures = 1;
    b.unavailable = 2;
    b.max_in_flight = 2;
    b.has_spacing = true;
    b.min_spacing_ns = 7;
    b.has_starts = true;
    b.first_start_ns = 1;
    b.last_start_ns = 31;
    b.elapsed_ms = 90;
    CHECK_STATUS(recuo_stats_merge(&a, &b, &out), RECUO_OK);
    CHECK(out.initial == 3 && out.retries == 1 && out.failures == 1 && out.throttled == 1 &&
          out.unavailable == 2 && out.max_in_flight == 3);
    CHECK(out.has_spacing && out.min_spacing_ns == 7 && out.has_starts &&
          out.first_start_ns == 1 && out.last_start_ns == 31);
    CHECK_CTX(out.mean_spacing_ns == 10.0 && out.elapsed_ms == 90, "%f", out.mean_spacing_ns);

    /* An empty side changes nothing; `out` may be an input. */
    recuo_stats empty = {0}, copy = out;
    CHECK_STATUS(recuo_stats_merge(&out, &empty, &out), RECUO_OK);
    CHECK(stats_equal(&out, &copy));

    /* Inconsistent stats are refused, `out` untouched. */
    recuo_stats bad = a;
    bad.first_start_ns = 99;
    CHECK_STATUS(recuo_stats_merge(&bad, &b, &out), RECUO_ERR_INVALID_STATS);
    recuo_stats huge = {0};
    huge.retries = UINT64_MAX;
    CHECK_STATUS(recuo_stats_merge(&huge, &a, &out), RECUO_ERR_INVALID_STATS);
    CHECK(stats_equal(&out, &copy));
    /* A count that would pass UINT64_MAX is refused, never rounded; one that just fits is
     * added. */
    recuo_stats full = {0}, one = {0};
    full.throttled = UINT64_MAX;
    one.throttled = 1;
    CHECK_STATUS(recuo_stats_merge(&full, &one, &out), RECUO_ERR_INVALID_STATS);
    CHECK_STATUS(recuo_stats_merge(&one, &full, &out), RECUO_ERR_INVALID_STATS);
    CHECK(stats_equal(&out, &copy));
    full.throttled = UINT64_MAX - 1;
    CHECK_STATUS(recuo_stats_merge(&full, &one, &out), RECUO_OK);
    CHECK_EQ_U64(out.throttled, UINT64_MAX);
    out = copy;
    CHECK_STATUS(recuo_stats_merge(NULL, &a, &out), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_stats_merge(&a, &b, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK(streq(recuo_status_name(RECUO_ERR_INVALID_STATS), "invalid_stats") &&
          streq(recuo_status_name(RECUO_ERR_NO_RESPONSE), "no_response") &&
          recuo_status_is_argument_error(RECUO_ERR_INVALID_STATS));
}

static void stats_recorder(void) {
    recuo_stats_recorder *r = recuo_stats_recorder_new();
    CHECK(r != NULL);
    CHECK_STATUS(recuo_stats_recorder_start(r, 0, 1000), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_start(r, 0, 1500), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_end(r), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_start(r, 1, 4000), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_saw(r, RECUO_CAUSE_RATE_LIMITED), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_saw(r, RECUO_CAUSE_UNAVAILABLE), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_saw(r, RECUO_CAUSE_SERVER_ERROR), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_saw(r, 0), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_stats_recorder_end(r), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_end(r), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_finished(r, true), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_finished(r, false), RECUO_OK);
    CHECK_STATUS(recuo_stats_recorder_not_started(r), RECUO_OK);
    recuo_stats s;
    CHECK_STATUS(recuo_stats_recorder_snapshot(r, &s), RECUO_OK);
    CHECK(s.initial == 2 && s.retries == 1 && s.successes == 1 && s.failures == 1 &&
          s.not_started == 1 && s.throttled == 1 && s.unavailable == 1 && s.max_in_flight == 2);
    CHECK(s.has_spacing && s.min_spacing_ns == 500 && s.mean_spacing_ns == 1500.0 &&
          s.first_start_ns == 1000 && s.last_start_ns == 4000);

    /* Two recorders merged: the core's merge of their snapshots. */
    recuo_stats_recorder *other = recuo_stats_recorder_new();
    CHECK_STATUS(recuo_stats_recorder_start(other, 0, 2000), RECUO_OK);
    recuo_stats t, m;
    CHECK_STATUS(recuo_stats_recorder_snapshot(other, &t), RECUO_OK);
    CHECK(t.has_starts && !t.has_spacing && t.mean_spacing_ns == 0.0);
    CHECK_STATUS(recuo_stats_merge(&s, &t, &m), RECUO_OK);
    CHECK(m.initial == 3 && m.max_in_flight == 3 && m.first_start_ns == 1000 &&
          m.mean_spacing_ns == 1000.0);

    CHECK_STATUS(recuo_stats_recorder_start(NULL, 0, 0), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_stats_recorder_snapshot(r, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_stats_recorder_snapshot(NULL, &s), RECUO_ERR_NULL_ARGUMENT);
    recuo_stats_recorder_free(other);
    recuo_stats_recorder_free(r);
    recuo_stats_recorder_free(NULL);
}

int main(int argc, char **argv) {
    (void)argc;
    redact_url_calls();
    redact_header_calls();
    who_answered_calls();
    record_builders();
    sink_through_recuo_retry_http();
    metrics_through_recuo_retry_http();
    sink_through_recuo_retry();
    stats_merge();
    stats_recorder();
    return check_summary(argv[0]);
}
