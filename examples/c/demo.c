/*
 * demo.c — recuo from C: guide B's delays for a few Retry-After values, and guide A's loop
 * succeeding on the third attempt.
 */
#include <stdio.h>

#include "recuo.h"

/* Sun, 06 Nov 1994 08:49:37 GMT: a fixed "now", so the dates below mean what they say. */
#define NOW_MS 784111777000LL

static int flaky_operation(void *user_data) {
    int *attempt = user_data;
    ++*attempt;
    if (*attempt < 3) {
        printf("  attempt %d: failed with 503\n", *attempt);
        return 503;
    }
    printf("  attempt %d: succeeded\n", *attempt);
    return 0;
}

static bool worth_retrying(int error, void *user_data) {
    (void)user_data;
    return error == 429 || error >= 500;
}

int main(void) {
    printf("recuo %s (C)\n\n", recuo_version());

    printf("guide B: recuo_retry_delay_ms(retry_after, attempt 0, now)\n");
    const struct {
        const char *label;
        const char *retry_after;
    } headers[] = {
        {"\"12\"", "12"},
        {"a date 30 s after now", "Sun, 06 Nov 1994 08:50:07 GMT"},
        {"a date in the past", "Sun, 06 Nov 1994 08:00:00 GMT"},
        {"\"soon\" (invalid)", "soon"},
        {"no header (NULL)", NULL},
        {"\"99999999999999999999\"", "99999999999999999999"},
    };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        double ms = recuo_retry_delay_ms(headers[i].retry_after, 0, NOW_MS);
        printf("  %-26s -> %.0f ms\n", headers[i].label, ms);
    }

    printf("\nguide A: recuo_com_retry(task, 5 attempts, base 10 ms, max 50 ms)\n");
    int attempt = 0, last_error = 0;
    uint32_t attempts = 0;
    recuo_status rc = recuo_com_retry(flaky_operation, &attempt, 5, 10, 50, worth_retrying,
                                      &last_error, &attempts);
    char message[128];
    recuo_status_message(rc, message, sizeof message, NULL);
    printf("  -> %s (%s) after %u attempts\n", recuo_status_name(rc), message,
           (unsigned)attempts);
    return rc == RECUO_OK ? 0 : 1;
}
