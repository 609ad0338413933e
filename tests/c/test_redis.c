/*
 * test_redis.c — the regulator shared between machines through Redis, from C: against a real
 * `redis-server` this program starts on a free port of 127.0.0.1 (`--save "" --appendonly
 * no`) and stops at the end. Exact try_acquire_at sequences on a fake clock (the burst, then
 * one per interval; costs; two handles, one allowance), four threads with a handle (and a
 * connection) each — four "machines" — on a shared fake clock held to burst + rate × window
 * and using at least 95% of the allowed starts, a second user of the key with another rate
 * refused with a message naming both, an unreachable server, a real-clock try_acquire paced
 * by the server's clock, a gate over the Redis regulator, and RECUO_ERR_IO once the server is
 * gone. The concurrency limit on Redis: a limit of 2 refuses the third place on any handle and
 * gives it back on release, a lease renewed holds its place and one not renewed frees it when
 * it ends, other settings refused; the retry budget on Redis shared by two processes (one
 * exec'd: `test_redis --budget-child URL KEY N`) grants exactly its ratio; a closed port fails
 * at once; four threads with handles of their own running recuo_retry through a gate with the
 * Redis limit and budget never have more than the limit in flight, and once the server is gone
 * recuo_retry answers the gate's RECUO_ERR_IO. Every loop and every wait is bounded.
 *
 * The server is a child: fork, then exec. Valgrind does not follow the exec (its default,
 * --trace-children=no), so the server runs natively and the whole program runs under
 * valgrind and ASan like the other C tests.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recuo.h"

#include "check.h"
#include "redis_server.h"

#define MS UINT64_C(1000000)
#define S UINT64_C(1000000000)

static recuo_status open_redis(const char *url, const char *key, double per_s, uint32_t burst,
                               recuo_regulator **out, char *detail, size_t detail_len) {
    return recuo_regulator_new_redis(url, strlen(url), key, strlen(key), per_s, burst, out,
                                     detail, detail_len);
}

static recuo_regulator *redis(const struct server *s, const char *key, double per_s,
                              uint32_t burst) {
    recuo_regulator *r = NULL;
    char detail[256] = "";
    recuo_status rc = open_redis(s->url, key, per_s, burst, &r, detail, sizeof detail);
    CHECK_CTX(rc == RECUO_OK && r != NULL, "%s: %s", recuo_status_name(rc), detail);
    return r;
}

/* ---- exact sequences on a fake clock ------------------------------------------------------ */

static void exact_sequences(const struct server *s) {
    /* 2/s with a burst of 3: three at once, then one every 500 ms. */
    recuo_regulator *r = redis(s, "c:exact", 2, 3);
    if (r == NULL) {
        return;
    }
    CHECK(recuo_regulator_rate_per_s(r) == 2.0);
    CHECK_EQ_U64(recuo_regulator_burst(r), 3);
    uint64_t t0 = 10 * S, wait = 777;
    for (int i = 0; i < 3; i++) {
        wait = 777;
        CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0, 1, &wait), RECUO_OK);
        CHECK_EQ_U64(wait, 0);
    }
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 500 * MS);
    /* The server counts whole microseconds. */
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S / 2 - 1000, 1, &wait),
                 RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 1000);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S / 2, 1, &wait), RECUO_OK);
    CHECK_EQ_U64(wait, 0);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S / 2, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 500 * MS);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S, 1, NULL), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, t0 + S, 1, NULL), RECUO_WOULD_WAIT);

    /* A second handle — another connection, another machine — shares the allowance. */
    recuo_regulator *same = redis(s, "c:exact", 2, 3);
    CHECK_STATUS(recuo_regulator_try_acquire_at(same, t0 + S, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 500 * MS);
    /* After a quiet spell the burst is back, never more, whichever handle asks. */
    uint64_t later = t0 + 100 * S;
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, later, 1, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire_at(same, later, 1, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, later, 1, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire_at(same, later, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 500 * MS);
    recuo_regulator_free(same);
    recuo_regulator_free(r);

    /* Costs: 10/s with a burst of 10. A cost above the burst never reaches the server. */
    r = redis(s, "c:costs", 10, 10);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S, 7, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S, 4, &wait), RECUO_WOULD_WAIT);
    CHECK_EQ_U64(wait, 100 * MS);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S, 3, &wait), RECUO_OK);
    wait = 777;
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, S, 11, &wait), RECUO_ERR_COST_ABOVE_BURST);
    CHECK_STATUS(recuo_regulator_try_acquire(r, 11, &wait), RECUO_ERR_COST_ABOVE_BURST);
    CHECK_EQ_U64(wait, 777);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, 2 * S, 10, &wait), RECUO_OK);
    CHECK_EQ_U64(wait, 0);
    recuo_regulator_free(r);
}

/* ---- four machines on one key, a shared fake clock ---------------------------------------- */

#define RATE_PER_S 100.0
#define BURST 5
#define STEP_NS UINT64_C(100000) /* each try moves the fake clock 0.1 ms */
#define TRIES 1000               /* per machine */
#define MACHINES 4

struct machine {
    recuo_regulator *r;
    _Atomic uint64_t *fake;
    int failures;
    uint64_t count;
    uint64_t at[TRIES];
};

static void *machine_tries(void *arg) {
    struct machine *m = arg;
    for (int i = 0; i < TRIES; i++) {
        uint64_t now = atomic_fetch_add(m->fake, STEP_NS);
        recuo_status rc = recuo_regulator_try_acquire_at(m->r, now, 1, NULL);
        if (rc == RECUO_OK) {
            m->at[m->count++] = now;
        } else if (rc != RECUO_WOULD_WAIT) {
            m->failures++;
        }
    }
    return NULL;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void machines_share_one_allowance(const struct server *s) {
    static struct machine machines[MACHINES];
    _Atomic uint64_t fake = 1000 * S;
    uint64_t first = atomic_load(&fake);
    for (int i = 0; i < MACHINES; i++) {
        machines[i].r = redis(s, "c:machines", RATE_PER_S, BURST);
        machines[i].fake = &fake;
        machines[i].failures = 0;
        machines[i].count = 0;
        if (machines[i].r == NULL) {
            return;
        }
    }
    pthread_t threads[MACHINES];
    for (int i = 0; i < MACHINES; i++) {
        CHECK(pthread_create(&threads[i], NULL, machine_tries, &machines[i]) == 0);
    }
    for (int i = 0; i < MACHINES; i++) {
        pthread_join(threads[i], NULL);
    }
    uint64_t span = atomic_load(&fake) - first;
    CHECK_EQ_U64(span, (uint64_t)MACHINES * TRIES * STEP_NS);

    static uint64_t starts[MACHINES * TRIES];
    size_t n = 0;
    for (int i = 0; i < MACHINES; i++) {
        CHECK_CTX(machines[i].failures == 0, "machine %d: %d failures", i, machines[i].failures);
        for (uint64_t j = 0; j < machines[i].count; j++) {
            starts[n++] = machines[i].at[j];
        }
        recuo_regulator_free(machines[i].r);
    }
    CHECK_CTX(n > 30, "%zu starts", n);
    /* Every window holds at most burst + rate × window starts; at least 95% of the allowed
     * starts are used. */
    qsort(starts, n, sizeof starts[0], compare_u64);
    double interval = 1e9 / RATE_PER_S, worst = -1e300;
    size_t worst_i = 0, worst_j = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i; j < n; j++) {
            double excess =
                (double)(j - i + 1) - (BURST + (double)(starts[j] - starts[i]) / interval);
            if (excess > worst) {
                worst = excess;
                worst_i = i;
                worst_j = j;
            }
        }
    }
    CHECK_CTX(worst <= 1e-9, "%zu starts in %" PRIu64 " ns, more than burst + rate x window",
              worst_j - worst_i + 1, n > 0 ? starts[worst_j] - starts[worst_i] : 0);
    double possible = BURST + (double)span / interval;
    CHECK_CTX((double)n >= 0.95 * possible, "only %zu of %.0f starts used", n, possible);
}

/* ---- refusals ----------------------------------------------------------------------------- */

static void another_rate_is_refused(const struct server *s) {
    char detail[256];
    strcpy(detail, "stale");
    recuo_regulator *a = NULL;
    CHECK_STATUS(open_redis(s->url, "c:k", 1.5, 3, &a, detail, sizeof detail), RECUO_OK);
    CHECK_CTX(detail[0] == '\0', "%s", detail);

    static int dummy;
    recuo_regulator *const sentinel = (recuo_regulator *)&dummy;
    recuo_regulator *other = sentinel;
    CHECK_STATUS(open_redis(s->url, "c:k", 2.0, 3, &other, detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK(other == sentinel);
    CHECK_CTX(strcmp(detail, "shared state: the Redis key \"c:k\" regulates one start every "
                             "666666 µs with a burst of 3; this process asked for one every "
                             "500000 µs with a burst of 3") == 0,
              "%s", detail);
    CHECK_STATUS(open_redis(s->url, "c:k", 1.5, 4, &other, detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK_CTX(strstr(detail, "burst of 3") != NULL && strstr(detail, "burst of 4") != NULL,
              "%s", detail);
    CHECK_STATUS(open_redis(s->url, "c:k", 2.0, 3, &other, NULL, 0), RECUO_ERR_SHARED_MISMATCH);
    CHECK(other == sentinel);
    CHECK(strcmp(recuo_status_name(RECUO_ERR_SHARED_MISMATCH), "shared_mismatch") == 0);
    /* The same settings written otherwise, and another key with the other rate: fine. */
    recuo_regulator *same = NULL, *elsewhere = NULL;
    double per_s = 0;
    CHECK_STATUS(recuo_rate_parse("90/min", 6, &per_s), RECUO_OK);
    CHECK_STATUS(open_redis(s->url, "c:k", per_s, 3, &same, NULL, 0), RECUO_OK);
    CHECK_STATUS(open_redis(s->url, "c:k2", 2.0, 3, &elsewhere, NULL, 0), RECUO_OK);
    recuo_regulator_free(elsewhere);
    recuo_regulator_free(same);
    recuo_regulator_free(a);

    /* Arguments. */
    CHECK_STATUS(open_redis(s->url, "c:z", 1, 0, &other, detail, sizeof detail),
                 RECUO_ERR_ZERO_BURST);
    CHECK_STATUS(open_redis(s->url, "c:z", 0, 1, &other, detail, sizeof detail),
                 RECUO_ERR_INVALID_RATE);
    CHECK_CTX(strstr(detail, "rate") != NULL, "%s", detail);
    CHECK_STATUS(open_redis(s->url, "c:z", NAN, 1, &other, NULL, 0), RECUO_ERR_INVALID_RATE);
    CHECK_STATUS(open_redis(s->url, "c:z", 1, 1, NULL, NULL, 0), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_regulator_new_redis(NULL, 5, "k", 1, 1, 1, &other, NULL, 0),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_regulator_new_redis(s->url, strlen(s->url), NULL, 1, 1, 1, &other, NULL,
                                           0),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_regulator_new_redis(s->url, strlen(s->url), "\xff", 1, 1, 1, &other, NULL,
                                           0),
                 RECUO_ERR_NOT_UTF8);
    CHECK(other == sentinel);
}

static void an_unreachable_server_is_an_io_error(void) {
    unsigned port = free_port();
    CHECK(port != 0);
    char url[64], detail[256], expect[64];
    snprintf(url, sizeof url, "127.0.0.1:%u", port);
    snprintf(expect, sizeof expect, "Redis at 127.0.0.1:%u", port);
    recuo_regulator *r = NULL;
    CHECK_STATUS(open_redis(url, "k", 1, 1, &r, detail, sizeof detail), RECUO_ERR_IO);
    CHECK(r == NULL);
    CHECK_CTX(strstr(detail, expect) != NULL, "%s", detail);
    CHECK(strcmp(recuo_status_name(RECUO_ERR_IO), "io") == 0);
    /* A URL naming no host. */
    CHECK_STATUS(open_redis("redis://", "k", 1, 1, &r, detail, sizeof detail), RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, "names no host") != NULL, "%s", detail);
    CHECK_STATUS(recuo_regulator_new_redis(NULL, 0, "k", 1, 1, 1, &r, NULL, 0), RECUO_ERR_IO);
    CHECK(r == NULL);
}

/* ---- the server's clock ------------------------------------------------------------------- */

static void the_servers_clock_paces_real_starts(const struct server *s) {
    /* 2/s with a burst of 2: two at once, then a wait of at most one interval. */
    recuo_regulator *r = redis(s, "c:real", 2, 2);
    if (r == NULL) {
        return;
    }
    uint64_t wait = 777;
    CHECK_STATUS(recuo_regulator_try_acquire(r, 1, &wait), RECUO_OK);
    CHECK_EQ_U64(wait, 0);
    CHECK_STATUS(recuo_regulator_try_acquire(r, 1, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire(r, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_CTX(wait > 0 && wait <= 500 * MS, "%" PRIu64 " ns", wait);
    /* acquire waits for the next slot, as long as the server says. */
    uint64_t before = now_ms();
    CHECK_STATUS(recuo_regulator_acquire(r, 1, NULL), RECUO_OK);
    uint64_t took = now_ms() - before;
    CHECK_CTX(took + 50 >= wait / MS && took < wait / MS + 3000, "%" PRIu64 " ms for %" PRIu64
              " ms", took, wait / MS);
    /* The next slot is one interval away: not within 0 ms. */
    CHECK_STATUS(recuo_regulator_acquire_until(r, 1, 0, NULL), RECUO_TIMED_OUT);

    /* A gate over the Redis regulator. */
    recuo_regulator *fast = redis(s, "c:gate", 1000, 1);
    recuo_gate *gate = recuo_gate_new();
    CHECK_STATUS(recuo_gate_set_regulator(gate, fast), RECUO_OK);
    recuo_regulator_free(fast);
    for (uint32_t attempt = 0; attempt < 3; attempt++) {
        recuo_pass *pass = NULL;
        CHECK_STATUS(recuo_gate_wait(gate, false, 0, NULL, &pass), RECUO_OK);
        recuo_pass_release(pass);
    }
    recuo_gate_free(gate);
    recuo_regulator_free(r);
}

/* ---- the concurrency limit on Redis, with leases ------------------------------------------ */

static recuo_status open_limit(const char *url, const char *key, uint32_t limit,
                               uint64_t lease_ms, recuo_concurrency_limit **out, char *detail,
                               size_t detail_len) {
    return recuo_concurrency_limit_new_redis(url, strlen(url), key, strlen(key), limit,
                                             lease_ms, out, detail, detail_len);
}

static recuo_concurrency_limit *redis_limit(const struct server *s, const char *key,
                                            uint32_t limit, uint64_t lease_ms) {
    recuo_concurrency_limit *l = NULL;
    char detail[256] = "";
    recuo_status rc = open_limit(s->url, key, limit, lease_ms, &l, detail, sizeof detail);
    CHECK_CTX(rc == RECUO_OK && l != NULL, "%s: %s", recuo_status_name(rc), detail);
    return l;
}

struct release_later {
    recuo_permit *permit;
    long after_ms;
};

static void *release_later(void *arg) {
    struct release_later *r = arg;
    sleep_ms(r->after_ms);
    recuo_permit_release(r->permit);
    return NULL;
}

/* A limit of 2 refuses a third place — whichever handle asks — and a release gives one back,
 * also to a blocking acquire on another handle (another connection: another machine). */
static void a_limit_refuses_the_place_past_it(const struct server *s) {
    recuo_concurrency_limit *a = redis_limit(s, "c:limit", 2, 10000);
    recuo_concurrency_limit *b = redis_limit(s, "c:limit", 2, 10000);
    if (a == NULL || b == NULL) {
        recuo_concurrency_limit_free(a);
        recuo_concurrency_limit_free(b);
        return;
    }
    CHECK_EQ_U64(recuo_concurrency_limit_limit(b), 2);
    recuo_permit *p1 = NULL, *p2 = NULL, *p3 = NULL;
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(a, &p1), RECUO_OK);
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(b, &p2), RECUO_OK);
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(a, &p3), RECUO_WOULD_WAIT);
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(b, &p3), RECUO_WOULD_WAIT);
    CHECK_STATUS(recuo_concurrency_limit_acquire(b, 100, NULL, &p3), RECUO_TIMED_OUT);
    CHECK(p3 == NULL);
    /* The counts are this handle's places. */
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(a), 1);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(b), 1);
    recuo_permit_release(p1);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(a), 0);
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(b, &p3), RECUO_OK);
    CHECK_EQ_U64(recuo_concurrency_limit_max_in_flight(b), 2);

    /* Full again: a blocking acquire gets the place another thread gives back. */
    pthread_t t;
    struct release_later later = {p2, 150};
    CHECK(pthread_create(&t, NULL, release_later, &later) == 0);
    recuo_permit *p4 = NULL;
    uint64_t t0 = now_ms();
    CHECK_STATUS(recuo_concurrency_limit_acquire(a, 5000, NULL, &p4), RECUO_OK);
    uint64_t took = now_ms() - t0;
    pthread_join(t, NULL);
    CHECK_CTX(took >= 100 && took < 3000, "%" PRIu64 " ms", took);
    /* A local permit renews as a lease that never ends; NULL is refused. */
    bool renewed = false;
    CHECK_STATUS(recuo_permit_renew(p4, &renewed), RECUO_OK);
    CHECK(renewed);
    CHECK_STATUS(recuo_permit_renew(p4, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_permit_renew(NULL, &renewed), RECUO_ERR_NULL_ARGUMENT);
    recuo_permit_release(p4);
    recuo_permit_release(p3);
    recuo_concurrency_limit_free(b);
    recuo_concurrency_limit_free(a);
}

/* A lease renewed holds its place past its length; one not renewed frees it when it ends, as
 * a holder that died would; renewing it then answers false, and releasing it is harmless. */
static void a_lease_not_renewed_expires(const struct server *s) {
    recuo_concurrency_limit *holder = redis_limit(s, "c:lease", 1, 300);
    recuo_concurrency_limit *other = redis_limit(s, "c:lease", 1, 300);
    if (holder == NULL || other == NULL) {
        recuo_concurrency_limit_free(holder);
        recuo_concurrency_limit_free(other);
        return;
    }
    recuo_permit *p = NULL, *q = NULL;
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(holder, &p), RECUO_OK);
    for (int i = 0; i < 3; i++) { /* 3 × 150 ms: longer than the lease, held by renewing */
        sleep_ms(150);
        bool renewed = false;
        CHECK_STATUS(recuo_permit_renew(p, &renewed), RECUO_OK);
        CHECK_CTX(renewed, "renewal %d", i);
        CHECK_STATUS(recuo_concurrency_limit_try_acquire(other, &q), RECUO_WOULD_WAIT);
    }
    uint64_t t0 = now_ms();
    CHECK_STATUS(recuo_concurrency_limit_acquire(other, 3000, NULL, &q), RECUO_OK);
    uint64_t took = now_ms() - t0;
    CHECK_CTX(took >= 150 && took < 2000, "the place came back after %" PRIu64 " ms", took);
    bool renewed = true;
    CHECK_STATUS(recuo_permit_renew(p, &renewed), RECUO_OK);
    CHECK(!renewed); /* expired: the place is q's now, not taken back */
    recuo_permit_release(p); /* after expiry: harmless, q keeps its place */
    recuo_permit *r = NULL;
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(holder, &r), RECUO_WOULD_WAIT);
    recuo_permit_release(q);
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(holder, &r), RECUO_OK);
    recuo_permit_release(r);
    recuo_concurrency_limit_free(other);
    recuo_concurrency_limit_free(holder);
}

static void a_limit_set_up_otherwise_is_refused(const struct server *s) {
    recuo_concurrency_limit *a = redis_limit(s, "c:limit-k", 2, 1000);
    static int dummy;
    recuo_concurrency_limit *const sentinel = (recuo_concurrency_limit *)&dummy;
    recuo_concurrency_limit *other = sentinel;
    char detail[256];
    CHECK_STATUS(open_limit(s->url, "c:limit-k", 3, 1000, &other, detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK_CTX(strstr(detail, "limits 2 requests in flight with leases of 1000 ms") != NULL &&
                  strstr(detail, "asked for 3 with leases of 1000 ms") != NULL,
              "%s", detail);
    CHECK_STATUS(open_limit(s->url, "c:limit-k", 2, 2000, &other, detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK_CTX(strstr(detail, "2000 ms") != NULL, "%s", detail);
    /* The settings are checked before the server is asked: the local limit's rule, then
     * the lease's. */
    CHECK_STATUS(open_limit(s->url, "c:limit-z", 0, 1000, &other, detail, sizeof detail),
                 RECUO_ERR_ZERO_LIMIT);
    CHECK_STATUS(open_limit(s->url, "c:limit-z", 1, 0, &other, detail, sizeof detail),
                 RECUO_ERR_INVALID_LEASE);
    CHECK_CTX(strstr(detail, "lease") != NULL, "%s", detail);
    CHECK_STATUS(open_limit(s->url, "c:limit-z", 1, UINT64_C(86400001), &other, NULL, 0),
                 RECUO_ERR_INVALID_LEASE);
    CHECK(strcmp(recuo_status_name(RECUO_ERR_INVALID_LEASE), "invalid_lease") == 0);
    CHECK_STATUS(open_limit(s->url, "c:limit-z", 1, 1000, NULL, NULL, 0),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_concurrency_limit_new_redis(s->url, strlen(s->url), "\xff", 1, 1, 1000,
                                                   &other, NULL, 0),
                 RECUO_ERR_NOT_UTF8);
    CHECK(other == sentinel);
    recuo_concurrency_limit_free(a);
}

/* ---- the retry budget on Redis -------------------------------------------------------------- */

static recuo_status open_budget(const char *url, const char *key, double ratio, double floor_per_s,
                                uint32_t window_s, recuo_retry_budget **out, char *detail,
                                size_t detail_len) {
    return recuo_retry_budget_new_redis(url, strlen(url), key, strlen(key), ratio, floor_per_s,
                                        window_s, out, detail, detail_len);
}

static recuo_retry_budget *redis_budget(const char *url, const char *key, double ratio) {
    recuo_retry_budget *b = NULL;
    char detail[256] = "";
    recuo_status rc = open_budget(url, key, ratio, 0, 10, &b, detail, sizeof detail);
    CHECK_CTX(rc == RECUO_OK && b != NULL, "%s: %s", recuo_status_name(rc), detail);
    return b;
}

/* `self --budget-child URL KEY N`: another process counts N first attempts in the budget. */
static int budget_child(const char *url, const char *key, const char *n) {
    recuo_retry_budget *b = redis_budget(url, key, 0.5);
    if (b == NULL) {
        return 1;
    }
    for (int i = 0; i < atoi(n); i++) {
        CHECK_STATUS(recuo_retry_budget_record_request(b), RECUO_OK);
    }
    recuo_retry_budget_free(b);
    return check_failed == 0 ? 0 : 1;
}

/* Runs `self --budget-child URL KEY N` (exec'd: it runs natively under valgrind) and answers
 * its exit status. */
static int run_budget_child(const char *self, const char *url, const char *key, const char *n) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "--budget-child", url, key, n, (char *)NULL);
        _exit(127);
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Ratio 0.5, no floor: 6 first attempts counted by two processes earn 3 retries, taken by
 * either handle, and not one more. */
static void the_budget_is_shared_by_processes(const struct server *s, const char *self) {
    recuo_retry_budget *a = redis_budget(s->url, "c:budget", 0.5);
    recuo_retry_budget *b = redis_budget(s->url, "c:budget", 0.5);
    if (a == NULL || b == NULL) {
        recuo_retry_budget_free(a);
        recuo_retry_budget_free(b);
        return;
    }
    CHECK_STATUS(recuo_retry_budget_try_withdraw(a), RECUO_BUDGET_EXHAUSTED);
    CHECK_CTX(run_budget_child(self, s->url, "c:budget", "4") == 0, "the child failed");
    CHECK_STATUS(recuo_retry_budget_record_request(a), RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_record_request(b), RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_try_withdraw(a), RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_try_withdraw(b), RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_try_withdraw(a), RECUO_OK);
    CHECK_STATUS(recuo_retry_budget_try_withdraw(b), RECUO_BUDGET_EXHAUSTED);
    CHECK_STATUS(recuo_retry_budget_try_withdraw(a), RECUO_BUDGET_EXHAUSTED);
    uint64_t requests = 0, retries = 0;
    CHECK_STATUS(recuo_retry_budget_counts(b, &requests, &retries), RECUO_OK);
    CHECK_EQ_U64(requests, 6);
    CHECK_EQ_U64(retries, 3);

    /* Another ratio, floor or window is refused with both named; bad settings as the local
     * budget refuses them, before the server is asked. */
    static int dummy;
    recuo_retry_budget *const sentinel = (recuo_retry_budget *)&dummy;
    recuo_retry_budget *other = sentinel;
    char detail[256];
    CHECK_STATUS(open_budget(s->url, "c:budget", 0.2, 0, 10, &other, detail, sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK_CTX(strstr(detail, "ratio 0.5") != NULL && strstr(detail, "ratio 0.2") != NULL, "%s",
              detail);
    CHECK_STATUS(open_budget(s->url, "c:budget", 0.5, 0, 20, &other, NULL, 0),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK_STATUS(open_budget(s->url, "c:budget-z", -1, 0, 10, &other, detail, sizeof detail),
                 RECUO_ERR_INVALID_BUDGET);
    CHECK_CTX(strstr(detail, "ratio") != NULL, "%s", detail);
    CHECK_STATUS(open_budget(s->url, "c:budget-z", 0.1, NAN, 10, &other, NULL, 0),
                 RECUO_ERR_INVALID_BUDGET);
    CHECK_STATUS(open_budget(s->url, "c:budget-z", 0.1, 1, 0, &other, NULL, 0),
                 RECUO_ERR_INVALID_BUDGET);
    CHECK_STATUS(open_budget(s->url, "c:budget-z", 0.1, 1, 10, NULL, NULL, 0),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK(other == sentinel);
    recuo_retry_budget_free(b);
    recuo_retry_budget_free(a);
}

/* A closed port: every constructor answers RECUO_ERR_IO at once, naming the server. */
static void an_unreachable_limit_or_budget_fails_fast(void) {
    unsigned port = free_port();
    CHECK(port != 0);
    char url[64], detail[256], expect[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%u", port);
    snprintf(expect, sizeof expect, "Redis at 127.0.0.1:%u", port);
    recuo_concurrency_limit *l = NULL;
    recuo_retry_budget *b = NULL;
    uint64_t t0 = now_ms();
    CHECK_STATUS(open_limit(url, "k", 2, 1000, &l, detail, sizeof detail), RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, expect) != NULL, "%s", detail);
    CHECK_STATUS(open_budget(url, "k", 0.1, 1, 10, &b, detail, sizeof detail), RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, expect) != NULL, "%s", detail);
    uint64_t took = now_ms() - t0;
    CHECK_CTX(took < 2000, "%" PRIu64 " ms to fail", took);
    CHECK(l == NULL && b == NULL);
    /* The password is never echoed. */
    CHECK_STATUS(open_limit("redis://app:pa55word@127.0.0.1:1", "k", 2, 1000, &l, detail,
                            sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, "pa55word") == NULL, "%s", detail);
}

/* ---- a gate on Redis, in recuo_retry ------------------------------------------------------- */

#define GATED_THREADS 4
#define GATED_CALLS 3

struct flight {
    _Atomic int now;
    _Atomic int most;
    _Atomic int calls;
};

/* Holds its place 40 ms and succeeds on attempt 1 (attempt 0 fails: a retry from the budget). */
static void in_flight_operation(uint32_t attempt, const char *key, recuo_verdict *out,
                                void *user_data) {
    (void)key;
    struct flight *f = user_data;
    int n = atomic_fetch_add(&f->now, 1) + 1;
    for (int most = atomic_load(&f->most); n > most;) {
        if (atomic_compare_exchange_weak(&f->most, &most, n)) {
            break;
        }
    }
    atomic_fetch_add(&f->calls, 1);
    sleep_ms(40);
    atomic_fetch_sub(&f->now, 1);
    static const recuo_verdict retry = {RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR,
                                        RECUO_WAIT_NONE, 0};
    static const recuo_verdict success = {RECUO_VERDICT_SUCCESS, RECUO_CAUSE_SUCCESS,
                                          RECUO_WAIT_NONE, 0};
    *out = attempt == 0 ? retry : success;
}

struct gated_thread {
    const struct server *s;
    struct flight *f;
    const recuo_policy *p;
    int failures;
};

/* One "machine": its own limit and budget handles (their own connections) in a gate, and
 * GATED_CALLS recuo_retry calls through it. */
static void *gated_machine(void *arg) {
    struct gated_thread *t = arg;
    recuo_concurrency_limit *l = redis_limit(t->s, "c:gated", 2, 10000);
    recuo_retry_budget *b = redis_budget(t->s->url, "c:gated-budget", 1.0);
    recuo_gate *g = recuo_gate_new();
    recuo_gate_set_limit(g, l);
    recuo_gate_set_budget(g, b);
    recuo_retry_options *o = recuo_retry_options_new();
    recuo_retry_options_set_gate(o, g);
    for (int i = 0; i < GATED_CALLS && l != NULL && b != NULL; i++) {
        recuo_report report;
        recuo_status rc = recuo_retry(t->p, in_flight_operation, t->f, o, &report, NULL, 0, NULL);
        if (rc != RECUO_OK || report.attempts != 2) {
            t->failures++;
        }
    }
    recuo_retry_options_free(o);
    recuo_gate_free(g);
    recuo_retry_budget_free(b);
    recuo_concurrency_limit_free(l);
    return NULL;
}

/* Four machines of one fleet, a Redis limit of 2 and a Redis budget in their gates: never
 * more than 2 calls at once, every call retried once from the shared budget. */
static void a_gate_on_redis_holds_the_fleet(const struct server *s) {
    recuo_policy *p = recuo_policy_new();
    recuo_policy_set_max_attempts(p, 2);
    recuo_policy_set_base_ms(p, 1);
    recuo_policy_set_cap_ms(p, 2);
    struct flight f = {0, 0, 0};
    struct gated_thread t[GATED_THREADS];
    pthread_t threads[GATED_THREADS];
    for (int i = 0; i < GATED_THREADS; i++) {
        t[i] = (struct gated_thread){s, &f, p, 0};
        CHECK(pthread_create(&threads[i], NULL, gated_machine, &t[i]) == 0);
    }
    for (int i = 0; i < GATED_THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK_CTX(t[i].failures == 0, "machine %d: %d calls failed", i, t[i].failures);
    }
    CHECK_EQ_U64(atomic_load(&f.calls), GATED_THREADS * GATED_CALLS * 2);
    CHECK_CTX(atomic_load(&f.most) == 2, "%d calls at once under a limit of 2",
              atomic_load(&f.most));
    recuo_policy_free(p);
}

/* in_flight_operation as a batch's operation. */
static void batch_in_flight_operation(size_t index, uint32_t attempt, const char *key,
                                      recuo_verdict *out, void *user_data) {
    (void)index;
    in_flight_operation(attempt, key, out, user_data);
}

/* Once the server is gone, recuo_retry and recuo_batch_run through a gate with the Redis
 * limit stop with RECUO_ERR_IO — never a call — and say no attempt was made; the Redis budget
 * grants no retry (fail closed). */
static void a_gate_whose_server_is_lost_is_reported(recuo_concurrency_limit *l,
                                                    recuo_retry_budget *b) {
    recuo_policy *p = recuo_policy_new();
    recuo_gate *g = recuo_gate_new();
    CHECK_STATUS(recuo_gate_set_limit(g, l), RECUO_OK);
    recuo_retry_options *o = recuo_retry_options_new();
    CHECK_STATUS(recuo_retry_options_set_gate(o, g), RECUO_OK);
    struct flight f = {0, 0, 0};
    recuo_report report;
    memset(&report, 0xff, sizeof report);
    uint64_t t0 = now_ms();
    CHECK_STATUS(recuo_retry(p, in_flight_operation, &f, o, &report, NULL, 0, NULL),
                 RECUO_ERR_IO);
    CHECK_CTX(now_ms() - t0 < 6000, "%" PRIu64 " ms", now_ms() - t0);
    CHECK_EQ_U64(atomic_load(&f.calls), 0);
    CHECK_EQ_U64(report.attempts, 0);
    /* recuo_batch_run too: each result says its gate failed (no attempt), RECUO_ERR_IO. */
    recuo_batch_result results[2];
    memset(results, 0, sizeof results);
    CHECK_STATUS(recuo_batch_run(p, g, 2, batch_in_flight_operation, &f, 2, 0, NULL, results, NULL),
                 RECUO_ERR_IO);
    for (int i = 0; i < 2; i++) {
        CHECK(results[i].kind == RECUO_BATCH_GAVE_UP);
        CHECK(results[i].gate_error);
        CHECK_EQ_U64(results[i].attempts, 0);
    }
    CHECK_EQ_U64(atomic_load(&f.calls), 0);
    recuo_permit *permit = NULL;
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(l, &permit), RECUO_ERR_IO);
    CHECK_STATUS(recuo_concurrency_limit_acquire(l, 100, NULL, &permit), RECUO_ERR_IO);
    CHECK(permit == NULL);
    /* The budget's own calls say why; nothing is counted, no retry taken, nothing written. */
    CHECK_STATUS(recuo_retry_budget_record_request(b), RECUO_ERR_IO);
    CHECK_STATUS(recuo_retry_budget_try_withdraw(b), RECUO_ERR_IO);
    uint64_t requests = 7, retries = 7;
    CHECK_STATUS(recuo_retry_budget_counts(b, &requests, &retries), RECUO_ERR_IO);
    CHECK(requests == 7 && retries == 7);
    recuo_retry_options_free(o);
    recuo_gate_free(g);
    recuo_policy_free(p);
}

/* Once the server is gone, a handle answers RECUO_ERR_IO — never a start. */
static void a_lost_server_is_an_io_error(recuo_regulator *r, recuo_gate *gate) {
    uint64_t wait = 777;
    CHECK_STATUS(recuo_regulator_try_acquire(r, 1, &wait), RECUO_ERR_IO);
    CHECK_EQ_U64(wait, 777);
    CHECK_STATUS(recuo_regulator_try_acquire_at(r, 5000 * S, 1, &wait), RECUO_ERR_IO);
    CHECK_STATUS(recuo_regulator_acquire(r, 1, NULL), RECUO_ERR_IO);
    CHECK_STATUS(recuo_regulator_acquire_until(r, 1, 10, NULL), RECUO_ERR_IO);
    recuo_pass *pass = NULL;
    CHECK_STATUS(recuo_gate_wait(gate, false, 0, NULL, &pass), RECUO_ERR_IO);
    CHECK(pass == NULL);
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--budget-child") == 0) {
        return budget_child(argv[2], argv[3], argv[4]);
    }
    /* The server first, before anything of recuo's is allocated in this process. */
    struct server s;
    if (!server_start(&s)) {
        fprintf(stderr, "test_redis: could not start redis-server on 127.0.0.1:%u "
                        "(make deps installs it)\n", s.port);
        server_stop(&s);
        return 1;
    }
    exact_sequences(&s);
    machines_share_one_allowance(&s);
    another_rate_is_refused(&s);
    an_unreachable_server_is_an_io_error();
    the_servers_clock_paces_real_starts(&s);
    a_limit_refuses_the_place_past_it(&s);
    a_lease_not_renewed_expires(&s);
    a_limit_set_up_otherwise_is_refused(&s);
    the_budget_is_shared_by_processes(&s, argv[0]);
    an_unreachable_limit_or_budget_fails_fast();
    a_gate_on_redis_holds_the_fleet(&s);

    recuo_regulator *r = redis(&s, "c:lost", 1000, 1);
    recuo_concurrency_limit *l = redis_limit(&s, "c:lost-limit", 1, 1000);
    recuo_retry_budget *b = redis_budget(s.url, "c:lost-budget", 1.0);
    for (int i = 0; b != NULL && i < 10; i++) {
        recuo_retry_budget_record_request(b); /* retries to spare, had the server stayed */
    }
    recuo_gate *gate = recuo_gate_new();
    recuo_gate_set_regulator(gate, r);
    server_stop(&s);
    if (r != NULL) {
        a_lost_server_is_an_io_error(r, gate);
    }
    if (l != NULL && b != NULL) {
        a_gate_whose_server_is_lost_is_reported(l, b);
    }
    recuo_gate_free(gate);
    recuo_retry_budget_free(b);
    recuo_concurrency_limit_free(l);
    recuo_regulator_free(r);
    return check_summary(argv[0]);
}
