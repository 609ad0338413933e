/*
 * test_cluster.c — the limits on a Redis Cluster, from C, against real clusters of 3 masters
 * and 3 replicas on 127.0.0.1 (scripts/redis-cluster, started and stopped by this program).
 *
 *   test_cluster SCRIPT RECUO_BIN DIR [--no-failover]
 *
 * SCRIPT is scripts/redis-cluster, RECUO_BIN the `recuo` binary, DIR a directory for the
 * clusters (DIR/plain, DIR/tls; the caller stops them again, whatever happens here).
 *
 * On a plain cluster, through the public API and a `redis+cluster://` URL: the regulator
 * (1/s, burst 2: two starts, then a wait), the concurrency limit (2 places, the third refused,
 * a release gives one back) and the retry budget (exact counts on a fixed clock), each on
 * names whose keys live on each of the 3 masters, the keys checked there; a URL naming one
 * seed; a bad cluster URL and a cluster node named by a plain `redis://` URL refused with a
 * clear detail, as a plain redis-server named as a cluster; recuo_retry through a gate over
 * the three.
 *
 * Then (unless --no-failover), on a TLS cluster with an ACL user (`rediss+cluster://`), in a
 * process of its own (`test_cluster --tls SCRIPT RECUO_BIN DIR URL CERT`, exec'd: native
 * under valgrind, and SSL_CERT_FILE set before its first TLS connection): the regulator, the
 * limit and a wrong password; then a fleet through a failover. 4 fork()ed processes run
 * recuo_retry in a loop for 8 s against `recuo serve` (latency 50 ms) through one gate — a
 * regulator (30/s, burst 3), a limit (2 places, lease 2 s) and a budget, all on the master
 * killed with SIGKILL 2 s in — with a deadline of 2 s per operation. Every operation ends
 * within its deadline (+ 400 ms), ok, with the gate's error or having waited for the gate in
 * vain (no attempt: anything else fails the test); the gate's errors fall around the
 * failover; once the replica took over, the starts keep to the regulator's allowance, and
 * `recuo serve` saw at most 2 (+ 4) requests in flight. One line of figures is printed
 * ("failover figures (C): ...").
 *
 * Every wait is bounded; every process started here is stopped here.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recuo.h"

#include "check.h"
#include "recuo_serve.h"
#include "redis_server.h"

#define S UINT64_C(1000000000)
#define MS UINT64_C(1000000)

static const char *cluster_script;

/* ---- processes -------------------------------------------------------------------------- */

/* Runs argv (argv[0] looked up in PATH) with stdout into `out` (NUL-terminated, trailing
 * whitespace cut), stderr inherited; its exit status, or -1. */
static int run(const char *const *argv, char *out, size_t out_len) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) {
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipe_fds[1], STDOUT_FILENO);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipe_fds[1]);
    size_t len = 0;
    char sink[256];
    for (;;) {
        char *to = out_len > len + 1 ? out + len : sink;
        size_t room = out_len > len + 1 ? out_len - len - 1 : sizeof sink;
        ssize_t n = read(pipe_fds[0], to, room);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        if (to != sink) {
            len += (size_t)n;
        }
    }
    close(pipe_fds[0]);
    if (out_len > 0) {
        while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' ')) {
            len--;
        }
        out[len] = '\0';
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- the cluster (scripts/redis-cluster) ------------------------------------------------- */

struct cluster {
    char dir[512];
    char url[512];  /* redis+cluster://… (rediss+cluster://app:apppw@… with TLS) */
    char cert[600]; /* with TLS: the certificate to trust */
    unsigned nodes[6];
};

/* The value of `NAME=` in the script's answer, or "". */
static void env_value(const char *env, const char *name, char *out, size_t len) {
    out[0] = '\0';
    size_t n = strlen(name);
    for (const char *line = env; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t line_len = end != NULL ? (size_t)(end - line) : strlen(line);
        if (line_len > n && strncmp(line, name, n) == 0 && line[n] == '=') {
            snprintf(out, len, "%.*s", (int)(line_len - n - 1), line + n + 1);
            return;
        }
        line = end != NULL ? end + 1 : NULL;
    }
}

static bool cluster_start(struct cluster *c, const char *dir, bool tls) {
    memset(c, 0, sizeof *c);
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    const char *argv[] = {cluster_script, "start", dir, tls ? "--tls" : NULL, NULL};
    char env[2048], nodes[256];
    uint64_t t0 = now_ms();
    int rc = run(argv, env, sizeof env);
    CHECK_CTX(rc == 0, "redis-cluster start %s: exit %d", dir, rc);
    if (rc != 0) {
        return false;
    }
    env_value(env, "URL", c->url, sizeof c->url);
    env_value(env, "CERT", c->cert, sizeof c->cert);
    env_value(env, "NODES", nodes, sizeof nodes);
    int n = sscanf(nodes, "%u,%u,%u,%u,%u,%u", &c->nodes[0], &c->nodes[1], &c->nodes[2],
                   &c->nodes[3], &c->nodes[4], &c->nodes[5]);
    CHECK_CTX(n == 6 && c->url[0] != '\0' && (!tls || c->cert[0] != '\0'), "%s", env);
    printf("test_cluster: a %s cluster started in %.1f s\n", tls ? "TLS" : "plain",
           (double)(now_ms() - t0) / 1000);
    return n == 6;
}

static void cluster_stop(const struct cluster *c) {
    const char *argv[] = {cluster_script, "stop", c->dir, NULL};
    char out[64];
    CHECK_CTX(run(argv, out, sizeof out) == 0, "redis-cluster stop %s", c->dir);
}

/* The port and pid of the master serving `key`'s slot; false (a failed check) otherwise. */
static bool master_of(const struct cluster *c, const char *key, unsigned *port, pid_t *pid) {
    const char *argv[] = {cluster_script, "master-of", c->dir, key, NULL};
    char out[64];
    int p = 0;
    bool ok = run(argv, out, sizeof out) == 0 && sscanf(out, "%u %d", port, &p) == 2;
    CHECK_CTX(ok, "master-of %s: %s", key, out);
    *pid = p;
    return ok;
}

/* Waits until every slot is served again (30 s at most); the seconds it took, or -1. */
static double wait_ok(const struct cluster *c) {
    const char *argv[] = {cluster_script, "wait-ok", c->dir, "30", NULL};
    char out[64];
    double took = -1;
    if (run(argv, out, sizeof out) != 0 || sscanf(out, "%lf", &took) != 1) {
        return -1;
    }
    return took;
}

/* redis-cli against the node at `port` of a plain cluster: its answer in `out`. */
static void cli(unsigned port, const char *a, const char *b, char *out, size_t len) {
    char p[16];
    snprintf(p, sizeof p, "%u", port);
    const char *argv[] = {"redis-cli", "-h", "127.0.0.1", "-p", p, a, b, NULL};
    run(argv, out, len);
}

/* Names `PREFIX0`, `PREFIX1`, … whose keys (`{NAME}:…`) live on `want` different masters:
 * the names and their masters' ports. */
static bool names_on_masters(const struct cluster *c, const char *prefix, int want,
                             char names[][32], unsigned *ports) {
    int found = 0;
    for (int i = 0; i < 40 && found < want; i++) {
        char name[32], key[48];
        snprintf(name, sizeof name, "%s%d", prefix, i);
        snprintf(key, sizeof key, "{%s}:x", name);
        unsigned port;
        pid_t pid;
        if (!master_of(c, key, &port, &pid)) {
            return false;
        }
        bool seen = false;
        for (int j = 0; j < found; j++) {
            seen = seen || ports[j] == port;
        }
        if (!seen) {
            snprintf(names[found], 32, "%s", name);
            ports[found++] = port;
        }
    }
    CHECK_CTX(found == want, "%s: %d masters", prefix, found);
    return found == want;
}

/* The first name `PREFIX0`, `PREFIX1`, … whose keys live on the master at `port`. */
static bool name_on(const struct cluster *c, const char *prefix, unsigned port, char *name,
                    size_t len) {
    for (int i = 0; i < 60; i++) {
        char key[64];
        snprintf(name, len, "%s%d", prefix, i);
        snprintf(key, sizeof key, "{%s}:x", name);
        unsigned at;
        pid_t pid;
        if (!master_of(c, key, &at, &pid)) {
            return false;
        }
        if (at == port) {
            return true;
        }
    }
    CHECK_CTX(false, "no name %s… on the master at %u", prefix, port);
    return false;
}

/* ---- the three limits, by their rules ---------------------------------------------------- */

static recuo_regulator *regulator(const char *url, const char *name, double per_s,
                                  uint32_t burst) {
    recuo_regulator *r = NULL;
    char detail[256] = "";
    recuo_status rc = recuo_regulator_new_redis(url, strlen(url), name, strlen(name), per_s,
                                                burst, &r, detail, sizeof detail);
    CHECK_CTX(rc == RECUO_OK && r != NULL, "%s: %s: %s", name, recuo_status_name(rc), detail);
    return r;
}

static recuo_concurrency_limit *limit(const char *url, const char *name, uint32_t places,
                                      uint64_t lease_ms) {
    recuo_concurrency_limit *l = NULL;
    char detail[256] = "";
    recuo_status rc = recuo_concurrency_limit_new_redis(url, strlen(url), name, strlen(name),
                                                        places, lease_ms, &l, detail,
                                                        sizeof detail);
    CHECK_CTX(rc == RECUO_OK && l != NULL, "%s: %s: %s", name, recuo_status_name(rc), detail);
    return l;
}

static recuo_retry_budget *budget(const char *url, const char *name, double ratio,
                                  double floor_per_s) {
    recuo_retry_budget *b = NULL;
    char detail[256] = "";
    recuo_status rc = recuo_retry_budget_new_redis(url, strlen(url), name, strlen(name), ratio,
                                                   floor_per_s, 10, &b, detail, sizeof detail);
    CHECK_CTX(rc == RECUO_OK && b != NULL, "%s: %s: %s", name, recuo_status_name(rc), detail);
    return b;
}

/* 1/s with a burst of 2: two starts at once, then a wait of at most one second. */
static void regulator_holds(const char *url, const char *name) {
    recuo_regulator *r = regulator(url, name, 1.0, 2);
    if (r == NULL) {
        return;
    }
    uint64_t wait = 777;
    CHECK_STATUS(recuo_regulator_try_acquire(r, 1, &wait), RECUO_OK);
    CHECK_EQ_U64(wait, 0);
    CHECK_STATUS(recuo_regulator_try_acquire(r, 1, &wait), RECUO_OK);
    CHECK_STATUS(recuo_regulator_try_acquire(r, 1, &wait), RECUO_WOULD_WAIT);
    CHECK_CTX(wait > 0 && wait <= S, "%s: %" PRIu64 " ns", name, wait);
    recuo_regulator_free(r);
}

/* 2 places, on two handles: the third refused, a release gives one back. */
static void limit_holds(const char *url, const char *name) {
    recuo_concurrency_limit *a = limit(url, name, 2, 10000);
    recuo_concurrency_limit *b = limit(url, name, 2, 10000);
    if (a != NULL && b != NULL) {
        recuo_permit *p1 = NULL, *p2 = NULL, *p3 = NULL;
        CHECK_STATUS(recuo_concurrency_limit_try_acquire(a, &p1), RECUO_OK);
        CHECK_STATUS(recuo_concurrency_limit_try_acquire(b, &p2), RECUO_OK);
        CHECK_STATUS(recuo_concurrency_limit_try_acquire(a, &p3), RECUO_WOULD_WAIT);
        CHECK_STATUS(recuo_concurrency_limit_try_acquire(b, &p3), RECUO_WOULD_WAIT);
        CHECK(p3 == NULL);
        recuo_permit_release(p1);
        CHECK_STATUS(recuo_concurrency_limit_try_acquire(b, &p3), RECUO_OK);
        recuo_permit_release(p3);
        recuo_permit_release(p2);
    }
    recuo_concurrency_limit_free(b);
    recuo_concurrency_limit_free(a);
}

/* Ratio 0.1, 0.5 a second over 10 s, on a fixed clock: 20 requests earn 2 + 5 retries. */
static void budget_holds(const char *url, const char *name) {
    recuo_retry_budget *b = budget(url, name, 0.1, 0.5);
    if (b == NULL) {
        return;
    }
    uint64_t at = 1000 * S;
    for (int i = 0; i < 20; i++) {
        CHECK_STATUS(recuo_retry_budget_record_request_at(b, at), RECUO_OK);
    }
    int granted = 0;
    for (int i = 0; i < 10; i++) {
        recuo_status rc = recuo_retry_budget_try_withdraw_at(b, at);
        CHECK_CTX(rc == RECUO_OK || rc == RECUO_BUDGET_EXHAUSTED, "%s", recuo_status_name(rc));
        granted += rc == RECUO_OK;
    }
    CHECK_CTX(granted == 7, "%s: %d retries granted", name, granted);
    uint64_t requests = 0, retries = 0;
    CHECK_STATUS(recuo_retry_budget_counts_at(b, at, &requests, &retries), RECUO_OK);
    CHECK_EQ_U64(requests, 20);
    CHECK_EQ_U64(retries, 7);
    recuo_retry_budget_free(b);
}

/* The key `{name}:suffix` exists on the master at `port` (a plain cluster). */
static void stored_on(unsigned port, const char *name, const char *suffix) {
    char key[64], answer[64];
    snprintf(key, sizeof key, "{%s}:%s", name, suffix);
    cli(port, "EXISTS", key, answer, sizeof answer);
    CHECK_CTX(strcmp(answer, "1") == 0, "%s on %u: %s", key, port, answer);
}

/* ---- a gate over the three, in recuo_retry ------------------------------------------------ */

/* Attempt 0 fails (a retry, from the budget), attempt 1 succeeds. */
static void fails_once(uint32_t attempt, const char *key, recuo_verdict *out, void *user_data) {
    (void)key;
    int *calls = user_data;
    (*calls)++;
    static const recuo_verdict retry = {RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR,
                                        RECUO_WAIT_NONE, 0};
    static const recuo_verdict success = {RECUO_VERDICT_SUCCESS, RECUO_CAUSE_SUCCESS,
                                          RECUO_WAIT_NONE, 0};
    *out = attempt == 0 ? retry : success;
}

static void a_gate_on_the_cluster_runs_a_call(const char *url) {
    recuo_regulator *r = regulator(url, "c-gate-reg", 100, 5);
    recuo_concurrency_limit *l = limit(url, "c-gate-limit", 2, 10000);
    recuo_retry_budget *b = budget(url, "c-gate-budget", 0.5, 1.0);
    recuo_gate *g = recuo_gate_new();
    CHECK_STATUS(recuo_gate_set_regulator(g, r), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_limit(g, l), RECUO_OK);
    CHECK_STATUS(recuo_gate_set_budget(g, b), RECUO_OK);
    CHECK(recuo_gate_is_remote(g));
    recuo_policy *p = recuo_policy_new();
    recuo_policy_set_base_ms(p, 1);
    recuo_policy_set_cap_ms(p, 2);
    recuo_policy_set_deadline_ms(p, 5000);
    recuo_retry_options *o = recuo_retry_options_new();
    CHECK_STATUS(recuo_retry_options_set_gate(o, g), RECUO_OK);
    int calls = 0;
    recuo_report report;
    memset(&report, 0, sizeof report);
    CHECK_STATUS(recuo_retry(p, fails_once, &calls, o, &report, NULL, 0, NULL), RECUO_OK);
    CHECK_EQ_U64(report.attempts, 2);
    CHECK_EQ_U64(calls, 2);
    recuo_retry_options_free(o);
    recuo_policy_free(p);
    recuo_gate_free(g);
    recuo_retry_budget_free(b);
    recuo_concurrency_limit_free(l);
    recuo_regulator_free(r);
}

/* ---- refusals ----------------------------------------------------------------------------- */

/* Every constructor refuses `url` with RECUO_ERR_IO, its detail holding `words`. */
static void refused(const char *url, const char *words) {
    char detail[256];
    recuo_regulator *r = NULL;
    recuo_concurrency_limit *l = NULL;
    recuo_retry_budget *b = NULL;
    CHECK_STATUS(recuo_regulator_new_redis(url, strlen(url), "c-no", 4, 1, 1, &r, detail,
                                           sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, words) != NULL, "%s: %s", url, detail);
    CHECK_STATUS(recuo_concurrency_limit_new_redis(url, strlen(url), "c-no", 4, 1, 1000, &l,
                                                   detail, sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, words) != NULL, "%s: %s", url, detail);
    CHECK_STATUS(recuo_retry_budget_new_redis(url, strlen(url), "c-no", 4, 0.1, 1, 10, &b,
                                              detail, sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, words) != NULL, "%s: %s", url, detail);
    CHECK(r == NULL && l == NULL && b == NULL);
}

/* ---- the plain cluster -------------------------------------------------------------------- */

static void the_limits_hold_on_a_cluster(const struct cluster *c) {
    char regs[3][32], limits[3][32], budgets[3][32];
    unsigned reg_ports[3], limit_ports[3], budget_ports[3];
    if (!names_on_masters(c, "c-reg", 3, regs, reg_ports) ||
        !names_on_masters(c, "c-limit", 3, limits, limit_ports) ||
        !names_on_masters(c, "c-budget", 3, budgets, budget_ports)) {
        return;
    }
    for (int i = 0; i < 3; i++) {
        regulator_holds(c->url, regs[i]);
        stored_on(reg_ports[i], regs[i], "tat");
        stored_on(reg_ports[i], regs[i], "settings");
        limit_holds(c->url, limits[i]);
        stored_on(limit_ports[i], limits[i], "settings");
        budget_holds(c->url, budgets[i]);
        stored_on(budget_ports[i], budgets[i], "budget");
    }

    /* One seed is enough: the others are found from its slot map. */
    char one_seed[64];
    snprintf(one_seed, sizeof one_seed, "redis+cluster://127.0.0.1:%u/", reg_ports[0]);
    recuo_regulator *seeded = regulator(one_seed, "c-seeded", 1.0, 1);
    if (seeded != NULL) {
        CHECK_STATUS(recuo_regulator_try_acquire(seeded, 1, NULL), RECUO_OK);
        CHECK_STATUS(recuo_regulator_try_acquire(seeded, 1, NULL), RECUO_WOULD_WAIT);
        recuo_regulator_free(seeded);
    }

    /* A cluster has one database; a node named as one server says how to name the cluster;
     * an empty key has no slot of its own; a server that is no cluster node, named as a
     * cluster, says so. */
    refused("redis+cluster://h:1/2", "one database");
    char node[64];
    snprintf(node, sizeof node, "redis://127.0.0.1:%u", reg_ports[1]);
    recuo_regulator *moved = NULL;
    char detail[256];
    CHECK_STATUS(recuo_regulator_new_redis(node, strlen(node), regs[0], strlen(regs[0]), 1.0, 2,
                                           &moved, detail, sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, "redis+cluster://") != NULL, "%s", detail);
    CHECK_STATUS(recuo_regulator_new_redis(c->url, strlen(c->url), "", 0, 1.0, 2, &moved,
                                           detail, sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, "cannot name a limit on a Redis Cluster") != NULL,
              "%s", detail);
    CHECK(moved == NULL);
    struct server single;
    if (server_start(&single)) {
        char url[64];
        snprintf(url, sizeof url, "redis+cluster://127.0.0.1:%u/", single.port);
        refused(url, "cluster support disabled");
    } else {
        CHECK_CTX(false, "redis-server did not start");
    }
    server_stop(&single);

    a_gate_on_the_cluster_runs_a_call(c->url);
}

/* ---- the TLS cluster, as the ACL user ----------------------------------------------------- */

static void a_tls_cluster_serves_the_limits(const char *url) {
    CHECK_CTX(strncmp(url, "rediss+cluster://app:apppw@", 27) == 0, "%s", url);
    regulator_holds(url, "c-tls-reg");
    limit_holds(url, "c-tls-limit");
    char wrong[512], detail[256];
    const char *at = strstr(url, "apppw@");
    snprintf(wrong, sizeof wrong, "%.*snope%s", at != NULL ? (int)(at - url) : 0, url,
             at != NULL ? at + 5 : "");
    recuo_regulator *r = NULL;
    CHECK_STATUS(recuo_regulator_new_redis(wrong, strlen(wrong), "c-tls-reg", 9, 1.0, 2, &r,
                                           detail, sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, "127.0.0.1") != NULL && strstr(detail, "nope") == NULL, "%s",
              detail);
}

/* ---- the fleet through a failover --------------------------------------------------------- */

#define FLEET 4
#define RATE 30
#define BURST 3
#define PLACES 2
#define DEADLINE_MS 2000
#define RUN_MS 8000
#define KILL_AFTER_MS 2000
#define MAX_OPS 2048
#define MAX_STARTS 4096

enum ending { OK, GATE_ERROR, WAITED, OTHER };

struct op {
    uint64_t at_ms; /* CLOCK_MONOTONIC, the same for every process */
    uint64_t took_ms;
    uint32_t ending;
};

/* What one process of the fleet did, written where the parent reads it (shared memory). */
struct record {
    uint32_t ops_len, starts_len;
    int setup_failed;
    struct op ops[MAX_OPS];
    uint64_t starts_ms[MAX_STARTS]; /* when each attempt started */
};

struct fleet_process {
    struct record *rec;
    CURL *easy;
    struct body b;
};

/* One GET of `recuo serve`: success on a 200, else a retry. */
static void get_once(uint32_t attempt, const char *key, recuo_verdict *out, void *user_data) {
    (void)key;
    struct fleet_process *f = user_data;
    if (f->rec->starts_len < MAX_STARTS) {
        f->rec->starts_ms[f->rec->starts_len++] = now_ms();
    }
    body_reset(attempt, &f->b);
    long status = 0;
    if (curl_easy_perform(f->easy) == CURLE_OK) {
        curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, &status);
    }
    static const recuo_verdict retry = {RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR,
                                        RECUO_WAIT_NONE, 0};
    static const recuo_verdict success = {RECUO_VERDICT_SUCCESS, RECUO_CAUSE_SUCCESS,
                                          RECUO_WAIT_NONE, 0};
    *out = status == 200 ? success : retry;
}

/* One process of the fleet (a fork()ed child): its gate on the cluster, then recuo_retry in
 * a loop until `end_ms`. */
static int fleet_process(int index, const char *url, const char *const names[3],
                         const char *api, uint64_t end_ms, struct record *rec) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    static struct fleet_process f;
    f.rec = rec;
    f.easy = easy_for(api, &f.b);
    curl_easy_setopt(f.easy, CURLOPT_TIMEOUT_MS, (long)DEADLINE_MS);
    recuo_regulator *r = regulator(url, names[0], RATE, BURST);
    recuo_concurrency_limit *l = limit(url, names[1], PLACES, 2000);
    recuo_retry_budget *b = budget(url, names[2], 0.1, 1.0);
    recuo_gate *g = recuo_gate_new();
    recuo_gate_set_regulator(g, r);
    recuo_gate_set_limit(g, l);
    recuo_gate_set_budget(g, b);
    recuo_policy *p = recuo_policy_new();
    recuo_policy_set_max_attempts(p, 3);
    recuo_policy_set_deadline_ms(p, DEADLINE_MS);
    recuo_retry_options *o = recuo_retry_options_new();
    recuo_retry_options_set_gate(o, g);
    rec->setup_failed = r == NULL || l == NULL || b == NULL;
    int others = 0;
    while (!rec->setup_failed && now_ms() < end_ms && rec->ops_len < MAX_OPS) {
        struct op *op = &rec->ops[rec->ops_len];
        op->at_ms = now_ms();
        recuo_report report;
        memset(&report, 0, sizeof report);
        recuo_status rc = recuo_retry(p, get_once, &f, o, &report, NULL, 0, NULL);
        op->took_ms = now_ms() - op->at_ms;
        if (rc == RECUO_OK) {
            op->ending = OK;
        } else if (rc == RECUO_ERR_IO && report.attempts == 0) {
            op->ending = GATE_ERROR; /* the gate's store could not be used: no attempt */
        } else if (rc == RECUO_ERR_GAVE_UP && report.attempts == 0 &&
                   report.reason == RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE) {
            op->ending = WAITED; /* 4 processes want more than the allowance: some wait */
        } else {
            op->ending = OTHER;
            if (others++ < 3) {
                fprintf(stderr, "fleet process %d: %s, %s after %u attempts\n", index,
                        recuo_status_name(rc), recuo_give_up_reason_name(report.reason),
                        report.attempts);
            }
        }
        rec->ops_len++;
    }
    recuo_retry_options_free(o);
    recuo_policy_free(p);
    recuo_gate_free(g);
    recuo_retry_budget_free(b);
    recuo_concurrency_limit_free(l);
    recuo_regulator_free(r);
    curl_easy_cleanup(f.easy);
    curl_global_cleanup();
    return rec->setup_failed ? 1 : 0;
}

static int compare_op_at(const void *a, const void *b) {
    uint64_t x = ((const struct op *)a)->at_ms, y = ((const struct op *)b)->at_ms;
    return x < y ? -1 : x > y;
}

/* The fleet on the cluster in DIR (URL), through a failover. */
static int failover(const char *self, const char *recuo, const char *dir, const char *url) {
    recuo_bin = recuo;
    struct cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.dir, sizeof c.dir, "%s", dir);
    snprintf(c.url, sizeof c.url, "%s", url);

    /* The three limits on the master to be killed: the regulator's. */
    char lim[32], bud[32];
    unsigned port;
    pid_t victim;
    if (!master_of(&c, "{c-fail-reg}:x", &port, &victim) ||
        !name_on(&c, "c-fail-limit", port, lim, sizeof lim) ||
        !name_on(&c, "c-fail-budget", port, bud, sizeof bud)) {
        return check_summary(self);
    }
    const char *const names[3] = {"c-fail-reg", lim, bud};

    struct serve api = {0, 0, ""};
    const char *const serve_args[] = {"--allowance", "100000/s", "--burst", "10000",
                                      "--fail-rate",  "0",        "--latency", "50ms",
                                      NULL};
    if (!serve_up(&api, serve_args)) {
        return check_summary(self);
    }
    struct record *recs = mmap(NULL, FLEET * sizeof *recs, PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(recs != MAP_FAILED);
    if (recs == MAP_FAILED) {
        serve_stop(&api);
        return check_summary(self);
    }
    uint64_t started_ms = now_ms(), end_ms = started_ms + RUN_MS;
    pid_t children[FLEET];
    for (int i = 0; i < FLEET; i++) {
        fflush(stdout);
        fflush(stderr);
        children[i] = fork();
        if (children[i] == 0) {
            _exit(fleet_process(i, url, names, api.base, end_ms, &recs[i]));
        }
        CHECK(children[i] > 0);
    }

    sleep_ms(KILL_AFTER_MS);
    uint64_t killed_ms = now_ms();
    CHECK(kill(victim, SIGKILL) == 0);
    double took_over_s = wait_ok(&c);
    uint64_t recovered_ms = now_ms();
    CHECK_CTX(took_over_s >= 0, "the cluster did not recover");

    /* The fleet ends by itself at end_ms (+ one operation's deadline); a straggler is
     * killed. */
    for (int i = 0; i < FLEET; i++) {
        int status = -1;
        while (children[i] > 0 && waitpid(children[i], &status, WNOHANG) == 0) {
            if (now_ms() > end_ms + 3 * DEADLINE_MS) {
                kill(children[i], SIGKILL);
                waitpid(children[i], &status, 0);
                CHECK_CTX(false, "fleet process %d did not end", i);
                break;
            }
            sleep_ms(20);
        }
        CHECK_CTX(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fleet process %d: %d", i,
                  status);
    }
    char stats_url[96];
    snprintf(stats_url, sizeof stats_url, "%s/stats", api.base);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    cJSON *stats = get_json(stats_url);
    curl_global_cleanup();
    serve_stop(&api);
    CHECK(stats != NULL);
    const cJSON *most = cJSON_GetObjectItemCaseSensitive(stats, "max_in_flight");
    const cJSON *requests = cJSON_GetObjectItemCaseSensitive(stats, "requests");
    double most_in_flight = cJSON_IsNumber(most) ? most->valuedouble : -1;
    double served = cJSON_IsNumber(requests) ? requests->valuedouble : -1;
    cJSON_Delete(stats);

    static struct op ops[FLEET * MAX_OPS];
    size_t n = 0, gate_errors = 0, waited = 0, others = 0, starts_after = 0;
    uint64_t longest = 0, first_error = UINT64_MAX, last_error = 0;
    uint64_t last_start = recovered_ms;
    for (int i = 0; i < FLEET; i++) {
        CHECK_CTX(!recs[i].setup_failed, "fleet process %d could not open its limits", i);
        CHECK_CTX(recs[i].ops_len < MAX_OPS && recs[i].starts_len < MAX_STARTS,
                  "fleet process %d: %u operations, %u starts", i, recs[i].ops_len,
                  recs[i].starts_len);
        for (uint32_t j = 0; j < recs[i].ops_len; j++) {
            ops[n++] = recs[i].ops[j];
        }
        for (uint32_t j = 0; j < recs[i].starts_len; j++) {
            uint64_t at = recs[i].starts_ms[j];
            if (at >= recovered_ms) {
                starts_after++;
                last_start = at > last_start ? at : last_start;
            }
        }
    }
    munmap(recs, FLEET * sizeof *recs);
    qsort(ops, n, sizeof ops[0], compare_op_at);
    for (size_t i = 0; i < n; i++) {
        longest = ops[i].took_ms > longest ? ops[i].took_ms : longest;
        if (ops[i].ending == GATE_ERROR) {
            gate_errors++;
            first_error = ops[i].at_ms < first_error ? ops[i].at_ms : first_error;
            uint64_t end = ops[i].at_ms + ops[i].took_ms;
            last_error = end > last_error ? end : last_error;
        }
        waited += ops[i].ending == WAITED;
        others += ops[i].ending == OTHER;
    }
    /* The regulator's allowance from the takeover to the last start, and one start that
     * replication may lose per process (docs/limits.md). */
    uint64_t allowance = BURST + (last_start - recovered_ms) * RATE / 1000 + 1;
    printf("failover figures (C): %zu operations, longest %" PRIu64 " ms (deadline %d ms); "
           "%zu ended by the gate's error, from %" PRId64 " ms to %" PRId64 " ms after the "
           "kill; %zu gave up waiting for the gate; the replica took over after %.2f s; "
           "after that %zu starts for an allowance of %" PRIu64 " (+%d); at most %.0f in "
           "flight (limit %d); %.0f requests in all\n",
           n, longest, DEADLINE_MS, gate_errors,
           gate_errors > 0 ? (int64_t)first_error - (int64_t)killed_ms : 0,
           gate_errors > 0 ? (int64_t)last_error - (int64_t)killed_ms : 0, waited, took_over_s,
           starts_after, allowance, FLEET, most_in_flight, PLACES, served);

    CHECK_CTX(n > 0, "no operation");
    CHECK_CTX(longest <= DEADLINE_MS + 400, "%" PRIu64 " ms", longest);
    CHECK_CTX(others == 0, "%zu operations ended otherwise", others);
    CHECK_CTX(gate_errors > 0, "the kill was not seen");
    CHECK_CTX(gate_errors == 0 || first_error + 2500 >= killed_ms,
              "a gate error %" PRIu64 " ms before the kill", killed_ms - first_error);
    CHECK_CTX(gate_errors == 0 || last_error <= recovered_ms + 2500,
              "a gate error %" PRIu64 " ms after the takeover", last_error - recovered_ms);
    CHECK_CTX(starts_after > 0, "nothing started after the takeover");
    CHECK_CTX(starts_after <= allowance + FLEET, "%zu starts > %" PRIu64, starts_after,
              allowance);
    CHECK_CTX(most_in_flight >= 1 && most_in_flight <= PLACES + FLEET, "%.0f in flight",
              most_in_flight);
    CHECK_CTX(now_ms() - started_ms < 20000, "the fleet took %" PRIu64 " ms",
              now_ms() - started_ms);
    return check_summary(self);
}

/* `test_cluster --tls SCRIPT RECUO_BIN DIR URL CERT`: the TLS check and the fleet, on the TLS
 * cluster in DIR, in a process of their own: exec'd, it runs natively under valgrind (which
 * would take rustls's constant-time code for uninitialised reads), and SSL_CERT_FILE is set
 * before its first TLS connection. */
static int tls_and_failover(const char *self, const char *recuo, const char *dir,
                            const char *url, const char *cert) {
    setenv("SSL_CERT_FILE", cert, 1);
    a_tls_cluster_serves_the_limits(url);
    return failover(self, recuo, dir, url);
}

/* Runs `self --tls SCRIPT RECUO_BIN DIR URL CERT` and answers its exit status. */
static int run_tls_and_failover(const char *self, const char *recuo, const struct cluster *c) {
    char name[600];
    snprintf(name, sizeof name, "%s (tls, failover)", self);
    const char *argv[] = {name, "--tls", cluster_script, recuo, c->dir, c->url, c->cert, NULL};
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execv(self, (char *const *)argv);
        _exit(127);
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv) {
    if (argc == 7 && strcmp(argv[1], "--tls") == 0) {
        cluster_script = argv[2];
        return tls_and_failover(argv[0], argv[3], argv[4], argv[5], argv[6]);
    }
    if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "--no-failover") != 0)) {
        fprintf(stderr, "usage: %s SCRIPT RECUO_BIN DIR [--no-failover]\n", argv[0]);
        return 2;
    }
    cluster_script = argv[1];
    char dir[512];
    struct cluster c;

    snprintf(dir, sizeof dir, "%s/plain", argv[3]);
    if (cluster_start(&c, dir, false)) {
        the_limits_hold_on_a_cluster(&c);
    }
    cluster_stop(&c);

    if (argc == 4) {
        snprintf(dir, sizeof dir, "%s/tls", argv[3]);
        if (cluster_start(&c, dir, true)) {
            CHECK_CTX(run_tls_and_failover(argv[0], argv[2], &c) == 0,
                      "the TLS cluster's part failed");
        }
        cluster_stop(&c);
    }
    return check_summary(argv[0]);
}
