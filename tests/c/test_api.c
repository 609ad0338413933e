/*
 * test_api.c — the functions of recuo.h from before the policy engine: status codes (all of
 * them, the new ones too), return codes, NULL arguments, non-UTF-8 input, truncated messages,
 * configuration errors, the guide A loop (predicate, last error, attempt count, injected
 * sleep and seed) and the version checks. The policy engine (policy, classification, state
 * machine, recuo_retry) is tested by test_engine.c.
 *
 * Build with -DRECUO_EXPECT_VERSION='"x.y.z"' -DRECUO_EXPECT_MAJOR=x -DRECUO_EXPECT_MINOR=y
 * -DRECUO_EXPECT_PATCH=z taken from Cargo.toml, so that a stale header cannot compile.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "recuo.h"

#include "check.h"

#ifndef RECUO_EXPECT_VERSION
#error "build with -DRECUO_EXPECT_VERSION and the RECUO_EXPECT_MAJOR/MINOR/PATCH numbers"
#endif

/* The header's version is Cargo's. */
_Static_assert(RECUO_VERSION_MAJOR == RECUO_EXPECT_MAJOR, "RECUO_VERSION_MAJOR is stale");
_Static_assert(RECUO_VERSION_MINOR == RECUO_EXPECT_MINOR, "RECUO_VERSION_MINOR is stale");
_Static_assert(RECUO_VERSION_PATCH == RECUO_EXPECT_PATCH, "RECUO_VERSION_PATCH is stale");

/* The numbers are ABI: they may never change. */
_Static_assert(RECUO_OK == 0, "RECUO_OK");
_Static_assert(RECUO_ERR_NULL_ARGUMENT == 1, "RECUO_ERR_NULL_ARGUMENT");
_Static_assert(RECUO_ERR_BUFFER_TOO_SMALL == 2, "RECUO_ERR_BUFFER_TOO_SMALL");
_Static_assert(RECUO_ERR_LENGTH_TOO_LARGE == 3, "RECUO_ERR_LENGTH_TOO_LARGE");
_Static_assert(RECUO_ERR_INVALID_ENUM == 4, "RECUO_ERR_INVALID_ENUM");
_Static_assert(RECUO_ERR_NOT_UTF8 == 5, "RECUO_ERR_NOT_UTF8");
_Static_assert(RECUO_ERR_UNKNOWN_METHOD == 6, "RECUO_ERR_UNKNOWN_METHOD");
_Static_assert(RECUO_ERR_INVALID_STATUS == 7, "RECUO_ERR_INVALID_STATUS");
_Static_assert(RECUO_ERR_ALREADY_STARTED == 8, "RECUO_ERR_ALREADY_STARTED");
_Static_assert(RECUO_ERR_NO_VERDICT == 9, "RECUO_ERR_NO_VERDICT");
_Static_assert(RECUO_ERR_NO_RESPONSE == 11, "RECUO_ERR_NO_RESPONSE");
_Static_assert(RECUO_ERR_INVALID_STATS == 12, "RECUO_ERR_INVALID_STATS");
_Static_assert(RECUO_ERR_INVALID_CONFIG == 100, "RECUO_ERR_INVALID_CONFIG");
_Static_assert(RECUO_ERR_ZERO_ATTEMPTS == 101, "RECUO_ERR_ZERO_ATTEMPTS");
_Static_assert(RECUO_ERR_NEGATIVE_DURATION == 102, "RECUO_ERR_NEGATIVE_DURATION");
_Static_assert(RECUO_ERR_NOT_A_NUMBER == 103, "RECUO_ERR_NOT_A_NUMBER");
_Static_assert(RECUO_ERR_DURATION_TOO_LARGE == 104, "RECUO_ERR_DURATION_TOO_LARGE");
_Static_assert(RECUO_ERR_CAP_BELOW_BASE == 105, "RECUO_ERR_CAP_BELOW_BASE");
_Static_assert(RECUO_ERR_INVALID_HEADER_NAME == 106, "RECUO_ERR_INVALID_HEADER_NAME");
_Static_assert(RECUO_ERR_TASK_FAILED == 200, "RECUO_ERR_TASK_FAILED");
_Static_assert(RECUO_ERR_GAVE_UP == 201, "RECUO_ERR_GAVE_UP");
_Static_assert(RECUO_ERR_PANIC == 900, "RECUO_ERR_PANIC");
_Static_assert(RECUO_RETRY_AFTER_SECONDS == 1 && RECUO_RETRY_AFTER_DATE == 2 &&
                   RECUO_RETRY_AFTER_UNBOUNDED == 3 && RECUO_RETRY_AFTER_INVALID == 4,
               "recuo_retry_after_kind");
_Static_assert(sizeof(recuo_status) == 4, "recuo_status is a uint32_t");
_Static_assert(sizeof(recuo_retry_after) == 16, "recuo_retry_after layout");

/* Sun, 06 Nov 1994 08:49:37 GMT */
#define NOW_MS INT64_C(784111777000)

static void version(void) {
    const char *v = recuo_version();
    CHECK(v != NULL);
    CHECK_CTX(v != NULL && strcmp(v, RECUO_VERSION) == 0, "library %s, header %s", v,
              RECUO_VERSION);
    CHECK_CTX(strcmp(RECUO_VERSION, RECUO_EXPECT_VERSION) == 0, "header %s, Cargo.toml %s",
              RECUO_VERSION, RECUO_EXPECT_VERSION);
    char numbers[64];
    snprintf(numbers, sizeof numbers, "%d.%d.%d", RECUO_VERSION_MAJOR, RECUO_VERSION_MINOR,
             RECUO_VERSION_PATCH);
    CHECK_CTX(strncmp(RECUO_VERSION, numbers, strlen(numbers)) == 0, "%s vs %s", RECUO_VERSION,
              numbers);
}

static void status_names_and_predicates(void) {
    static const struct {
        recuo_status code;
        const char *name;
        bool argument, config;
    } table[] = {
        {RECUO_OK, "ok", false, false},
        {RECUO_ERR_NULL_ARGUMENT, "null_argument", true, false},
        {RECUO_ERR_BUFFER_TOO_SMALL, "buffer_too_small", true, false},
        {RECUO_ERR_LENGTH_TOO_LARGE, "length_too_large", true, false},
        {RECUO_ERR_INVALID_ENUM, "invalid_enum", true, false},
        {RECUO_ERR_NOT_UTF8, "not_utf8", true, false},
        {RECUO_ERR_UNKNOWN_METHOD, "unknown_method", true, false},
        {RECUO_ERR_INVALID_STATUS, "invalid_status", true, false},
        {RECUO_ERR_ALREADY_STARTED, "already_started", true, false},
        {RECUO_ERR_NO_VERDICT, "no_verdict", true, false},
        {RECUO_ERR_INDEX_OUT_OF_RANGE, "index_out_of_range", true, false},
        {RECUO_ERR_NO_RESPONSE, "no_response", true, false},
        {RECUO_ERR_INVALID_STATS, "invalid_stats", true, false},
        {RECUO_ERR_INVALID_CONFIG, "invalid_config", false, true},
        {RECUO_ERR_STATUS_OUT_OF_RANGE, "status_out_of_range", false, true},
        {RECUO_ERR_ZERO_ATTEMPTS, "zero_attempts", false, true},
        {RECUO_ERR_NEGATIVE_DURATION, "negative_duration", false, true},
        {RECUO_ERR_NOT_A_NUMBER, "not_a_number", false, true},
        {RECUO_ERR_DURATION_TOO_LARGE, "duration_too_large", false, true},
        {RECUO_ERR_CAP_BELOW_BASE, "cap_below_base", false, true},
        {RECUO_ERR_INVALID_HEADER_NAME, "invalid_header_name", false, true},
        {RECUO_ERR_INVALID_RATE, "invalid_rate", false, true},
        {RECUO_ERR_TARGET_ABOVE_ALLOWANCE, "target_above_allowance", false, true},
        {RECUO_ERR_INVALID_RETRY_FRACTION, "invalid_retry_fraction", false, true},
        {RECUO_ERR_INVALID_LATENCY, "invalid_latency", false, true},
        {RECUO_ERR_ZERO_BURST, "zero_burst", false, true},
        {RECUO_ERR_COST_ABOVE_BURST, "cost_above_burst", false, true},
        {RECUO_ERR_ZERO_LIMIT, "zero_limit", false, true},
        {RECUO_ERR_INVALID_BUDGET, "invalid_budget", false, true},
        {RECUO_ERR_SHARED_MISMATCH, "shared_mismatch", false, true},
        {RECUO_ERR_INVALID_LEASE, "invalid_lease", false, true},
        {RECUO_ERR_ZERO_COST, "zero_cost", false, true},
        {RECUO_ERR_TASK_FAILED, "task_failed", false, false},
        {RECUO_ERR_GAVE_UP, "gave_up", false, false},
        {RECUO_WOULD_WAIT, "would_wait", false, false},
        {RECUO_TIMED_OUT, "timed_out", false, false},
        {RECUO_CANCELLED, "cancelled", false, false},
        {RECUO_BUDGET_EXHAUSTED, "budget_exhausted", false, false},
        {RECUO_QUEUE_FULL, "queue_full", false, false},
        {RECUO_HOST_PENDING, "host_pending", false, false},
        {RECUO_ERR_IO, "io", false, false},
        {RECUO_ERR_PANIC, "panic", false, false},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const char *name = recuo_status_name(table[i].code);
        CHECK_CTX(name != NULL && strcmp(name, table[i].name) == 0, "%u: %s",
                  (unsigned)table[i].code, name ? name : "NULL");
        CHECK_CTX(recuo_status_is_argument_error(table[i].code) == table[i].argument, "%s",
                  table[i].name);
        CHECK_CTX(recuo_status_is_config_error(table[i].code) == table[i].config, "%s",
                  table[i].name);
        char buf[128];
        size_t written = 0;
        CHECK_STATUS(recuo_status_message(table[i].code, buf, sizeof buf, &written), RECUO_OK);
        CHECK_CTX(written > 0 && written == strlen(buf), "%s: %zu", table[i].name, written);
    }
    CHECK(strcmp(recuo_status_name(13), "unknown") == 0);
    CHECK(strcmp(recuo_status_name(110), "unknown") == 0);
    CHECK(strcmp(recuo_status_name(161), "unknown") == 0);
    CHECK(strcmp(recuo_status_name(216), "unknown") == 0);
    CHECK(strcmp(recuo_status_name(UINT32_MAX), "unknown") == 0);
    CHECK(!recuo_status_is_config_error(199) && !recuo_status_is_argument_error(50));
}

static void status_messages(void) {
    char buf[128];
    size_t written = 999;

    CHECK_STATUS(recuo_status_message(RECUO_ERR_ZERO_ATTEMPTS, buf, sizeof buf, &written),
                 RECUO_OK);
    CHECK_CTX(strcmp(buf, "attempts must be at least 1") == 0, "\"%s\"", buf);
    CHECK_EQ_U64(written, strlen("attempts must be at least 1"));

    /* Truncated: what fits, NUL-terminated, and the status says so. */
    memset(buf, 'x', sizeof buf);
    CHECK_STATUS(recuo_status_message(RECUO_OK, buf, 4, &written), RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK_CTX(strcmp(buf, "suc") == 0, "\"%s\"", buf);
    CHECK_EQ_U64(written, 3);
    CHECK(buf[4] == 'x');

    /* Exactly enough room ("success" + NUL) is not a truncation. */
    CHECK_STATUS(recuo_status_message(RECUO_OK, buf, 8, &written), RECUO_OK);
    CHECK(strcmp(buf, "success") == 0 && written == 7);

    /* One byte holds only the NUL. */
    CHECK_STATUS(recuo_status_message(RECUO_OK, buf, 1, &written), RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(buf[0] == '\0' && written == 0);

    /* Zero bytes: nothing written at all. */
    memset(buf, 'x', sizeof buf);
    written = 999;
    CHECK_STATUS(recuo_status_message(RECUO_OK, buf, 0, &written), RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(buf[0] == 'x' && written == 0);

    /* `written` is optional, `buf` is not. */
    CHECK_STATUS(recuo_status_message(RECUO_ERR_PANIC, buf, sizeof buf, NULL), RECUO_OK);
    CHECK(strstr(buf, "panicked") != NULL);
    written = 999;
    CHECK_STATUS(recuo_status_message(RECUO_OK, NULL, 16, &written), RECUO_ERR_NULL_ARGUMENT);
    CHECK_EQ_U64(written, 999);

    CHECK_STATUS(recuo_status_message(RECUO_ERR_INVALID_HEADER_NAME, buf, sizeof buf, NULL),
                 RECUO_OK);
    CHECK_CTX(strcmp(buf, "a header name must be a non-empty HTTP token") == 0, "\"%s\"", buf);

    CHECK_STATUS(recuo_status_message(4242, buf, sizeof buf, NULL), RECUO_OK);
    CHECK_CTX(strcmp(buf, "unknown recuo status code 4242") == 0, "\"%s\"", buf);
}

static void clock_reads_the_system_time(void) {
    int64_t before = (int64_t)time(NULL) * 1000;
    int64_t now = recuo_now_ms();
    int64_t after = (int64_t)time(NULL) * 1000 + 1000;
    CHECK_CTX(before <= now && now <= after, "%" PRId64 " not in [%" PRId64 ", %" PRId64 "]",
              now, before, after);
}

static void retry_delay(void) {
    /* Seconds and dates: exactly the server's wait. */
    CHECK(recuo_retry_delay_ms("12", 0, NOW_MS) == 12000.0);
    CHECK(recuo_retry_delay_ms(" 0012\t", 7, NOW_MS) == 12000.0);
    CHECK(recuo_retry_delay_ms("Sun, 06 Nov 1994 08:50:07 GMT", 0, NOW_MS) == 30000.0);
    CHECK(recuo_retry_delay_ms("Sunday, 06-Nov-94 08:50:07 GMT", 0, NOW_MS) == 30000.0);
    CHECK(recuo_retry_delay_ms("Sun Nov  6 08:50:07 1994", 0, NOW_MS) == 30000.0);
    CHECK(recuo_retry_delay_ms("Sun, 06 Nov 1994 08:00:00 GMT", 0, NOW_MS) == 0.0);

    /* Unbounded: +infinity, never a short wait. */
    double inf = recuo_retry_delay_ms("99999999999999999999", 0, NOW_MS);
    CHECK(isinf(inf) && inf > 0);

    /* NULL, invalid and non-UTF-8 values: the full-jitter window min(8000, 1000 * 2^n). */
    const char *no_wait[] = {NULL, "soon", "-5", "1.5", "\xff\xfe", "\xc3\x28", "12\xe9", ""};
    const uint32_t attempts[] = {0, 1, 2, 3, 30, UINT32_MAX};
    const double windows[] = {1000, 2000, 4000, 8000, 8000, 8000};
    for (size_t i = 0; i < sizeof no_wait / sizeof no_wait[0]; i++) {
        for (size_t j = 0; j < sizeof attempts / sizeof attempts[0]; j++) {
            double d = recuo_retry_delay_ms(no_wait[i], attempts[j], NOW_MS);
            CHECK_CTX(d >= 0 && d <= windows[j] && d == floor(d), "value %zu attempt %" PRIu32
                      ": %f", i, attempts[j], d);
        }
    }

    /* Seeded: the same seed gives the same draw; an invalid value draws as a missing one. */
    double a = recuo_retry_delay_ms_seeded(NULL, 3, NOW_MS, 42);
    CHECK(a == recuo_retry_delay_ms_seeded(NULL, 3, NOW_MS, 42));
    CHECK(a == recuo_retry_delay_ms_seeded("soon", 3, NOW_MS, 42));
    CHECK(a == recuo_retry_delay_ms_seeded("\xff", 3, NOW_MS, 42));
    CHECK(a >= 0 && a <= 8000);
    int differs = 0;
    for (uint64_t seed = 0; seed < 16; seed++) {
        differs |= recuo_retry_delay_ms_seeded(NULL, 3, NOW_MS, seed) != a;
    }
    CHECK_CTX(differs, "sixteen seeds drew the same delay");
    CHECK(recuo_retry_delay_ms_seeded("12", 3, NOW_MS, 42) == 12000.0);
}

static void parse_retry_after(void) {
    recuo_retry_after out = {0, 0};

    CHECK(strcmp(recuo_retry_after_kind_name(RECUO_RETRY_AFTER_SECONDS), "seconds") == 0);
    CHECK(strcmp(recuo_retry_after_kind_name(RECUO_RETRY_AFTER_DATE), "date") == 0);
    CHECK(strcmp(recuo_retry_after_kind_name(RECUO_RETRY_AFTER_UNBOUNDED), "unbounded") == 0);
    CHECK(strcmp(recuo_retry_after_kind_name(RECUO_RETRY_AFTER_INVALID), "invalid") == 0);
    CHECK(strcmp(recuo_retry_after_kind_name(0), "unknown") == 0);

    CHECK_STATUS(recuo_parse_retry_after("12", 2, NOW_MS, &out), RECUO_OK);
    CHECK(out.kind == RECUO_RETRY_AFTER_SECONDS && out.wait_ms == 12000);

    const char *date = "Sun, 06 Nov 1994 08:50:07 GMT";
    CHECK_STATUS(recuo_parse_retry_after(date, strlen(date), NOW_MS, &out), RECUO_OK);
    CHECK(out.kind == RECUO_RETRY_AFTER_DATE && out.wait_ms == 30000);

    /* The length is explicit: a NUL inside is part of the value, and makes it invalid. */
    CHECK_STATUS(recuo_parse_retry_after("12\0", 3, NOW_MS, &out), RECUO_OK);
    CHECK(out.kind == RECUO_RETRY_AFTER_INVALID && out.wait_ms == 0);
    /* ...and bytes past `len` are not read: "123" with len 2 is "12". */
    CHECK_STATUS(recuo_parse_retry_after("123", 2, NOW_MS, &out), RECUO_OK);
    CHECK(out.kind == RECUO_RETRY_AFTER_SECONDS && out.wait_ms == 12000);

    CHECK_STATUS(recuo_parse_retry_after("\xff\xfe", 2, NOW_MS, &out), RECUO_OK);
    CHECK(out.kind == RECUO_RETRY_AFTER_INVALID && out.wait_ms == 0);

    CHECK_STATUS(recuo_parse_retry_after("99999999999999999999", 20, NOW_MS, &out), RECUO_OK);
    CHECK(out.kind == RECUO_RETRY_AFTER_UNBOUNDED && out.wait_ms == 0);

    /* NULL with length 0 is the empty value. */
    out.kind = RECUO_RETRY_AFTER_SECONDS;
    CHECK_STATUS(recuo_parse_retry_after(NULL, 0, NOW_MS, &out), RECUO_OK);
    CHECK(out.kind == RECUO_RETRY_AFTER_INVALID);

    /* Errors leave the output untouched. */
    recuo_retry_after untouched = {RECUO_RETRY_AFTER_DATE, 77};
    CHECK_STATUS(recuo_parse_retry_after(NULL, 5, NOW_MS, &untouched), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_parse_retry_after("12", SIZE_MAX, NOW_MS, &untouched),
                 RECUO_ERR_LENGTH_TOO_LARGE);
    CHECK(untouched.kind == RECUO_RETRY_AFTER_DATE && untouched.wait_ms == 77);
    CHECK_STATUS(recuo_parse_retry_after("12", 2, NOW_MS, NULL), RECUO_ERR_NULL_ARGUMENT);
}

static void backoff_window(void) {
    uint64_t w = 0;
    CHECK_STATUS(recuo_backoff_window_ms(200, 5000, 0, &w), RECUO_OK);
    CHECK_EQ_U64(w, 200);
    CHECK_STATUS(recuo_backoff_window_ms(200, 5000, 4, &w), RECUO_OK);
    CHECK_EQ_U64(w, 3200);
    CHECK_STATUS(recuo_backoff_window_ms(200, 5000, UINT32_MAX, &w), RECUO_OK);
    CHECK_EQ_U64(w, 5000);
    CHECK_STATUS(recuo_backoff_window_ms(1, UINT64_MAX, 64, &w), RECUO_OK);
    CHECK_EQ_U64(w, UINT64_MAX);
    CHECK_STATUS(recuo_backoff_window_ms(0, 0, 9, &w), RECUO_OK);
    CHECK_EQ_U64(w, 0);

    w = 77;
    recuo_status rc = recuo_backoff_window_ms(200, 100, 0, &w);
    CHECK_STATUS(rc, RECUO_ERR_CAP_BELOW_BASE);
    CHECK(recuo_status_is_config_error(rc));
    CHECK_EQ_U64(w, 77);
    CHECK_STATUS(recuo_backoff_window_ms(200, 5000, 0, NULL), RECUO_ERR_NULL_ARGUMENT);
}

/* A scripted task: returns script[i] on call i (0 = success). */
struct script {
    const int *codes;
    size_t ncodes;
    uint32_t calls;
    uint32_t asked;
    int retryable;
    void *seen_user_data;
    uint64_t sleeps[16];
    size_t nsleeps;
};

static int scripted_task(void *user_data) {
    struct script *s = user_data;
    int code = s->calls < s->ncodes ? s->codes[s->calls] : 0;
    s->calls++;
    return code;
}

static bool only_retryable(int error, recuo_verdict *out, void *user_data) {
    struct script *s = user_data;
    (void)out;
    s->asked++;
    return error == s->retryable;
}

static bool check_user_data(int error, recuo_verdict *out, void *user_data) {
    struct script *s = user_data;
    (void)error;
    (void)out;
    s->seen_user_data = user_data;
    s->asked++;
    return true;
}

static void record_sleep(uint64_t ms, void *user_data) {
    struct script *s = user_data;
    if (s->nsleeps < sizeof s->sleeps / sizeof s->sleeps[0]) {
        s->sleeps[s->nsleeps++] = ms;
    }
}

static recuo_com_retry_options *recording_options(uint64_t seed) {
    recuo_com_retry_options *o = recuo_com_retry_options_new();
    CHECK(o != NULL);
    CHECK_STATUS(recuo_com_retry_options_set_seed(o, seed), RECUO_OK);
    CHECK_STATUS(recuo_com_retry_options_set_sleep(o, record_sleep), RECUO_OK);
    return o;
}

static void com_retry_succeeds_on_the_third_attempt(void) {
    /* Real sleeps, kept short: windows of 1 and 2 ms. */
    static const int codes[] = {503, 503, 0};
    struct script s = {.codes = codes, .ncodes = 3};
    int last = -1;
    uint32_t attempts = 0;
    CHECK_STATUS(recuo_com_retry(scripted_task, &s, 5, 1, 2, NULL, &last, &attempts), RECUO_OK);
    CHECK_EQ_U64(attempts, 3);
    CHECK_EQ_U64(s.calls, 3);
    CHECK(last == 0);
}

static void com_retry_first_success_makes_one_call(void) {
    static const int codes[] = {0};
    struct script s = {.codes = codes, .ncodes = 1};
    recuo_com_retry_options *o = recording_options(1);
    uint32_t attempts = 0;
    CHECK_STATUS(recuo_com_retry_with_options(scripted_task, &s, 5, 200, 5000, NULL, o, NULL,
                                              &attempts),
                 RECUO_OK);
    CHECK(attempts == 1 && s.calls == 1 && s.nsleeps == 0);
    recuo_com_retry_options_free(o);
}

static void com_retry_returns_the_last_error_unchanged(void) {
    static const int codes[] = {-7, 42, INT_MIN};
    struct script s = {.codes = codes, .ncodes = 3};
    recuo_com_retry_options *o = recording_options(2);
    int last = 0;
    uint32_t attempts = 0;
    recuo_status rc =
        recuo_com_retry_with_options(scripted_task, &s, 3, 200, 5000, NULL, o, &last, &attempts);
    CHECK_STATUS(rc, RECUO_ERR_TASK_FAILED);
    CHECK(!recuo_status_is_config_error(rc) && !recuo_status_is_argument_error(rc));
    CHECK_CTX(last == INT_MIN, "last error %d", last);
    CHECK_EQ_U64(attempts, 3);
    /* Two gaps, each drawn from its window (a zero draw is not slept at all). */
    CHECK(s.nsleeps <= 2);
    for (size_t i = 0; i < s.nsleeps; i++) {
        CHECK_CTX(s.sleeps[i] > 0 && s.sleeps[i] <= 400, "sleep %zu = %" PRIu64, i,
                  s.sleeps[i]);
    }
    recuo_com_retry_options_free(o);
}

static void com_retry_predicate_stops_the_loop(void) {
    static const int codes[] = {503, 400, 0};
    struct script s = {.codes = codes, .ncodes = 3, .retryable = 503};
    recuo_com_retry_options *o = recording_options(3);
    int last = 0;
    uint32_t attempts = 0;
    CHECK_STATUS(recuo_com_retry_with_options(scripted_task, &s, 5, 200, 5000, only_retryable, o,
                                              &last, &attempts),
                 RECUO_ERR_TASK_FAILED);
    CHECK_CTX(last == 400, "last error %d", last);
    CHECK(attempts == 2 && s.calls == 2 && s.asked == 2);
    recuo_com_retry_options_free(o);
}

static void com_retry_predicate_not_asked_after_the_last_attempt(void) {
    static const int codes[] = {503, 503, 503};
    struct script s = {.codes = codes, .ncodes = 3};
    recuo_com_retry_options *o = recording_options(4);
    int last = 0;
    CHECK_STATUS(recuo_com_retry_with_options(scripted_task, &s, 2, 200, 5000, check_user_data, o,
                                              &last, NULL),
                 RECUO_ERR_TASK_FAILED);
    CHECK(s.calls == 2 && s.asked == 1 && last == 503);
    CHECK(s.seen_user_data == &s);
    recuo_com_retry_options_free(o);
}

/* The predicate answers with recuo_classify's verdict on the HTTP status the task failed
 * with, and a Retry-After of 6 s (issue 10 item 5): the verdict decides, not the boolean. */
static bool classify_status(int error, recuo_verdict *out, void *user_data) {
    struct script *s = user_data;
    s->asked++;
    recuo_policy *p = recuo_policy_new();
    recuo_outcome outcome = {RECUO_OUTCOME_STATUS, (uint16_t)error, 0};
    recuo_header h = {"Retry-After", 11, "6", 1};
    CHECK_STATUS(recuo_classify(p, &outcome, "GET", 3, false, &h, 1, 0, out), RECUO_OK);
    recuo_policy_free(p);
    return true; /* ignored: the verdict was written */
}

static void com_retry_predicate_may_answer_a_verdict(void) {
    /* A 404's verdict gives up: one call, though the boolean said "again". */
    static const int not_found[] = {404, 0};
    struct script s = {.codes = not_found, .ncodes = 2};
    recuo_com_retry_options *o = recording_options(8);
    int last = 0;
    uint32_t attempts = 0;
    CHECK_STATUS(recuo_com_retry_with_options(scripted_task, &s, 5, 200, 5000, classify_status, o,
                                              &last, &attempts),
                 RECUO_ERR_TASK_FAILED);
    CHECK(attempts == 1 && s.calls == 1 && s.asked == 1 && last == 404 && s.nsleeps == 0);
    recuo_com_retry_options_free(o);

    /* A 503 with Retry-After: 6 is waited for (6 s and the spread), not 200 ms of backoff. */
    static const int unavailable[] = {503, 0};
    struct script w = {.codes = unavailable, .ncodes = 2};
    o = recording_options(9);
    CHECK_STATUS(recuo_com_retry_with_options(scripted_task, &w, 5, 200, 5000, classify_status, o,
                                              &last, &attempts),
                 RECUO_OK);
    CHECK(attempts == 2 && w.calls == 2 && w.nsleeps == 1);
    CHECK_CTX(w.sleeps[0] >= 6000 && w.sleeps[0] <= 7000, "slept %" PRIu64, w.sleeps[0]);
    recuo_com_retry_options_free(o);
}

static void com_retry_zero_delays_are_never_slept(void) {
    static const int codes[] = {1, 2, 3, 4};
    struct script s = {.codes = codes, .ncodes = 4};
    recuo_com_retry_options *o = recording_options(5);
    uint32_t attempts = 0;
    CHECK_STATUS(recuo_com_retry_with_options(scripted_task, &s, 4, 0, 0, NULL, o, NULL,
                                              &attempts),
                 RECUO_ERR_TASK_FAILED);
    CHECK(attempts == 4 && s.nsleeps == 0);
    recuo_com_retry_options_free(o);
}

static void com_retry_seeded_sleeps_repeat(void) {
    static const int codes[] = {1, 1, 1, 1, 1};
    struct script first = {.codes = codes, .ncodes = 5};
    struct script second = {.codes = codes, .ncodes = 5};
    recuo_com_retry_options *o = recording_options(6);
    recuo_com_retry_with_options(scripted_task, &first, 5, 200, 5000, NULL, o, NULL, NULL);
    recuo_com_retry_with_options(scripted_task, &second, 5, 200, 5000, NULL, o, NULL, NULL);
    CHECK(first.nsleeps > 0 && first.nsleeps == second.nsleeps);
    CHECK(memcmp(first.sleeps, second.sleeps, sizeof first.sleeps) == 0);
    /* Each gap within its window min(5000, 200 * 2^i), as recuo_backoff_window_ms says; the
     * gaps are the non-zero draws, so gap i came from window i or a later one. */
    for (size_t i = 0; i < first.nsleeps; i++) {
        uint64_t last_window = 0;
        CHECK_STATUS(recuo_backoff_window_ms(200, 5000, 3, &last_window), RECUO_OK);
        CHECK_CTX(first.sleeps[i] > 0 && first.sleeps[i] <= last_window, "sleep %zu = %" PRIu64,
                  i, first.sleeps[i]);
    }

    /* set_sleep(NULL) restores the real sleep: the recorder is no longer called. */
    struct script real = {.codes = codes, .ncodes = 2};
    CHECK_STATUS(recuo_com_retry_options_set_sleep(o, NULL), RECUO_OK);
    CHECK_STATUS(recuo_com_retry_with_options(scripted_task, &real, 5, 1, 1, NULL, o, NULL, NULL),
                 RECUO_OK);
    CHECK(real.calls == 3 && real.nsleeps == 0);
    recuo_com_retry_options_free(o);
}

static void com_retry_bad_arguments(void) {
    static const int codes[] = {0};
    struct script s = {.codes = codes, .ncodes = 1};
    int last = 12345;
    uint32_t attempts = 777;

    CHECK_STATUS(recuo_com_retry(NULL, &s, 5, 200, 5000, NULL, &last, &attempts),
                 RECUO_ERR_NULL_ARGUMENT);
    recuo_status rc = recuo_com_retry(scripted_task, &s, 0, 200, 5000, NULL, &last, &attempts);
    CHECK_STATUS(rc, RECUO_ERR_ZERO_ATTEMPTS);
    CHECK(recuo_status_is_config_error(rc));
    CHECK_STATUS(recuo_com_retry(scripted_task, &s, 5, 200, 100, NULL, &last, &attempts),
                 RECUO_ERR_CAP_BELOW_BASE);
    /* Nothing ran and nothing was written. */
    CHECK(s.calls == 0 && last == 12345 && attempts == 777);

    /* Both outputs are optional; NULL options are the defaults. */
    CHECK_STATUS(recuo_com_retry(scripted_task, &s, 5, 200, 5000, NULL, NULL, NULL), RECUO_OK);
    CHECK_STATUS(recuo_com_retry_with_options(scripted_task, &s, 5, 200, 5000, NULL, NULL, NULL,
                                              NULL),
                 RECUO_OK);

    CHECK_STATUS(recuo_com_retry_options_set_seed(NULL, 1), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_com_retry_options_set_sleep(NULL, record_sleep), RECUO_ERR_NULL_ARGUMENT);
    recuo_com_retry_options_free(NULL);
    recuo_com_retry_options_free(recuo_com_retry_options_new());
}

int main(int argc, char **argv) {
    (void)argc;
    version();
    status_names_and_predicates();
    status_messages();
    clock_reads_the_system_time();
    retry_delay();
    parse_retry_after();
    backoff_window();
    com_retry_succeeds_on_the_third_attempt();
    com_retry_first_success_makes_one_call();
    com_retry_returns_the_last_error_unchanged();
    com_retry_predicate_stops_the_loop();
    com_retry_predicate_not_asked_after_the_last_attempt();
    com_retry_predicate_may_answer_a_verdict();
    com_retry_zero_delays_are_never_slept();
    com_retry_seeded_sleeps_repeat();
    com_retry_bad_arguments();
    return check_summary(argv[0]);
}
