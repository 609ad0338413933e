/*
 * test_curl.c — include/recuo_curl.h against real servers on 127.0.0.1: `recuo serve` (429s
 * with Retry-After as seconds and as an HTTP-date, 503s, a spent daily quota, TLS with a CA
 * the client does not trust), a closed port (connect), and a tiny server of this program's
 * own that resets the connection after reading the request (reset: retried for GET, not for
 * a POST without a key of the caller's) or holds it without answering (each attempt's
 * timeout clipped to the deadline). The server's /stats says one idempotency key per POST
 * and no early retry. A fleet's concurrency limit on Redis (a redis-server of this program's
 * own, redis_server.h): two processes — this one and `test_curl RECUO --fleet-child REDIS_URL
 * BASE`, exec'd — of two threads each, every transfer through a gate holding the Redis limit
 * of 2, and `recuo serve`'s max_in_flight is 2; with the Redis server gone, the gate's
 * RECUO_ERR_IO is returned and no request is sent.
 *
 * Usage: test_curl PATH/TO/recuo. Waits are short: Retry-After 1 (2 at most for a date
 * rounded up to the next second), backoff of a few ms.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "recuo_curl.h"

#include "check.h"
#include "recuo_serve.h"
#include "redis_server.h"
#include "vectors.h"

/* ---- recuo serve (recuo_serve.h) --------------------------------------------------------- */

/* GET BASE/stats, parsed. */
static cJSON *stats_of(const struct serve *s) {
    char url[96];
    snprintf(url, sizeof url, "%s/stats", s->base);
    return get_json(url);
}

static double stat_number(const cJSON *stats, const char *name) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(stats, name);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static recuo_policy *fast_policy(uint32_t attempts) {
    recuo_policy *p = recuo_policy_new();
    recuo_policy_set_max_attempts(p, attempts);
    recuo_policy_set_base_ms(p, 5);
    recuo_policy_set_cap_ms(p, 20);
    recuo_policy_set_spread_ms(p, 50);
    recuo_policy_set_deadline_ms(p, 10000);
    return p;
}

/* One test's client: a policy (`attempts` of them, fast backoff, a 10 s deadline; 0: guide
 * B's policy), a response body, and an easy handle for BASE PATH that writes into it. */
struct client {
    char url[128];
    recuo_policy *p;
    struct body b;
    CURL *easy;
    recuo_curl_result r;
};

static void client_open(struct client *c, const char *base, const char *path, uint32_t attempts) {
    memset(c, 0, sizeof *c);
    snprintf(c->url, sizeof c->url, "%s%s", base, path);
    c->p = attempts > 0 ? fast_policy(attempts) : recuo_policy_new_guide_b();
    c->easy = easy_for(c->url, &c->b);
}

static void client_close(struct client *c) {
    curl_easy_cleanup(c->easy);
    recuo_policy_free(c->p);
}

/* ---- the table ----------------------------------------------------------------------------- */

/* tests/vectors/curl.json: every CURLcode the core's table names, sent or not, and the kind
 * recuo_curl_outcome's table answers — the one PHP's buscarComRetry reads too. */
static void the_table(const char *vectors) {
    char *text = read_file(vectors, "curl.json");
    cJSON *doc = parse(text, "curl.json");
    const cJSON *codes = field(doc, "codes");
    int n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, codes) {
        uint32_t code = (uint32_t)number(v, "code");
        bool sent = cJSON_IsTrue(field(v, "sent"));
        const char *want = cJSON_GetStringValue(field(v, "kind"));
        const char *got = recuo_transport_name(recuo_curl_code_transport(code, sent));
        CHECK_CTX(want != NULL && strcmp(got, want) == 0, "CURLcode %u, sent %d: %s, not %s",
                  (unsigned)code, (int)sent, got, want ? want : "?");
        n++;
    }
    CHECK_CTX(n >= 60, "%d codes", n);
    /* recuo_curl_transport is the table for a transfer that sent its request. */
    CHECK(recuo_curl_transport(CURLE_SSL_CONNECT_ERROR) == RECUO_TRANSPORT_CONNECT);
    CHECK(recuo_curl_transport(CURLE_PEER_FAILED_VERIFICATION) == RECUO_TRANSPORT_TLS);
    CHECK(recuo_curl_transport(CURLE_OPERATION_TIMEDOUT) == RECUO_TRANSPORT_TIMEOUT);
    CHECK(recuo_curl_transport(CURLE_PARTIAL_FILE) == RECUO_TRANSPORT_RESET);
    CHECK(recuo_curl_transport(CURLE_OUT_OF_MEMORY) == RECUO_TRANSPORT_OTHER);
    cJSON_Delete(doc);
    free(text);
}

static void argument_errors(void) {
    recuo_policy *valid = recuo_policy_new();
    recuo_policy *invalid = recuo_policy_new();
    recuo_policy_set_base_ms(invalid, UINT64_MAX);
    CURL *easy = curl_easy_init();
    recuo_curl_result r = {.http_status = 77};
    recuo_policy *both[] = {valid, invalid};
    for (int i = 0; i < 2; i++) {
        CHECK_STATUS(recuo_curl_perform(NULL, both[i], NULL, &r), RECUO_ERR_NULL_ARGUMENT);
        CHECK_STATUS(recuo_curl_perform(easy, both[i], NULL, NULL), RECUO_ERR_NULL_ARGUMENT);
        recuo_curl_options bad_method = {.method = "G\xff"};
        /* The argument's error first, whatever the policy (issue 14). */
        CHECK_STATUS(recuo_curl_perform(easy, both[i], &bad_method, &r), RECUO_ERR_NOT_UTF8);
    }
    /* Every method's key and none at all: no plan can say both. */
    recuo_curl_options both_keys = {.key_for_every_method = true, .no_keys = true};
    CHECK_STATUS(recuo_curl_perform(easy, valid, &both_keys, &r), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_curl_perform(easy, NULL, NULL, &r), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_curl_perform(easy, invalid, NULL, &r), RECUO_ERR_CAP_BELOW_BASE);
    CHECK(r.http_status == 77);
    recuo_outcome o;
    CHECK_STATUS(recuo_curl_outcome(NULL, CURLE_OK, &o), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_curl_headers_collect(easy, NULL), RECUO_ERR_NULL_ARGUMENT);
    recuo_step s;
    CHECK_STATUS(recuo_curl_responded(NULL, easy, CURLE_OK, &s), RECUO_ERR_NULL_ARGUMENT);
    recuo_curl_headers_free(NULL);
    curl_easy_cleanup(easy);
    recuo_policy_free(valid);
    recuo_policy_free(invalid);
}

/* ---- recuo serve: 429 (seconds and date), 503, the quota, TLS -------------------------------- */

/* One request spends the burst; the next is a 429 with Retry-After, waited, then a 200. */
static void rate_limited(const char *mode) {
    const char *args[] = {"--allowance", "60/min", "--burst", "1", "--fail-rate", "0",
                          "--latency", "0ms", "--retry-after", mode, NULL};
    struct serve s;
    if (!serve_up(&s, args)) {
        return;
    }
    struct client c;
    client_open(&c, s.base, "/items/7", 3);
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, NULL, &c.r), RECUO_OK); /* spends the burst */
    CHECK(c.r.report.attempts == 1 && c.r.http_status == 200);
    CHECK(c.r.idempotency_key[0] == '\0'); /* a GET carries no key by default */

    /* A POST: the key goes with both attempts; a 429 is retried for any method. */
    curl_easy_setopt(c.easy, CURLOPT_POSTFIELDS, "{\"n\":1}");
    struct curl_slist *mine = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c.easy, CURLOPT_HTTPHEADER, mine);
    c.b.len = 0;
    c.b.resets = 0;
    recuo_curl_options o = {.method = "POST", .url = c.url, .headers = mine,
                            .reset_body = body_reset, .user_data = &c.b};
    uint64_t t0 = recuo_monotonic_ms();
    recuo_status rc = recuo_curl_perform(c.easy, c.p, &o, &c.r);
    uint64_t took = recuo_monotonic_ms() - t0;
    CHECK_STATUS(rc, RECUO_OK);
    CHECK_CTX(c.r.report.attempts == 2, "%s: %u attempts", mode, (unsigned)c.r.report.attempts);
    CHECK(c.r.http_status == 200 && c.r.code == CURLE_OK && c.r.step.kind == RECUO_STEP_DONE);
    CHECK_CTX(took >= 900 && took < 3500, "%s: waited %llu ms", mode, (unsigned long long)took);
    CHECK(c.b.resets == 1 && strstr(c.b.data, "\"ok\":true") != NULL);
    CHECK(strstr(c.b.data, "429") == NULL); /* the body is the last response's alone */
    CHECK(strlen(c.r.idempotency_key) == 36);

    cJSON *stats = stats_of(&s);
    CHECK(stats != NULL);
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(stats, "requests_per_idempotency_key");
    CHECK(cJSON_GetArraySize(keys) == 1);
    const cJSON *mine_count = cJSON_GetObjectItemCaseSensitive(keys, c.r.idempotency_key);
    CHECK_CTX(cJSON_IsNumber(mine_count) && mine_count->valuedouble == 2,
              "%s: one key for the POST's two attempts", mode);
    CHECK_CTX(stat_number(stats, "early_retries") == 0, "%s: an early retry", mode);
    CHECK(stat_number(stats, "throttled") == 1 && stat_number(stats, "ok") == 2);
    cJSON_Delete(stats);
    /* The handle's own settings are back: performed as it is now (your list, no key; a
     * freed list would be a use after free), the server sees no further key. */
    CHECK(curl_easy_perform(c.easy) == CURLE_OK);
    stats = stats_of(&s);
    keys = cJSON_GetObjectItemCaseSensitive(stats, "requests_per_idempotency_key");
    mine_count = cJSON_GetObjectItemCaseSensitive(keys, c.r.idempotency_key);
    CHECK(cJSON_GetArraySize(keys) == 1 && cJSON_IsNumber(mine_count) &&
          mine_count->valuedouble == 2 && stat_number(stats, "requests") == 4);
    cJSON_Delete(stats);
    curl_easy_setopt(c.easy, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(mine);
    client_close(&c);
    serve_stop(&s);
}

/* Every answer a 503 (Retry-After: 1): attempts exhausted, the last 503 and its body left. */
static void unavailable(void) {
    const char *args[] = {"--fail-rate", "1", "--latency", "0ms", NULL};
    struct serve s;
    if (!serve_up(&s, args)) {
        return;
    }
    struct client c;
    client_open(&c, s.base, "/items/1", 2);
    curl_easy_setopt(c.easy, CURLOPT_POSTFIELDS, "x");
    recuo_curl_options o = {.method = "POST", .reset_body = body_reset, .user_data = &c.b};
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, &o, &c.r), RECUO_ERR_GAVE_UP);
    CHECK(c.r.step.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED && c.r.report.attempts == 2);
    CHECK(c.r.http_status == 503 && c.r.code == CURLE_OK && c.b.resets == 1);
    CHECK(strstr(c.b.data, "503") != NULL);
    /* Guide A's ending: a final 503 gives up, its response readable on the handle. */
    long on_handle = 0;
    curl_easy_getinfo(c.easy, CURLINFO_RESPONSE_CODE, &on_handle);
    CHECK(on_handle == 503 && c.r.ending == RECUO_ENDING_GIVE_UP);
    CHECK(c.r.last.kind == RECUO_LAST_STATUS && c.r.last.status == 503);
    CHECK_CTX(strcmp(c.r.message, "recuo gave up after 2 attempts (attempts_exhausted): HTTP 503") ==
                  0,
              "%s", c.r.message);
    cJSON *stats = stats_of(&s);
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(stats, "requests_per_idempotency_key");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(keys, c.r.idempotency_key);
    CHECK(cJSON_GetArraySize(keys) == 1 && cJSON_IsNumber(n) && n->valuedouble == 2);
    CHECK(stat_number(stats, "early_retries") == 0 && stat_number(stats, "unavailable") == 2);
    cJSON_Delete(stats);
    /* Under CURLOPT_FAILONERROR a 503 is CURLE_HTTP_RETURNED_ERROR, still judged by its
     * status (and its Retry-After): the same two attempts. */
    curl_easy_setopt(c.easy, CURLOPT_FAILONERROR, 1L);
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, &o, &c.r), RECUO_ERR_GAVE_UP);
    CHECK(c.r.code == CURLE_HTTP_RETURNED_ERROR && c.r.http_status == 503);
    CHECK(c.r.step.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED && c.r.report.attempts == 2);
    CHECK(c.r.report.delay_count == 1);
    client_close(&c);
    serve_stop(&s);
}

/* A daily quota spent: Retry-After a day away gives up at once, with the instant to retry. */
static void quota_spent(void) {
    const char *args[] = {"--quota", "1", "--fail-rate", "0", "--latency", "0ms", NULL};
    struct serve s;
    if (!serve_up(&s, args)) {
        return;
    }
    struct client c;
    client_open(&c, s.base, "/items/2", 0);
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, NULL, &c.r), RECUO_OK);
    uint64_t t0 = recuo_monotonic_ms();
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, NULL, &c.r), RECUO_ERR_GAVE_UP);
    CHECK(recuo_monotonic_ms() - t0 < 1000);
    CHECK(c.r.step.reason == RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE && c.r.report.attempts == 1);
    CHECK(c.r.http_status == 429 && c.r.step.has_retry_at && c.r.report.has_retry_after);
    CHECK_CTX(c.r.report.retry_after_ms > 3600000 && c.r.step.retry_at_ms > t0 + 3600000,
              "retry after %llu ms", (unsigned long long)c.r.report.retry_after_ms);
    client_close(&c);
    serve_stop(&s);
}

/* HTTPS with a certificate the client's roots do not know: tls, never retried. */
static void tls_refused(void) {
    const char *args[] = {"--tls", "--fail-rate", "0", "--latency", "0ms", NULL};
    struct serve s;
    if (!serve_up(&s, args)) {
        return;
    }
    struct client c;
    client_open(&c, s.base, "/items/3", 3);
    curl_easy_setopt(c.easy, CURLOPT_CAINFO, "/dev/null");
    curl_easy_setopt(c.easy, CURLOPT_CAPATH, "/nonexistent");
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, NULL, &c.r), RECUO_ERR_TASK_FAILED);
    CHECK_CTX(recuo_curl_transport(c.r.code) == RECUO_TRANSPORT_TLS, "CURLcode %d", (int)c.r.code);
    CHECK(c.r.step.reason == RECUO_GIVE_UP_PERMANENT && c.r.report.attempts == 1);
    /* libcurl's own error, returned unchanged: no give-up message. */
    CHECK(c.r.ending == RECUO_ENDING_ERROR && c.r.last.kind == RECUO_LAST_TRANSPORT &&
          c.r.last.transport == RECUO_TRANSPORT_TLS && c.r.message[0] == '\0');
    client_close(&c);
    serve_stop(&s);
}

/* ---- a closed port ------------------------------------------------------------------------- */

static void connection_refused(void) {
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u", free_port());
    struct client c;
    client_open(&c, base, "/", 3);
    curl_easy_setopt(c.easy, CURLOPT_POSTFIELDS, "x");
    recuo_curl_options o = {.method = "POST", .reset_body = body_reset, .user_data = &c.b};
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, &o, &c.r), RECUO_ERR_TASK_FAILED);
    /* connect is retried for any method: the request was never sent. */
    CHECK(c.r.code == CURLE_COULDNT_CONNECT && c.r.http_status == 0);
    CHECK(c.r.step.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED && c.r.report.attempts == 3);
    CHECK(c.b.resets == 2);
    client_close(&c);
}

/* ---- a server that resets, or holds ---------------------------------------------------------- */

enum rude_mode { RUDE_RESET, RUDE_HOLD };

struct rude {
    int fd;
    unsigned port;
    char base[64];
    enum rude_mode mode;
    pthread_t thread;
    pthread_mutex_t lock;
    int connections;
    char keys[8][64]; /* the Idempotency-Key of each request ("" for none) */
};

static void *rude_serve(void *arg) {
    struct rude *r = arg;
    for (;;) {
        int c = accept(r->fd, NULL, NULL);
        if (c < 0) {
            return NULL; /* the listening socket was shut down */
        }
        char req[4096];
        size_t len = 0;
        while (len < sizeof req - 1) {
            ssize_t n = read(c, req + len, sizeof req - 1 - len);
            if (n <= 0) {
                break;
            }
            len += (size_t)n;
            req[len] = '\0';
            if (strstr(req, "\r\n\r\n") != NULL) {
                break;
            }
        }
        req[len] = '\0';
        pthread_mutex_lock(&r->lock);
        int i = r->connections++;
        if (i < 8) {
            const char *k = strstr(req, "Idempotency-Key: ");
            if (k != NULL) {
                sscanf(k + 17, "%63[^\r\n]", r->keys[i]);
            }
        }
        pthread_mutex_unlock(&r->lock);
        if (r->mode == RUDE_HOLD) {
            char sink[256];
            while (read(c, sink, sizeof sink) > 0) {
            } /* until the client gives up */
        } else {
            struct linger hard = {1, 0}; /* close with a RST: "connection reset by peer" */
            setsockopt(c, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
        }
        close(c);
    }
}

static int rude_connections(struct rude *r) {
    pthread_mutex_lock(&r->lock);
    int n = r->connections;
    pthread_mutex_unlock(&r->lock);
    return n;
}

static int rude_start(struct rude *r, enum rude_mode mode) {
    memset(r, 0, sizeof *r);
    r->mode = mode;
    pthread_mutex_init(&r->lock, NULL);
    r->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(r->fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(r->fd, 16) != 0 ||
        getsockname(r->fd, (struct sockaddr *)&a, &len) != 0) {
        return -1;
    }
    r->port = ntohs(a.sin_port);
    snprintf(r->base, sizeof r->base, "http://127.0.0.1:%u", r->port);
    return pthread_create(&r->thread, NULL, rude_serve, r);
}

static bool rude_up(struct rude *r, enum rude_mode mode) {
    int started = rude_start(r, mode) == 0;
    CHECK_CTX(started, "the server of mode %d", (int)mode);
    return started;
}

static void rude_stop(struct rude *r) {
    shutdown(r->fd, SHUT_RDWR);
    close(r->fd);
    pthread_join(r->thread, NULL);
    pthread_mutex_destroy(&r->lock);
}

static void connection_reset(void) {
    struct rude srv;
    if (!rude_up(&srv, RUDE_RESET)) {
        return;
    }
    struct client c;
    client_open(&c, srv.base, "/orders", 3);

    /* GET is idempotent: a reset is retried until the attempts are spent. */
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, NULL, &c.r), RECUO_ERR_TASK_FAILED);
    CHECK_CTX(recuo_curl_transport(c.r.code) == RECUO_TRANSPORT_RESET, "CURLcode %d",
              (int)c.r.code);
    CHECK(c.r.step.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED && c.r.report.attempts == 3);
    CHECK(rude_connections(&srv) == 3 && srv.keys[0][0] == '\0');

    /* POST without a key of the caller's: recuo's own key is sent, but it does not make a
     * reset safe to repeat (the server may ignore it): one attempt, given up permanent. */
    curl_easy_setopt(c.easy, CURLOPT_POSTFIELDS, "{}");
    recuo_curl_options post = {.method = "POST"};
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, &post, &c.r), RECUO_ERR_TASK_FAILED);
    CHECK(c.r.step.reason == RECUO_GIVE_UP_PERMANENT && c.r.report.attempts == 1);
    CHECK(rude_connections(&srv) == 4 && strcmp(srv.keys[3], c.r.idempotency_key) == 0);

    /* POST with the caller's own key: idempotent, retried, the same key every time. */
    struct curl_slist *mine = curl_slist_append(NULL, "Idempotency-Key: order-42");
    curl_easy_setopt(c.easy, CURLOPT_HTTPHEADER, mine);
    recuo_curl_options own = {.method = "POST", .headers = mine, .own_key = true};
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, &own, &c.r), RECUO_ERR_TASK_FAILED);
    CHECK(c.r.step.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED && c.r.report.attempts == 3);
    CHECK(rude_connections(&srv) == 7 && c.r.idempotency_key[0] == '\0');
    for (int i = 4; i < 7; i++) {
        CHECK_CTX(strcmp(srv.keys[i], "order-42") == 0, "request %d: key %s", i, srv.keys[i]);
    }
    curl_easy_setopt(c.easy, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(mine);
    client_close(&c);
    rude_stop(&srv);
}

/* A server that never answers: each attempt's timeout is what is left of a 400 ms deadline,
 * not the caller's 10 s, and the operation gives up soon after it. */
static void timeout_clipped_to_the_deadline(void) {
    struct rude srv;
    if (!rude_up(&srv, RUDE_HOLD)) {
        return;
    }
    struct client c;
    client_open(&c, srv.base, "/slow", 5);
    recuo_policy_set_deadline_ms(c.p, 400);
    recuo_curl_options o = {.timeout_ms = 10000};
    uint64_t t0 = recuo_monotonic_ms();
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, &o, &c.r), RECUO_ERR_GAVE_UP);
    uint64_t took = recuo_monotonic_ms() - t0;
    CHECK_CTX(took >= 350 && took < 1500, "took %llu ms", (unsigned long long)took);
    CHECK(c.r.code == CURLE_OPERATION_TIMEDOUT);
    /* The deadline's own timeout cut the attempt: a give-up, not libcurl's error. */
    CHECK(c.r.last.kind == RECUO_LAST_LATE && c.r.ending == RECUO_ENDING_GIVE_UP);
    CHECK(strstr(c.r.message, "the deadline passed while the server was still answering") !=
          NULL);
    CHECK(c.r.step.reason == RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE ||
          c.r.step.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);
    client_close(&c);
    rude_stop(&srv);
}

/* A machine of the caller's, with records: the glue drives it, the records say what it did. */
static void callers_machine_with_records(void) {
    struct rude srv;
    if (!rude_up(&srv, RUDE_RESET)) {
        return;
    }
    struct client c;
    client_open(&c, srv.base, "/a?token=s3cr3t", 2);
    recuo_attempts *a = NULL;
    CHECK_STATUS(recuo_attempts_new_seeded(c.p, 7, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_records(a, RECUO_LEVEL_DEBUG), RECUO_OK);
    recuo_curl_options o = {.url = c.url, .attempts = a};
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, &o, &c.r), RECUO_ERR_TASK_FAILED);
    CHECK(c.r.report.attempts == 2);
    recuo_level level;
    char line[4096];
    int records = 0, secret = 0, resets = 0;
    while (recuo_attempts_poll_record(a, &level, line, sizeof line, NULL) == RECUO_OK &&
           level != RECUO_LEVEL_NONE) {
        records++;
        secret += strstr(line, "s3cr3t") != NULL;
        resets += strstr(line, "reset") != NULL;
    }
    CHECK_CTX(records == 3 && secret == 0 && resets >= 2, "%d records, %d resets", records,
              resets);
    CHECK_STATUS(recuo_curl_perform(c.easy, c.p, &o, &c.r), RECUO_ERR_ALREADY_STARTED);
    recuo_attempts_free(a);
    client_close(&c);
    rude_stop(&srv);
}

/* ---- a fleet's concurrency limit on Redis ------------------------------------------------- */

#define FLEET_THREADS 2
#define FLEET_CALLS 3
#define FLEET_KEY "curl:fleet"

struct fleet_worker {
    const char *redis_url;
    const char *base;
    int failures;
};

/* One GET of BASE/fleet by recuo_curl_perform, its machine holding `gate`: its status. */
static recuo_status fleet_get(const char *base, const recuo_gate *gate, recuo_curl_result *r) {
    struct client c;
    client_open(&c, base, "/fleet", 2);
    recuo_attempts *a = NULL;
    recuo_status rc = recuo_attempts_new(c.p, &a);
    if (rc == RECUO_OK) {
        rc = recuo_attempts_set_gate(a, gate);
    }
    if (rc == RECUO_OK) {
        recuo_curl_options o = {.attempts = a, .gate = gate};
        rc = recuo_curl_perform(c.easy, c.p, &o, &c.r);
        *r = c.r;
    }
    recuo_attempts_free(a);
    client_close(&c);
    return rc;
}

/* A gate holding the Redis limit of 2 (a handle and a connection of its own); NULL, and the
 * reason in `detail`, when it cannot be opened. */
static recuo_gate *fleet_gate(const char *redis_url, char *detail, size_t detail_len) {
    recuo_concurrency_limit *l = NULL;
    recuo_status rc = recuo_concurrency_limit_new_redis(redis_url, strlen(redis_url), FLEET_KEY,
                                                        strlen(FLEET_KEY), 2, 10000, &l,
                                                        detail, detail_len);
    if (rc != RECUO_OK) {
        return NULL;
    }
    recuo_gate *g = recuo_gate_new();
    recuo_gate_set_limit(g, l);
    recuo_concurrency_limit_free(l); /* the gate keeps its own reference */
    return g;
}

static void *fleet_work(void *arg) {
    struct fleet_worker *w = arg;
    char detail[256] = "";
    recuo_gate *g = fleet_gate(w->redis_url, detail, sizeof detail);
    if (g == NULL) {
        fprintf(stderr, "fleet: %s\n", detail);
        w->failures = FLEET_CALLS;
        return NULL;
    }
    for (int i = 0; i < FLEET_CALLS; i++) {
        recuo_curl_result r;
        if (fleet_get(w->base, g, &r) != RECUO_OK || r.http_status != 200) {
            w->failures++;
        }
    }
    recuo_gate_free(g);
    return NULL;
}

/* FLEET_THREADS workers of one process; the number of transfers that failed. */
static int fleet_run(const char *redis_url, const char *base) {
    struct fleet_worker w[FLEET_THREADS];
    pthread_t t[FLEET_THREADS];
    for (int i = 0; i < FLEET_THREADS; i++) {
        w[i] = (struct fleet_worker){redis_url, base, 0};
        pthread_create(&t[i], NULL, fleet_work, &w[i]);
    }
    int failures = 0;
    for (int i = 0; i < FLEET_THREADS; i++) {
        pthread_join(t[i], NULL);
        failures += w[i].failures;
    }
    return failures;
}

static void a_fleet_limit_on_redis(const char *self) {
    struct server redis;
    if (!server_start(&redis)) {
        CHECK_CTX(0, "could not start redis-server on 127.0.0.1:%u (make deps installs it)",
                  redis.port);
        server_stop(&redis);
        return;
    }
    const char *args[] = {"--allowance", "6000/min", "--burst", "100", "--fail-rate", "0",
                          "--latency", "150ms", NULL};
    struct serve s;
    if (!serve_up(&s, args)) {
        server_stop(&redis);
        return;
    }
    /* Another process of the fleet (exec'd: it runs natively under valgrind), and this one. */
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child == 0) {
        execl(self, self, recuo_bin, "--fleet-child", redis.url, s.base, (char *)NULL);
        _exit(127);
    }
    CHECK(child > 0);
    int failures = fleet_run(redis.url, s.base);
    int status = -1;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK_CTX(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the other process: status %d",
              status);
    CHECK_CTX(failures == 0, "%d transfers failed", failures);
    cJSON *stats = stats_of(&s);
    CHECK(stats != NULL);
    CHECK_CTX(stat_number(stats, "ok") == 2 * FLEET_THREADS * FLEET_CALLS, "%.0f answered",
              stat_number(stats, "ok"));
    CHECK_CTX(stat_number(stats, "max_in_flight") == 2, "%.0f in flight at once",
              stat_number(stats, "max_in_flight"));
    cJSON_Delete(stats);

    /* The Redis server gone: the gate's error, and no request sent. */
    char detail[256] = "";
    recuo_gate *g = fleet_gate(redis.url, detail, sizeof detail);
    CHECK_CTX(g != NULL, "%s", detail);
    server_stop(&redis);
    recuo_curl_result r;
    memset(&r, 0, sizeof r);
    CHECK_STATUS(fleet_get(s.base, g, &r), RECUO_ERR_IO);
    CHECK(r.report.attempts == 0 && r.step.kind == RECUO_STEP_GAVE_UP);
    stats = stats_of(&s);
    CHECK(stat_number(stats, "requests") == 2 * FLEET_THREADS * FLEET_CALLS);
    cJSON_Delete(stats);
    recuo_gate_free(g);
    serve_stop(&s);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_curl PATH/TO/recuo PATH/TO/tests/vectors\n");
        return 2;
    }
    recuo_bin = argv[1];
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc == 5 && strcmp(argv[2], "--fleet-child") == 0) {
        int failures = fleet_run(argv[3], argv[4]);
        curl_global_cleanup();
        return failures == 0 ? 0 : 1;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: test_curl PATH/TO/recuo PATH/TO/tests/vectors\n");
        return 2;
    }
    the_table(argv[2]);
    argument_errors();
    rate_limited("seconds");
    rate_limited("date");
    unavailable();
    quota_spent();
    tls_refused();
    connection_refused();
    connection_reset();
    timeout_clipped_to_the_deadline();
    callers_machine_with_records();
    a_fleet_limit_on_redis(argv[0]);
    curl_global_cleanup();
    return check_summary(argv[0]);
}
