/*
 * records.c — attempt and result records from a C program with its own HTTP client.
 *
 * The program drives the operation machine (recuo_attempts_*) with the step API, tells it
 * each response (recuo_attempts_responded: the machine classifies it by the policy), and
 * prints the records the machine keeps (recuo_attempts_poll_record): JSON lines redacted by
 * the core before they exist — the password and API key in the URL, the e-mail in its path,
 * the server's cookie and the Authorization echoed back never reach the log. It also asks
 * who answered the error page. The "HTTP client" is a script and the clocks are virtual, so
 * the output is the same on every run.
 *
 * Build: cc -std=c11 records.c $(pkg-config --cflags --libs recuo)   (or: make example-records-c)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recuo.h"

#define WALL0 INT64_C(1764498365000) /* 2025-11-30T10:26:05Z: the virtual wall clock's start */

/* Prints the records the machine has made so far, growing the buffer when one does not fit
 * (a record has no bound: the machine keeps it for the next, larger, call). */
static int print_records(recuo_attempts *a) {
    size_t cap = 128;
    for (;;) {
        char *line = malloc(cap);
        if (line == NULL) {
            return 1;
        }
        recuo_level level = RECUO_LEVEL_NONE;
        recuo_status rc = recuo_attempts_poll_record(a, &level, line, cap, NULL);
        if (rc == RECUO_OK && level != RECUO_LEVEL_NONE) {
            printf("%s\n", line); /* a logger would log it at `level` */
        }
        free(line);
        if (rc == RECUO_ERR_BUFFER_TOO_SMALL) {
            cap *= 2;
        } else if (rc != RECUO_OK || level == RECUO_LEVEL_NONE) {
            return rc != RECUO_OK;
        }
    }
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
    recuo_attempts_set_request(a, "POST", 4, url, strlen(url));
    recuo_attempts_set_own_key(a); /* the request carries an Idempotency-Key */
    recuo_attempts_set_records(a, RECUO_LEVEL_DEBUG);
    uint64_t clock_ms = 0; /* the virtual monotonic clock */
    int failed = 0;
    recuo_step s;
    recuo_attempts_start(a, clock_ms, WALL0, &s);
    while (s.kind == RECUO_STEP_CALL || s.kind == RECUO_STEP_SLEEP) {
        if (s.kind == RECUO_STEP_SLEEP) {
            clock_ms += s.delay_ms; /* a real program sleeps here */
            recuo_attempts_slept(a, clock_ms, &s);
            continue;
        }
        uint32_t i = s.attempt;
        clock_ms += script[i].took_ms; /* the request */
        recuo_outcome outcome = {RECUO_OUTCOME_STATUS, script[i].status, 0};
        recuo_attempts_responded(a, clock_ms, &outcome, script[i].headers, script[i].n, &s);
        failed |= print_records(a);
        if (script[i].status >= 500) {
            recuo_who_answered_result who;
            recuo_who_answered(script[i].headers, script[i].n, "application/json", 16, &who);
            printf("  who answered the %u: %s (%s confidence)\n", (unsigned)script[i].status,
                   recuo_origin_name(who.origin), recuo_confidence_name(who.confidence));
        }
    }
    recuo_attempts_free(a);
    recuo_policy_free(policy);
    return failed || s.kind != RECUO_STEP_DONE;
}
