/*
 * attempts.c — recuo's operation machine driven by a C program with its own HTTP client that
 * classifies each response itself (recuo_classify, then recuo_attempts_succeeded, or
 * recuo_attempts_failed and recuo_attempts_judged); examples/c/records.c hands the machine
 * the responses instead.
 *
 * recuo decides (retry? after how long? give up, why?); the program does the I/O. Here the
 * "HTTP client" is a script of fake responses and the clock is virtual, so the example runs
 * in an instant and needs no network. With libcurl, fake_send() would be curl_easy_perform()
 * (CURLE_COULDNT_CONNECT -> RECUO_TRANSPORT_CONNECT, CURLE_OPERATION_TIMEDOUT ->
 * RECUO_TRANSPORT_TIMEOUT, CURLE_PEER_FAILED_VERIFICATION -> RECUO_TRANSPORT_TLS, ...), the
 * clock recuo_monotonic_ms(), and the wait a nanosleep() of step.delay_ms.
 *
 * Build: cc -std=c11 attempts.c $(pkg-config --cflags --libs recuo)   (or: make example-c)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "recuo.h"

/* One fake response: a status (0 = the transport failed as `transport` says), an optional
 * Retry-After, and how long the request took. */
struct response {
    uint16_t status;
    recuo_transport transport;
    const char *retry_after;
    uint64_t took_ms;
};

static uint64_t clock_ms; /* the virtual monotonic clock */

/* "Sends" the request with the idempotency key, and fills the outcome and headers. */
static size_t fake_send(const struct response *r, const char *key, recuo_outcome *outcome,
                        recuo_header *headers) {
    (void)key; /* a real client sends it: "Idempotency-Key: <key>" */
    clock_ms += r->took_ms;
    if (r->status == 0) {
        outcome->kind = RECUO_OUTCOME_TRANSPORT;
        outcome->transport = r->transport;
        return 0;
    }
    outcome->kind = RECUO_OUTCOME_STATUS;
    outcome->status = r->status;
    if (r->retry_after == NULL) {
        return 0;
    }
    headers[0] = (recuo_header){"Retry-After", 11, r->retry_after, strlen(r->retry_after)};
    return 1;
}

/* Runs one operation: CALL -> send -> classify -> tell the machine -> SLEEP -> CALL ...,
 * until DONE or GAVE_UP. */
static int run(const char *title, const recuo_policy *policy, const char *method,
               bool send_key, const struct response *script) {
    printf("%s\n", title);
    recuo_attempts *a = NULL;
    recuo_status rc = recuo_attempts_new_seeded(policy, 42, &a); /* seeded: same output */
    if (rc != RECUO_OK) {
        fprintf(stderr, "recuo_attempts_new: %s\n", recuo_status_name(rc));
        return 1;
    }
    char key[RECUO_IDEMPOTENCY_KEY_SIZE];
    recuo_attempts_idempotency_key(a, key, sizeof key, NULL);
    if (send_key) {
        printf("  idempotency key %s, the same on every attempt\n", key);
    }

    uint64_t start = clock_ms;
    recuo_step step;
    recuo_attempts_start(a, clock_ms, recuo_now_ms(), &step);
    while (step.kind == RECUO_STEP_CALL) {
        uint32_t attempt = step.attempt;
        const struct response *r = &script[attempt];
        uint64_t sent_at = clock_ms;
        recuo_outcome outcome = {0, 0, 0};
        recuo_header headers[1];
        size_t n = fake_send(r, key, &outcome, headers);

        recuo_verdict v;
        /* Wall clock for HTTP-dates: a real program passes recuo_now_ms(). */
        rc = recuo_classify(policy, &outcome, method, strlen(method), send_key, headers, n,
                            recuo_now_ms(), &v);
        if (rc != RECUO_OK) {
            fprintf(stderr, "recuo_classify: %s\n", recuo_status_name(rc));
            recuo_attempts_free(a);
            return 1;
        }
        if (v.verdict == RECUO_VERDICT_SUCCESS) {
            recuo_attempts_succeeded(a, clock_ms, &step);
        } else {
            recuo_attempts_failed(a, clock_ms, &step);
            if (step.kind == RECUO_STEP_CLASSIFY) { /* not when cancelled meanwhile */
                recuo_attempts_judged(a, clock_ms, &v, &step);
            }
        }

        char what[48];
        if (outcome.kind == RECUO_OUTCOME_TRANSPORT) {
            snprintf(what, sizeof what, "%s %s", method, recuo_transport_name(outcome.transport));
        } else {
            snprintf(what, sizeof what, "%s %u%s%s", method, (unsigned)outcome.status,
                     r->retry_after ? ", Retry-After: " : "", r->retry_after ? r->retry_after : "");
        }
        printf("  t=%5" PRIu64 " ms  attempt %u: %-30s %s (%s)", sent_at - start,
               (unsigned)attempt, what, recuo_verdict_kind_name(v.verdict),
               recuo_cause_name(v.cause));
        if (step.kind == RECUO_STEP_SLEEP) {
            printf(" -> wait %" PRIu64 " ms\n", step.delay_ms);
            clock_ms += step.delay_ms; /* a real program sleeps here */
            recuo_attempts_slept(a, clock_ms, &step);
        } else {
            printf("\n");
        }
    }

    recuo_report report;
    uint64_t delays[8];
    size_t nd = 0;
    recuo_attempts_report(a, &report, delays, 8, &nd);
    printf("  %s after %u attempt(s), %" PRIu64 " ms", recuo_step_kind_name(step.kind),
           (unsigned)report.attempts, report.elapsed_ms);
    if (step.kind == RECUO_STEP_GAVE_UP) {
        printf(", reason %s", recuo_give_up_reason_name(step.reason));
        if (report.has_retry_after) {
            printf(" (the server would take it %" PRIu64 " ms from now: reschedule)",
                   report.retry_after_ms);
        }
    }
    printf("\n\n");
    recuo_attempts_free(a);
    return 0;
}

int main(void) {
    printf("recuo %s: the state machine (recuo_attempts_*) with a fake HTTP client\n\n",
           recuo_version());
    recuo_policy *guide_a = recuo_policy_new();
    recuo_policy *guide_b = recuo_policy_new_guide_b();
    if (guide_a == NULL || guide_b == NULL) {
        return 1;
    }
    int failed = 0;

    static const struct response payment[] = {
        {0, RECUO_TRANSPORT_CONNECT, NULL, 30},
        {503, 0, "1", 40},
        {201, 0, NULL, 60},
    };
    failed |= run("A payment (POST with an idempotency key, guide A's policy):", guide_a, "POST",
                  true, payment);

    static const struct response no_key[] = {{0, RECUO_TRANSPORT_TIMEOUT, NULL, 5000}};
    failed |= run("The same POST without a key times out: it may have been processed.", guide_a,
                  "POST", false, no_key);

    static const struct response quota[] = {{429, 0, "3600", 20}};
    failed |= run("A read told to come back in an hour, under guide B's 30 s deadline:", guide_b,
                  "GET", false, quota);

    recuo_policy_free(guide_a);
    recuo_policy_free(guide_b);
    return failed;
}
