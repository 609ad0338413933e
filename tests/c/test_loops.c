/*
 * test_loops.c — the loop vectors (tests/vectors/loops.json) through the C step API: every
 * scenario drives one operation machine (recuo_attempts_*) event by event, and every queue
 * scenario one batch queue (recuo_batch_queue_*), exactly as core/tests/loops.rs drives the
 * core. Each step, the report, the stats and the records ([level, JSON line], in order) must
 * be the ones written there, to the millisecond and the byte.
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

static recuo_gate *gate_of(const cJSON *g) {
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
    if (cJSON_GetObjectItemCaseSensitive(g, "limit") != NULL) {
        recuo_concurrency_limit *limit = NULL;
        CHECK_STATUS(recuo_concurrency_limit_new((uint32_t)integer(g, "limit"), &limit), RECUO_OK);
        CHECK_STATUS(recuo_gate_set_limit(gate, limit), RECUO_OK);
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

/* Runs one event: false for one that answers no step (cancel, stop_queue). */
static bool event(recuo_attempts *a, const cJSON *ev, int64_t unix_ms, recuo_step *step) {
    const char *what = text(ev, "do");
    const cJSON *at_item = cJSON_GetObjectItemCaseSensitive(ev, "at");
    uint64_t at = at_item != NULL ? integer(ev, "at") : 0;
    if (strcmp(what, "start") == 0) {
        CHECK_STATUS(recuo_attempts_start(a, at, unix_ms, step), RECUO_OK);
    } else if (strcmp(what, "enter") == 0) {
        CHECK_STATUS(recuo_attempts_entered(a, at, cJSON_IsTrue(field(ev, "passed")), step),
                     RECUO_OK);
    } else if (strcmp(what, "respond") == 0 || strcmp(what, "transport") == 0) {
        recuo_outcome outcome = {RECUO_OUTCOME_STATUS, 0, 0};
        recuo_header headers[16];
        size_t count = 0;
        if (strcmp(what, "respond") == 0) {
            outcome.status = (uint16_t)integer(ev, "status");
            const cJSON *pair;
            cJSON_ArrayForEach(pair, field(ev, "headers")) {
                if (count == sizeof headers / sizeof headers[0]) {
                    fprintf(stderr, "too many headers\n");
                    exit(2);
                }
                const char *name = cJSON_GetArrayItem(pair, 0)->valuestring;
                const char *value = cJSON_GetArrayItem(pair, 1)->valuestring;
                headers[count++] = (recuo_header){name, strlen(name), value, strlen(value)};
            }
        } else {
            outcome.kind = RECUO_OUTCOME_TRANSPORT;
            outcome.transport = constant(recuo_transport_name, text(ev, "kind"));
        }
        CHECK_STATUS(recuo_attempts_responded(a, at, &outcome, headers, count, step), RECUO_OK);
    } else if (strcmp(what, "fail") == 0) {
        CHECK_STATUS(recuo_attempts_failed(a, at, step), RECUO_OK);
    } else if (strcmp(what, "succeed") == 0) {
        CHECK_STATUS(recuo_attempts_succeeded(a, at, step), RECUO_OK);
    } else if (strcmp(what, "judge") == 0) {
        recuo_verdict verdict = verdict_of(field(ev, "verdict"));
        CHECK_STATUS(recuo_attempts_judged(a, at, &verdict, step), RECUO_OK);
    } else if (strcmp(what, "slept") == 0) {
        CHECK_STATUS(recuo_attempts_slept(a, at, step), RECUO_OK);
    } else if (strcmp(what, "cancel") == 0) {
        CHECK_STATUS(recuo_attempts_cancel(a), RECUO_OK);
        return false;
    } else if (strcmp(what, "stop_queue") == 0) {
        uint32_t reason = constant(recuo_give_up_reason_name, text(ev, "reason"));
        CHECK_STATUS(recuo_attempts_stop_queue(a, reason), RECUO_OK);
        return false;
    } else {
        fprintf(stderr, "unknown event %s\n", what);
        exit(2);
    }
    return true;
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

/* Every record the machine kept, as [level, line]; a buffer too small first, to check that
 * the record waits for a larger one. */
static cJSON *records_json(recuo_attempts *a) {
    cJSON *list = cJSON_CreateArray();
    for (;;) {
        char small[8];
        recuo_level level = RECUO_LEVEL_NONE;
        recuo_status rc = recuo_attempts_poll_record(a, &level, small, sizeof small, NULL);
        if (rc == RECUO_OK && level == RECUO_LEVEL_NONE) {
            CHECK(small[0] == '\0');
            break;
        }
        CHECK_STATUS(rc, RECUO_ERR_BUFFER_TOO_SMALL);
        char line[4096];
        size_t written = 0;
        CHECK_STATUS(recuo_attempts_poll_record(a, &level, line, sizeof line, &written), RECUO_OK);
        CHECK_EQ_U64(written, strlen(line));
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateString(recuo_level_name(level)));
        cJSON_AddItemToArray(pair, cJSON_CreateString(line));
        cJSON_AddItemToArray(list, pair);
    }
    return list;
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
        recuo_gate *gate = gate_of(field(sc, "gate"));
        if (gate != NULL) {
            CHECK_STATUS(recuo_attempts_set_gate(a, gate), RECUO_OK);
            recuo_gate_free(gate);
        }
        const cJSON *pool = field(sc, "pool");
        if (!cJSON_IsNull(pool)) {
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
            if (event(a, ev, unix_ms, &step)) {
                check_json(step_json(&step), field(ev, "expect"), name, "event", i);
                last = step;
            }
            i++;
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
    recuo_batch_queue_free(q);
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
    CHECK_CTX(scenarios == cJSON_GetArraySize(field(doc, "scenarios")) && scenarios >= 12,
              "%d scenarios", scenarios);
    CHECK_CTX(queues == cJSON_GetArraySize(field(doc, "queues")) && queues >= 1, "%d queues",
              queues);
    bad_arguments();
    cJSON_Delete(doc);
    free(json);
    printf("test_loops: %d scenarios, %d queues\n", scenarios, queues);
    return check_summary(argv[0]);
}
