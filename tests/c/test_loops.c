/*
 * test_loops.c — the loop vectors (tests/vectors/loops.json) through the C step API: every
 * scenario drives one operation machine (recuo_attempts_*) event by event — a first attempt
 * made before the machine, the gate looked at without blocking, what an attempt received —
 * every queue scenario one batch queue (recuo_batch_queue_*), and every batch a queue and its
 * operations on one fake clock, exactly as core/tests/loops.rs drives the core; the pool rule,
 * whether a success needs the machine and the rounding of waits too. Each step, the report,
 * the stats and the records ([level, JSON line], in order) must be the ones written there, to
 * the millisecond and the byte.
 *
 * Usage: test_loops VECTORS_DIR
 *
 * What recuo answers is turned into the JSON the vectors write (cJSON) and compared with
 * cJSON_Compare, so a field recuo gets wrong, or one it adds, fails the scenario.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recuo.h"

#include "check.h"
#include "vectors.h"

/* An integer field, as the step API takes it. */
static uint64_t integer(const cJSON *object, const char *name) {
    return (uint64_t)number(object, name);
}

static const char *text(const cJSON *object, const char *name) {
    cJSON *item = field(object, name);
    if (!cJSON_IsString(item)) {
        fprintf(stderr, "\"%s\" is not a string\n", name);
        exit(2);
    }
    return item->valuestring;
}

/* The constant a name function calls `name`: every enum of recuo.h is small. */
static uint32_t constant(const char *(*name_of)(uint32_t), const char *name) {
    for (uint32_t code = 0; code < 64; code++) {
        if (strcmp(name_of(code), name) == 0) {
            return code;
        }
    }
    fprintf(stderr, "no constant named \"%s\"\n", name);
    exit(2);
}

/* A name, or null for `none`. */
static cJSON *reason_json(recuo_give_up_reason reason) {
    return reason == RECUO_GIVE_UP_NONE ? cJSON_CreateNull()
                                        : cJSON_CreateString(recuo_give_up_reason_name(reason));
}

static cJSON *optional_ms(bool has, uint64_t ms) {
    return has ? cJSON_CreateNumber((double)ms) : cJSON_CreateNull();
}

/* A step as the vectors write it (core/tests/loops.rs: step_json). */
static cJSON *step_json(const recuo_step *s) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "step", recuo_step_kind_name(s->kind));
    switch (s->kind) {
    case RECUO_STEP_ENTER:
        cJSON_AddNumberToObject(j, "attempt", s->attempt);
        cJSON_AddItemToObject(j, "until_ms", optional_ms(s->has_until, s->until_ms));
        break;
    case RECUO_STEP_CALL:
        cJSON_AddNumberToObject(j, "attempt", s->attempt);
        cJSON_AddItemToObject(j, "timeout_ms", optional_ms(s->has_timeout, s->timeout_ms));
        break;
    case RECUO_STEP_CLASSIFY:
        cJSON_AddNumberToObject(j, "attempt", s->attempt);
        break;
    case RECUO_STEP_SLEEP:
        cJSON_AddNumberToObject(j, "attempt", s->attempt);
        cJSON_AddNumberToObject(j, "delay_ms", (double)s->delay_ms);
        break;
    case RECUO_STEP_GAVE_UP:
        cJSON_AddItemToObject(j, "reason", reason_json(s->reason));
        cJSON_AddItemToObject(j, "retry_at_ms", optional_ms(s->has_retry_at, s->retry_at_ms));
        break;
    default:
        break;
    }
    return j;
}

/* Compares `got` (consumed) with `want`, printing both on a difference. */
static void check_json(cJSON *got, const cJSON *want, const char *scenario, const char *what,
                       int event) {
    char *g = cJSON_PrintUnformatted(got);
    char *w = cJSON_PrintUnformatted(want);
    CHECK_CTX(cJSON_Compare(got, want, true), "%s: %s %d:\n  got  %s\n  want %s", scenario, what,
              event, g, w);
    free(g);
    free(w);
    cJSON_Delete(got);
}

static recuo_policy *policy_of(const cJSON *p) {
    recuo_policy *policy = recuo_policy_new();
    CHECK_STATUS(recuo_policy_set_max_attempts(policy, (uint32_t)integer(p, "max_attempts")),
                 RECUO_OK);
    CHECK_STATUS(recuo_policy_set_base_ms(policy, integer(p, "base_ms")), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_cap_ms(policy, integer(p, "cap_ms")), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_jitter(policy, constant(recuo_jitter_name, text(p, "jitter"))),
                 RECUO_OK);
    if (cJSON_IsNull(field(p, "deadline_ms"))) {
        CHECK_STATUS(recuo_policy_clear_deadline(policy), RECUO_OK);
    } else {
        CHECK_STATUS(recuo_policy_set_deadline_ms(policy, integer(p, "deadline_ms")), RECUO_OK);
    }
    if (cJSON_IsNull(field(p, "spread_ms"))) {
        CHECK_STATUS(recuo_policy_clear_spread(policy), RECUO_OK);
    } else {
        CHECK_STATUS(recuo_policy_set_spread_ms(policy, integer(p, "spread_ms")), RECUO_OK);
    }
    CHECK_STATUS(
        recuo_policy_set_use_date_header(policy, cJSON_IsTrue(field(p, "use_date_header"))),
        RECUO_OK);
    CHECK_STATUS(recuo_policy_validate(policy), RECUO_OK);
    return policy;
}

/* The places of a scenario's concurrency limit that others hold at its start. */
typedef struct {
    recuo_permit *held[8];
    size_t count;
} holders;

/* The gate of a vector (NULL for null), with its regulator's slots spent at ns 0 (`taken`)
 * and its limit's places held by `h` (`held`; `h` may be NULL when none is). */
static recuo_gate *gate_of(const cJSON *g, holders *h) {
    if (cJSON_IsNull(g)) {
        return NULL;
    }
    recuo_gate *gate = recuo_gate_new();
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(g, "budget");
    if (b != NULL) {
        recuo_retry_budget *budget = NULL;
        CHECK_STATUS(recuo_retry_budget_new(field(b, "ratio")->valuedouble,
                                            field(b, "floor_per_s")->valuedouble,
                                            (uint32_t)integer(b, "window_s"), &budget),
                     RECUO_OK);
        CHECK_STATUS(recuo_gate_set_budget(gate, budget), RECUO_OK);
        recuo_retry_budget_free(budget);
    }
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(g, "regulator");
    if (r != NULL) {
        const char *rate = text(r, "rate");
        double per_second = 0;
        CHECK_STATUS(recuo_rate_parse(rate, strlen(rate), &per_second), RECUO_OK);
        recuo_regulator *regulator = NULL;
        CHECK_STATUS(recuo_regulator_new(per_second, (uint32_t)integer(r, "burst"), &regulator),
                     RECUO_OK);
        const cJSON *taken = cJSON_GetObjectItemCaseSensitive(r, "taken");
        for (uint64_t i = 0; taken != NULL && i < integer(r, "taken"); i++) {
            uint64_t wait_ns = 1;
            CHECK_STATUS(recuo_regulator_try_acquire_at(regulator, 0, 1, &wait_ns), RECUO_OK);
            CHECK_EQ_U64(wait_ns, 0);
        }
        CHECK_STATUS(recuo_gate_set_regulator(gate, regulator), RECUO_OK);
        recuo_regulator_free(regulator);
    }
    if (cJSON_GetObjectItemCaseSensitive(g, "limit") != NULL) {
        recuo_concurrency_limit *limit = NULL;
        CHECK_STATUS(recuo_concurrency_limit_new((uint32_t)integer(g, "limit"), &limit), RECUO_OK);
        CHECK_STATUS(recuo_gate_set_limit(gate, limit), RECUO_OK);
        const cJSON *held = cJSON_GetObjectItemCaseSensitive(g, "held");
        for (uint64_t i = 0; held != NULL && i < integer(g, "held"); i++) {
            if (h == NULL || h->count == sizeof h->held / sizeof h->held[0]) {
                fprintf(stderr, "too many places held\n");
                exit(2);
            }
            recuo_permit *permit = NULL;
            CHECK_STATUS(recuo_concurrency_limit_try_acquire(limit, &permit), RECUO_OK);
            CHECK(permit != NULL);
            h->held[h->count++] = permit;
        }
        recuo_concurrency_limit_free(limit);
    }
    return gate;
}

static recuo_verdict verdict_of(const cJSON *v) {
    recuo_verdict verdict = {0, 0, RECUO_WAIT_NONE, 0};
    verdict.verdict = constant(recuo_verdict_kind_name, text(v, "verdict"));
    verdict.cause = constant(recuo_cause_name, text(v, "reason"));
    if (!cJSON_IsNull(field(v, "wait_ms"))) {
        verdict.wait = RECUO_WAIT_MS;
        verdict.wait_ms = integer(v, "wait_ms");
    }
    return verdict;
}

/* The headers of a vector (`[[name, value], ...]`) into `headers`; their number. */
static size_t headers_of(const cJSON *list, recuo_header *headers, size_t room) {
    size_t count = 0;
    const cJSON *pair;
    cJSON_ArrayForEach(pair, list) {
        if (count == room) {
            fprintf(stderr, "too many headers\n");
            exit(2);
        }
        const char *name = cJSON_GetArrayItem(pair, 0)->valuestring;
        const char *value = cJSON_GetArrayItem(pair, 1)->valuestring;
        headers[count++] = (recuo_header){name, strlen(name), value, strlen(value)};
    }
    return count;
}

/* What an attempt received, as a vector says it (`{"status", "headers"}`, or null): the
 * outcome (NULL for null) and its headers. */
typedef struct {
    recuo_outcome outcome;
    recuo_header headers[16];
    size_t count;
} seen;

static const recuo_outcome *seen_of(const cJSON *v, seen *out) {
    out->count = 0;
    if (v == NULL || cJSON_IsNull(v)) {
        return NULL;
    }
    out->outcome = (recuo_outcome){RECUO_OUTCOME_STATUS, (uint16_t)integer(v, "status"), 0};
    out->count = headers_of(field(v, "headers"), out->headers, 16);
    return &out->outcome;
}

/* A look at the gate as the vectors write it: {"gate": "wait", "delay_ms"} or the step. */
static cJSON *poll_json(uint64_t wait_ms, const recuo_step *s) {
    if (wait_ms == 0) {
        return step_json(s);
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "gate", "wait");
    cJSON_AddNumberToObject(j, "delay_ms", (double)wait_ms);
    return j;
}

/* What an event answered. */
typedef enum {
    NO_STEP,  /* cancel, stop_queue, release, a look at the gate that says wait */
    STEP,     /* a step, to compare with "expect" */
    CHECKED,  /* a step from a look at the gate, compared already */
} answer;

/* Runs one event on `a` (`h`: the places held, for "release"). */
static answer event(recuo_attempts *a, const cJSON *ev, int64_t unix_ms, recuo_step *step,
                    holders *h, const char *scenario, int index) {
    const char *what = text(ev, "do");
    const cJSON *at_item = cJSON_GetObjectItemCaseSensitive(ev, "at");
    uint64_t at = at_item != NULL ? integer(ev, "at") : 0;
    if (strcmp(what, "start") == 0) {
        CHECK_STATUS(recuo_attempts_start(a, at, unix_ms, step), RECUO_OK);
    } else if (strcmp(what, "first") == 0) {
        CHECK_STATUS(recuo_attempts_start_after_first(a, at, unix_ms, step), RECUO_OK);
    } else if (strcmp(what, "poll_gate") == 0) {
        uint64_t wait_ms = UINT64_MAX;
        recuo_step polled = {0};
        CHECK_STATUS(recuo_attempts_poll_gate_at(a, at, at * 1000000u, &wait_ms, &polled),
                     RECUO_OK);
        check_json(poll_json(wait_ms, &polled), field(ev, "expect"), scenario, "event", index);
        if (wait_ms > 0) {
            CHECK_EQ_U64(polled.kind, 0); /* left untouched */
            return NO_STEP;
        }
        *step = polled;
        return CHECKED;
    } else if (strcmp(what, "release") == 0) {
        if (h == NULL || h->count == 0) {
            fprintf(stderr, "%s: no place held\n", scenario);
            exit(2);
        }
        recuo_permit_release(h->held[--h->count]);
        return NO_STEP;
    } else if (strcmp(what, "enter") == 0) {
        CHECK_STATUS(recuo_attempts_entered(a, at, cJSON_IsTrue(field(ev, "passed")), step),
                     RECUO_OK);
    } else if (strcmp(what, "respond") == 0 || strcmp(what, "transport") == 0) {
        recuo_outcome outcome = {RECUO_OUTCOME_STATUS, 0, 0};
        recuo_header headers[16];
        size_t count = 0;
        if (strcmp(what, "respond") == 0) {
            outcome.status = (uint16_t)integer(ev, "status");
            count = headers_of(field(ev, "headers"), headers, 16);
        } else {
            outcome.kind = RECUO_OUTCOME_TRANSPORT;
            outcome.transport = constant(recuo_transport_name, text(ev, "kind"));
        }
        CHECK_STATUS(recuo_attempts_responded(a, at, &outcome, headers, count, step), RECUO_OK);
    } else if (strcmp(what, "fail") == 0) {
        const cJSON *said = cJSON_GetObjectItemCaseSensitive(ev, "seen");
        const cJSON *carried = cJSON_GetObjectItemCaseSensitive(ev, "error_seen");
        if (said == NULL && carried == NULL) {
            CHECK_STATUS(recuo_attempts_failed(a, at, step), RECUO_OK);
        } else {
            seen own, error;
            const recuo_outcome *o = seen_of(said, &own);
            const recuo_outcome *e = seen_of(carried, &error);
            CHECK_STATUS(recuo_attempts_failed_noted(a, at, o, own.headers, own.count, e,
                                                     error.headers, error.count, step),
                         RECUO_OK);
        }
    } else if (strcmp(what, "succeed") == 0) {
        CHECK_STATUS(recuo_attempts_succeeded(a, at, step), RECUO_OK);
    } else if (strcmp(what, "judge") == 0) {
        recuo_verdict verdict = verdict_of(field(ev, "verdict"));
        const cJSON *said = cJSON_GetObjectItemCaseSensitive(ev, "seen");
        if (said == NULL) {
            CHECK_STATUS(recuo_attempts_judged(a, at, &verdict, step), RECUO_OK);
        } else {
            seen classifier;
            const recuo_outcome *o = seen_of(said, &classifier);
            CHECK_STATUS(recuo_attempts_judged_seen(a, at, &verdict, o, classifier.headers,
                                                    classifier.count, step),
                         RECUO_OK);
        }
    } else if (strcmp(what, "slept") == 0) {
        CHECK_STATUS(recuo_attempts_slept(a, at, step), RECUO_OK);
    } else if (strcmp(what, "cancel") == 0) {
        CHECK_STATUS(recuo_attempts_cancel(a), RECUO_OK);
        return NO_STEP;
    } else if (strcmp(what, "stop_queue") == 0) {
        uint32_t reason = constant(recuo_give_up_reason_name, text(ev, "reason"));
        CHECK_STATUS(recuo_attempts_stop_queue(a, reason), RECUO_OK);
        return NO_STEP;
    } else {
        fprintf(stderr, "%s: unknown event %s\n", scenario, what);
        exit(2);
    }
    return STEP;
}

static cJSON *report_json(const recuo_attempts *a) {
    recuo_report r;
    uint64_t delays[64];
    size_t n = 0;
    CHECK_STATUS(recuo_attempts_report(a, &r, delays, 64, &n), RECUO_OK);
    CHECK_EQ_U64(n, r.delay_count);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "attempts", r.attempts);
    cJSON_AddItemToObject(j, "reason", reason_json(r.reason));
    cJSON_AddNumberToObject(j, "elapsed_ms", (double)r.elapsed_ms);
    cJSON *list = cJSON_AddArrayToObject(j, "delays_ms");
    for (size_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(list, cJSON_CreateNumber((double)delays[i]));
    }
    cJSON_AddItemToObject(j, "stopped_by", reason_json(r.stopped_by));
    cJSON_AddItemToObject(j, "retry_at_unix_ms",
                          r.has_retry_at_unix_ms ? cJSON_CreateNumber((double)r.retry_at_unix_ms)
                                                 : cJSON_CreateNull());
    CHECK(r.has_retry_at_unix_ms || r.retry_at_unix_ms == 0);
    return j;
}

static cJSON *stats_json(const recuo_stats_recorder *recorder) {
    recuo_stats s;
    CHECK_STATUS(recuo_stats_recorder_snapshot(recorder, &s), RECUO_OK);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "initial", (double)s.initial);
    cJSON_AddNumberToObject(j, "retries", (double)s.retries);
    cJSON_AddNumberToObject(j, "successes", (double)s.successes);
    cJSON_AddNumberToObject(j, "failures", (double)s.failures);
    cJSON_AddNumberToObject(j, "not_started", (double)s.not_started);
    cJSON_AddNumberToObject(j, "throttled", (double)s.throttled);
    cJSON_AddNumberToObject(j, "unavailable", (double)s.unavailable);
    return j;
}

/* A record poller: recuo_attempts_poll_record or recuo_batch_queue_poll_record. */
typedef recuo_status (*poll_fn)(void *handle, recuo_level *level, char *buf, size_t len,
                                size_t *written);

static recuo_status poll_attempts(void *a, recuo_level *level, char *buf, size_t len,
                                  size_t *written) {
    return recuo_attempts_poll_record(a, level, buf, len, written);
}

static recuo_status poll_queue(void *q, recuo_level *level, char *buf, size_t len,
                               size_t *written) {
    return recuo_batch_queue_poll_record(q, level, buf, len, written);
}

/* Every record kept, as [level, line]; a buffer too small first, to check that the record
 * waits for a larger one. */
static cJSON *records_of(void *handle, poll_fn poll) {
    cJSON *list = cJSON_CreateArray();
    for (;;) {
        char small[8];
        recuo_level level = RECUO_LEVEL_NONE;
        recuo_status rc = poll(handle, &level, small, sizeof small, NULL);
        if (rc == RECUO_OK && level == RECUO_LEVEL_NONE) {
            CHECK(small[0] == '\0');
            break;
        }
        CHECK_STATUS(rc, RECUO_ERR_BUFFER_TOO_SMALL);
        char line[4096];
        size_t written = 0;
        CHECK_STATUS(poll(handle, &level, line, sizeof line, &written), RECUO_OK);
        CHECK_EQ_U64(written, strlen(line));
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateString(recuo_level_name(level)));
        cJSON_AddItemToArray(pair, cJSON_CreateString(line));
        cJSON_AddItemToArray(list, pair);
    }
    return list;
}

static cJSON *records_json(recuo_attempts *a) {
    return records_of(a, poll_attempts);
}

static int operation_scenarios(const cJSON *doc) {
    int scenarios = 0;
    const cJSON *sc;
    cJSON_ArrayForEach(sc, field(doc, "scenarios")) {
        const char *name = text(sc, "name");
        recuo_policy *policy = policy_of(field(sc, "policy"));
        recuo_stats_recorder *stats = recuo_stats_recorder_new();
        recuo_attempts *a = NULL;
        CHECK_STATUS(recuo_attempts_new(policy, &a), RECUO_OK);
        recuo_policy_free(policy);
        const cJSON *request = field(sc, "request");
        const char *method = text(request, "method");
        const char *url = text(request, "url");
        CHECK_STATUS(recuo_attempts_set_request(a, method, strlen(method), url, strlen(url)),
                     RECUO_OK);
        CHECK_STATUS(recuo_attempts_set_records(a, RECUO_LEVEL_DEBUG), RECUO_OK);
        CHECK_STATUS(recuo_attempts_set_stats_recorder(a, stats), RECUO_OK);
        CHECK_STATUS(recuo_attempts_set_classify_last_failure(a, !cJSON_IsTrue(field(sc, "guide"))),
                     RECUO_OK);
        if (cJSON_IsTrue(field(sc, "key_given"))) {
            CHECK_STATUS(recuo_attempts_set_own_key(a), RECUO_OK);
        }
        holders held = {{0}, 0};
        recuo_gate *gate = gate_of(field(sc, "gate"), &held);
        if (gate != NULL) {
            CHECK_STATUS(recuo_attempts_set_gate(a, gate), RECUO_OK);
            recuo_gate_free(gate);
        }
        const cJSON *pool = field(sc, "pool");
        if (!cJSON_IsNull(pool) && cJSON_GetObjectItemCaseSensitive(pool, "after_first") != NULL) {
            /* The pool of a loop whose first attempt was made before its machine. */
            const cJSON *enclosing = field(pool, "enclosing");
            recuo_attempt_pool *outer =
                cJSON_IsNull(enclosing)
                    ? NULL
                    : recuo_attempt_pool_new((uint32_t)integer(pool, "enclosing"));
            recuo_attempt_pool *p = NULL;
            bool nested = false, owned = false;
            CHECK_STATUS(recuo_loop_pool_choose(
                             outer, (uint32_t)integer(field(sc, "policy"), "max_attempts"), false,
                             cJSON_IsTrue(field(pool, "after_first")), &p, &nested, &owned),
                         RECUO_OK);
            CHECK_STATUS(recuo_attempts_set_pool(a, p, nested), RECUO_OK);
            recuo_attempt_pool_free(p);
            recuo_attempt_pool_free(outer);
        } else if (!cJSON_IsNull(pool)) {
            recuo_attempt_pool *p = recuo_attempt_pool_new((uint32_t)integer(pool, "remaining"));
            CHECK_STATUS(recuo_attempts_set_pool(a, p, cJSON_IsTrue(field(pool, "nested"))),
                         RECUO_OK);
            recuo_attempt_pool_free(p);
        }
        int64_t unix_ms = (int64_t)integer(sc, "unix_ms");
        recuo_step last = {0};
        int i = 0;
        const cJSON *ev;
        cJSON_ArrayForEach(ev, field(sc, "events")) {
            recuo_step step;
            switch (event(a, ev, unix_ms, &step, &held, name, i)) {
            case STEP:
                check_json(step_json(&step), field(ev, "expect"), name, "event", i);
                last = step;
                break;
            case CHECKED:
                last = step;
                break;
            case NO_STEP:
                break;
            }
            i++;
        }
        while (held.count > 0) {
            recuo_permit_release(held.held[--held.count]);
        }
        CHECK_CTX(last.kind == RECUO_STEP_DONE || last.kind == RECUO_STEP_GAVE_UP,
                  "%s: ended on %s", name, recuo_step_kind_name(last.kind));
        /* Once finished, the machine repeats its last step and changes nothing. */
        recuo_step again;
        CHECK_STATUS(recuo_attempts_slept(a, 999999, &again), RECUO_OK);
        CHECK_CTX(again.kind == last.kind && again.reason == last.reason &&
                      again.attempt == last.attempt,
                  "%s: repeated %s", name, recuo_step_kind_name(again.kind));
        CHECK_STATUS(recuo_attempts_set_records(a, RECUO_LEVEL_NONE), RECUO_ERR_ALREADY_STARTED);
        check_json(report_json(a), field(sc, "report"), name, "report", 0);
        check_json(stats_json(stats), field(sc, "stats"), name, "stats", 0);
        check_json(records_json(a), field(sc, "records"), name, "records", 0);
        recuo_attempts_free(a);
        recuo_stats_recorder_free(stats);
        scenarios++;
    }
    return scenarios;
}

static cJSON *next_json(const recuo_batch_next *n) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "next", recuo_batch_next_kind_name(n->kind));
    switch (n->kind) {
    case RECUO_BATCH_NEXT_START: {
        cJSON_AddNumberToObject(j, "index", (double)n->index);
        cJSON_AddItemToObject(j, "deadline_ms", optional_ms(n->has_deadline, n->deadline_ms));
        /* The policy handed out carries that deadline. */
        uint64_t deadline = 0;
        bool has = recuo_policy_deadline_ms(n->policy, &deadline);
        CHECK(has == n->has_deadline && deadline == n->deadline_ms);
        break;
    }
    case RECUO_BATCH_NEXT_NOT_STARTED:
        cJSON_AddNumberToObject(j, "index", (double)n->index);
        cJSON_AddItemToObject(j, "reason", reason_json(n->reason));
        cJSON_AddItemToObject(j, "stopped_by", reason_json(n->stopped_by));
        CHECK(n->policy == NULL);
        break;
    default:
        CHECK(n->policy == NULL);
        break;
    }
    return j;
}

static int queue_scenarios(const cJSON *doc) {
    int queues = 0;
    const cJSON *q;
    cJSON_ArrayForEach(q, field(doc, "queues")) {
        const char *name = text(q, "name");
        recuo_policy *policy = policy_of(field(q, "policy"));
        recuo_stats_recorder *stats = recuo_stats_recorder_new();
        const cJSON *deadline = field(q, "deadline_ms");
        recuo_batch_queue *queue = NULL;
        CHECK_STATUS(recuo_batch_queue_new(policy, (size_t)integer(q, "len"), 0,
                                           !cJSON_IsNull(deadline),
                                           cJSON_IsNull(deadline) ? 0 : integer(q, "deadline_ms"),
                                           cJSON_IsTrue(field(q, "stop_on_unreachable_wait")),
                                           stats, &queue),
                     RECUO_OK);
        recuo_policy_free(policy);
        int i = 0;
        const cJSON *ev;
        cJSON_ArrayForEach(ev, field(q, "events")) {
            const char *what = text(ev, "do");
            if (strcmp(what, "next") == 0) {
                recuo_batch_next n;
                CHECK_STATUS(recuo_batch_queue_next(queue, integer(ev, "at"), &n), RECUO_OK);
                check_json(next_json(&n), field(ev, "expect"), name, "event", i);
                recuo_policy_free(n.policy);
            } else if (strcmp(what, "finished") == 0) {
                const cJSON *r = field(ev, "reason");
                uint32_t reason = cJSON_IsNull(r) ? RECUO_GIVE_UP_NONE
                                                  : constant(recuo_give_up_reason_name,
                                                             r->valuestring);
                bool stops = false;
                CHECK_STATUS(recuo_batch_queue_finished(queue, (size_t)integer(ev, "index"),
                                                        reason, &stops),
                             RECUO_OK);
                cJSON *got = cJSON_CreateObject();
                cJSON_AddBoolToObject(got, "stops", stops);
                check_json(got, field(ev, "expect"), name, "event", i);
            } else if (strcmp(what, "stop") == 0) {
                uint32_t reason = constant(recuo_give_up_reason_name, text(ev, "reason"));
                CHECK_STATUS(recuo_batch_queue_stop(queue, reason), RECUO_OK);
                CHECK_EQ_U64(recuo_batch_queue_stopped(queue), reason);
            } else {
                fprintf(stderr, "%s: unknown event %s\n", name, what);
                exit(2);
            }
            i++;
        }
        recuo_stats s;
        CHECK_STATUS(recuo_stats_recorder_snapshot(stats, &s), RECUO_OK);
        CHECK_CTX(s.not_started == integer(q, "not_started"), "%s: %" PRIu64 " not started",
                  name, s.not_started);
        recuo_batch_queue_free(queue);
        recuo_stats_recorder_free(stats);
        queues++;
    }
    return queues;
}

/* The pool a loop draws from (core/tests/loops.rs: the_pool_a_loop_draws_from). */
static int pool_cases(const cJSON *doc) {
    int cases = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, field(doc, "pools")) {
        const char *name = text(c, "name");
        const cJSON *enclosing = field(c, "enclosing");
        recuo_attempt_pool *outer =
            cJSON_IsNull(enclosing) ? NULL
                                    : recuo_attempt_pool_new((uint32_t)integer(c, "enclosing"));
        recuo_attempt_pool *p = NULL;
        bool nested = true, owned = true;
        CHECK_STATUS(recuo_loop_pool_choose(outer, (uint32_t)integer(c, "max_attempts"),
                                            cJSON_IsTrue(field(c, "batch")),
                                            cJSON_IsTrue(field(c, "after_first")), &p, &nested,
                                            &owned),
                     RECUO_OK);
        cJSON *got = cJSON_CreateObject();
        cJSON_AddNumberToObject(got, "remaining", recuo_attempt_pool_remaining(p));
        cJSON_AddBoolToObject(got, "nested", nested);
        cJSON_AddBoolToObject(got, "owned", owned);
        check_json(got, field(c, "expect"), name, "pool", 0);
        if (outer != NULL && !owned) {
            /* The enclosing pool itself: one count. */
            recuo_attempts *a = NULL;
            recuo_policy *policy = recuo_policy_new();
            CHECK_STATUS(recuo_attempts_new(policy, &a), RECUO_OK);
            CHECK_STATUS(recuo_attempts_set_pool(a, outer, false), RECUO_OK);
            recuo_step s;
            CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
            CHECK_CTX(recuo_attempt_pool_remaining(p) == recuo_attempt_pool_remaining(outer),
                      "%s: shared", name);
            recuo_attempts_free(a);
            recuo_policy_free(policy);
        }
        recuo_attempt_pool_free(p);
        recuo_attempt_pool_free(outer);
        cases++;
    }
    return cases;
}

/* Whether a success needs the machine (core/tests/loops.rs). */
static int success_cases(const cJSON *doc) {
    int cases = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, field(doc, "success_needs_machine")) {
        const char *name = text(c, "name");
        recuo_gate *gate = gate_of(field(c, "gate"), NULL);
        const cJSON *records = field(c, "records");
        uint32_t level = cJSON_IsNull(records) ? RECUO_LEVEL_NONE
                                               : constant(recuo_level_name, records->valuestring);
        bool needs = !cJSON_IsTrue(field(c, "expect"));
        CHECK_STATUS(
            recuo_success_needs_machine(gate, cJSON_IsTrue(field(c, "stats")), level, &needs),
            RECUO_OK);
        CHECK_CTX(needs == cJSON_IsTrue(field(c, "expect")), "%s: %d", name, needs);
        recuo_gate_free(gate);
        cases++;
    }
    return cases;
}

static int wait_cases(const cJSON *doc) {
    int cases = 0;
    const cJSON *pair;
    cJSON_ArrayForEach(pair, field(doc, "wait_ms_from_ns")) {
        uint64_t ns = (uint64_t)cJSON_GetArrayItem(pair, 0)->valuedouble;
        uint64_t ms = (uint64_t)cJSON_GetArrayItem(pair, 1)->valuedouble;
        CHECK_CTX(recuo_wait_ms_from_ns(ns) == ms,
                  "%" PRIu64 " ns: %" PRIu64 " ms, expected %" PRIu64, ns,
                  recuo_wait_ms_from_ns(ns), ms);
        cases++;
    }
    return cases;
}

/* How an operation ended for its batch, as the vectors write it. */
static cJSON *end_json(const recuo_batch_result *r) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "end", recuo_batch_result_kind_name(r->kind));
    cJSON_AddItemToObject(j, "reason", reason_json(r->reason));
    cJSON_AddItemToObject(j, "stopped_by", reason_json(r->stopped_by));
    return j;
}

#define BATCH_MAX 16

/* The queue told that operation `index` ended as `end`: the progress it answers, as the
 * vectors write it. */
static cJSON *ended_json(recuo_batch_queue *queue, size_t index, const recuo_batch_result *end) {
    recuo_batch_progress p;
    CHECK_STATUS(recuo_batch_queue_ended(queue, index, end->kind, end->reason, end->stopped_by, &p),
                 RECUO_OK);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "total", (double)p.total);
    cJSON_AddNumberToObject(j, "done", (double)p.done);
    cJSON_AddNumberToObject(j, "succeeded", (double)p.succeeded);
    cJSON_AddNumberToObject(j, "failed", (double)p.failed);
    cJSON_AddNumberToObject(j, "not_started", (double)p.not_started);
    cJSON_AddNumberToObject(j, "retries", (double)p.retries);
    return j;
}

/* A queue and its operations on one fake clock (core/tests/loops.rs: batch_scenarios). */
static int batch_scenarios(const cJSON *doc) {
    int batches = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, field(doc, "batches")) {
        const char *name = text(b, "name");
        int64_t unix_ms = (int64_t)integer(b, "unix_ms");
        size_t len = (size_t)integer(b, "len");
        const cJSON *requests = field(b, "requests");
        if (len > BATCH_MAX || (size_t)cJSON_GetArraySize(requests) != len) {
            fprintf(stderr, "%s: %zu operations\n", name, len);
            exit(2);
        }
        recuo_request_line lines[BATCH_MAX];
        for (size_t i = 0; i < len; i++) {
            const cJSON *r = cJSON_GetArrayItem(requests, (int)i);
            const char *method = text(r, "method");
            const char *url = text(r, "url");
            lines[i] = (recuo_request_line){method, strlen(method), url, strlen(url)};
        }
        recuo_policy *policy = policy_of(field(b, "policy"));
        recuo_stats_recorder *stats = recuo_stats_recorder_new();
        const cJSON *deadline = field(b, "deadline_ms");
        recuo_batch_queue *queue = NULL;
        CHECK_STATUS(recuo_batch_queue_new(policy, len, 0, !cJSON_IsNull(deadline),
                                           cJSON_IsNull(deadline) ? 0 : integer(b, "deadline_ms"),
                                           cJSON_IsTrue(field(b, "stop_on_unreachable_wait")),
                                           stats, &queue),
                     RECUO_OK);
        recuo_policy_free(policy);
        CHECK_STATUS(recuo_batch_queue_set_records(queue, lines, len, unix_ms), RECUO_OK);
        recuo_attempts *ops[BATCH_MAX] = {0};
        recuo_batch_result ends[BATCH_MAX];
        bool ended[BATCH_MAX] = {0};
        cJSON *progress = cJSON_CreateArray();
        int i = 0;
        const cJSON *ev;
        cJSON_ArrayForEach(ev, field(b, "events")) {
            const char *what = text(ev, "do");
            const cJSON *op = cJSON_GetObjectItemCaseSensitive(ev, "op");
            size_t n = op != NULL ? (size_t)integer(ev, "op") : 0;
            if (op != NULL && (n >= len || (ops[n] == NULL && strcmp(what, "start") != 0))) {
                fprintf(stderr, "%s: no operation %zu\n", name, n);
                exit(2);
            }
            if (strcmp(what, "next") == 0) {
                recuo_batch_next next;
                CHECK_STATUS(recuo_batch_queue_next(queue, integer(ev, "at"), &next), RECUO_OK);
                check_json(next_json(&next), field(ev, "expect"), name, "event", i);
                if (next.kind == RECUO_BATCH_NEXT_START) {
                    const cJSON *r = cJSON_GetArrayItem(requests, (int)next.index);
                    const char *method = text(r, "method");
                    const char *url = text(r, "url");
                    recuo_attempts *a = NULL;
                    CHECK_STATUS(recuo_attempts_new(next.policy, &a), RECUO_OK);
                    CHECK_STATUS(
                        recuo_attempts_set_request(a, method, strlen(method), url, strlen(url)),
                        RECUO_OK);
                    CHECK_STATUS(recuo_attempts_set_records(a, RECUO_LEVEL_DEBUG), RECUO_OK);
                    CHECK_STATUS(recuo_attempts_set_stats_recorder(a, stats), RECUO_OK);
                    ops[next.index] = a;
                } else if (next.kind == RECUO_BATCH_NEXT_NOT_STARTED) {
                    ends[next.index] = (recuo_batch_result){
                        RECUO_BATCH_NOT_STARTED, next.reason, 0, false, false, next.stopped_by};
                    ended[next.index] = true;
                    cJSON_AddItemToArray(progress, ended_json(queue, next.index, &ends[next.index]));
                }
                recuo_policy_free(next.policy);
            } else if (strcmp(what, "finished") == 0) {
                recuo_report r;
                CHECK_STATUS(recuo_attempts_report(ops[n], &r, NULL, 0, NULL), RECUO_OK);
                CHECK_STATUS(recuo_attempts_batch_result(ops[n], false, &ends[n]), RECUO_OK);
                CHECK_EQ_U64(ends[n].attempts, r.attempts);
                ended[n] = true;
                bool stops = false;
                CHECK_STATUS(recuo_batch_queue_finished(queue, n, r.reason, &stops), RECUO_OK);
                cJSON_AddItemToArray(progress, ended_json(queue, n, &ends[n]));
                cJSON *got = cJSON_CreateObject();
                cJSON_AddBoolToObject(got, "stops", stops);
                check_json(got, field(ev, "expect"), name, "event", i);
            } else if (strcmp(what, "stop_queue") == 0) {
                CHECK_STATUS(recuo_attempts_stop_queue(ops[n], recuo_batch_queue_stopped(queue)),
                             RECUO_OK);
            } else if (op != NULL) {
                recuo_step step;
                /* A start at `at` is at unix_ms + at on the wall clock. */
                const cJSON *at = cJSON_GetObjectItemCaseSensitive(ev, "at");
                int64_t wall = unix_ms + (at != NULL ? (int64_t)integer(ev, "at") : 0);
                if (event(ops[n], ev, wall, &step, NULL, name, i) == STEP) {
                    check_json(step_json(&step), field(ev, "expect"), name, "event", i);
                }
            } else {
                fprintf(stderr, "%s: unknown event %s\n", name, what);
                exit(2);
            }
            i++;
        }
        cJSON *results = cJSON_CreateArray();
        for (size_t n = 0; n < len; n++) {
            CHECK_CTX(ended[n], "%s: operation %zu never ended", name, n);
            if (ended[n]) {
                cJSON_AddItemToArray(results, end_json(&ends[n]));
            }
        }
        check_json(results, field(b, "results"), name, "results", 0);
        check_json(progress, field(b, "progress"), name, "progress", 0);
        cJSON *records = cJSON_CreateObject();
        for (size_t n = 0; n < len; n++) {
            if (ops[n] != NULL) {
                char key[24];
                snprintf(key, sizeof key, "%zu", n);
                cJSON_AddItemToObject(records, key, records_json(ops[n]));
                recuo_attempts_free(ops[n]);
            }
        }
        cJSON_AddItemToObject(records, "queue", records_of(queue, poll_queue));
        check_json(records, field(b, "records"), name, "records", 0);
        check_json(stats_json(stats), field(b, "stats"), name, "stats", 0);
        recuo_batch_queue_free(queue);
        recuo_stats_recorder_free(stats);
        batches++;
    }
    return batches;
}

/* Each record polled from the machine has its telemetry: the operation's number (the same
 * on every record of it), the span and the points. */
static void record_telemetry(void) {
    recuo_policy *p = recuo_policy_new();
    recuo_attempts *a = NULL;
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_records(a, RECUO_LEVEL_DEBUG), RECUO_OK);
    char json[4096];
    size_t written = 99;
    CHECK_STATUS(recuo_attempts_record_telemetry(a, json, sizeof json, &written), RECUO_OK);
    CHECK(json[0] == '\0' && written == 0);
    recuo_step s;
    CHECK_STATUS(recuo_attempts_start(a, 0, 1000, &s), RECUO_OK);
    recuo_outcome ok = {RECUO_OUTCOME_STATUS, 200, 0};
    CHECK_STATUS(recuo_attempts_responded(a, 40, &ok, NULL, 0, &s), RECUO_OK);
    CHECK_EQ_U64(s.kind, RECUO_STEP_DONE);
    char line[1024];
    recuo_level level;
    double operation = -1;
    for (int i = 0; i < 2; i++) {
        CHECK_STATUS(recuo_attempts_poll_record(a, &level, line, sizeof line, NULL), RECUO_OK);
        CHECK_STATUS(recuo_attempts_record_telemetry(a, json, sizeof json, &written), RECUO_OK);
        cJSON *t = cJSON_Parse(json);
        CHECK_CTX(t != NULL && written == strlen(json), "%s", json);
        const cJSON *span = cJSON_GetObjectItemCaseSensitive(t, "span");
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(span, "name"));
        CHECK_CTX(name != NULL && strcmp(name, i == 0 ? "recuo.attempt" : "recuo.operation") == 0,
                  "%s", json);
        double op = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "operation"));
        CHECK_CTX(op >= 1 && (i == 0 || op == operation), "%s", json);
        operation = op;
        cJSON_Delete(t);
    }
    CHECK_STATUS(recuo_attempts_poll_record(a, &level, line, sizeof line, NULL), RECUO_OK);
    CHECK(level == RECUO_LEVEL_NONE);
    CHECK_STATUS(recuo_attempts_record_telemetry(a, json, sizeof json, NULL), RECUO_OK);
    CHECK(json[0] == '\0');
    CHECK_STATUS(recuo_attempts_record_telemetry(NULL, json, sizeof json, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_batch_queue_record_telemetry(NULL, json, sizeof json, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    recuo_attempts_free(a);
    recuo_policy_free(p);
}

/* The step API's arguments are checked before anything changes. */
static void bad_arguments(void) {
    recuo_policy *p = recuo_policy_new();
    recuo_attempts *a = NULL;
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    recuo_step s;
    CHECK_STATUS(recuo_attempts_start(NULL, 0, 0, &s), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_set_records(a, 9), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_attempts_stop_queue(a, RECUO_GIVE_UP_NONE), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    CHECK_EQ_U64(s.kind, RECUO_STEP_CALL);
    recuo_outcome bad = {RECUO_OUTCOME_TRANSPORT, 0, 99};
    CHECK_STATUS(recuo_attempts_responded(a, 1, &bad, NULL, 0, &s), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_attempts_responded(a, 1, NULL, NULL, 0, &s), RECUO_ERR_NULL_ARGUMENT);
    recuo_verdict none = {0, 0, 0, 0};
    CHECK_STATUS(recuo_attempts_judged(a, 1, &none, &s), RECUO_ERR_INVALID_ENUM);
    /* Out of turn: the machine repeats the step it waits on. */
    CHECK_STATUS(recuo_attempts_slept(a, 1, &s), RECUO_OK);
    CHECK_EQ_U64(s.kind, RECUO_STEP_CALL);
    char line[16];
    recuo_level level = RECUO_LEVEL_WARNING;
    CHECK_STATUS(recuo_attempts_poll_record(a, &level, line, sizeof line, NULL), RECUO_OK);
    CHECK(level == RECUO_LEVEL_NONE && line[0] == '\0');
    CHECK_STATUS(recuo_attempts_poll_record(a, NULL, line, sizeof line, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    recuo_attempts_free(a);
    recuo_batch_queue *q = NULL;
    CHECK_STATUS(recuo_batch_queue_new(NULL, 1, 0, false, 0, false, NULL, &q),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_batch_queue_new(p, 1, 0, false, 0, false, NULL, &q), RECUO_OK);
    CHECK_STATUS(recuo_batch_queue_finished(q, 0, 99, NULL), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_batch_queue_stop(q, RECUO_GIVE_UP_NONE), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_batch_queue_next(q, 0, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_EQ_U64(recuo_batch_queue_stopped(NULL), RECUO_GIVE_UP_NONE);
    CHECK(strcmp(recuo_step_kind_name(0), "unknown") == 0);
    CHECK(strcmp(recuo_level_name(RECUO_LEVEL_WARNING), "warning") == 0);
    /* The records are set before the queue hands anything out. */
    recuo_request_line bad_method = {"G\xffT", 3, "https://x.example/", 18};
    CHECK_STATUS(recuo_batch_queue_set_records(q, &bad_method, 1, 0), RECUO_ERR_NOT_UTF8);
    CHECK_STATUS(recuo_batch_queue_set_records(q, NULL, 1, 0), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_batch_queue_set_records(NULL, NULL, 0, 0), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_batch_queue_poll_record(q, NULL, line, sizeof line, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_batch_queue_poll_record(q, &level, line, sizeof line, NULL), RECUO_OK);
    CHECK(level == RECUO_LEVEL_NONE && line[0] == '\0');
    recuo_batch_next n;
    CHECK_STATUS(recuo_batch_queue_next(q, 0, &n), RECUO_OK);
    recuo_policy_free(n.policy);
    CHECK_STATUS(recuo_batch_queue_set_records(q, NULL, 0, 0), RECUO_ERR_ALREADY_STARTED);
    recuo_batch_queue_free(q);

    /* The new steps and rules. */
    bool b = false;
    CHECK_STATUS(recuo_success_needs_machine(NULL, false, 9, &b), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_success_needs_machine(NULL, false, RECUO_LEVEL_NONE, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    recuo_attempt_pool *pool = NULL;
    CHECK_STATUS(recuo_loop_pool_choose(NULL, 3, false, false, &pool, &b, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK(pool == NULL);
    CHECK(!recuo_gate_is_remote(NULL));
    recuo_gate *g = recuo_gate_new();
    CHECK(!recuo_gate_is_remote(g));
    recuo_gate_free(g);
    CHECK_EQ_U64(RECUO_GATE_POLL_MS, 5);
    uint64_t t0 = recuo_monotonic_ms();
    CHECK(t0 <= recuo_monotonic_ns() / 1000000u && recuo_monotonic_ms() >= t0);
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    uint64_t wait_ms = 7;
    CHECK_STATUS(recuo_attempts_poll_gate(a, 0, NULL, &s), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_poll_gate(a, 0, &wait_ms, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_EQ_U64(wait_ms, 7);
    /* No gate: a look lets the attempt through at once (and starts the machine). */
    CHECK_STATUS(recuo_attempts_poll_gate(a, 0, &wait_ms, &s), RECUO_OK);
    CHECK(wait_ms == 0 && s.kind == RECUO_STEP_CALL);
    CHECK_STATUS(recuo_attempts_poll_gate(a, 0, &wait_ms, &s), RECUO_OK);
    CHECK(wait_ms == 0 && s.kind == RECUO_STEP_CALL);
    recuo_outcome bad_seen = {RECUO_OUTCOME_TRANSPORT, 0, 99};
    recuo_outcome ok_seen = {RECUO_OUTCOME_STATUS, 503, 0};
    CHECK_STATUS(recuo_attempts_failed_noted(a, 1, &bad_seen, NULL, 0, NULL, NULL, 0, &s),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_attempts_failed_noted(a, 1, NULL, NULL, 0, &ok_seen, NULL, 2, &s),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_failed_noted(a, 1, NULL, NULL, 0, &ok_seen, NULL, 0, &s),
                 RECUO_OK);
    CHECK_EQ_U64(s.kind, RECUO_STEP_CLASSIFY);
    recuo_verdict give_up = {RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_PERMANENT, RECUO_WAIT_NONE, 0};
    CHECK_STATUS(recuo_attempts_judged_seen(a, 1, &none, &ok_seen, NULL, 0, &s),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_attempts_judged_seen(a, 1, &give_up, &bad_seen, NULL, 0, &s),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_attempts_judged_seen(a, 1, &give_up, NULL, NULL, 0, &s), RECUO_OK);
    CHECK(s.kind == RECUO_STEP_GAVE_UP && s.reason == RECUO_GIVE_UP_PERMANENT);
    recuo_batch_result r;
    CHECK_STATUS(recuo_attempts_batch_result(a, false, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_batch_result(NULL, false, &r), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_batch_result(a, true, &r), RECUO_OK);
    CHECK(r.kind == RECUO_BATCH_GAVE_UP && r.attempts == 1 && r.gate_error);
    recuo_attempts_free(a);
    /* A give-up before any attempt is an operation never started — unless its gate failed. */
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_cancel(a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    CHECK(s.kind == RECUO_STEP_GAVE_UP && s.reason == RECUO_GIVE_UP_CANCELLED);
    CHECK_STATUS(recuo_attempts_batch_result(a, false, &r), RECUO_OK);
    CHECK(r.kind == RECUO_BATCH_NOT_STARTED && r.reason == RECUO_GIVE_UP_CANCELLED &&
          r.attempts == 0 && !r.gate_error);
    CHECK_STATUS(recuo_attempts_batch_result(a, true, &r), RECUO_OK);
    CHECK(r.kind == RECUO_BATCH_GAVE_UP && r.gate_error);
    recuo_attempts_free(a);
    /* A first attempt made before the machine: started once, then the step it waits on. */
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start_after_first(NULL, 0, 0, &s), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_start_after_first(a, 5, 0, &s), RECUO_OK);
    CHECK(s.kind == RECUO_STEP_CALL && s.attempt == 0);
    CHECK_STATUS(recuo_attempts_succeeded(a, 6, &s), RECUO_OK);
    CHECK_EQ_U64(s.kind, RECUO_STEP_DONE);
    CHECK_STATUS(recuo_attempts_batch_result(a, false, &r), RECUO_OK);
    CHECK(r.kind == RECUO_BATCH_SUCCEEDED && r.reason == RECUO_GIVE_UP_NONE && r.attempts == 1);
    recuo_attempts_free(a);
    recuo_policy_free(p);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTORS_DIR\n", argv[0]);
        return 2;
    }
    char *json = read_file(argv[1], "loops.json");
    cJSON *doc = parse(json, "loops.json");
    int scenarios = operation_scenarios(doc);
    int queues = queue_scenarios(doc);
    int pools = pool_cases(doc);
    int successes = success_cases(doc);
    int waits = wait_cases(doc);
    int batches = batch_scenarios(doc);
    CHECK_CTX(pools == cJSON_GetArraySize(field(doc, "pools")) && pools >= 1, "%d pools", pools);
    CHECK_CTX(successes == cJSON_GetArraySize(field(doc, "success_needs_machine")) &&
                  successes >= 1,
              "%d success cases", successes);
    CHECK_CTX(waits == cJSON_GetArraySize(field(doc, "wait_ms_from_ns")) && waits >= 1,
              "%d waits", waits);
    CHECK_CTX(batches == cJSON_GetArraySize(field(doc, "batches")) && batches >= 1,
              "%d batches", batches);
    CHECK_CTX(scenarios == cJSON_GetArraySize(field(doc, "scenarios")) && scenarios >= 12,
              "%d scenarios", scenarios);
    CHECK_CTX(queues == cJSON_GetArraySize(field(doc, "queues")) && queues >= 1, "%d queues",
              queues);
    bad_arguments();
    record_telemetry();
    cJSON_Delete(doc);
    free(json);
    printf("test_loops: %d scenarios, %d queues, %d pools, %d success cases, %d waits, "
           "%d batches\n",
           scenarios, queues, pools, successes, waits, batches);
    return check_summary(argv[0]);
}
