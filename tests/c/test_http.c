/*
 * test_http.c — tests/vectors/http.json in C: the request plans, the endings and the give-up
 * messages through librecuo's exports (recuo_plan_request, recuo_ending_for,
 * recuo_give_up_message), and every scripted request through recuo_curl_perform against
 * `recuo serve --script tests/vectors/http.json` on 127.0.0.1 (paths /c-curl/<id>). From the
 * server's log (GET /__script/log/c-curl/<id>) it checks the attempts the server saw and the
 * key each carried; from the result, the plan, each attempt's decision (the machine's
 * records), the status on the handle or libcurl's error, the reason, the retry instant, the
 * ending, recuo_curl_perform's status and the message. recuo_curl_perform keeps guide A's
 * buscarComRetry's contract, so a case of a client adapter ("style": "client") is compared
 * with the core's ending for guide A (recuo_ending_for(RECUO_STYLE_GUIDE, ...)): the same
 * attempts and decisions, a last 429 or 5xx given up. Every retry decided spends the retry
 * budget, and nothing else does.
 *
 * Usage: test_http PATH/TO/recuo PATH/TO/tests/vectors. Waits are a few ms (the vectors'
 * policies have a 1-2 ms backoff).
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "recuo_curl.h"

#include "check.h"
#include "recuo_serve.h"
#include "vectors.h"

/* ---- names to constants ---------------------------------------------------------------- */

/* The constant of `name` among `first..last`, by the library's own `*_name` function. A name
 * that is none of them (`what` says of which kind) is a wrong vector: the run ends with exit
 * status 2. */
static uint32_t by_name(const char *what, const char *(*name_of)(uint32_t), uint32_t first,
                        uint32_t last, const char *name) {
    for (uint32_t c = first; name != NULL && c <= last; c++) {
        if (strcmp(name_of(c), name) == 0) {
            return c;
        }
    }
    fprintf(stderr, "http.json: %s %s\n", what, name ? name : "?");
    exit(2);
}

static uint32_t style_of(const cJSON *v) {
    return by_name("style", recuo_style_name, 1, 2, cJSON_GetStringValue(v));
}

/* A reason's constant; null is RECUO_GIVE_UP_NONE. */
static uint32_t reason_of(const cJSON *v) {
    if (cJSON_IsNull(v)) {
        return RECUO_GIVE_UP_NONE;
    }
    return by_name("reason", recuo_give_up_reason_name, 1, 6, cJSON_GetStringValue(v));
}

static uint32_t transport_of(const char *name) {
    return by_name("transport", recuo_transport_name, 1, 5, name);
}

/* A vector's "last": {"status": N}, {"transport": "reset"}, {"late": true} or {}. */
static recuo_last last_of(const cJSON *v) {
    recuo_last last;
    memset(&last, 0, sizeof last);
    last.kind = RECUO_LAST_NOTHING;
    if (cJSON_GetObjectItemCaseSensitive(v, "status") != NULL) {
        last.kind = RECUO_LAST_STATUS;
        last.status = (uint16_t)number(v, "status");
    } else if (cJSON_GetObjectItemCaseSensitive(v, "transport") != NULL) {
        last.kind = RECUO_LAST_TRANSPORT;
        last.transport = transport_of(cJSON_GetStringValue(field(v, "transport")));
    } else if (cJSON_GetObjectItemCaseSensitive(v, "late") != NULL) {
        last.kind = RECUO_LAST_LATE;
    }
    return last;
}

/* send_keys: null -1 (the default), false 0, true 1. */
static int32_t send_keys_of(const cJSON *v) {
    return cJSON_IsNull(v) ? -1 : cJSON_IsTrue(v) ? 1 : 0;
}

/* ---- the pure functions ------------------------------------------------------------------ */

static void plans(const cJSON *doc) {
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, field(doc, "plans")) {
        recuo_policy *p = recuo_policy_new_adapters();
        CHECK_STATUS(recuo_policy_set_server_honours_keys(
                         p, cJSON_IsTrue(field(c, "server_honours_keys"))),
                     RECUO_OK);
        const char *method = cJSON_GetStringValue(field(c, "method"));
        recuo_request_plan plan = {.key = 0, .idempotent = false};
        CHECK_STATUS(recuo_plan_request(p, method, strlen(method),
                                        cJSON_IsTrue(field(c, "callers_key")),
                                        send_keys_of(field(c, "send_keys")), &plan),
                     RECUO_OK);
        const char *key = cJSON_GetStringValue(field(c, "key"));
        CHECK_CTX(key != NULL && strcmp(recuo_key_to_send_name(plan.key), key) == 0,
                  "%s: key %s, not %s", method, recuo_key_to_send_name(plan.key), key);
        CHECK_CTX(plan.idempotent == cJSON_IsTrue(field(c, "idempotent")), "%s: idempotent %d",
                  method, (int)plan.idempotent);
        recuo_policy_free(p);
        n++;
    }
    CHECK_CTX(n >= 8, "%d plans", n);
}

static void endings(const cJSON *doc) {
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, field(doc, "endings")) {
        recuo_last last = last_of(field(c, "last"));
        recuo_ending e = 0;
        CHECK_STATUS(recuo_ending_for(style_of(field(c, "style")), reason_of(field(c, "reason")),
                                      &last, &e),
                     RECUO_OK);
        const char *want = cJSON_GetStringValue(field(c, "ending"));
        CHECK_CTX(want != NULL && strcmp(recuo_ending_name(e), want) == 0, "ending %d: %s, not %s",
                  n, recuo_ending_name(e), want);
        n++;
    }
    CHECK_CTX(n >= 11, "%d endings", n);
}

static void messages(const cJSON *doc) {
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, field(doc, "messages")) {
        recuo_last last = last_of(field(c, "last"));
        const cJSON *in = field(c, "retry_in_ms");
        char buf[RECUO_GIVE_UP_MESSAGE_SIZE];
        size_t written = 0;
        CHECK_STATUS(recuo_give_up_message(reason_of(field(c, "reason")),
                                           (uint32_t)number(c, "attempts"), &last,
                                           !cJSON_IsNull(in),
                                           cJSON_IsNull(in) ? 0 : (uint64_t)number(c, "retry_in_ms"),
                                           buf, sizeof buf, &written),
                     RECUO_OK);
        const char *want = cJSON_GetStringValue(field(c, "message"));
        CHECK_CTX(want != NULL && strcmp(buf, want) == 0 && written == strlen(want),
                  "message %d: %s", n, buf);
        n++;
    }
    CHECK_CTX(n >= 6, "%d messages", n);
}

/* The exports' argument errors: nothing written. */
static void argument_errors(void) {
    recuo_policy *p = recuo_policy_new_adapters();
    recuo_request_plan plan = {.key = 77, .idempotent = true};
    CHECK_STATUS(recuo_plan_request(p, "POST", 4, false, 2, &plan), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_plan_request(p, "P\xff", 2, false, -1, &plan), RECUO_ERR_NOT_UTF8);
    CHECK_STATUS(recuo_plan_request(NULL, "POST", 4, false, -1, &plan), RECUO_ERR_NULL_ARGUMENT);
    CHECK(plan.key == 77 && plan.idempotent);
    recuo_last bad = {.kind = 9, .status = 0, .transport = 0};
    recuo_last s503 = {.kind = RECUO_LAST_STATUS, .status = 503, .transport = 0};
    recuo_ending e = 77;
    CHECK_STATUS(recuo_ending_for(RECUO_STYLE_GUIDE, 2, &bad, &e), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_ending_for(3, 2, &s503, &e), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_ending_for(RECUO_STYLE_GUIDE, 7, &s503, &e), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_ending_for(RECUO_STYLE_GUIDE, 2, NULL, &e), RECUO_ERR_NULL_ARGUMENT);
    CHECK(e == 77);
    char buf[16] = "x";
    size_t written = 99;
    CHECK_STATUS(recuo_give_up_message(RECUO_GIVE_UP_NONE, 1, &s503, false, 0, buf, sizeof buf,
                                       &written),
                 RECUO_ERR_INVALID_ENUM);
    CHECK(buf[0] == 'x' && written == 99);
    /* A buffer too small: what fits, cut and terminated. */
    CHECK_STATUS(recuo_give_up_message(RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED, 3, &s503, false, 0, buf,
                                       sizeof buf, &written),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(strcmp(buf, "recuo gave up a") == 0 && written == 15);
    CHECK(recuo_policy_server_honours_keys(p) == false);
    CHECK(strcmp(recuo_last_kind_name(RECUO_LAST_LATE), "late") == 0);
    CHECK(strcmp(recuo_ending_name(0), "unknown") == 0);
    recuo_policy_free(p);
}

/* ---- recuo serve --script (recuo_serve.h) ------------------------------------------------- */

/* An upload read once from a stream (no CURLOPT_SEEKFUNCTION): it cannot be sent again. */
struct stream {
    const char *data;
    size_t left;
};

static size_t stream_read(char *buf, size_t size, size_t nmemb, void *user_data) {
    struct stream *s = user_data;
    size_t n = size * nmemb < s->left ? size * nmemb : s->left;
    memcpy(buf, s->data, n);
    s->data += n;
    s->left -= n;
    return n;
}

/* GET BASE/__script/log/c-curl/ID, parsed: what the server saw. */
static cJSON *server_log(const struct serve *s, const char *id) {
    char url[512];
    snprintf(url, sizeof url, "%s/__script/log/c-curl/%s", s->base, id);
    return get_json(url);
}

/* A UUID v4 as text: 8-4-4-4-12 lower-case hex digits, version 4, variant 10xx. */
static bool uuid_v4(const char *k) {
    if (k == NULL || strlen(k) != 36) {
        return false;
    }
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? k[i] != '-' : strchr("0123456789abcdef", k[i]) == NULL || k[i] == '\0') {
            return false;
        }
    }
    return k[14] == '4' && strchr("89ab", k[19]) != NULL;
}

/* The policy of a case: the adapters' default for a client case, guide A's for a guide
 * case, with the case's attempts, backoff, deadline and "server honours keys". */
static recuo_policy *policy_of(const cJSON *p, uint32_t style) {
    recuo_policy *policy =
        style == RECUO_STYLE_GUIDE ? recuo_policy_new() : recuo_policy_new_adapters();
    CHECK_STATUS(recuo_policy_set_max_attempts(policy, (uint32_t)number(p, "max_attempts")),
                 RECUO_OK);
    CHECK_STATUS(recuo_policy_set_base_ms(policy, (uint64_t)number(p, "base_ms")), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_cap_ms(policy, (uint64_t)number(p, "cap_ms")), RECUO_OK);
    if (cJSON_IsNull(field(p, "deadline_ms"))) {
        CHECK_STATUS(recuo_policy_clear_deadline(policy), RECUO_OK);
    } else {
        CHECK_STATUS(recuo_policy_set_deadline_ms(policy, (uint64_t)number(p, "deadline_ms")),
                     RECUO_OK);
    }
    CHECK_STATUS(recuo_policy_set_server_honours_keys(
                     policy, cJSON_IsTrue(field(p, "server_honours_keys"))),
                 RECUO_OK);
    CHECK_STATUS(recuo_policy_validate(policy), RECUO_OK);
    return policy;
}

/* The attempts' decisions, from the machine's records ("type": "attempt"), into `out`. */
static int decisions_of(recuo_attempts *a, char out[][16], int max) {
    int n = 0;
    recuo_level level = RECUO_LEVEL_NONE;
    char line[8192];
    while (recuo_attempts_poll_record(a, &level, line, sizeof line, NULL) == RECUO_OK &&
           level != RECUO_LEVEL_NONE) {
        cJSON *r = cJSON_Parse(line);
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "type"));
        const char *d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "decision"));
        if (type != NULL && strcmp(type, "attempt") == 0 && n < max) {
            snprintf(out[n++], 16, "%s", d != NULL ? d : "?");
        }
        cJSON_Delete(r);
    }
    return n;
}

/* What recuo_curl_perform answers for each ending. */
static recuo_status status_for(recuo_ending e) {
    return e == RECUO_ENDING_GIVE_UP ? RECUO_ERR_GAVE_UP
           : e == RECUO_ENDING_ERROR ? RECUO_ERR_TASK_FAILED
                                     : RECUO_OK;
}

static void one_request(const struct serve *srv, const cJSON *c) {
    const char *id = cJSON_GetStringValue(field(c, "id"));
    const cJSON *e = field(c, "expect");
    uint32_t style = style_of(field(c, "style"));
    const char *method = cJSON_GetStringValue(field(c, "method"));
    const char *callers = cJSON_GetStringValue(field(c, "callers_key"));
    int32_t send_keys = send_keys_of(field(c, "send_keys"));
    bool replayable = cJSON_IsTrue(field(c, "replayable"));
    recuo_policy *p = policy_of(field(c, "policy"), style);

    char url[512];
    snprintf(url, sizeof url, "%s/c-curl/%s", srv->base, id);
    struct body b = {.len = 0};
    CURL *easy = easy_for(url, &b);
    struct stream upload = {.data = "{\"pay\":1}", .left = 9};
    if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(easy, CURLOPT_POST, 1L);
        if (replayable) {
            curl_easy_setopt(easy, CURLOPT_POSTFIELDS, "{\"pay\":1}");
        } else {
            curl_easy_setopt(easy, CURLOPT_READFUNCTION, stream_read);
            curl_easy_setopt(easy, CURLOPT_READDATA, &upload);
            curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, 9L);
        }
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
    }
    struct curl_slist *mine = curl_slist_append(NULL, "Accept: application/json");
    if (callers != NULL) {
        char line[128];
        snprintf(line, sizeof line, "Idempotency-Key: %s", callers);
        mine = curl_slist_append(mine, line);
    }
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, mine);

    recuo_retry_budget *budget = NULL;
    CHECK_STATUS(recuo_retry_budget_new(1.0, 100.0, 10, &budget), RECUO_OK);
    recuo_gate *gate = recuo_gate_new();
    CHECK_STATUS(recuo_gate_set_budget(gate, budget), RECUO_OK);
    recuo_attempts *a = NULL;
    CHECK_STATUS(recuo_attempts_new_seeded(p, 1, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_gate(a, gate), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_records(a, RECUO_LEVEL_DEBUG), RECUO_OK);
    recuo_curl_options o = {.method = method,
                            .url = url,
                            .headers = mine,
                            .reset_body = body_reset,
                            .user_data = &b,
                            .key_for_every_method = send_keys == 1,
                            .no_keys = send_keys == 0,
                            .attempts = a,
                            .gate = gate,
                            .body_not_replayable = !replayable};
    recuo_curl_result r;
    memset(&r, 0, sizeof r);
    recuo_status rc = recuo_curl_perform(easy, p, &o, &r);

    /* The plan. */
    const char *key = cJSON_GetStringValue(field(e, "key"));
    CHECK_CTX(strcmp(recuo_key_to_send_name(r.plan.key), key) == 0, "%s: key %s", id,
              recuo_key_to_send_name(r.plan.key));
    CHECK_CTX(r.plan.idempotent == cJSON_IsTrue(field(e, "idempotent")), "%s: idempotent %d", id,
              (int)r.plan.idempotent);

    /* What the server saw: the attempts, and the key each carried. */
    uint32_t attempts = (uint32_t)number(e, "attempts");
    cJSON *log = server_log(srv, id);
    CHECK_CTX(cJSON_GetArraySize(log) == (int)attempts, "%s: the server saw %d requests", id,
              cJSON_GetArraySize(log));
    CHECK_CTX(r.report.attempts == attempts, "%s: %u attempts", id, (unsigned)r.report.attempts);
    const cJSON *seen;
    cJSON_ArrayForEach(seen, log) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(seen, "key");
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(seen, "method"));
        CHECK_CTX(m != NULL && strcmp(m, method) == 0, "%s: method %s", id, m ? m : "?");
        if (strcmp(key, "none") == 0) {
            CHECK_CTX(cJSON_IsNull(k), "%s: a key was sent", id);
        } else if (strcmp(key, "caller") == 0) {
            CHECK_CTX(cJSON_IsString(k) && strcmp(k->valuestring, callers) == 0,
                      "%s: the caller's key changed", id);
        } else {
            CHECK_CTX(cJSON_IsString(k) && uuid_v4(k->valuestring) &&
                          strcmp(k->valuestring, r.idempotency_key) == 0,
                      "%s: key %s, recuo's %s", id, cJSON_IsString(k) ? k->valuestring : "null",
                      r.idempotency_key);
        }
    }
    cJSON_Delete(log);
    CHECK_CTX(strcmp(key, "recuo") == 0 ? uuid_v4(r.idempotency_key) : r.idempotency_key[0] == 0,
              "%s: recuo's key %s", id, r.idempotency_key);

    /* Each attempt's decision, and the budget: spent by the retries decided, by nothing else. */
    char got[8][16];
    int n = decisions_of(a, got, 8);
    const cJSON *want = field(e, "decisions");
    CHECK_CTX(n == cJSON_GetArraySize(want), "%s: %d decisions", id, n);
    uint64_t retries = 0;
    for (int i = 0; i < n && i < cJSON_GetArraySize(want); i++) {
        const char *w = cJSON_GetStringValue(cJSON_GetArrayItem(want, i));
        CHECK_CTX(w != NULL && strcmp(got[i], w) == 0, "%s: decision %d %s, not %s", id, i,
                  got[i], w ? w : "?");
        retries += strcmp(got[i], "retry") == 0;
    }
    uint64_t spent = 99;
    CHECK_STATUS(recuo_retry_budget_counts(budget, NULL, &spent), RECUO_OK);
    CHECK_CTX(spent == retries, "%s: %llu retries spent, %llu decided", id,
              (unsigned long long)spent, (unsigned long long)retries);

    /* The reason and the retry instant. */
    uint32_t reason = reason_of(field(e, "reason"));
    CHECK_CTX(r.step.reason == reason && r.report.reason == reason, "%s: reason %s", id,
              recuo_give_up_reason_name(r.step.reason));
    CHECK_CTX(r.step.kind == (reason == RECUO_GIVE_UP_NONE ? RECUO_STEP_DONE : RECUO_STEP_GAVE_UP),
              "%s: step %s", id, recuo_step_kind_name(r.step.kind));
    CHECK_CTX(r.step.has_retry_at == cJSON_IsTrue(field(e, "retry_at")), "%s: retry_at", id);

    /* The last attempt: a response on the handle, or libcurl's error. */
    const cJSON *status = field(e, "status");
    recuo_last last;
    memset(&last, 0, sizeof last);
    if (cJSON_IsNumber(status)) {
        long on_handle = 0;
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &on_handle);
        CHECK_CTX(r.http_status == status->valueint && on_handle == status->valueint &&
                      r.code == CURLE_OK,
                  "%s: HTTP %ld (handle %ld), CURLcode %d", id, r.http_status, on_handle,
                  (int)r.code);
        CHECK_CTX(r.last.kind == RECUO_LAST_STATUS && r.last.status == status->valueint,
                  "%s: last %s", id, recuo_last_kind_name(r.last.kind));
        last.kind = RECUO_LAST_STATUS;
        last.status = (uint16_t)status->valueint;
    } else {
        const char *error = cJSON_GetStringValue(field(e, "error"));
        last.kind = RECUO_LAST_TRANSPORT;
        last.transport = transport_of(error);
        CHECK_CTX(r.http_status == 0 && r.code != CURLE_OK &&
                      recuo_curl_code_transport((uint32_t)r.code, true) == last.transport,
                  "%s: HTTP %ld, CURLcode %d", id, r.http_status, (int)r.code);
        CHECK_CTX(r.last.kind == RECUO_LAST_TRANSPORT && r.last.transport == last.transport,
                  "%s: last %s", id, recuo_last_kind_name(r.last.kind));
    }

    /* The ending: guide A's, which recuo_curl_perform keeps; for a client case the core's
     * ending for guide A of the same end. */
    const char *ending = cJSON_GetStringValue(field(e, "ending"));
    recuo_ending guide = 0;
    CHECK_STATUS(recuo_ending_for(RECUO_STYLE_GUIDE, reason, &last, &guide), RECUO_OK);
    if (style == RECUO_STYLE_GUIDE) {
        CHECK_CTX(strcmp(recuo_ending_name(guide), ending) == 0, "%s: the vector's ending %s",
                  id, ending);
    }
    CHECK_CTX(r.ending == guide, "%s: ending %s, not %s", id, recuo_ending_name(r.ending),
              recuo_ending_name(guide));
    CHECK_CTX(rc == status_for(guide), "%s: %s", id, recuo_status_name(rc));

    /* The message: the vector's when its ending is guide A's; else the one message of that
     * give-up (with no retry instant: a case that has one gives up in both styles). */
    const cJSON *message = field(e, "message");
    char expected[RECUO_GIVE_UP_MESSAGE_SIZE] = "";
    if (guide == RECUO_ENDING_GIVE_UP) {
        if (strcmp(ending, "give_up") == 0) {
            snprintf(expected, sizeof expected, "%s", cJSON_GetStringValue(message));
        } else {
            if (cJSON_IsTrue(field(e, "retry_at"))) {
                fprintf(stderr, "http.json: %s: a retry instant without a give-up\n", id);
                exit(2);
            }
            CHECK_STATUS(recuo_give_up_message(reason, attempts, &last, false, 0, expected,
                                               sizeof expected, NULL),
                         RECUO_OK);
        }
    }
    CHECK_CTX(strcmp(r.message, expected) == 0, "%s: message \"%s\", not \"%s\"", id, r.message,
              expected);

    recuo_attempts_free(a);
    recuo_gate_free(gate);
    recuo_retry_budget_free(budget);
    curl_easy_cleanup(easy);
    curl_slist_free_all(mine);
    recuo_policy_free(p);
}

static void requests(const cJSON *doc, const char *vectors) {
    char script[4096];
    snprintf(script, sizeof script, "%s/http.json", vectors);
    const char *args[] = {"--script", script, NULL};
    struct serve srv;
    if (!serve_up(&srv, args)) {
        serve_stop(&srv);
        return;
    }
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, field(doc, "requests")) {
        one_request(&srv, c);
        n++;
    }
    CHECK_CTX(n >= 16, "%d requests", n);
    serve_stop(&srv);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: test_http PATH/TO/recuo PATH/TO/tests/vectors\n");
        return 2;
    }
    recuo_bin = argv[1];
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char *text = read_file(argv[2], "http.json");
    cJSON *doc = parse(text, "http.json");
    plans(doc);
    endings(doc);
    messages(doc);
    argument_errors();
    requests(doc, argv[2]);
    cJSON_Delete(doc);
    free(text);
    curl_global_cleanup();
    return check_summary(argv[0]);
}
