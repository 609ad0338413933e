/*
 * test_limits.c — the shared limits from C (issue 4): rates and the planner (guide B's plan
 * exactly), the regulator (exact try_acquire_at sequences on a fake clock, costs, blocking
 * and timed acquire, cancellation, adaptive slow-down), the shared regulator file (four
 * child processes on one file with a fake clock in a second shared file, every window
 * checked against burst + rate × window and at least 95% of the allowed starts used; a
 * second opener with other settings refused with a message naming both), the concurrency
 * limit (four threads never above it), the retry budget's exact arithmetic, the gate (by
 * hand, with the state machine, and in recuo_retry: the place is given back before the
 * sleep, budget_exhausted, adaptive slow-down, cancellation at the gate) and the batch
 * runner (counts, keys, not started after the deadline, bounded in time). Every return
 * code, every NULL argument.
 *
 * The multi-process test forks: the children touch nothing the parent allocated, free what
 * they made and leave with _exit, so the whole program runs under valgrind (which follows
 * forked children) as well as under ASan.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recuo.h"

#include "check.h"

/* The numbers are ABI: they may never change. */
_Static_assert(RECUO_ERR_INDEX_OUT_OF_RANGE == 10, "RECUO_ERR_INDEX_OUT_OF_RANGE");
_Static_assert(RECUO_ERR_INVALID_RATE == 150 && RECUO_ERR_TARGET_ABOVE_ALLOWANCE == 151 &&
                   RECUO_ERR_INVALID_RETRY_FRACTION == 152 &&
                   RECUO_ERR_INVALID_LATENCY == 153 && RECUO_ERR_ZERO_BURST == 154 &&
                   RECUO_ERR_COST_ABOVE_BURST == 155 && RECUO_ERR_ZERO_LIMIT == 156 &&
                   RECUO_ERR_INVALID_BUDGET == 157 && RECUO_ERR_SHARED_MISMATCH == 158 &&
                   RECUO_ERR_ZERO_COST == 160,
               "the shared limits' configuration errors");
_Static_assert(RECUO_WOULD_WAIT == 210 && RECUO_TIMED_OUT == 211 && RECUO_CANCELLED == 212 &&
                   RECUO_BUDGET_EXHAUSTED == 213 && RECUO_QUEUE_FULL == 214,
               "the shared limits' answers");
_Static_assert(RECUO_ERR_IO == 300, "RECUO_ERR_IO");
_Static_assert(RECUO_BATCH_SUCCEEDED == 1 && RECUO_BATCH_GAVE_UP == 2 &&
                   RECUO_BATCH_NOT_STARTED == 3,
               "recuo_batch_result_kind");
_Static_assert(sizeof(recuo_plan_result) == 40, "recuo_plan_result layout");
_Static_assert(sizeof(recuo_batch_result) == 20, "recuo_batch_result layout");

#define MS UINT64_C(1000000)
#define S UINT64_C(1000000000)

static int streq(const char *a, const char *b) {
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Milliseconds on CLOCK_MONOTONIC, read by the test itself. */
static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A fresh directory for shared files; removed by remove_dir. */
static void make_dir(char *dir, size_t len) {
    snprintf(dir, len, "/tmp/recuo-c-limits-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
}

static void join_path(char *out, size_t len, const char *dir, const char *name) {
    snprintf(out, len, "%s/%s", dir, name);
}

/* Cancels a token after a delay, from another thread. */
struct delayed_cancel {
    recuo_cancel_token *token;
    long after_ms;
};

static void *cancel_later(void *arg) {
    struct delayed_cancel *d = arg;
    sleep_ms(d->after_ms);
    recuo_cancel_token_cancel(d->token);
    return NULL;
}

/* ---- rates and the planner -------------------------------------------------------------- */

static recuo_status parse(const char *text, double *out) {
    return recuo_rate_parse(text, strlen(text), out);
}

static void rates(void) {
    static const struct {
        const char *text;
        double per_second;
    } good[] = {
        {"90/min", 1.5},   {"120/min", 2.0},   {"2/s", 2.0},         {"1.5/s", 1.5},
        {"3", 3.0},        {" 90 / MIN ", 1.5}, {"86400/day", 1.0},  {"7200/hour", 2.0},
        {"60/minute", 1.0}, {"5/sec", 5.0},    {"3600/h", 1.0},      {"0.5/second", 0.5},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double r = -1;
        CHECK_STATUS(parse(good[i].text, &r), RECUO_OK);
        CHECK_CTX(r == good[i].per_second, "%s: %g", good[i].text, r);
    }
    double r = 0;
    CHECK_STATUS(parse("5000/h", &r), RECUO_OK);
    CHECK(fabs(r - 5000.0 / 3600.0) < 1e-12);

    static const char *const bad[] = {"0/min", "abc", "NaN/s", "NaN", "", "-5/s", "1e3/s",
                                      "inf/s", "/s",    "5/",    "5/fortnight", "0",
                                      "+5/s", "5 5/s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double untouched = 42;
        CHECK_STATUS(parse(bad[i], &untouched), RECUO_ERR_INVALID_RATE);
        CHECK_CTX(untouched == 42, "%s", bad[i]);
    }
    /* The length is exact: a NUL inside is part of the text, so it is no rate. */
    double untouched = 42;
    CHECK_STATUS(recuo_rate_parse("90/min\0", 7, &untouched), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_rate_parse("90/minutes", 6, &untouched), RECUO_OK);
    CHECK(untouched == 1.5);
    CHECK_STATUS(recuo_rate_parse("9\xff/s", 4, &untouched), RECUO_ERR_NOT_UTF8);
    CHECK_STATUS(recuo_rate_parse(NULL, 3, &untouched), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_rate_parse(NULL, 0, &untouched), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_rate_parse("1/s", 3, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_rate_parse("1/s", SIZE_MAX, &untouched), RECUO_ERR_LENGTH_TOO_LARGE);
    CHECK(untouched == 1.5);

    char buf[64];
    size_t written = 0;
    CHECK_STATUS(recuo_rate_format(1.5, buf, sizeof buf, &written), RECUO_OK);
    CHECK_CTX(streq(buf, "90/min") && written == 6, "%s", buf);
    CHECK_STATUS(recuo_rate_format(5000, buf, sizeof buf, NULL), RECUO_OK);
    CHECK_CTX(streq(buf, "5000/s"), "%s", buf);
    CHECK_STATUS(recuo_rate_format(0.01, buf, sizeof buf, NULL), RECUO_OK);
    CHECK_CTX(streq(buf, "0.01/s"), "%s", buf);
    CHECK_STATUS(recuo_rate_format(1.5, buf, 4, &written), RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(streq(buf, "90/") && written == 3);
    strcpy(buf, "same");
    CHECK_STATUS(recuo_rate_format(NAN, buf, sizeof buf, NULL), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_rate_format(0, buf, sizeof buf, NULL), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_rate_format(-1, buf, sizeof buf, NULL), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_rate_format(INFINITY, buf, sizeof buf, NULL), RECUO_ERR_INVALID_RATE);
    CHECK(streq(buf, "same"));
    CHECK_STATUS(recuo_rate_format(1, NULL, 8, NULL), RECUO_ERR_NULL_ARGUMENT);
}

static void plan_guide_b(void) {
    double allowance = 0, target = 0;
    CHECK_STATUS(parse("120/min", &allowance), RECUO_OK);
    CHECK_STATUS(parse("90/min", &target), RECUO_OK);

    recuo_plan_result p;
    memset(&p, 0xAB, sizeof p);
    CHECK_STATUS(recuo_plan(600, allowance, target, 2.0, 0.0, &p), RECUO_OK);
    CHECK_EQ_U64(p.interval_ms, 667);
    CHECK_CTX(p.duration_s == 400.0, "%g", p.duration_s);
    CHECK_CTX(p.in_flight == 3.0, "%g", p.in_flight);
    CHECK_CTX(p.retries == 0.0, "%g", p.retries);
    CHECK_EQ_U64(p.warning_count, 0);

    /* Retries lengthen the batch: 600 · 0.2 / 0.8 = 150 retries, 750 starts at 1.5/s. */
    CHECK_STATUS(recuo_plan(600, allowance, target, 2.0, 0.2, &p), RECUO_OK);
    CHECK_CTX(p.retries == 150.0 && p.duration_s == 500.0, "%g %g", p.retries, p.duration_s);
    CHECK_STATUS(recuo_plan(0, 1, 1, 0, 0, &p), RECUO_OK);
    CHECK(p.duration_s == 0.0 && p.interval_ms == 1000);

    /* A target above the allowance is an error, with its own code and message. */
    recuo_plan_result untouched;
    memset(&untouched, 0x5A, sizeof untouched);
    recuo_plan_result copy = untouched;
    CHECK_STATUS(recuo_plan(600, allowance, 2.5, 2.0, 0.0, &untouched),
                 RECUO_ERR_TARGET_ABOVE_ALLOWANCE);
    CHECK(memcmp(&untouched, &copy, sizeof copy) == 0);
    char msg[256];
    CHECK_STATUS(recuo_status_message(RECUO_ERR_TARGET_ABOVE_ALLOWANCE, msg, sizeof msg, NULL),
                 RECUO_OK);
    CHECK_CTX(strstr(msg, "above the allowance") != NULL, "%s", msg);
    CHECK(streq(recuo_status_name(RECUO_ERR_TARGET_ABOVE_ALLOWANCE), "target_above_allowance"));

    CHECK_STATUS(recuo_plan(1, 1, 1, 1, 1.0, &untouched), RECUO_ERR_INVALID_RETRY_FRACTION);
    CHECK_STATUS(recuo_plan(1, 1, 1, 1, -0.1, &untouched), RECUO_ERR_INVALID_RETRY_FRACTION);
    CHECK_STATUS(recuo_plan(1, 1, 1, 1, NAN, &untouched), RECUO_ERR_INVALID_RETRY_FRACTION);
    CHECK_STATUS(recuo_plan(1, 1, 1, NAN, 0, &untouched), RECUO_ERR_INVALID_LATENCY);
    CHECK_STATUS(recuo_plan(1, 1, 1, -1, 0, &untouched), RECUO_ERR_INVALID_LATENCY);
    CHECK_STATUS(recuo_plan(1, 1, 1, INFINITY, 0, &untouched), RECUO_ERR_INVALID_LATENCY);
    CHECK_STATUS(recuo_plan(1, NAN, 1, 1, 0, &untouched), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_plan(1, 1, 0, 1, 0, &untouched), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_plan(1, 1, -1, 1, 0, &untouched), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_plan(1, INFINITY, 1, 1, 0, &untouched), RECUO_ERR_INVALID_RATE);
    CHECK(memcmp(&untouched, &copy, sizeof copy) == 0);
    CHECK_STATUS(recuo_plan(1, 1, 1, 1, 0, NULL), RECUO_ERR_NULL_ARGUMENT);

    /* Warnings: a target equal to the allowance; very many requests in flight. */
    CHECK_STATUS(recuo_plan(10, 2, 2, 0.1, 0, &p), RECUO_OK);
    CHECK_EQ_U64(p.warning_count, 1);
    size_t written = 0;
    CHECK_STATUS(recuo_plan_warning(10, 2, 2, 0.1, 0, 0, msg, sizeof msg, &written), RECUO_OK);
    CHECK_CTX(strstr(msg, "equals the allowance") != NULL && written == strlen(msg), "%s",
              msg);
    strcpy(msg, "same");
    CHECK_STATUS(recuo_plan_warning(10, 2, 2, 0.1, 0, 1, msg, sizeof msg, &written),
                 RECUO_ERR_INDEX_OUT_OF_RANGE);
    CHECK(streq(msg, "same"));
    CHECK_STATUS(recuo_plan_warning(10, 2, 2, 0.1, 0, 0, msg, 8, &written),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(written == 7 && strlen(msg) == 7);
    CHECK_STATUS(recuo_plan_warning(10, 2, 2, 0.1, 0, 0, NULL, 8, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_plan_warning(10, 2, 3, 0.1, 0, 0, msg, sizeof msg, NULL),
                 RECUO_ERR_TARGET_ABOVE_ALLOWANCE);
    CHECK_STATUS(recuo_plan(10, 1000, 500, 1.0, 0, &p), RECUO_OK);
    CHECK_EQ_U64(p.warning_count, 1);
    CHECK_STATUS(recuo_plan_warning(10, 1000, 500, 1.0, 0, 0, msg, sizeof msg, NULL), RECUO_OK);
    CHECK_CTX(strstr(msg, "in flight") != NULL, "%s", msg);
    CHECK_STATUS(recuo_plan_warning(600, allowance, target, 2.0, 0, 0, msg, sizeof msg, NULL),
                 RECUO_ERR_INDEX_OUT_OF_RANGE);
}

/* ---- the regulator ---------------------------------------------------------------------- */

static recuo_regulator *regulator(double per_s, uint32_t burst) {
    recuo_regulator *r = NULL;
    CHECK_STATUS(recuo_regulator_new(per_s, burst, &r), RECUO_OK);
    return r;
}

static void regulator_new_and_getters(void) {
    static int dummy;
    recuo_regulator *const sentinel = (recuo_regulator *)&dummy;
    recuo_regulator *r = sentinel;
    CHECK_STATUS(recuo_regulator_new(0, 1, &r), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_regulator_new(-1, 1, &r), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_regulator_new(NAN, 1, &r), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_regulator_new(INFINITY, 1, &r), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(recuo_regulator_new(1, 0, &r), RECUO_ERR_ZERO_BURST);
    CHECK(r == sentinel);
    CHECK_STATUS(recuo_regulator_new(1, 1, NULL), RECUO_ERR_NULL_ARGUMENT);

    r = regulator(1.5, 3);
    CHECK(r != NULL && r != sentinel);
    /* The rate is kept as an interval in whole nanoseconds: 1.5/s reads back within 1e-9. */
    CHECK_CTX(fabs(recuo_regulator_rate_per_s(r) - 1.5) < 1e-8, "%.12f",
              recuo_regulator_rate_per_s(r));
    CHECK_EQ_U64(recuo_regulator_burst(r), 3);
    CHECK(isnan(recuo_regulator_rate_per_s(NULL)));
    CHECK_EQ_U64(recuo_regulator_burst(NULL), 0);
    recuo_regulator_free(r);
    recuo_regulator_free(NULL);
}

static void regulator_exact_sequences(void) {
    /* 2/s with a burst of 3: three at once, then one every 500 ms. */
    recuo_regulator *r = regulator(2, 3);
    uint64_t t0 = 10 * S, wait = 777;
    for (int i = 0; i < 3; i++) {
        wait = 777;
        CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0, 1, &wait), RECUO_OK);
        CHECK_EQ_U64(wait, 0);
    }
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 500 * MS);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S / 2 - 1, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 1);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S / 2, 1, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S / 2, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 500 * MS);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S, 1, NULL), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S, 1, NULL), RECUO_WOULD_WAIT);
    /* After a quiet spell the burst is back, never more. */
    uint64_t later = t0 + 100 * S;
    for (int i = 0; i < 3; i++) {
        CHECK_STATUS(recuo_regulator_try_acquire_at(r, later, 1, &wait), RECUO_OK);
    }
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, later, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 500 * MS);
    recuo_regulator_free(r);

    /* Costs: 10/s with a burst of 10. */
    r = regulator(10, 10);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S, 7, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S, 4, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 100 * MS);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S, 3, &wait), RECUO_OK);
    wait = 777;
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S, 11, &wait), RECUO_ERR_COST_ABOVE_BURST);
    CHECK_EQ_U64(wait, 777);
    CHECK_STATUS(recuo_regulator_try_acquire(r, 11, &wait), RECUO_ERR_COST_ABOVE_BURST);
    CHECK_EQ_U64(wait, 777);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S + 1000 * MS, 10, &wait), RECUO_OK);
    CHECK_EQ_U64(wait, 0);
    recuo_regulator_free(r);

    /* Guide B's target, 90/min: one start every 666 666 667 ns. */
    double per_s = 0;
    CHECK_STATUS(parse("90/min", &per_s), RECUO_OK);
    r = regulator(per_s, 1);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, 5 * S, 1, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, 5 * S, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 666666667);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, 5 * S + 666666667, 1, &wait), RECUO_OK);
    recuo_regulator_free(r);

    CHECK_STATUS(recuo_regulator_try_acquire_at(NULL, S, 1, &wait), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_regulator_try_acquire(NULL, 1, &wait), RECUO_ERR_NULL_ARGUMENT);

    /* A cost of 0 would take nothing; a rate too slow to count is refused when made. */
    r = regulator(10, 10);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S, 0, &wait), RECUO_ERR_ZERO_COST);
    recuo_regulator_free(r);
    recuo_regulator *tiny = NULL;
    CHECK_STATUS(recuo_regulator_new(1e-9 / 86400, 1, &tiny), RECUO_ERR_INVALID_RATE);
    CHECK(tiny == NULL);
    CHECK_STATUS(recuo_regulator_new(1.0 / 86400, 1, &tiny), RECUO_OK);
    recuo_regulator_free(tiny);
}

static int compare_u64(const void *a, const void *b);

/* 8,000 waiters reserve at once from 1000/s with a burst of 20, as an event loop's would:
 * those within the queue get their start, those beyond it RECUO_QUEUE_FULL, never an early
 * start. */
static void regulator_backlog_is_refused_beyond_the_queue(void) {
    enum { WAITERS = 8000 };
    CHECK(RECUO_MAX_QUEUED_STARTS == 4096);
    recuo_regulator *r = regulator(1000, 20);
    uint64_t *starts = calloc(WAITERS, sizeof *starts);
    size_t reserved = 0, refused = 0;
    for (size_t i = 0; i < WAITERS; i++) {
        uint64_t wait = 0;
        recuo_status s = recuo_regulator_reserve(r, 1, UINT64_MAX, &wait);
        uint64_t now = recuo_monotonic_ns();
        if (s == RECUO_OK) {
            CHECK_CTX(wait <= 4096 * MS, "a wait of %" PRIu64 " ns", wait);
            starts[reserved++] = now + wait;
        } else {
            CHECK_STATUS(s, RECUO_QUEUE_FULL);
            CHECK_CTX(wait > 4096 * MS, "refused with a wait of %" PRIu64 " ns", wait);
            refused++;
        }
    }
    /* The burst and 4,096 queued, and one more for each millisecond the loop took. */
    CHECK_CTX(reserved >= 20 + 4096 && refused > 0 && reserved + refused == WAITERS,
              "%zu reserved, %zu refused", reserved, refused);
    qsort(starts, reserved, sizeof starts[0], compare_u64);
    size_t most = 0;
    for (size_t i = 0, first = 0; i < reserved; i++) {
        while (starts[first] + 10 * MS <= starts[i]) {
            first++;
        }
        if (i + 1 - first > most) {
            most = i + 1 - first;
        }
    }
    /* burst + rate x 10 ms = 30 */
    CHECK_CTX(most <= 30, "%zu starts in one window of 10 ms", most);
    free(starts);
    recuo_regulator_free(r);
}

static void regulator_now_and_blocking(void) {
    /* try_acquire reads recuo_monotonic_ns, the system's CLOCK_MONOTONIC. */
    uint64_t a = recuo_monotonic_ns();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t mine = (uint64_t)ts.tv_sec * S + (uint64_t)ts.tv_nsec;
    uint64_t b = recuo_monotonic_ns();
    CHECK_CTX(a > 0 && a <= mine && mine <= b, "%" PRIu64 " %" PRIu64 " %" PRIu64, a, mine, b);

    recuo_regulator *slow = regulator(1.0 / 60, 2);
    uint64_t wait = 0;
    CHECK_STATUS(recuo_regulator_try_acquire(slow, 1, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire(slow, 1, NULL), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire(slow, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_CTX(wait > 50 * S && wait <= 60 * S, "%" PRIu64, wait);

    /* A timed acquire that cannot come in time reserves nothing and does not wait. */
    uint64_t started = now_ms();
    CHECK_STATUS(recuo_regulator_acquire_until(slow, 1, 20, NULL), RECUO_TIMED_OUT);
    CHECK_STATUS(recuo_regulator_acquire_until(slow, 1, 0, NULL), RECUO_TIMED_OUT);
    CHECK_CTX(now_ms() - started < 1000, "%" PRIu64 " ms", now_ms() - started);
    CHECK_STATUS(recuo_regulator_try_acquire(slow, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_STATUS(recuo_regulator_acquire_until(slow, 3, 20, NULL), RECUO_ERR_COST_ABOVE_BURST);
    CHECK_STATUS(recuo_regulator_acquire(slow, 3, NULL), RECUO_ERR_COST_ABOVE_BURST);

    /* A cancelled token: no wait at all. */
    recuo_cancel_token *cancelled = recuo_cancel_token_new();
    recuo_cancel_token_cancel(cancelled);
    CHECK_STATUS(recuo_regulator_acquire(slow, 1, cancelled), RECUO_CANCELLED);
    CHECK_STATUS(recuo_regulator_acquire_until(slow, 1, UINT64_MAX, cancelled), RECUO_CANCELLED);

    /* A blocked acquire wakes at once when the token is cancelled from another thread. */
    recuo_cancel_token *token = recuo_cancel_token_new();
    struct delayed_cancel d = {token, 50};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, cancel_later, &d) == 0);
    started = now_ms();
    CHECK_STATUS(recuo_regulator_acquire(slow, 1, token), RECUO_CANCELLED);
    uint64_t took = now_ms() - started;
    CHECK_CTX(took >= 30 && took < 10000, "%" PRIu64 " ms", took);
    pthread_join(t, NULL);
    recuo_cancel_token_free(token);
    recuo_regulator_free(slow);

    /* A fast regulator: acquire waits for the next slot (1 ms) and takes it. */
    recuo_regulator *fast = regulator(1000, 1);
    started = now_ms();
    for (int i = 0; i < 20; i++) {
        CHECK_STATUS(recuo_regulator_acquire(fast, 1, NULL), RECUO_OK);
    }
    took = now_ms() - started;
    CHECK_CTX(took >= 15 && took < 10000, "%" PRIu64 " ms for 20 starts at 1000/s", took);
    CHECK_STATUS(recuo_regulator_acquire_until(fast, 1, 1000, NULL), RECUO_OK);
    CHECK_STATUS(recuo_regulator_acquire_until(fast, 1, UINT64_MAX, cancelled), RECUO_CANCELLED);
    recuo_regulator_free(fast);
    recuo_cancel_token_free(cancelled);

    CHECK_STATUS(recuo_regulator_acquire(NULL, 1, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_regulator_acquire_until(NULL, 1, 1, NULL), RECUO_ERR_NULL_ARGUMENT);
}

static void regulator_adaptive(void) {
    recuo_regulator *r = regulator(8, 1);
    CHECK_STATUS(recuo_regulator_set_adaptive(r, true), RECUO_OK);
    CHECK_STATUS(recuo_regulator_on_throttled(r), RECUO_OK);
    CHECK(fabs(recuo_regulator_rate_per_s(r) - 4) < 1e-6);
    CHECK_STATUS(recuo_regulator_on_throttled(r), RECUO_OK);
    CHECK(fabs(recuo_regulator_rate_per_s(r) - 2) < 1e-6);
    for (int i = 0; i < 12; i++) {
        CHECK_STATUS(recuo_regulator_on_success(r), RECUO_OK);
    }
    CHECK_CTX(fabs(recuo_regulator_rate_per_s(r) - 8) < 1e-6, "%g",
              recuo_regulator_rate_per_s(r));
    for (int i = 0; i < 20; i++) {
        recuo_regulator_on_throttled(r);
    }
    CHECK_CTX(fabs(recuo_regulator_rate_per_s(r) - 8.0 / 64) < 1e-9, "%g",
              recuo_regulator_rate_per_s(r));
    /* Slowed down, the regulator spaces starts by the slower interval (8 s). */
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, 100 * S, 1, NULL), RECUO_OK);
    uint64_t wait = 0;
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, 100 * S, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 8 * S);
    /* Back to fixed: 429s no longer slow it down (the rate in force stays as it is). */
    CHECK_STATUS(recuo_regulator_set_adaptive(r, false), RECUO_OK);
    double before = recuo_regulator_rate_per_s(r);
    recuo_regulator_on_success(r);
    CHECK(recuo_regulator_rate_per_s(r) == before);
    recuo_regulator_free(r);

    recuo_regulator *fixed = regulator(8, 1);
    CHECK_STATUS(recuo_regulator_on_throttled(fixed), RECUO_OK);
    CHECK(recuo_regulator_rate_per_s(fixed) == 8);
    recuo_regulator_free(fixed);

    CHECK_STATUS(recuo_regulator_set_adaptive(NULL, true), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_regulator_on_throttled(NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_regulator_on_success(NULL), RECUO_ERR_NULL_ARGUMENT);
}

/* ---- the shared regulator and budget files ---------------------------------------------- */

static recuo_status open_shared(const char *path, double per_s, uint32_t burst,
                                recuo_regulator **out, char *detail, size_t detail_len) {
    return recuo_regulator_new_shared(path, strlen(path), per_s, burst, out, detail,
                                      detail_len);
}

static void shared_files_refuse_other_settings(void) {
    char dir[64], path[128], junk[128], budget_path[128], missing[160];
    make_dir(dir, sizeof dir);
    join_path(path, sizeof path, dir, "regulator");
    join_path(junk, sizeof junk, dir, "junk");
    join_path(budget_path, sizeof budget_path, dir, "budget");
    join_path(missing, sizeof missing, dir, "no/such/dir/regulator");

    char detail[256];
    strcpy(detail, "stale");
    recuo_regulator *a = NULL, *same = NULL;
    CHECK_STATUS(open_shared(path, 1.5, 3, &a, detail, sizeof detail), RECUO_OK);
    CHECK_CTX(streq(detail, ""), "%s", detail);
    CHECK_STATUS(open_shared(path, 1.5, 3, &same, NULL, 0), RECUO_OK);
    CHECK(fabs(recuo_regulator_rate_per_s(same) - 1.5) < 1e-8 && recuo_regulator_burst(same) == 3);
    /* One allowance, two handles. */
    CHECK_STATUS(recuo_regulator_try_acquire_at(a, 5 * S, 3, NULL), RECUO_OK);
    uint64_t wait = 0;
    CHECK_STATUS(recuo_regulator_try_acquire_at(same, 5 * S, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 666666667);

    /* A second opener with another rate: refused, and the detail names both. */
    static int dummy;
    recuo_regulator *const sentinel = (recuo_regulator *)&dummy;
    recuo_regulator *other = sentinel;
    CHECK_STATUS(open_shared(path, 2.0, 3, &other, detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK(other == sentinel);
    CHECK_CTX(strstr(detail, "1.500000/s") != NULL && strstr(detail, "2.000000/s") != NULL &&
                  strstr(detail, "asked for") != NULL && strstr(detail, path) != NULL,
              "%s", detail);
    CHECK_STATUS(open_shared(path, 1.5, 4, &other, detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK_CTX(strstr(detail, "burst of 3") != NULL && strstr(detail, "burst of 4") != NULL,
              "%s", detail);
    /* A detail buffer too small still gets a terminated beginning. */
    char tiny[8];
    CHECK_STATUS(open_shared(path, 2.0, 3, &other, tiny, sizeof tiny), RECUO_ERR_SHARED_MISMATCH);
    CHECK(strlen(tiny) == 7);
    CHECK_STATUS(open_shared(path, 2.0, 3, &other, NULL, 0), RECUO_ERR_SHARED_MISMATCH);
    CHECK(other == sentinel);
    char msg[128];
    CHECK_STATUS(recuo_status_message(RECUO_ERR_SHARED_MISMATCH, msg, sizeof msg, NULL), RECUO_OK);
    CHECK(strstr(msg, "other settings") != NULL);

    /* A file that holds anything else is refused. */
    FILE *f = fopen(junk, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs("not a regulator", f);
        fclose(f);
    }
    CHECK_STATUS(open_shared(junk, 1, 1, &other, detail, sizeof detail), RECUO_ERR_SHARED_MISMATCH);
    CHECK_CTX(strstr(detail, "bytes") != NULL, "%s", detail);
    recuo_retry_budget *budget = NULL;
    CHECK_STATUS(recuo_retry_budget_new_shared(budget_path, strlen(budget_path), 0.1, 1, 10,
                                               &budget, detail, sizeof detail),
                 RECUO_OK);
    CHECK_STATUS(open_shared(budget_path, 1, 1, &other, detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    recuo_retry_budget *not_a_budget = NULL;
    CHECK_STATUS(recuo_retry_budget_new_shared(path, strlen(path), 0.1, 1, 10, &not_a_budget,
                                               detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK(not_a_budget == NULL);

    /* I/O errors, bad settings and arguments. */
    CHECK_STATUS(open_shared(missing, 1, 1, &other, detail, sizeof detail), RECUO_ERR_IO);
    CHECK_CTX(strlen(detail) > 0, "%s", detail);
    CHECK_STATUS(open_shared(path, 1.5, 0, &other, detail, sizeof detail), RECUO_ERR_ZERO_BURST);
    CHECK_CTX(strstr(detail, "burst") != NULL, "%s", detail);
    CHECK_STATUS(open_shared(path, 0, 3, &other, detail, sizeof detail), RECUO_ERR_INVALID_RATE);
    CHECK_CTX(strstr(detail, "rate") != NULL, "%s", detail);
    CHECK_STATUS(open_shared(path, 1.5, 3, NULL, detail, sizeof detail), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_regulator_new_shared(NULL, 5, 1.5, 3, &other, NULL, 0),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_regulator_new_shared("", 0, 1.5, 3, &other, NULL, 0), RECUO_ERR_IO);
    CHECK(other == sentinel);

    /* The shared budget: two handles, one count; other settings refused. */
    recuo_retry_budget *budget2 = NULL;
    CHECK_STATUS(recuo_retry_budget_new_shared(budget_path, strlen(budget_path), 0.1, 1, 10,
                                               &budget2, NULL, 0),
                 RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_record_request_at(budget, 20 * S), RECUO_OK);
    uint64_t requests = 0, retries = 0;
    CHECK_STATUS(recuo_retry_budget_counts_at(budget2, 20 * S, &requests, &retries), RECUO_OK);
    CHECK(requests == 1 && retries == 0);
    recuo_retry_budget *mismatch = NULL;
    CHECK_STATUS(recuo_retry_budget_new_shared(budget_path, strlen(budget_path), 0.2, 1, 10,
                                               &mismatch, detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK_CTX(strstr(detail, "ratio 0.1") != NULL && strstr(detail, "ratio 0.2") != NULL,
              "%s", detail);
    CHECK_STATUS(recuo_retry_budget_new_shared(budget_path, strlen(budget_path), 0.1, 1, 0,
                                               &mismatch, detail, sizeof detail),
                 RECUO_ERR_INVALID_BUDGET);
    CHECK_CTX(strstr(detail, "window") != NULL, "%s", detail);
    CHECK_STATUS(recuo_retry_budget_new_shared(missing, strlen(missing), 0.1, 1, 10, &mismatch,
                                               detail, sizeof detail),
                 RECUO_ERR_IO);
    CHECK_STATUS(recuo_retry_budget_new_shared(budget_path, strlen(budget_path), 0.1, 1, 10,
                                               NULL, NULL, 0),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK(mismatch == NULL);

    recuo_retry_budget_free(budget);
    recuo_retry_budget_free(budget2);
    recuo_regulator_free(a);
    recuo_regulator_free(same);
    unlink(path);
    unlink(junk);
    unlink(budget_path);
    rmdir(dir);
}

/* The multi-process test: as core/tests/regulator_limits.rs, in C. */
#define RATE_PER_S 100.0
#define BURST 5
#define STEP_NS UINT64_C(100000) /* each try moves the fake clock 0.1 ms */
#define TRIES 20000              /* per process */
#define CHILDREN 4

struct child_starts {
    uint64_t count;
    uint64_t at[TRIES];
};

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every window holds at most burst + rate × window starts; at least 95% of the allowed
 * starts are used. */
static void check_windows(uint64_t *starts, size_t n, uint64_t span_ns) {
    qsort(starts, n, sizeof starts[0], compare_u64);
    double interval = 1e9 / RATE_PER_S;
    size_t worst_i = 0, worst_j = 0;
    double worst = -1e300;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i; j < n; j++) {
            double excess = (double)(j - i + 1) - (BURST + (double)(starts[j] - starts[i]) / interval);
            if (excess > worst) {
                worst = excess;
                worst_i = i;
                worst_j = j;
            }
        }
    }
    CHECK_CTX(worst <= 1e-9, "%zu starts in %" PRIu64 " ns, more than burst + rate x window",
              worst_j - worst_i + 1, n > 0 ? starts[worst_j] - starts[worst_i] : 0);
    double possible = BURST + (double)span_ns / interval;
    CHECK_CTX((double)n >= 0.95 * possible, "only %zu of %.0f starts used", n, possible);
}

/* A child: its own handle on the shared file, the shared fake clock, TRIES tries. */
static int child(const char *path, _Atomic uint64_t *fake, struct child_starts *mine) {
    recuo_regulator *r = NULL;
    if (open_shared(path, RATE_PER_S, BURST, &r, NULL, 0) != RECUO_OK) {
        return 2;
    }
    uint64_t give_up = now_ms() + 10000;
    while (atomic_load(fake) == 0 && now_ms() < give_up) {
        sched_yield();
    }
    int rc = atomic_load(fake) == 0 ? 3 : 0;
    for (int i = 0; rc == 0 && i < TRIES; i++) {
        uint64_t now = atomic_fetch_add(fake, STEP_NS);
        recuo_status s = recuo_regulator_try_acquire_at(r, now, 1, NULL);
        if (s == RECUO_OK) {
            mine->at[mine->count++] = now;
        } else if (s != RECUO_WOULD_WAIT) {
            rc = 4;
        }
    }
    recuo_regulator_free(r);
    return rc;
}

static void processes_share_one_allowance(void) {
    char dir[64], path[128], clock_path[128];
    make_dir(dir, sizeof dir);
    join_path(path, sizeof path, dir, "regulator");
    join_path(clock_path, sizeof clock_path, dir, "clock");

    /* The fake clock: one 64-bit atomic in a second shared file. */
    int fd = open(clock_path, O_RDWR | O_CREAT, 0600);
    CHECK(fd >= 0 && ftruncate(fd, sizeof(uint64_t)) == 0);
    _Atomic uint64_t *fake = mmap(NULL, sizeof *fake, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(fake != MAP_FAILED);
    close(fd);
    /* Where the children write their starts (anonymous shared memory, no recuo state). */
    struct child_starts *starts = mmap(NULL, CHILDREN * sizeof *starts, PROT_READ | PROT_WRITE,
                                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(starts != MAP_FAILED);
    if (fake == MAP_FAILED || starts == MAP_FAILED) {
        return;
    }
    atomic_store(fake, 0);

    fflush(stdout);
    fflush(stderr);
    pid_t pids[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        starts[i].count = 0;
        pids[i] = fork();
        if (pids[i] == 0) {
            _exit(child(path, fake, &starts[i]));
        }
        CHECK(pids[i] > 0);
    }
    sleep_ms(200);
    uint64_t first = S;
    atomic_store(fake, first);
    for (int i = 0; i < CHILDREN; i++) {
        int status = -1;
        if (pids[i] > 0) {
            waitpid(pids[i], &status, 0);
        }
        CHECK_CTX(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %d", i,
                  status);
    }
    uint64_t span = atomic_load(fake) - first;
    CHECK_EQ_U64(span, (uint64_t)CHILDREN * TRIES * STEP_NS);

    size_t n = 0;
    for (int i = 0; i < CHILDREN; i++) {
        n += starts[i].count;
    }
    uint64_t *merged = malloc((n > 0 ? n : 1) * sizeof *merged);
    CHECK(merged != NULL);
    if (merged != NULL) {
        size_t k = 0;
        for (int i = 0; i < CHILDREN; i++) {
            CHECK_CTX(starts[i].count > 0, "child %d made no start", i);
            for (uint64_t j = 0; j < starts[i].count; j++) {
                merged[k++] = starts[i].at[j];
            }
        }
        CHECK_CTX(n > 100, "%zu starts", n);
        check_windows(merged, n, span);
        free(merged);
    }
    munmap(starts, CHILDREN * sizeof *starts);
    munmap((void *)fake, sizeof *fake);
    unlink(path);
    unlink(clock_path);
    rmdir(dir);
}

/* An adaptive regulator file held by two processes: a 429 reported by a forked child halves
 * the rate the parent reserves at (every wait exact: both reserve at the same fake instants),
 * and the parent's successes give it back. */
static void processes_share_an_adaptive_regulator(void) {
    char dir[64], path[128];
    make_dir(dir, sizeof dir);
    join_path(path, sizeof path, dir, "adaptive");
    const uint64_t t = 1000 * S;

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        recuo_regulator *a = NULL;
        int rc = 1;
        if (recuo_regulator_new_shared_with(path, strlen(path), 10, 1, true, &a, NULL, 0) ==
                RECUO_OK &&
            recuo_regulator_try_acquire_at(a, t, 1, NULL) == RECUO_OK &&
            recuo_regulator_on_throttled(a) == RECUO_OK) {
            rc = 0;
        }
        recuo_regulator_free(a);
        _exit(rc);
    }
    CHECK(pid > 0);
    int status = -1;
    if (pid > 0) {
        waitpid(pid, &status, 0);
    }
    CHECK_CTX(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %d", status);

    recuo_regulator *b = NULL;
    char detail[320];
    CHECK_STATUS(recuo_regulator_new_shared_with(path, strlen(path), 10, 1, true, &b, detail,
                                                 sizeof detail),
                 RECUO_OK);
    CHECK(fabs(recuo_regulator_rate_per_s(b) - 5) < 1e-9);
    /* The child's start at t holds the slot until t + 100 ms; the parent's first start takes
     * it, and its next one comes 200 ms later (the halved rate), not 100 ms. */
    CHECK_STATUS(recuo_regulator_try_acquire_at(b, t + 100 * MS, 1, NULL), RECUO_OK);
    uint64_t wait = 0;
    CHECK_STATUS(recuo_regulator_try_acquire_at(b, t + 100 * MS, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 200 * MS);
    for (int i = 0; i < 8; i++) {
        CHECK_STATUS(recuo_regulator_on_success(b), RECUO_OK);
    }
    CHECK(fabs(recuo_regulator_rate_per_s(b) - 10) < 1e-9);
    /* Every process must agree on the setting; none switches it for the others. */
    recuo_regulator *other = NULL;
    CHECK_STATUS(recuo_regulator_new_shared(path, strlen(path), 10, 1, &other, detail,
                                            sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK_CTX(strstr(detail, "adaptive (a 429 slows every holder); this process asked for "
                             "10.000000/s with a burst of 1, not adaptive") != NULL,
              "%s", detail);
    CHECK(other == NULL);
    CHECK_STATUS(recuo_regulator_set_adaptive(b, false), RECUO_ERR_SHARED_MISMATCH);
    CHECK_STATUS(recuo_regulator_set_adaptive(b, true), RECUO_OK);
    recuo_regulator_free(b);
    unlink(path);
    rmdir(dir);
}

/* Threads sharing one in-process regulator on the same fake clock. */
struct thread_starts {
    recuo_regulator *r;
    _Atomic uint64_t *fake;
    uint64_t count;
    uint64_t at[TRIES];
};

static void *thread_tries(void *arg) {
    struct thread_starts *t = arg;
    for (int i = 0; i < TRIES; i++) {
        uint64_t now = atomic_fetch_add(t->fake, STEP_NS);
        if (recuo_regulator_try_acquire_at(t->r, now, 1, NULL) == RECUO_OK) {
            t->at[t->count++] = now;
        }
    }
    return NULL;
}

static void threads_share_one_allowance(void) {
    recuo_regulator *r = regulator(RATE_PER_S, BURST);
    static _Atomic uint64_t fake;
    atomic_store(&fake, S);
    struct thread_starts *ts = calloc(CHILDREN, sizeof *ts);
    CHECK(ts != NULL);
    if (ts == NULL) {
        return;
    }
    pthread_t threads[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        ts[i].r = r;
        ts[i].fake = &fake;
        CHECK(pthread_create(&threads[i], NULL, thread_tries, &ts[i]) == 0);
    }
    size_t n = 0;
    for (int i = 0; i < CHILDREN; i++) {
        pthread_join(threads[i], NULL);
        n += ts[i].count;
    }
    uint64_t *merged = malloc(n * sizeof *merged);
    size_t k = 0;
    for (int i = 0; merged != NULL && i < CHILDREN; i++) {
        for (uint64_t j = 0; j < ts[i].count; j++) {
            merged[k++] = ts[i].at[j];
        }
    }
    if (merged != NULL) {
        check_windows(merged, n, atomic_load(&fake) - S);
    }
    free(merged);
    free(ts);
    recuo_regulator_free(r);
}

/* ---- the concurrency limit -------------------------------------------------------------- */

static void concurrency_limit_basics(void) {
    static int dummy;
    recuo_concurrency_limit *const sentinel = (recuo_concurrency_limit *)&dummy;
    recuo_concurrency_limit *l = sentinel;
    CHECK_STATUS(recuo_concurrency_limit_new(0, &l), RECUO_ERR_ZERO_LIMIT);
    CHECK(l == sentinel);
    CHECK_STATUS(recuo_concurrency_limit_new(3, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_concurrency_limit_new(3, &l), RECUO_OK);
    CHECK_EQ_U64(recuo_concurrency_limit_limit(l), 3);

    recuo_permit *p[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        CHECK_STATUS(recuo_concurrency_limit_try_acquire(l, &p[i]), RECUO_OK);
    }
    recuo_permit *const none = (recuo_permit *)&dummy;
    recuo_permit *extra = none;
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(l, &extra), RECUO_WOULD_WAIT);
    CHECK(extra == none);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l), 3);
    CHECK_EQ_U64(recuo_concurrency_limit_max_in_flight(l), 3);

    uint64_t started = now_ms();
    CHECK_STATUS(recuo_concurrency_limit_acquire(l, 20, NULL, &extra), RECUO_TIMED_OUT);
    CHECK_STATUS(recuo_concurrency_limit_acquire(l, 0, NULL, &extra), RECUO_TIMED_OUT);
    CHECK(now_ms() - started < 5000);
    recuo_cancel_token *cancelled = recuo_cancel_token_new();
    recuo_cancel_token_cancel(cancelled);
    CHECK_STATUS(recuo_concurrency_limit_acquire(l, UINT64_MAX, cancelled, &extra),
                 RECUO_CANCELLED);
    CHECK(extra == none);

    /* Waiting forever ends when another thread cancels. */
    recuo_cancel_token *token = recuo_cancel_token_new();
    struct delayed_cancel d = {token, 50};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, cancel_later, &d) == 0);
    CHECK_STATUS(recuo_concurrency_limit_acquire(l, UINT64_MAX, token, &extra), RECUO_CANCELLED);
    pthread_join(t, NULL);
    CHECK(extra == none);
    /* A huge timeout that is not forever still waits, and is not an overflow. */
    recuo_permit_release(p[0]);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l), 2);
    CHECK_STATUS(recuo_concurrency_limit_acquire(l, UINT64_MAX - 1, NULL, &p[0]), RECUO_OK);
    recuo_permit_release(p[1]);
    CHECK_STATUS(recuo_concurrency_limit_acquire(l, 10, cancelled, &p[1]), RECUO_OK);
    CHECK_EQ_U64(recuo_concurrency_limit_max_in_flight(l), 3);

    CHECK_STATUS(recuo_concurrency_limit_try_acquire(NULL, &extra), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(l, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_concurrency_limit_acquire(NULL, 1, NULL, &extra), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_concurrency_limit_acquire(l, 1, NULL, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(NULL), 0);
    CHECK_EQ_U64(recuo_concurrency_limit_max_in_flight(NULL), 0);
    CHECK_EQ_U64(recuo_concurrency_limit_limit(NULL), 0);

    /* Permits outlive the limit's handle. */
    recuo_concurrency_limit_free(l);
    recuo_concurrency_limit_free(NULL);
    for (int i = 0; i < 3; i++) {
        recuo_permit_release(p[i]);
    }
    recuo_permit_release(NULL);
    recuo_cancel_token_free(token);
    recuo_cancel_token_free(cancelled);
}

struct limit_worker {
    recuo_concurrency_limit *limit;
    atomic_int *in_flight;
    atomic_int *most;
    int failures;
};

static void *limit_worker(void *arg) {
    struct limit_worker *w = arg;
    for (int i = 0; i < 100; i++) {
        recuo_permit *p = NULL;
        if (recuo_concurrency_limit_acquire(w->limit, UINT64_MAX, NULL, &p) != RECUO_OK) {
            w->failures++;
            continue;
        }
        int now = atomic_fetch_add(w->in_flight, 1) + 1;
        int most = atomic_load(w->most);
        while (now > most && !atomic_compare_exchange_weak(w->most, &most, now)) {
        }
        if (i % 10 == 0) {
            sleep_ms(1);
        } else {
            sched_yield();
        }
        atomic_fetch_sub(w->in_flight, 1);
        recuo_permit_release(p);
    }
    return NULL;
}

static void concurrency_limit_threads(void) {
    recuo_concurrency_limit *l = NULL;
    CHECK_STATUS(recuo_concurrency_limit_new(2, &l), RECUO_OK);
    atomic_int in_flight = 0, most = 0;
    struct limit_worker w[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct limit_worker){l, &in_flight, &most, 0};
        CHECK(pthread_create(&threads[i], NULL, limit_worker, &w[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        CHECK_EQ_U64(w[i].failures, 0);
    }
    CHECK_CTX(atomic_load(&most) >= 1 && atomic_load(&most) <= 2, "%d in flight at once",
              atomic_load(&most));
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l), 0);
    CHECK(recuo_concurrency_limit_max_in_flight(l) <= 2);
    recuo_concurrency_limit_free(l);
}

/* ---- the retry budget ------------------------------------------------------------------- */

static void retry_budget_arithmetic(void) {
    static int dummy;
    recuo_retry_budget *const sentinel = (recuo_retry_budget *)&dummy;
    recuo_retry_budget *b = sentinel;
    CHECK_STATUS(recuo_retry_budget_new(-0.1, 1, 10, &b), RECUO_ERR_INVALID_BUDGET);
    CHECK_STATUS(recuo_retry_budget_new(NAN, 1, 10, &b), RECUO_ERR_INVALID_BUDGET);
    CHECK_STATUS(recuo_retry_budget_new(1001, 1, 10, &b), RECUO_ERR_INVALID_BUDGET);
    CHECK_STATUS(recuo_retry_budget_new(0.1, -1, 10, &b), RECUO_ERR_INVALID_BUDGET);
    CHECK_STATUS(recuo_retry_budget_new(0.1, NAN, 10, &b), RECUO_ERR_INVALID_BUDGET);
    CHECK_STATUS(recuo_retry_budget_new(0.1, 1, 0, &b), RECUO_ERR_INVALID_BUDGET);
    CHECK_STATUS(recuo_retry_budget_new(0.1, 1, 61, &b), RECUO_ERR_INVALID_BUDGET);
    CHECK(b == sentinel);
    CHECK_STATUS(recuo_retry_budget_new(0.1, 1, 10, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_budget_new_default(NULL), RECUO_ERR_NULL_ARGUMENT);

    /* The floor alone: 0.5/s × 10 s = 5 retries; 100 requests earn 10 more. */
    CHECK_STATUS(recuo_retry_budget_new(0.1, 0.5, 10, &b), RECUO_OK);
    uint64_t t = 100 * S;
    for (int i = 0; i < 5; i++) {
        CHECK_STATUS(recuo_retry_budget_try_withdraw_at(b, t), RECUO_OK);
    }
    CHECK_STATUS(recuo_retry_budget_try_withdraw_at(b, t), RECUO_BUDGET_EXHAUSTED);
    for (int i = 0; i < 100; i++) {
        CHECK_STATUS(recuo_retry_budget_record_request_at(b, t), RECUO_OK);
    }
    for (int i = 0; i < 10; i++) {
        CHECK_STATUS(recuo_retry_budget_try_withdraw_at(b, t + 500 * MS), RECUO_OK);
    }
    CHECK_STATUS(recuo_retry_budget_try_withdraw_at(b, t + 500 * MS), RECUO_BUDGET_EXHAUSTED);
    uint64_t requests = 0, retries = 0;
    CHECK_STATUS(recuo_retry_budget_counts_at(b, t, &requests, &retries), RECUO_OK);
    CHECK(requests == 100 && retries == 15);
    CHECK_STATUS(recuo_retry_budget_counts_at(b, t, NULL, NULL), RECUO_OK);
    /* Eleven seconds on, the window holds nothing. */
    CHECK_STATUS(recuo_retry_budget_counts_at(b, t + 11 * S, &requests, &retries), RECUO_OK);
    CHECK(requests == 0 && retries == 0);
    recuo_retry_budget_free(b);

    /* Old seconds fall out of the window. */
    CHECK_STATUS(recuo_retry_budget_new(0, 0.1, 10, &b), RECUO_OK);
    t = 50 * S;
    CHECK_STATUS(recuo_retry_budget_try_withdraw_at(b, t), RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_try_withdraw_at(b, t + 9 * S), RECUO_BUDGET_EXHAUSTED);
    CHECK_STATUS(recuo_retry_budget_try_withdraw_at(b, t + 10 * S), RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_counts_at(b, t + 10 * S, &requests, &retries), RECUO_OK);
    CHECK(requests == 0 && retries == 1);
    recuo_retry_budget_free(b);

    /* The defaults: 10% of requests plus 1/s over 10 s — 10 retries with no request. */
    CHECK_STATUS(recuo_retry_budget_new_default(&b), RECUO_OK);
    int granted = 0;
    for (int i = 0; i < 100; i++) {
        granted += recuo_retry_budget_try_withdraw_at(b, 7 * S) == RECUO_OK;
    }
    CHECK_EQ_U64(granted, 10);
    /* The functions on the real clock count too. */
    CHECK_STATUS(recuo_retry_budget_record_request(b), RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_try_withdraw(b), RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_counts(b, &requests, &retries), RECUO_OK);
    CHECK(requests == 1 && retries == 1);
    recuo_retry_budget_free(b);
    recuo_retry_budget_free(NULL);

    CHECK_STATUS(recuo_retry_budget_record_request(NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_budget_record_request_at(NULL, 1), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_budget_try_withdraw(NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_budget_try_withdraw_at(NULL, 1), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_budget_counts(NULL, &requests, &retries), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_budget_counts_at(NULL, 1, &requests, &retries),
                 RECUO_ERR_NULL_ARGUMENT);
}

/* ---- the gate --------------------------------------------------------------------------- */

static recuo_retry_budget *one_retry_budget(void) {
    /* No ratio, a floor of 0.1/s over 10 s: exactly one retry. */
    recuo_retry_budget *b = NULL;
    CHECK_STATUS(recuo_retry_budget_new(0, 0.1, 10, &b), RECUO_OK);
    return b;
}

static void gate_by_hand(void) {
    recuo_gate *g = recuo_gate_new();
    CHECK(g != NULL);
    recuo_pass *pass = NULL;
    CHECK_STATUS(recuo_gate_wait(g, false, 0, NULL, &pass), RECUO_OK);
    recuo_pass_release(pass);

    recuo_concurrency_limit *l = NULL;
    CHECK_STATUS(recuo_concurrency_limit_new(1, &l), RECUO_OK);
    recuo_regulator *r = regulator(1000, 5);
    recuo_retry_budget *b = one_retry_budget();
    CHECK_STATUS(recuo_gate_set_limit(g, l), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_regulator(g, r), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_budget(g, b), RECUO_OK);

    /* A place, a start slot; the budget is left to the machine that holds the gate. */
    CHECK_STATUS(recuo_gate_wait(g, false, 0, NULL, &pass), RECUO_OK);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l), 1);
    uint64_t requests = 0, retries = 0;
    CHECK_STATUS(recuo_retry_budget_counts(b, &requests, &retries), RECUO_OK);
    CHECK(requests == 0 && retries == 0);
    /* The only place is taken: a cancelled wait holds nothing. */
    recuo_cancel_token *cancelled = recuo_cancel_token_new();
    recuo_cancel_token_cancel(cancelled);
    static int dummy;
    recuo_pass *const none = (recuo_pass *)&dummy;
    recuo_pass *second = none;
    CHECK_STATUS(recuo_gate_wait(g, false, 0, cancelled, &second), RECUO_CANCELLED);
    CHECK(second == none);
    recuo_pass_release(pass);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l), 0);
    CHECK_STATUS(recuo_gate_wait(g, false, 0, NULL, &pass), RECUO_OK);
    recuo_pass_release(pass);
    CHECK_STATUS(recuo_retry_budget_counts(b, &requests, &retries), RECUO_OK);
    CHECK(requests == 0);

    /* The gate keeps its own references: the caller's handles may go. */
    recuo_concurrency_limit *l_again = NULL;
    CHECK_STATUS(recuo_concurrency_limit_new(1, &l_again), RECUO_OK);
    recuo_regulator_free(r);
    recuo_retry_budget_free(b);
    recuo_concurrency_limit_free(l);
    CHECK_STATUS(recuo_gate_wait(g, false, 0, NULL, &pass), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_limit(g, l_again), RECUO_OK);
    /* The pass still holds the old limit's place; the new limit is free. */
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l_again), 0);
    recuo_pass_release(pass);
    /* NULL removes a part. */
    CHECK_STATUS(recuo_gate_set_limit(g, NULL), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_regulator(g, NULL), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_budget(g, NULL), RECUO_OK);
    CHECK_STATUS(recuo_gate_wait(g, false, 0, NULL, &pass), RECUO_OK);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l_again), 0);
    recuo_pass_release(pass);
    recuo_pass_release(NULL);

    CHECK_STATUS(recuo_gate_wait(NULL, false, 0, NULL, &pass), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_gate_wait(g, false, 0, NULL, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_gate_set_limit(NULL, l_again), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_gate_set_regulator(NULL, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_gate_set_budget(NULL, NULL), RECUO_ERR_NULL_ARGUMENT);
    recuo_concurrency_limit_free(l_again);
    recuo_cancel_token_free(cancelled);
    recuo_gate_free(g);
    recuo_gate_free(NULL);
}

static recuo_policy *quick_policy(void) {
    recuo_policy *p = recuo_policy_new();
    CHECK_STATUS(recuo_policy_set_base_ms(p, 1), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_cap_ms(p, 2), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_jitter(p, RECUO_JITTER_NONE), RECUO_OK);
    return p;
}

static const recuo_verdict SERVER_ERROR = {RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR,
                                           RECUO_WAIT_NONE, 0};
static const recuo_verdict RATE_LIMITED = {RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED,
                                           RECUO_WAIT_MS, 0};
static const recuo_verdict UNAVAILABLE = {RECUO_VERDICT_RETRY, RECUO_CAUSE_UNAVAILABLE,
                                          RECUO_WAIT_MS, 0};
static const recuo_verdict SUCCESS = {RECUO_VERDICT_SUCCESS, RECUO_CAUSE_SUCCESS,
                                      RECUO_WAIT_NONE, 0};
static const recuo_verdict PERMANENT = {RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_PERMANENT,
                                        RECUO_WAIT_NONE, 0};

/* The attempt made came to verdict `v` at `now`: `recuo_attempts_succeeded` for a success,
 * else `recuo_attempts_failed` and, when the machine asks, `recuo_attempts_judged`. */
static void judged(recuo_attempts *a, const recuo_verdict *v, uint64_t now, recuo_step *s) {
    if (v->verdict == RECUO_VERDICT_SUCCESS) {
        CHECK_STATUS(recuo_attempts_succeeded(a, now, s), RECUO_OK);
        return;
    }
    CHECK_STATUS(recuo_attempts_failed(a, now, s), RECUO_OK);
    if (s->kind == RECUO_STEP_CLASSIFY) {
        CHECK_STATUS(recuo_attempts_judged(a, now, v, s), RECUO_OK);
    }
}

static void gate_with_the_state_machine(void) {
    recuo_policy *p = quick_policy();
    recuo_gate *g = recuo_gate_new();
    recuo_retry_budget *b = one_retry_budget();
    recuo_regulator *r = regulator(1000, 5);
    recuo_concurrency_limit *l = NULL;
    CHECK_STATUS(recuo_concurrency_limit_new(1, &l), RECUO_OK);
    CHECK_STATUS(recuo_regulator_set_adaptive(r, true), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_budget(g, b), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_regulator(g, r), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_limit(g, l), RECUO_OK);

    /* The machine holds the gate: ENTER → recuo_gate_wait → entered → the request →
     * release → next. The budget counts attempt 0 and pays for one retry: the second retry
     * has none. */
    recuo_attempts *a = NULL;
    CHECK_STATUS(recuo_attempts_new_seeded(p, 1, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_gate(a, g), RECUO_OK);
    recuo_step step;
    uint64_t now = 0;
    CHECK_STATUS(recuo_attempts_start(a, now, 0, &step), RECUO_OK);
    int attempts = 0;
    while (step.kind == RECUO_STEP_ENTER && attempts < 10) {
        recuo_pass *pass = NULL;
        CHECK_STATUS(recuo_gate_wait(g, false, 0, NULL, &pass), RECUO_OK);
        CHECK_STATUS(recuo_attempts_entered(a, now, true, &step), RECUO_OK);
        CHECK_EQ_U64(step.kind, RECUO_STEP_CALL);
        CHECK_EQ_U64(step.attempt, (uint64_t)attempts);
        CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l), 1);
        attempts++;
        recuo_pass_release(pass);
        judged(a, &SERVER_ERROR, ++now, &step);
        if (step.kind == RECUO_STEP_SLEEP) {
            CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l), 0);
            now += step.delay_ms;
            CHECK_STATUS(recuo_attempts_slept(a, now, &step), RECUO_OK);
        }
    }
    CHECK_EQ_U64(attempts, 2);
    CHECK_EQ_U64(step.kind, RECUO_STEP_GAVE_UP);
    CHECK_EQ_U64(step.reason, RECUO_GIVE_UP_BUDGET_EXHAUSTED);
    uint64_t requests = 0, retries = 0;
    CHECK_STATUS(recuo_retry_budget_counts(b, &requests, &retries), RECUO_OK);
    CHECK(requests == 1 && retries == 1);
    CHECK_STATUS(recuo_attempts_set_gate(a, g), RECUO_ERR_ALREADY_STARTED);
    recuo_attempts_free(a);

    /* A rate-limited verdict slows the adaptive regulator down; a success speeds it up. */
    CHECK_STATUS(recuo_attempts_new_seeded(p, 1, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_gate(a, g), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &step), RECUO_OK);
    CHECK_EQ_U64(step.kind, RECUO_STEP_ENTER);
    CHECK_STATUS(recuo_attempts_entered(a, 0, true, &step), RECUO_OK);
    judged(a, &RATE_LIMITED, 1, &step);
    CHECK(fabs(recuo_regulator_rate_per_s(r) - 500) < 1e-6);
    /* The budget is spent: a retry decision gives up, but the slow-down happened. */
    CHECK_EQ_U64(step.reason, RECUO_GIVE_UP_BUDGET_EXHAUSTED);
    recuo_attempts_free(a);
    CHECK_STATUS(recuo_attempts_new_seeded(p, 1, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_gate(a, g), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &step), RECUO_OK);
    CHECK_STATUS(recuo_attempts_entered(a, 0, true, &step), RECUO_OK);
    judged(a, &SUCCESS, 1, &step);
    CHECK_EQ_U64(step.kind, RECUO_STEP_DONE);
    double rate = recuo_regulator_rate_per_s(r);
    CHECK_CTX(rate > 562.4 && rate < 562.6, "%g", rate);
    recuo_attempts_free(a);

    /* Errors change nothing. */
    CHECK_STATUS(recuo_attempts_new_seeded(p, 1, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_gate(a, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_set_gate(NULL, g), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_set_gate(a, g), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &step), RECUO_OK);
    CHECK_STATUS(recuo_attempts_entered(a, 0, true, &step), RECUO_OK);
    CHECK_STATUS(recuo_attempts_failed(a, 1, &step), RECUO_OK);
    CHECK_EQ_U64(step.kind, RECUO_STEP_CLASSIFY);
    recuo_verdict bad = {0, 0, 0, 0};
    CHECK_STATUS(recuo_attempts_judged(a, 1, &bad, &step), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_attempts_judged(a, 1, NULL, &step), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_judged(NULL, 1, &SUCCESS, &step), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_judged(a, 1, &SUCCESS, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_entered(a, 0, true, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK(fabs(recuo_regulator_rate_per_s(r) - rate) < 1e-9);
    recuo_attempts_free(a);

    /* Cancelled while waiting at the gate: that attempt never started and is not counted. */
    CHECK_STATUS(recuo_attempts_new_seeded(p, 1, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_gate(a, g), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &step), RECUO_OK);
    CHECK_EQ_U64(step.kind, RECUO_STEP_ENTER);
    recuo_permit *held = NULL;
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(l, &held), RECUO_OK);
    recuo_cancel_token *cancelled = recuo_cancel_token_new();
    recuo_cancel_token_cancel(cancelled);
    recuo_pass *pass = NULL;
    CHECK_STATUS(recuo_gate_wait(g, false, 0, cancelled, &pass), RECUO_CANCELLED);
    CHECK_STATUS(recuo_gate_wait(g, true, 5, NULL, &pass), RECUO_TIMED_OUT);
    CHECK(pass == NULL);
    CHECK_STATUS(recuo_attempts_cancel(a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_entered(a, 5, false, &step), RECUO_OK);
    CHECK_EQ_U64(step.kind, RECUO_STEP_GAVE_UP);
    CHECK_EQ_U64(step.reason, RECUO_GIVE_UP_CANCELLED);
    recuo_report report;
    CHECK_STATUS(recuo_attempts_report(a, &report, NULL, 0, NULL), RECUO_OK);
    CHECK_EQ_U64(report.attempts, 0);
    CHECK_EQ_U64(report.reason, RECUO_GIVE_UP_CANCELLED);
    CHECK_STATUS(recuo_gate_wait(NULL, false, 0, NULL, &pass), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_gate_wait(g, false, 0, NULL, NULL), RECUO_ERR_NULL_ARGUMENT);
    recuo_permit_release(held);
    recuo_cancel_token_free(cancelled);
    recuo_attempts_free(a);

    recuo_concurrency_limit_free(l);
    recuo_regulator_free(r);
    recuo_retry_budget_free(b);
    recuo_gate_free(g);
    recuo_policy_free(p);
}

/* recuo_retry with a gate: what the operation and the sleep see. */
struct gated {
    recuo_concurrency_limit *limit;
    const recuo_verdict *verdicts; /* per attempt; the last one repeats */
    uint32_t verdict_count;
    uint32_t calls;
    uint32_t in_flight_during_call; /* the most seen while the operation ran */
    uint32_t sleeps;
    uint32_t in_flight_during_sleep; /* the most seen while recuo slept */
};

static void gated_operation(uint32_t attempt, const char *key, recuo_verdict *out,
                            void *user_data) {
    (void)key;
    struct gated *g = user_data;
    g->calls++;
    uint32_t n = recuo_concurrency_limit_in_flight(g->limit);
    if (n > g->in_flight_during_call) {
        g->in_flight_during_call = n;
    }
    uint32_t i = attempt < g->verdict_count ? attempt : g->verdict_count - 1;
    *out = g->verdicts[i];
}

static void gated_sleep(uint64_t ms, void *user_data) {
    (void)ms;
    struct gated *g = user_data;
    g->sleeps++;
    uint32_t n = recuo_concurrency_limit_in_flight(g->limit);
    if (n > g->in_flight_during_sleep) {
        g->in_flight_during_sleep = n;
    }
}

static void retry_with_a_gate(void) {
    recuo_policy *p = quick_policy();
    recuo_gate *g = recuo_gate_new();
    recuo_concurrency_limit *l = NULL;
    CHECK_STATUS(recuo_concurrency_limit_new(1, &l), RECUO_OK);
    recuo_regulator *r = regulator(1000, 1);
    recuo_retry_budget *b = one_retry_budget();
    CHECK_STATUS(recuo_gate_set_limit(g, l), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_regulator(g, r), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_budget(g, b), RECUO_OK);
    recuo_retry_options *o = recuo_retry_options_new();
    CHECK_STATUS(recuo_retry_options_set_seed(o, 7), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_sleep(o, gated_sleep), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_gate(o, g), RECUO_OK);
    /* The options keep the gate as it was: freeing or changing the handle changes nothing. */
    recuo_gate_free(g);

    /* Every attempt fails: one retry from the budget, then budget_exhausted. The place is
     * held during each call and given back before the sleep. */
    struct gated s = {l, &SERVER_ERROR, 1, 0, 0, 0, 0};
    recuo_report report;
    CHECK_STATUS(recuo_retry(p, gated_operation, &s, o, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK_EQ_U64(report.reason, RECUO_GIVE_UP_BUDGET_EXHAUSTED);
    CHECK_EQ_U64(report.attempts, 2);
    CHECK_EQ_U64(s.calls, 2);
    CHECK_EQ_U64(s.in_flight_during_call, 1);
    CHECK_EQ_U64(s.sleeps, 1);
    CHECK_EQ_U64(s.in_flight_during_sleep, 0);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(l), 0);
    uint64_t requests = 0, retries = 0;
    CHECK_STATUS(recuo_retry_budget_counts(b, &requests, &retries), RECUO_OK);
    CHECK(requests == 1 && retries == 1);

    /* An adaptive regulator slows down on a 429 and recovers a little on the success. */
    recuo_gate *g2 = recuo_gate_new();
    recuo_regulator *adaptive = regulator(1000, 1);
    CHECK_STATUS(recuo_regulator_set_adaptive(adaptive, true), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_regulator(g2, adaptive), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_gate(o, g2), RECUO_OK);
    const recuo_verdict throttled_then_ok[] = {RATE_LIMITED, SUCCESS};
    struct gated s2 = {l, throttled_then_ok, 2, 0, 0, 0, 0};
    CHECK_STATUS(recuo_retry(p, gated_operation, &s2, o, &report, NULL, 0, NULL), RECUO_OK);
    CHECK_EQ_U64(s2.calls, 2);
    double rate = recuo_regulator_rate_per_s(adaptive);
    CHECK_CTX(rate > 562.4 && rate < 562.6, "%g", rate);
    /* NULL removes the gate: no limit is touched any more. */
    CHECK_STATUS(recuo_retry_options_set_gate(o, NULL), RECUO_OK);
    struct gated s3 = {l, &SUCCESS, 1, 0, 0, 0, 0};
    CHECK_STATUS(recuo_retry(p, gated_operation, &s3, o, &report, NULL, 0, NULL), RECUO_OK);
    CHECK(recuo_regulator_rate_per_s(adaptive) == rate);
    CHECK_STATUS(recuo_retry_options_set_gate(NULL, g2), RECUO_ERR_NULL_ARGUMENT);

    /* Cancelled while waiting at the gate: the operation is never called. */
    recuo_gate *g3 = recuo_gate_new();
    CHECK_STATUS(recuo_gate_set_limit(g3, l), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_gate(o, g3), RECUO_OK);
    recuo_cancel_token *token = recuo_cancel_token_new();
    CHECK_STATUS(recuo_retry_options_set_cancel_token(o, token), RECUO_OK);
    recuo_permit *held = NULL;
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(l, &held), RECUO_OK);
    struct delayed_cancel d = {token, 50};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, cancel_later, &d) == 0);
    struct gated s4 = {l, &SUCCESS, 1, 0, 0, 0, 0};
    uint64_t started = now_ms();
    CHECK_STATUS(recuo_retry(p, gated_operation, &s4, o, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK(now_ms() - started < 10000);
    pthread_join(t, NULL);
    CHECK_EQ_U64(report.reason, RECUO_GIVE_UP_CANCELLED);
    CHECK_EQ_U64(report.attempts, 0);
    CHECK_EQ_U64(s4.calls, 0);
    recuo_permit_release(held);

    recuo_cancel_token_free(token);
    recuo_gate_free(g3);
    recuo_gate_free(g2);
    recuo_regulator_free(adaptive);
    recuo_retry_options_free(o);
    recuo_retry_budget_free(b);
    recuo_regulator_free(r);
    recuo_concurrency_limit_free(l);
    recuo_policy_free(p);
}

/* ---- the batch runner ------------------------------------------------------------------- */

#define BATCH 20

struct batch {
    int mode; /* 0: odd indexes fail once with 503; 1: succeed; 2: permanent; 3: no verdict
                 for index 2; 4: 429 once, then success */
    atomic_int calls;
    atomic_int in_op;
    atomic_int most_in_op;
    char keys[BATCH][2][RECUO_IDEMPOTENCY_KEY_SIZE];
    int called[BATCH];
    recuo_batch_progress told[BATCH + 1];
    size_t told_count;
};

/* The batch's progress, kept (called one at a time, so no lock). */
static void batch_progress(const recuo_batch_progress *p, void *user_data) {
    struct batch *b = user_data;
    if (b->told_count < BATCH + 1) {
        b->told[b->told_count] = *p;
    }
    b->told_count++;
}

static void batch_operation(size_t index, uint32_t attempt, const char *key,
                            recuo_verdict *out, void *user_data) {
    struct batch *b = user_data;
    atomic_fetch_add(&b->calls, 1);
    int now = atomic_fetch_add(&b->in_op, 1) + 1;
    int most = atomic_load(&b->most_in_op);
    while (now > most && !atomic_compare_exchange_weak(&b->most_in_op, &most, now)) {
    }
    if (index < BATCH) {
        b->called[index]++;
        if (attempt < 2) {
            snprintf(b->keys[index][attempt], RECUO_IDEMPOTENCY_KEY_SIZE, "%s", key);
        }
    }
    sleep_ms(1);
    atomic_fetch_sub(&b->in_op, 1);
    switch (b->mode) {
    case 0:
        *out = index % 2 == 1 && attempt == 0 ? UNAVAILABLE : SUCCESS;
        break;
    case 1:
        *out = SUCCESS;
        break;
    case 2:
        *out = PERMANENT;
        break;
    case 3:
        if (index != 2) {
            *out = SUCCESS;
        }
        break;
    default:
        *out = attempt == 0 ? RATE_LIMITED : SUCCESS;
        break;
    }
}

static void batch_counts_and_keys(void) {
    recuo_policy *p = quick_policy();
    recuo_gate *g = recuo_gate_new();
    recuo_concurrency_limit *l = NULL;
    CHECK_STATUS(recuo_concurrency_limit_new(3, &l), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_limit(g, l), RECUO_OK);

    static struct batch b;
    memset(&b, 0, sizeof b);
    recuo_batch_result results[BATCH];
    memset(results, 0, sizeof results);
    recuo_stats stats;
    memset(&stats, 0, sizeof stats);
    CHECK_STATUS(
        recuo_batch_run(p, g, BATCH, batch_operation, &b, 5, 0, batch_progress, results, &stats),
        RECUO_OK);
    /* One call per operation, in order: done counts up to BATCH, every one a success; the
     * retries only grow, to one per odd index. */
    CHECK_EQ_U64(b.told_count, BATCH);
    for (size_t k = 0; k < BATCH && k < b.told_count; k++) {
        const recuo_batch_progress *t = &b.told[k];
        CHECK_EQ_U64(t->total, BATCH);
        CHECK_EQ_U64(t->done, k + 1);
        CHECK_EQ_U64(t->succeeded, k + 1);
        CHECK_EQ_U64(t->failed + t->not_started, 0);
        CHECK(k == 0 || t->retries >= b.told[k - 1].retries);
    }
    CHECK_EQ_U64(b.told[BATCH - 1].retries, BATCH / 2);
    for (size_t i = 0; i < BATCH; i++) {
        CHECK_CTX(results[i].kind == RECUO_BATCH_SUCCEEDED, "%zu: %s", i,
                  recuo_batch_result_kind_name(results[i].kind));
        CHECK_EQ_U64(results[i].attempts, i % 2 == 1 ? 2 : 1);
        CHECK_EQ_U64(results[i].reason, RECUO_GIVE_UP_NONE);
        CHECK(!results[i].no_verdict);
        /* One key per operation, the same on its retry, another for each operation. */
        CHECK(strlen(b.keys[i][0]) == 36);
        if (i % 2 == 1) {
            CHECK(streq(b.keys[i][0], b.keys[i][1]));
        }
        for (size_t j = 0; j < i; j++) {
            CHECK(!streq(b.keys[i][0], b.keys[j][0]));
        }
    }
    CHECK_EQ_U64(atomic_load(&b.calls), 30);
    CHECK_CTX(atomic_load(&b.most_in_op) <= 3, "%d in flight", atomic_load(&b.most_in_op));
    CHECK(recuo_concurrency_limit_max_in_flight(l) <= 3);
    CHECK_EQ_U64(stats.initial, 20);
    CHECK_EQ_U64(stats.retries, 10);
    CHECK_EQ_U64(stats.successes, 20);
    CHECK_EQ_U64(stats.failures, 0);
    CHECK_EQ_U64(stats.not_started, 0);
    CHECK_EQ_U64(stats.unavailable, 10);
    CHECK_EQ_U64(stats.throttled, 0);
    CHECK(stats.max_in_flight >= 1 && stats.max_in_flight <= 3);
    CHECK(stats.has_starts && stats.has_spacing);
    CHECK(stats.last_start_ns >= stats.first_start_ns);
    CHECK(stats.mean_spacing_ns > 0 &&
          fabs(stats.mean_spacing_ns - (double)(stats.last_start_ns - stats.first_start_ns) / 29) <
              1.0);
    CHECK(stats.min_spacing_ns <= stats.mean_spacing_ns);
    CHECK(stats.elapsed_ms < 10000);

    /* Permanent failures, 429s counted, budget exhausted. */
    memset(&b, 0, sizeof b);
    b.mode = 2;
    CHECK_STATUS(recuo_batch_run(p, NULL, 4, batch_operation, &b, 2, 0, NULL, results, &stats),
                 RECUO_OK);
    for (size_t i = 0; i < 4; i++) {
        CHECK_EQ_U64(results[i].kind, RECUO_BATCH_GAVE_UP);
        CHECK_EQ_U64(results[i].reason, RECUO_GIVE_UP_PERMANENT);
        CHECK_EQ_U64(results[i].attempts, 1);
    }
    CHECK(stats.failures == 4 && stats.successes == 0);
    memset(&b, 0, sizeof b);
    b.mode = 4;
    CHECK_STATUS(recuo_batch_run(p, NULL, 3, batch_operation, &b, 3, 0, NULL, results, NULL),
                 RECUO_OK);
    CHECK_STATUS(recuo_batch_run(p, NULL, 3, batch_operation, &b, 1, 0, NULL, results, &stats),
                 RECUO_OK);
    CHECK_EQ_U64(stats.throttled, 3);
    CHECK_EQ_U64(stats.successes, 3);
    recuo_gate *stingy = recuo_gate_new();
    recuo_retry_budget *none = NULL;
    CHECK_STATUS(recuo_retry_budget_new(0, 0, 10, &none), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_budget(stingy, none), RECUO_OK);
    recuo_retry_budget_free(none);
    memset(&b, 0, sizeof b);
    CHECK_STATUS(recuo_batch_run(p, stingy, 4, batch_operation, &b, 0, 0, NULL, results, &stats),
                 RECUO_OK);
    CHECK(results[0].kind == RECUO_BATCH_SUCCEEDED && results[2].kind == RECUO_BATCH_SUCCEEDED);
    CHECK(results[1].kind == RECUO_BATCH_GAVE_UP && results[3].kind == RECUO_BATCH_GAVE_UP);
    CHECK_EQ_U64(results[1].reason, RECUO_GIVE_UP_BUDGET_EXHAUSTED);
    CHECK(stats.successes == 2 && stats.failures == 2 && stats.retries == 0);
    recuo_gate_free(stingy);

    /* An operation without a verdict gives up; the batch goes on and says so. */
    memset(&b, 0, sizeof b);
    b.mode = 3;
    CHECK_STATUS(recuo_batch_run(p, NULL, 4, batch_operation, &b, 2, 0, NULL, results, &stats),
                 RECUO_ERR_NO_VERDICT);
    CHECK(results[2].kind == RECUO_BATCH_GAVE_UP && results[2].no_verdict);
    CHECK_EQ_U64(results[2].reason, RECUO_GIVE_UP_PERMANENT);
    CHECK(results[3].kind == RECUO_BATCH_SUCCEEDED && !results[3].no_verdict);
    CHECK(stats.successes == 3 && stats.failures == 1);

    /* Nothing to run; bad arguments change nothing. */
    CHECK_STATUS(recuo_batch_run(p, g, 0, batch_operation, &b, 2, 0, NULL, NULL, &stats), RECUO_OK);
    CHECK(stats.initial == 0 && !stats.has_starts && !stats.has_spacing);
    recuo_stats copy = stats;
    CHECK_STATUS(recuo_batch_run(NULL, g, 1, batch_operation, &b, 1, 0, NULL, results, &stats),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_batch_run(p, g, 1, NULL, &b, 1, 0, NULL, results, &stats),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_batch_run(p, g, 1, batch_operation, &b, 1, 0, NULL, NULL, &stats),
                 RECUO_ERR_NULL_ARGUMENT);
    recuo_policy *bad = recuo_policy_new();
    recuo_policy_set_base_ms(bad, 10);
    recuo_policy_set_cap_ms(bad, 5);
    CHECK_STATUS(recuo_batch_run(bad, g, 1, batch_operation, &b, 1, 0, NULL, results, &stats),
                 RECUO_ERR_CAP_BELOW_BASE);
    CHECK(stats.initial == copy.initial && stats.elapsed_ms == copy.elapsed_ms &&
          stats.has_starts == copy.has_starts);
    recuo_policy_free(bad);

    static const struct {
        uint32_t value;
        const char *name;
    } names[] = {{RECUO_BATCH_SUCCEEDED, "succeeded"},
                 {RECUO_BATCH_GAVE_UP, "gave_up"},
                 {RECUO_BATCH_NOT_STARTED, "not_started"},
                 {0, "unknown"},
                 {4, "unknown"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK(streq(recuo_batch_result_kind_name(names[i].value), names[i].name));
    }

    recuo_concurrency_limit_free(l);
    recuo_gate_free(g);
    recuo_policy_free(p);
}

static void batch_deadline_leaves_the_rest_unstarted(void) {
    /* 10/s with a burst of 1: starts at 0, 100, 200 ms …; the batch may last 250 ms. */
    recuo_policy *p = quick_policy();
    recuo_gate *g = recuo_gate_new();
    recuo_regulator *r = regulator(10, 1);
    CHECK_STATUS(recuo_gate_set_regulator(g, r), RECUO_OK);
    recuo_regulator_free(r);

    static struct batch b;
    memset(&b, 0, sizeof b);
    b.mode = 1;
    recuo_batch_result results[10];
    recuo_stats stats;
    uint64_t started = now_ms();
    CHECK_STATUS(recuo_batch_run(p, g, 10, batch_operation, &b, 2, 250, NULL, results, &stats),
                 RECUO_OK);
    uint64_t took = now_ms() - started;
    CHECK_CTX(took >= 200 && took < 5000, "%" PRIu64 " ms", took);
    int succeeded = 0, not_started = 0;
    for (size_t i = 0; i < 10; i++) {
        if (results[i].kind == RECUO_BATCH_SUCCEEDED) {
            succeeded++;
            CHECK_EQ_U64(results[i].attempts, 1);
            CHECK_EQ_U64(b.called[i], 1);
        } else {
            not_started++;
            CHECK_CTX(results[i].kind == RECUO_BATCH_NOT_STARTED, "%zu: %s", i,
                      recuo_batch_result_kind_name(results[i].kind));
            CHECK_EQ_U64(results[i].attempts, 0);
            /* Not started because the batch's deadline passed — before the queue handed it
             * out, or while it waited at the gate: never a bare `cancelled` (issue 10). */
            CHECK_CTX(results[i].reason == RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE, "%zu: %s", i,
                      recuo_give_up_reason_name(results[i].reason));
            CHECK_EQ_U64(results[i].stopped_by, RECUO_GIVE_UP_NONE);
            /* Never started late: the operation was never called. */
            CHECK_EQ_U64(b.called[i], 0);
        }
    }
    CHECK_CTX(succeeded >= 1 && succeeded <= 4, "%d succeeded", succeeded);
    CHECK_CTX(not_started >= 6, "%d not started", not_started);
    CHECK_EQ_U64(atomic_load(&b.calls), succeeded);
    CHECK_EQ_U64(stats.successes, succeeded);
    CHECK_EQ_U64(stats.not_started, not_started);
    CHECK_EQ_U64(stats.initial, succeeded);
    if (succeeded >= 2) {
        /* Spaced as the regulator says: slots 100 ms apart, less the wake-up latency. */
        CHECK_CTX(stats.min_spacing_ns >= 50 * MS, "%" PRIu64, stats.min_spacing_ns);
    }
    recuo_gate_free(g);
    recuo_policy_free(p);
}

int main(int argc, char **argv) {
    (void)argc;
    /* The forking test first, before anything of recuo's is allocated in this process. */
    processes_share_one_allowance();
    processes_share_an_adaptive_regulator();
    rates();
    plan_guide_b();
    regulator_new_and_getters();
    regulator_exact_sequences();
    regulator_backlog_is_refused_beyond_the_queue();
    regulator_now_and_blocking();
    regulator_adaptive();
    shared_files_refuse_other_settings();
    threads_share_one_allowance();
    concurrency_limit_basics();
    concurrency_limit_threads();
    retry_budget_arithmetic();
    gate_by_hand();
    gate_with_the_state_machine();
    retry_with_a_gate();
    batch_counts_and_keys();
    batch_deadline_leaves_the_rest_unstarted();
    return check_summary(argv[0]);
}
