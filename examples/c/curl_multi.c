/*
 * curl_multi.c — many retried transfers in one thread, none blocking another: a curl_multi
 * event loop that drives one recuo operation machine (recuo_attempts_*) per transfer, with
 * the pieces of recuo_curl.h. A transfer the machine tells to wait (a 429's Retry-After, a
 * backoff) leaves the multi handle until its time comes, while the others go on: the loop
 * sleeps only in curl_multi_poll, until the next transfer finishes or the next wait ends.
 *
 * Usage: curl_multi BASE_URL [N]   (N transfers, default 12: POST BASE_URL/orders/<i>)
 * Against `recuo serve --allowance 600/min --burst 4 --latency 300ms`, the first 4 go
 * through and the others are refused with a 429 and Retry-After: 1; they wait while the 4
 * are in flight, then come back with the same Idempotency-Key. Prints one line per
 * transfer and a summary; exits 0 when every transfer succeeded.
 *
 * Build: cc -std=c11 curl_multi.c $(pkg-config --cflags --libs recuo libcurl)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recuo_curl.h"

enum state { IN_FLIGHT, WAITING, FINISHED };

struct transfer {
    int index;
    CURL *easy;
    recuo_attempts *machine;
    struct curl_slist *headers; /* Content-Type plus the operation's Idempotency-Key */
    recuo_step step;
    enum state state;
    uint64_t wake_ms; /* WAITING: when the machine's delay ends */
    char body[512];   /* the response body (the last attempt's) */
    size_t body_len;
    char key[RECUO_IDEMPOTENCY_KEY_SIZE];
};

struct loop {
    CURLM *multi;
    int in_flight, waiting, finished, succeeded, attempts;
    int most_in_flight_while_waiting, waiting_then;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *user_data) {
    struct transfer *t = user_data;
    size_t n = size * nmemb, room = sizeof t->body - 1 - t->body_len;
    size_t take = n < room ? n : room;
    memcpy(t->body + t->body_len, data, take);
    t->body_len += take;
    t->body[t->body_len] = '\0';
    return n;
}

/* Keeps the moment when the most transfers were in flight and waiting at once (the larger
 * of the two smaller numbers). */
static void count(struct loop *l) {
    int both = l->in_flight < l->waiting ? l->in_flight : l->waiting;
    int best = l->most_in_flight_while_waiting < l->waiting_then ? l->most_in_flight_while_waiting
                                                                 : l->waiting_then;
    if (both > best) {
        l->most_in_flight_while_waiting = l->in_flight;
        l->waiting_then = l->waiting;
    }
}

/* Does what the machine's step says: start the attempt, wait, or finish. */
static void follow(struct loop *l, struct transfer *t) {
    switch (t->step.kind) {
    case RECUO_STEP_CALL:
        if (t->step.attempt > 0) {
            t->body_len = 0; /* the body of a retry replaces the last one */
            t->body[0] = '\0';
        }
        recuo_curl_set_timeout(t->easy, &t->step, 10000);
        curl_multi_add_handle(l->multi, t->easy);
        t->state = IN_FLIGHT;
        l->in_flight++;
        l->attempts++;
        break;
    case RECUO_STEP_SLEEP:
        t->wake_ms = recuo_monotonic_ms() + t->step.delay_ms;
        t->state = WAITING;
        l->waiting++;
        break;
    case RECUO_STEP_DONE:
    case RECUO_STEP_GAVE_UP: {
        long status = 0;
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
        recuo_report report;
        recuo_attempts_report(t->machine, &report, NULL, 0, NULL);
        printf("order %2d: HTTP %ld after %u attempt(s)%s%s (key %.8s...)\n", t->index, status,
               (unsigned)report.attempts, t->step.kind == RECUO_STEP_DONE ? "" : ", gave up: ",
               t->step.kind == RECUO_STEP_DONE ? "" : recuo_give_up_reason_name(t->step.reason),
               t->key);
        t->state = FINISHED;
        l->finished++;
        l->succeeded += t->step.kind == RECUO_STEP_DONE;
        break;
    }
    default: /* ENTER comes only with a gate, CLASSIFY never after _responded */
        recuo_attempts_cancel(t->machine);
        recuo_attempts_slept(t->machine, recuo_monotonic_ms(), &t->step);
        follow(l, t);
        break;
    }
    count(l);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: curl_multi BASE_URL [N]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 12;
    if (n < 1 || n > 1000) {
        fprintf(stderr, "curl_multi: N must be 1 to 1000\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    recuo_policy *policy = recuo_policy_new_guide_b(); /* 5 attempts, a 30 s deadline */
    recuo_policy_set_spread_ms(policy, 200);
    struct loop l = {.multi = curl_multi_init()};
    struct transfer *all = calloc((size_t)n, sizeof *all);
    if (l.multi == NULL || all == NULL) {
        return 1;
    }
    for (int i = 0; i < n; i++) {
        struct transfer *t = &all[i];
        char url[512];
        snprintf(url, sizeof url, "%s/orders/%d", argv[1], i);
        t->index = i;
        t->easy = curl_easy_init();
        curl_easy_setopt(t->easy, CURLOPT_URL, url);
        curl_easy_setopt(t->easy, CURLOPT_COPYPOSTFIELDS, "{\"item\":7}");
        curl_easy_setopt(t->easy, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(t->easy, CURLOPT_WRITEDATA, t);
        curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
        curl_easy_setopt(t->easy, CURLOPT_NOSIGNAL, 1L);
        /* One machine per operation; its key is made once and sent with every attempt. */
        recuo_attempts_new(policy, &t->machine);
        recuo_attempts_set_request(t->machine, "POST", 4, url, strlen(url));
        struct curl_slist *mine = curl_slist_append(NULL, "Content-Type: application/json");
        recuo_request_plan plan; /* a POST: recuo's key, made once, on every attempt */
        recuo_curl_plan(t->machine, "POST", mine, -1, &plan);
        recuo_curl_key_headers(policy, t->machine, &plan, mine, t->key, &t->headers);
        curl_slist_free_all(mine);
        curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, t->headers);
        recuo_attempts_start(t->machine, recuo_monotonic_ms(), recuo_now_ms(), &t->step);
        follow(&l, t);
    }
    while (l.finished < n) {
        int running = 0;
        curl_multi_perform(l.multi, &running);
        /* Transfers that finished: the machine judges each and answers its next step. */
        CURLMsg *msg;
        int left = 0;
        while ((msg = curl_multi_info_read(l.multi, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE) {
                continue;
            }
            struct transfer *t = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
            CURLcode code = msg->data.result;
            curl_multi_remove_handle(l.multi, t->easy);
            l.in_flight--;
            recuo_curl_responded(t->machine, t->easy, code, &t->step);
            follow(&l, t);
        }
        /* Waits that are over: the machine answers the retry (or a give-up). */
        uint64_t now = recuo_monotonic_ms(), next = now + 1000;
        for (int i = 0; i < n; i++) {
            struct transfer *t = &all[i];
            if (t->state == WAITING && t->wake_ms <= now) {
                l.waiting--;
                recuo_attempts_slept(t->machine, now, &t->step);
                follow(&l, t);
            }
            if (t->state == WAITING && t->wake_ms < next) {
                next = t->wake_ms;
            }
        }
        if (l.finished < n) {
            now = recuo_monotonic_ms();
            int timeout = next > now ? (int)(next - now) : 0;
            curl_multi_poll(l.multi, NULL, 0, timeout, NULL);
        }
    }
    printf("%d transfers: %d succeeded, %d gave up, %d attempts; %d in flight while %d waited\n",
           n, l.succeeded, n - l.succeeded, l.attempts, l.most_in_flight_while_waiting,
           l.waiting_then);
    for (int i = 0; i < n; i++) {
        curl_easy_cleanup(all[i].easy);
        curl_slist_free_all(all[i].headers);
        recuo_attempts_free(all[i].machine);
    }
    free(all);
    curl_multi_cleanup(l.multi);
    recuo_policy_free(policy);
    curl_global_cleanup();
    return l.succeeded == n ? 0 : 1;
}
