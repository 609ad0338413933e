/*
 * test_redis.c — the regulator shared between machines through Redis, from C: against a real
 * `redis-server` this program starts on a free port of 127.0.0.1 (`--save "" --appendonly
 * no`) and stops at the end. Exact try_acquire_at sequences on a fake clock (the burst, then
 * one per interval; costs; two handles, one allowance), four threads with a handle (and a
 * connection) each — four "machines" — on a shared fake clock held to burst + rate × window
 * and using at least 95% of the allowed starts, a second user of the key with another rate
 * refused with a message naming both, an unreachable server, a real-clock try_acquire paced
 * by the server's clock, a gate over the Redis regulator, and RECUO_ERR_IO once the server is
 * gone. Every loop and every wait is bounded.
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

#define MS UINT64_C(1000000)
#define S UINT64_C(1000000000)

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

/* ---- the server --------------------------------------------------------------------------- */

/* A port of 127.0.0.1 nothing listens on now (the kernel's choice); 0 on failure. */
static unsigned free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return 0;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    unsigned port = 0;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &len) == 0) {
        port = ntohs(addr.sin_port);
    }
    close(fd);
    return port;
}

/* Whether something accepts connections on 127.0.0.1:port. */
static int listening(unsigned port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return 0;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((uint16_t)port);
    int ok = connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    close(fd);
    return ok;
}

struct server {
    pid_t pid;
    unsigned port;
    char url[64];
};

/* Starts redis-server on a free port and waits (at most 10 s) until it accepts connections. */
static int server_start(struct server *s) {
    s->pid = -1;
    s->port = free_port();
    if (s->port == 0) {
        return 0;
    }
    snprintf(s->url, sizeof s->url, "redis://127.0.0.1:%u", s->port);
    char port[16];
    snprintf(port, sizeof port, "%u", s->port);
    fflush(stdout);
    fflush(stderr);
    s->pid = fork();
    if (s->pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            close(null);
        }
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1", "--save",
               "", "--appendonly", "no", (char *)NULL);
        _exit(127);
    }
    if (s->pid < 0) {
        return 0;
    }
    uint64_t give_up = now_ms() + 10000;
    while (now_ms() < give_up) {
        if (listening(s->port)) {
            return 1;
        }
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = -1; /* it died: not installed, or the port was taken meanwhile */
            return 0;
        }
        sleep_ms(20);
    }
    return 0;
}

/* Stops the server: SIGTERM, then SIGKILL if it has not gone within 5 s. */
static void server_stop(struct server *s) {
    if (s->pid <= 0) {
        return;
    }
    kill(s->pid, SIGTERM);
    uint64_t give_up = now_ms() + 5000;
    int status;
    while (waitpid(s->pid, &status, WNOHANG) == 0) {
        if (now_ms() > give_up) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
            break;
        }
        sleep_ms(10);
    }
    s->pid = -1;
}

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
        CHECK_STATUS(recuo_gate_enter(gate, attempt, NULL, &pass), RECUO_OK);
        recuo_pass_release(pass);
    }
    recuo_gate_free(gate);
    recuo_regulator_free(r);
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
    CHECK_STATUS(recuo_gate_enter(gate, 0, NULL, &pass), RECUO_ERR_IO);
    CHECK(pass == NULL);
}

int main(int argc, char **argv) {
    (void)argc;
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

    recuo_regulator *r = redis(&s, "c:lost", 1000, 1);
    recuo_gate *gate = recuo_gate_new();
    recuo_gate_set_regulator(gate, r);
    server_stop(&s);
    if (r != NULL) {
        a_lost_server_is_an_io_error(r, gate);
    }
    recuo_gate_free(gate);
    recuo_regulator_free(r);
    return check_summary(argv[0]);
}
