/*
 * records.c — attempt and result records from a C program with its own HTTP client.
 *
 * The program drives the state machine (recuo_attempts_*) as examples/c/attempts.c does, and
 * after each decision asks recuo for the attempt's record: one JSON line, redacted by the
 * core before it exists — the password and API key in the URL, the e-mail in its path, the
 * server's cookie and the Authorization echoed back never reach the log. Then it asks who
 * answered the error page. The "HTTP client" is a script and the clocks are virtual, so the
 * output is the same on every run.
 *
 * Build: cc -std=c11 records.c $(pkg-config --cflags --libs recuo)   (or: make example-records-c)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recuo.h"

#define WALL0 INT64_C(1764498365000) /* 2025-11-30T10:26:05Z: the virtual wall clock's start */

static uint64_t clock_ms; /* the virtual monotonic clock */

/* Prints a record, growing the buffer if the line does not fit. */
static int print_record(recuo_status (*build)(void *, char *, size_t, size_t *), void *args) {
    size_t cap = 128, written = 0;
    for (;;) {
        char *line = malloc(cap);
        if (line == NULL) {
            return 1;
        }
        recuo_status rc = build(args, line, cap, &written);
        if (rc == RECUO_OK) {
            printf("%s\n", line);
        }
        free(line);
        if (rc != RECUO_ERR_BUFFER_TOO_SMALL) {
            return rc != RECUO_OK;
        }
        cap *= 2; /* a record has no bound: try again, larger */
    }
}

struct attempt_args {
    int64_t start;
    uint64_t elapsed;
    const char *url;
    const recuo_outcome *outcome;
    const recuo_header *headers;
    size_t n;
    const recuo_verdict *verdict;
    const recuo_decision *decision;
};

static recuo_status attempt_json(void *p, char *buf, size_t len, size_t *written) {
    const struct attempt_args *a = p;
    return recuo_record_attempt_json(a->start, a->elapsed, "POST", 4, a->url, strlen(a->url),
                                     a->outcome, a->headers, a->n, a->verdict, a->decision, buf,
                                     len, written);
}

struct result_args {
    int64_t start;
    const char *url;
    const recuo_report *report;
};

static recuo_status result_json(void *p, char *buf, size_t len, size_t *written) {
    const struct result_args *r = p;
    return recuo_record_result_json(r->start, "POST", 4, r->url, strlen(r->url), r->report, buf,
                                    len, written);
}

int main(void) {
    const char *url = "https://app:pa55word@api.example.com/v1/customers/ana.souza@example.com"
                      "/payments?api_key=AKx9fj3kd&amount=42";
    /* What the fake server answers: an HTML page from a CDN, a 429, then the API's 201. */
    recuo_header cdn_page[] = {
        {"CF-Ray", 6, "8a1b2c3d4e5f-GRU", 16},
        {"Server", 6, "cloudflare", 10},
        {"Content-Type", 12, "text/html", 9},
        {"Set-Cookie", 10, "__cf_bm=SECRET", 14},
    };
    recuo_header throttled[] = {
        {"Retry-After", 11, "2", 1},
        {"X-RateLimit-Remaining", 21, "0", 1},
        {"X-Request-Id", 12, "req-9f2", 7},
        {"Authorization", 13, "Bearer ECHOED", 13},
    };
    recuo_header created[] = {
        {"Content-Type", 12, "application/json", 16},
        {"X-Request-Id", 12, "req-a71", 7},
    };
    const struct {
        uint16_t status;
        const recuo_header *headers;
        size_t n;
        uint64_t took_ms;
    } script[] = {{503, cdn_page, 4, 35}, {429, throttled, 4, 20}, {201, created, 2, 80}};

    recuo_policy *policy = recuo_policy_new();
    recuo_attempts *a = NULL;
    if (policy == NULL || recuo_attempts_new_seeded(policy, 42, &a) != RECUO_OK) {
        return 1;
    }
    int failed = 0;
    recuo_decision d;
    recuo_attempts_begin(a, clock_ms, &d);
    while (d.kind == RECUO_DECISION_PROCEED) {
        uint32_t i = d.next_attempt;
        int64_t started = WALL0 + (int64_t)clock_ms;
        uint64_t sent_at = clock_ms;
        clock_ms += script[i].took_ms; /* the request */
        recuo_outcome outcome = {RECUO_OUTCOME_STATUS, script[i].status, 0};
        recuo_verdict v;
        recuo_classify(policy, &outcome, "POST", 4, true, script[i].headers, script[i].n,
                       WALL0 + (int64_t)clock_ms, &v);
        recuo_attempts_next(a, &v, clock_ms, &d);
        struct attempt_args args = {started, clock_ms - sent_at, url, &outcome,
                                    script[i].headers, script[i].n, &v, &d};
        failed |= print_record(attempt_json, &args);

        if (script[i].status >= 500) {
            recuo_who_answered_result who;
            recuo_who_answered(script[i].headers, script[i].n, "application/json", 16, &who);
            printf("  who answered the %u: %s (%s confidence)\n", (unsigned)script[i].status,
                   recuo_origin_name(who.origin), recuo_confidence_name(who.confidence));
        }
        if (d.kind == RECUO_DECISION_RETRY) {
            clock_ms += d.delay_ms; /* a real program sleeps here */
            recuo_attempts_begin(a, clock_ms, &d);
        }
    }
    recuo_report report;
    recuo_attempts_report(a, &report, NULL, 0, NULL);
    struct result_args result = {WALL0, url, &report};
    failed |= print_record(result_json, &result);

    recuo_attempts_free(a);
    recuo_policy_free(policy);
    return failed || d.kind != RECUO_DECISION_DONE;
}
