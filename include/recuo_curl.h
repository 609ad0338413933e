/*
 * recuo_curl.h — recuo around libcurl, header-only: librecuo itself never links libcurl
 * (`ldd librecuo.so` shows none), so a program that does not use libcurl pays nothing, and
 * one that does uses its own libcurl. Requires libcurl >= 7.83 (curl_easy_nextheader;
 * Debian 12 has 7.88.1). Build with `pkg-config --cflags --libs recuo libcurl`.
 *
 * recuo_curl_perform ends as buscarComRetry does in guide A,
 * "Como repetir requisições com backoff exponencial (retry)"
 * (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff):
 * a last 429 or 5xx is a failure, other responses are returned.
 *
 * Everything here drives the step API of recuo.h (`recuo_attempts_*`, the core's operation
 * machine) and adds no rule of its own: the machine classifies each attempt by the policy
 * (`recuo_attempts_responded`), decides the delays, the deadline and when to give up; the
 * request's plan (`recuo_attempts_set_plan_for_headers`) decides which idempotency key is
 * sent and whether the request counts as idempotent; the core's ending
 * (`recuo_attempts_ending`) and message (`recuo_attempts_give_up_message`) say how the end
 * surfaces. The glue only converts: a `CURLcode` to recuo's transport kinds, the response's
 * headers to `recuo_header`s; and does what libcurl needs: the idempotency header, set once
 * per operation, each attempt's `CURLOPT_TIMEOUT_MS` clipped to what is left of the deadline,
 * your callback to reset the response body before each retry, and the waits.
 *
 *   recuo_curl_perform        a retried curl_easy_perform for one easy handle (blocking)
 *   recuo_curl_transport      the CURLcode -> recuo_transport table
 *   recuo_curl_outcome        one transfer's recuo_outcome (its HTTP status, or a transport kind)
 *   recuo_curl_headers_*      the last response's headers, as recuo_headers
 *   recuo_curl_plan           the operation's request plan: the key it carries, idempotent or not
 *   recuo_curl_key_headers    your header list plus the idempotency header, as the plan says
 *   recuo_curl_set_timeout    an attempt's CURLOPT_TIMEOUT_MS, clipped to the step's timeout_ms
 *   recuo_curl_responded      a finished transfer told to the machine: the next recuo_step
 *
 * The pieces below recuo_curl_perform are what an event loop over curl_multi uses to drive
 * many machines at once without blocking: examples/c/curl_multi.c.
 *
 * Every function is `static inline`; names are prefixed `recuo_curl_`. The conventions are
 * recuo.h's: a recuo_status return, inputs before outputs, nothing written on an argument
 * error, NULL where a pointer is required gives RECUO_ERR_NULL_ARGUMENT.
 */
#ifndef RECUO_CURL_H
#define RECUO_CURL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "recuo.h"

#if LIBCURL_VERSION_NUM < 0x075300
#error "recuo_curl.h needs libcurl 7.83.0 or later (curl_easy_nextheader)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the table ------------------------------------------------------------------------- */

/*
 * The transport kind of a failed libcurl transfer: the core's one table
 * (`recuo_curl_code_transport`, shared with PHP's buscarComRetry), for a transfer that sent
 * its request:
 *
 *   COULDNT_RESOLVE_HOST, COULDNT_RESOLVE_PROXY, COULDNT_CONNECT, SSL_CONNECT_ERROR (the
 *   handshake failed before anything was sent), INTERFACE_FAILED          -> CONNECT
 *   PEER_FAILED_VERIFICATION (and 51, its number before libcurl 7.62), SSL_CERTPROBLEM,
 *   SSL_CIPHER, SSL_CACERT_BADFILE, SSL_ENGINE_*, SSL_SHUTDOWN_FAILED, SSL_CRL_BADFILE,
 *   SSL_ISSUER_ERROR, SSL_PINNEDPUBKEYNOTMATCH, SSL_INVALIDCERTSTATUS, SSL_CLIENTCERT,
 *   USE_SSL_FAILED                                                       -> TLS
 *   OPERATION_TIMEDOUT                                                   -> TIMEOUT
 *   SEND_ERROR, RECV_ERROR, GOT_NOTHING, PARTIAL_FILE, HTTP2_STREAM      -> RESET
 *   every other code                                                     -> OTHER
 *
 * (CURLE_OK is no failure: recuo_curl_outcome answers the response's status for it, and
 * reads whether the request was sent.)
 */
static inline recuo_transport recuo_curl_transport(CURLcode code) {
    return recuo_curl_code_transport((uint32_t)code, true);
}

/*
 * What the transfer on `easy` that ended with `code` came to, into `*out`:
 * - a response (CURLE_OK, or CURLE_HTTP_RETURNED_ERROR under CURLOPT_FAILONERROR): its HTTP
 *   status (CURLINFO_RESPONSE_CODE) — the machine judges 1xx-3xx a success, the rest by the
 *   policy; a transfer with no HTTP status (a file:// URL) is a success;
 * - otherwise a transport failure of recuo_curl_transport's kind, except a timeout before any
 *   byte of the request was sent (CURLINFO_REQUEST_SIZE 0: the connect timed out), which is
 *   CONNECT — the request was never sent.
 * A transfer whose body failed after the response's headers (CURLE_PARTIAL_FILE: the
 * connection closed before Content-Length bytes came; CURLE_RECV_ERROR) is the transport
 * failure it is, never a response: a GET is retried, and a POST is not (unless the request is
 * idempotent).
 */
static inline recuo_status recuo_curl_outcome(CURL *easy, CURLcode code, recuo_outcome *out) {
    if (easy == NULL || out == NULL) {
        return RECUO_ERR_NULL_ARGUMENT;
    }
    long status = 0;
    if (code == CURLE_OK || code == CURLE_HTTP_RETURNED_ERROR) {
        if (curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK) {
            status = 0;
        }
    }
    recuo_outcome o;
    memset(&o, 0, sizeof o); /* the fields a kind does not use are 0 */
    if (status > 0) {
        /* Passed as it came: recuo reads a code outside 100-599 as the x00 of its class; one
         * no uint16_t holds stays out of range. */
        o.kind = RECUO_OUTCOME_STATUS;
        o.status = (uint16_t)(status > UINT16_MAX ? UINT16_MAX : status);
    } else if (code == CURLE_OK) {
        o.kind = RECUO_OUTCOME_SUCCESS;
    } else {
        long sent = 0;
        if (curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &sent) != CURLE_OK) {
            sent = 1; /* not known: as if sent, the careful reading */
        }
        o.kind = RECUO_OUTCOME_TRANSPORT;
        o.transport = recuo_curl_code_transport((uint32_t)code, sent > 0);
    }
    *out = o;
    return RECUO_OK;
}

/* ---- the response's headers ------------------------------------------------------------- */

/* The headers of the last response on a handle, copied (one allocation): `items[count]`. */
typedef struct recuo_curl_headers {
    recuo_header *items;
    size_t count;
} recuo_curl_headers;

/*
 * Collects the headers of the last response received on `easy` (of the last request after
 * redirects; CURLH_HEADER: not 1xx, CONNECT or trailers), in order, with curl_easy_nextheader,
 * into `*out` — copies, valid until recuo_curl_headers_free. None gives `count` 0.
 * Returns RECUO_OK, RECUO_ERR_NULL_ARGUMENT, or RECUO_ERR_IO when memory ran out (`*out` is
 * then empty).
 */
static inline recuo_status recuo_curl_headers_collect(CURL *easy, recuo_curl_headers *out) {
    if (easy == NULL || out == NULL) {
        return RECUO_ERR_NULL_ARGUMENT;
    }
    out->items = NULL;
    out->count = 0;
    size_t count = 0, bytes = 0;
    struct curl_header *h = NULL;
    while ((h = curl_easy_nextheader(easy, CURLH_HEADER, -1, h)) != NULL) {
        count++;
        bytes += strlen(h->name) + strlen(h->value);
    }
    if (count == 0) {
        return RECUO_OK;
    }
    char *block = (char *)malloc(count * sizeof(recuo_header) + bytes + 1);
    if (block == NULL) {
        return RECUO_ERR_IO;
    }
    recuo_header *items = (recuo_header *)(void *)block;
    char *text = block + count * sizeof(recuo_header);
    size_t n = 0;
    while (n < count && (h = curl_easy_nextheader(easy, CURLH_HEADER, -1, h)) != NULL) {
        size_t name_len = strlen(h->name), value_len = strlen(h->value);
        memcpy(text, h->name, name_len);
        items[n].name = text;
        items[n].name_len = name_len;
        text += name_len;
        memcpy(text, h->value, value_len);
        items[n].value = text;
        items[n].value_len = value_len;
        text += value_len;
        n++;
    }
    out->items = items;
    out->count = n;
    return RECUO_OK;
}

/* Releases collected headers (and empties `*headers`). NULL is accepted. */
static inline void recuo_curl_headers_free(recuo_curl_headers *headers) {
    if (headers != NULL) {
        free(headers->items);
        headers->items = NULL;
        headers->count = 0;
    }
}

/* ---- one operation's request -------------------------------------------------------------- */

/*
 * Plans the machine's request (recuo_attempts_set_plan_for_headers, by the machine's policy):
 * `method` (NUL-terminated; NULL: "GET") with your header list `headers` (what you give
 * CURLOPT_HTTPHEADER; NULL for none) — it carries your own key when one of its entries is
 * named as the policy's idempotency header; `send_keys`: -1 recuo's key for methods that are
 * not idempotent (POST, PATCH), 1 for every method, 0 never. The plan is stored in `*plan`:
 * which key every attempt carries and whether the request counts as idempotent. Call it
 * before recuo_attempts_start, then recuo_curl_key_headers with the plan.
 * Returns recuo_attempts_set_plan_for_headers's statuses, or RECUO_ERR_IO when memory ran
 * out.
 */
static inline recuo_status recuo_curl_plan(recuo_attempts *attempts, const char *method,
                                           const struct curl_slist *headers, int32_t send_keys,
                                           recuo_request_plan *plan) {
    const char *m = method != NULL ? method : "GET";
    /* Your list as curl sends it: "Name: value", "Name;" (sent empty); "Name:" alone removes
     * a header curl would add, so it is not sent. */
    size_t count = 0;
    for (const struct curl_slist *h = headers; h != NULL; h = h->next) {
        count++;
    }
    recuo_header *items = NULL;
    if (count > 0 && (items = (recuo_header *)calloc(count, sizeof *items)) == NULL) {
        return RECUO_ERR_IO;
    }
    size_t n = 0;
    for (const struct curl_slist *h = headers; h != NULL; h = h->next) {
        const char *line = h->data != NULL ? h->data : "";
        size_t name_len = strcspn(line, ":;");
        const char *rest = line + name_len;
        const char *value = rest[0] != '\0' ? rest + 1 : rest;
        value += strspn(value, " \t");
        if (rest[0] == '\0' || (rest[0] == ':' && value[0] == '\0')) {
            continue;
        }
        items[n].name = line;
        items[n].name_len = name_len;
        items[n].value = rest[0] == ';' ? "" : value;
        items[n].value_len = rest[0] == ';' ? 0 : strlen(value);
        n++;
    }
    recuo_status rc =
        recuo_attempts_set_plan_for_headers(attempts, m, strlen(m), items, n, send_keys, plan);
    free(items);
    return rc;
}

/*
 * The header list to send with every attempt of one operation, as its `plan` says
 * (recuo_curl_plan): a copy of `base` (your own CURLOPT_HTTPHEADER list; NULL for none), plus,
 * when the plan's key is RECUO_KEY_RECUO, "<name>: <key>" — the policy's idempotency header
 * (recuo_policy_idempotency_header) with the machine's key (recuo_attempts_idempotency_key:
 * made once, the same on every attempt). That key is also copied into `key_out`
 * (RECUO_IDEMPOTENCY_KEY_SIZE bytes) when not NULL; "" there when recuo sends none. Set the
 * list with CURLOPT_HTTPHEADER for the operation, then put `base` back and
 * curl_slist_free_all it (a NULL list when `base` is NULL and no key is sent).
 * Returns RECUO_OK; RECUO_ERR_NULL_ARGUMENT; RECUO_ERR_INVALID_ENUM (the plan's key is none
 * of its constants); RECUO_ERR_IO when libcurl ran out of memory.
 */
static inline recuo_status recuo_curl_key_headers(const recuo_policy *policy,
                                                  recuo_attempts *attempts,
                                                  const recuo_request_plan *plan,
                                                  const struct curl_slist *base,
                                                  char *key_out,
                                                  struct curl_slist **out) {
    if (policy == NULL || attempts == NULL || plan == NULL || out == NULL) {
        return RECUO_ERR_NULL_ARGUMENT;
    }
    if (plan->key != RECUO_KEY_NONE && plan->key != RECUO_KEY_CALLER &&
        plan->key != RECUO_KEY_RECUO) {
        return RECUO_ERR_INVALID_ENUM;
    }
    char line[300 + RECUO_IDEMPOTENCY_KEY_SIZE];
    line[0] = '\0';
    char *key = line;
    if (plan->key == RECUO_KEY_RECUO) {
        size_t name_len = 0;
        recuo_status rc = recuo_policy_idempotency_header(policy, line, 300, &name_len);
        if (rc != RECUO_OK) {
            return rc; /* a name of 300 bytes or more: RECUO_ERR_BUFFER_TOO_SMALL */
        }
        line[name_len] = ':';
        line[name_len + 1] = ' ';
        key = line + name_len + 2;
        rc = recuo_attempts_idempotency_key(attempts, key, RECUO_IDEMPOTENCY_KEY_SIZE, NULL);
        if (rc != RECUO_OK) {
            return rc;
        }
    }
    struct curl_slist *list = NULL;
    for (const struct curl_slist *h = base; h != NULL; h = h->next) {
        struct curl_slist *longer = curl_slist_append(list, h->data);
        if (longer == NULL) {
            curl_slist_free_all(list);
            return RECUO_ERR_IO;
        }
        list = longer;
    }
    if (plan->key == RECUO_KEY_RECUO) {
        struct curl_slist *with_key = curl_slist_append(list, line);
        if (with_key == NULL) {
            curl_slist_free_all(list);
            return RECUO_ERR_IO;
        }
        list = with_key;
    }
    if (key_out != NULL) {
        memcpy(key_out, key, strlen(key) + 1);
    }
    *out = list;
    return RECUO_OK;
}

/* Whether the attempt of the CALL step `call` is bounded by what is left of the deadline
 * rather than by your own timeout `own_timeout_ms` (0: none). */
static inline bool recuo_curl_deadline_bounds_(const recuo_step *call, uint64_t own_timeout_ms) {
    return call != NULL && call->has_timeout &&
           (own_timeout_ms == 0 || call->timeout_ms < own_timeout_ms);
}

/*
 * Sets CURLOPT_TIMEOUT_MS for the attempt of the CALL step `call`: your own per-attempt
 * timeout `own_timeout_ms` (0: none), clipped to the step's `timeout_ms` — what is left of
 * the deadline — when it has one; at least 1 ms (0 means "no timeout" to libcurl).
 */
static inline CURLcode recuo_curl_set_timeout(CURL *easy, const recuo_step *call,
                                              uint64_t own_timeout_ms) {
    uint64_t ms = own_timeout_ms;
    if (recuo_curl_deadline_bounds_(call, own_timeout_ms)) {
        ms = call->timeout_ms > 0 ? call->timeout_ms : 1;
    }
    return curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)(ms > LONG_MAX ? LONG_MAX : ms));
}

/* recuo_curl_responded with the transfer's outcome already read. */
static inline recuo_status recuo_curl_tell_(recuo_attempts *attempts, CURL *easy,
                                            const recuo_outcome *outcome, recuo_step *step) {
    recuo_curl_headers headers;
    headers.items = NULL;
    headers.count = 0;
    recuo_status rc = RECUO_OK;
    if (outcome->kind == RECUO_OUTCOME_STATUS) {
        rc = recuo_curl_headers_collect(easy, &headers);
    }
    if (rc == RECUO_OK) {
        rc = recuo_attempts_responded(attempts, recuo_monotonic_ms(), outcome, headers.items,
                                      headers.count, step);
    }
    recuo_curl_headers_free(&headers);
    return rc;
}

/*
 * Tells the machine that the attempt on `easy` ended with `code` (curl_easy_perform's
 * answer, or CURLMsg.data.result from curl_multi_info_read): its outcome
 * (recuo_curl_outcome) and the response's headers (recuo_curl_headers_collect) go to
 * recuo_attempts_responded, which classifies them by the policy; the next step is written
 * to `*step`. Returns RECUO_OK, an argument error, or RECUO_ERR_IO (no memory for the
 * headers; the machine was not told).
 */
static inline recuo_status recuo_curl_responded(recuo_attempts *attempts, CURL *easy,
                                                CURLcode code, recuo_step *step) {
    if (attempts == NULL || easy == NULL || step == NULL) {
        return RECUO_ERR_NULL_ARGUMENT;
    }
    recuo_outcome outcome;
    recuo_status rc = recuo_curl_outcome(easy, code, &outcome);
    return rc == RECUO_OK ? recuo_curl_tell_(attempts, easy, &outcome, step) : rc;
}

/* ---- the blocking loop -------------------------------------------------------------------- */

/* What recuo_curl_perform needs to know of the handle, and your hooks. All zeros (or NULL
 * for the whole struct) is the default: a GET, no header list, no own timeout. */
typedef struct recuo_curl_options {
    /* The method the handle sends (as set with CURLOPT_POST, CURLOPT_CUSTOMREQUEST, ...):
     * it decides the classification and whether the key is sent. NULL: "GET". */
    const char *method;
    /* The URL, for the machine's records only (redacted there). NULL: none. */
    const char *url;
    /* The list you gave CURLOPT_HTTPHEADER, if any: an entry named as the policy's
     * idempotency header is your own key (sent as it is, and the request then counts as
     * idempotent); recuo's key, when it sends one, is added to a copy of it for the
     * operation, and this list is set back afterwards. */
    const struct curl_slist *headers;
    /* Your own per-attempt timeout (what you would give CURLOPT_TIMEOUT_MS), 0 for none:
     * each attempt gets the smaller of it and what is left of the deadline. Set back after. */
    uint64_t timeout_ms;
    /* Called before every attempt after the first, to empty your response body (and rewind
     * an upload your CURLOPT_READFUNCTION streams); NULL: nothing to reset. */
    void (*reset_body)(uint32_t attempt, void *user_data);
    void *user_data;
    /* Send recuo's idempotency key with idempotent methods too (by default only a method
     * the policy does not call idempotent — POST, PATCH — carries it). */
    bool key_for_every_method;
    /* You send an idempotency key of your own in `headers` under another name than the
     * policy's header: recuo sends none, and the request counts as idempotent whatever its
     * method. (Under the policy's header name it is found without this.) */
    bool own_key;
    /* Optional: the machine to drive, made by you from the same policy and set up before
     * (recuo_attempts_new_seeded, _set_gate, _set_stats_recorder, _set_records, _set_pool),
     * not started; it stays yours (read its report and records after, then free it).
     * NULL: recuo_curl_perform makes one of its own and frees it. */
    recuo_attempts *attempts;
    /* The gate given to that machine, which its ENTER steps wait on (recuo_gate_wait). */
    const recuo_gate *gate;
    /* Stops the waits (the gate's and the sleeps between attempts) when cancelled: the
     * operation then gives up `cancelled`. NULL: none. */
    const recuo_cancel_token *cancel;
    /* Send no key of recuo's own, whatever the method (not with key_for_every_method). */
    bool no_keys;
    /* Your upload cannot be sent twice: a CURLOPT_READFUNCTION stream that neither a
     * CURLOPT_SEEKFUNCTION nor your reset_body can rewind (libcurl itself would fail such a
     * resend with CURLE_SEND_FAIL_REWIND). The request then gets one attempt: its outcome is
     * judged and recorded, and the operation gives up `attempts_exhausted` with no retry and
     * no budget spent. A body given with CURLOPT_POSTFIELDS / CURLOPT_COPYPOSTFIELDS, or
     * none, can be sent again: leave this false. */
    bool body_not_replayable;
} recuo_curl_options;

/* How the operation ended. */
typedef struct recuo_curl_result {
    /* The last attempt's libcurl result (CURLE_OK when a response came back). */
    CURLcode code;
    /* The last attempt's HTTP status, 0 without a response (a body cut short after the
     * headers is no response: CURLE_PARTIAL_FILE here, and 0). */
    long http_status;
    /* The machine's last step: RECUO_STEP_DONE, or RECUO_STEP_GAVE_UP with `reason` (and
     * `retry_at_ms` on recuo_monotonic_ms's clock for a server wait past the deadline). */
    recuo_step step;
    /* The machine's report: attempts, reason, elapsed ms, delays, retry_after_ms. */
    recuo_report report;
    /* The idempotency key recuo sent with every attempt; "" when it sent none (your own key,
     * if any, is in your header list). */
    char idempotency_key[RECUO_IDEMPOTENCY_KEY_SIZE];
    /* The plan the operation ran: which key it carried, whether it counted as idempotent. */
    recuo_request_plan plan;
    /* What the last attempt came to: RECUO_LAST_NOTHING (none made), _STATUS (a response),
     * _TRANSPORT (a libcurl failure of that kind), _LATE (the deadline's timeout cut it). */
    recuo_last last;
    /* How the operation ends for guide A's buscarComRetry (RECUO_STYLE_GUIDE), which
     * recuo_curl_perform's return value follows: RECUO_ENDING_RESPONSE (RECUO_OK),
     * RECUO_ENDING_ERROR (RECUO_ERR_TASK_FAILED), RECUO_ENDING_GIVE_UP (RECUO_ERR_GAVE_UP). */
    recuo_ending ending;
    /* With RECUO_ENDING_GIVE_UP, the give-up's message, the same in every language
     * ("recuo gave up after 3 attempts (attempts_exhausted): HTTP 503"); else "". */
    char message[RECUO_GIVE_UP_MESSAGE_SIZE];
} recuo_curl_result;

/* Waits `ms` without a busy loop (curl_multi_poll on a handle with no transfer waits its
 * whole timeout), in slices of at most 50 ms when `cancel` may cut it short. */
static inline void recuo_curl_wait_(CURLM *waiter, uint64_t ms, const recuo_cancel_token *cancel) {
    uint64_t end = recuo_monotonic_ms() + ms;
    for (uint64_t now = recuo_monotonic_ms(); now < end; now = recuo_monotonic_ms()) {
        if (cancel != NULL && recuo_cancel_token_is_cancelled(cancel)) {
            return;
        }
        uint64_t left = end - now, slice = cancel != NULL && left > 50 ? 50 : left;
        curl_multi_poll(waiter, NULL, 0, (int)(slice > INT_MAX ? INT_MAX : slice), NULL);
    }
}

/* What an attempt came to, as recuo_last says it: its outcome, or LATE for a timeout that
 * was the deadline's (`deadline_cut`: the attempt's timeout was what is left of it). */
static inline recuo_last recuo_curl_last_(const recuo_outcome *outcome, long http_status,
                                          bool deadline_cut) {
    recuo_last last;
    memset(&last, 0, sizeof last);
    if (outcome->kind != RECUO_OUTCOME_TRANSPORT) {
        last.kind = RECUO_LAST_STATUS; /* a response (0: a transfer with no HTTP status) */
        last.status = (uint16_t)(http_status > UINT16_MAX || http_status < 0 ? 0 : http_status);
    } else if (deadline_cut && outcome->transport == RECUO_TRANSPORT_TIMEOUT) {
        last.kind = RECUO_LAST_LATE;
    } else {
        last.kind = RECUO_LAST_TRANSPORT;
        last.transport = outcome->transport;
    }
    return last;
}

/*
 * curl_easy_perform on `easy`, retried under `policy` by recuo's operation machine, as
 * guide A's buscarComRetry: each attempt performs the handle as you set it up, bounded by
 * what is left of the deadline; the machine judges each outcome and headers, waits what it
 * says (the server's Retry-After honoured, never shortened), and gives up when it says.
 * Between attempts your `reset_body` empties the response body, so that it holds the last
 * response only. The request's plan (recuo_curl_plan: `options->headers`, `own_key`,
 * `key_for_every_method`, `no_keys`) says which idempotency key every attempt carries and
 * whether the request counts as idempotent. For a policy, recuo_policy_new_adapters is the
 * HTTP adapters' default (a 30 s deadline, so that `Retry-After: 3600` gives up at once).
 *
 * Returns, as the operation ends for guide A's buscarComRetry (`result->ending`):
 * - RECUO_OK: the last response is yours — a success (1xx-3xx), or a status not worth
 *   repeating other than a 429 or a 5xx (a 404: `result->step` says RECUO_STEP_GAVE_UP,
 *   `permanent`), on the handle and in `*result` as libcurl left it.
 * - RECUO_ERR_GAVE_UP: recuo gave up (`result->step.reason`, `result->message`): after the
 *   last 429 or 5xx — that response (its status, headers and body) is readable on the handle
 *   and its status in `result->http_status`, as libcurl left it; or on a server wait past
 *   the deadline (with the response, `result->step.retry_at_ms` saying when a retry is
 *   allowed); or with no attempt made, or an attempt the deadline cut.
 * - RECUO_ERR_TASK_FAILED: the last attempt failed in libcurl and is not worth repeating
 *   (or none is left): its CURLcode is in `result->code`, unchanged.
 * - before any attempt, `*result` untouched: RECUO_ERR_NULL_ARGUMENT (`easy`, `policy`,
 *   `result`), RECUO_ERR_NOT_UTF8 (`method`), the policy's configuration error,
 *   RECUO_ERR_ALREADY_STARTED (`options->attempts` was started), RECUO_ERR_INVALID_ENUM
 *   (`key_for_every_method` and `no_keys` both set).
 * - RECUO_ERR_IO: libcurl refused a setting or ran out of memory (`result->code`); or the
 *   gate's regulator or concurrency limit is on a Redis server that could not be used
 *   (recuo_gate_wait's error: that attempt was not made, the machine was told so and gave
 *   up, and `*result` says what was done until then).
 *
 * The handle's CURLOPT_HTTPHEADER and CURLOPT_TIMEOUT_MS are set back to `options->headers`
 * and `options->timeout_ms` when it returns.
 */
static inline recuo_status recuo_curl_perform(CURL *easy, const recuo_policy *policy,
                                              const recuo_curl_options *options,
                                              recuo_curl_result *result) {
    recuo_curl_options no_options;
    memset(&no_options, 0, sizeof no_options);
    const recuo_curl_options *o = options != NULL ? options : &no_options;
    if (easy == NULL || policy == NULL || result == NULL) {
        return RECUO_ERR_NULL_ARGUMENT;
    }
    const char *method = o->method != NULL ? o->method : "GET";
    const char *url = o->url != NULL ? o->url : "";
    /* The method's bytes, then the policy's configuration, in recuo's order (arguments
     * first): recuo_classify checks both without deciding anything here. */
    recuo_outcome nothing;
    memset(&nothing, 0, sizeof nothing);
    nothing.kind = RECUO_OUTCOME_SUCCESS;
    recuo_verdict unused;
    recuo_status rc = recuo_classify(policy, &nothing, method, strlen(method), false, NULL, 0,
                                     0, &unused);
    if (rc == RECUO_OK && o->key_for_every_method && o->no_keys) {
        rc = RECUO_ERR_INVALID_ENUM;
    }
    int32_t send_keys = o->no_keys ? 0 : o->key_for_every_method ? 1 : -1;
    recuo_curl_result r;
    memset(&r, 0, sizeof r);
    r.last.kind = RECUO_LAST_NOTHING;
    recuo_attempts *a = o->attempts;
    if (rc == RECUO_OK && a == NULL) {
        rc = recuo_attempts_new(policy, &a);
    }
    if (rc == RECUO_OK) {
        rc = recuo_attempts_set_request(a, method, strlen(method), url, strlen(url));
    }
    if (rc == RECUO_OK && o->body_not_replayable) {
        rc = recuo_attempts_set_replayable(a, false);
    }
    if (rc == RECUO_OK) {
        rc = o->own_key ? recuo_attempts_set_plan(a, method, strlen(method), true, send_keys,
                                                  &r.plan)
                        : recuo_curl_plan(a, method, o->headers, send_keys, &r.plan);
    }
    if (rc != RECUO_OK) {
        if (a != o->attempts) {
            recuo_attempts_free(a);
        }
        return rc;
    }

    struct curl_slist *headers = NULL;
    bool key_sent = r.plan.key == RECUO_KEY_RECUO;
    if (key_sent) {
        rc = recuo_curl_key_headers(policy, a, &r.plan, o->headers, r.idempotency_key, &headers);
        if (rc == RECUO_OK && curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers) != CURLE_OK) {
            rc = RECUO_ERR_IO;
        }
    }
    CURLM *waiter = NULL;
    recuo_pass *pass = NULL;
    recuo_status gate_rc = RECUO_OK; /* the gate's own error, returned once the machine knows */
    recuo_step s;
    memset(&s, 0, sizeof s);
    if (rc == RECUO_OK) {
        rc = recuo_attempts_start(a, recuo_monotonic_ms(), recuo_now_ms(), &s);
    }
    while (rc == RECUO_OK && s.kind != RECUO_STEP_DONE && s.kind != RECUO_STEP_GAVE_UP) {
        switch (s.kind) {
        case RECUO_STEP_ENTER: {
            bool passed = true;
            if (o->gate != NULL) {
                uint64_t now = recuo_monotonic_ms();
                uint64_t left = s.has_until && s.until_ms > now ? s.until_ms - now : 0;
                recuo_status waited = recuo_gate_wait(o->gate, s.has_until, left, o->cancel, &pass);
                passed = waited == RECUO_OK;
                if (waited != RECUO_OK && waited != RECUO_TIMED_OUT && waited != RECUO_CANCELLED) {
                    gate_rc = waited; /* a Redis store out of reach: no attempt, and said so */
                }
            }
            rc = recuo_attempts_entered(a, recuo_monotonic_ms(), passed, &s);
            break;
        }
        case RECUO_STEP_CALL: {
            if (s.attempt > 0 && o->reset_body != NULL) {
                o->reset_body(s.attempt, o->user_data);
            }
            bool deadline_cut = recuo_curl_deadline_bounds_(&s, o->timeout_ms);
            if (recuo_curl_set_timeout(easy, &s, o->timeout_ms) != CURLE_OK) {
                recuo_pass_release(pass);
                pass = NULL;
                rc = RECUO_ERR_IO;
                break;
            }
            r.code = curl_easy_perform(easy);
            recuo_pass_release(pass); /* the attempt is over: leave the gate before any wait */
            pass = NULL;
            r.http_status = 0;
            if (r.code == CURLE_OK || r.code == CURLE_HTTP_RETURNED_ERROR) {
                curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &r.http_status);
            }
            recuo_outcome outcome;
            rc = recuo_curl_outcome(easy, r.code, &outcome);
            if (rc == RECUO_OK) {
                r.last = recuo_curl_last_(&outcome, r.http_status, deadline_cut);
                rc = recuo_curl_tell_(a, easy, &outcome, &s);
            }
            break;
        }
        case RECUO_STEP_SLEEP:
            if (s.delay_ms > 0) {
                if (waiter == NULL && (waiter = curl_multi_init()) == NULL) {
                    rc = RECUO_ERR_IO;
                    break;
                }
                recuo_curl_wait_(waiter, s.delay_ms, o->cancel);
            }
            if (o->cancel != NULL && recuo_cancel_token_is_cancelled(o->cancel)) {
                recuo_attempts_cancel(a);
            }
            rc = recuo_attempts_slept(a, recuo_monotonic_ms(), &s);
            break;
        default: /* RECUO_STEP_CLASSIFY never follows recuo_attempts_responded */
            rc = RECUO_ERR_PANIC;
            break;
        }
    }
    recuo_pass_release(pass); /* passed the gate, then gave up: never called */
    if (waiter != NULL) {
        curl_multi_cleanup(waiter);
    }
    if (key_sent) {
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, o->headers);
        curl_slist_free_all(headers);
    }
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                     (long)(o->timeout_ms > LONG_MAX ? LONG_MAX : o->timeout_ms));
    if (rc == RECUO_OK) {
        r.step = s;
        recuo_attempts_report(a, &r.report, NULL, 0, NULL);
        rc = recuo_attempts_ending(a, RECUO_STYLE_GUIDE, &r.last, &r.ending);
    }
    if (rc == RECUO_OK && r.ending == RECUO_ENDING_GIVE_UP) {
        rc = recuo_attempts_give_up_message(a, recuo_monotonic_ms(), &r.last, r.message,
                                            sizeof r.message, NULL);
    }
    if (rc == RECUO_OK) {
        rc = r.ending == RECUO_ENDING_GIVE_UP ? RECUO_ERR_GAVE_UP
             : r.ending == RECUO_ENDING_ERROR ? RECUO_ERR_TASK_FAILED
                                              : RECUO_OK;
        if (gate_rc != RECUO_OK) {
            rc = gate_rc;
        }
    }
    if (rc == RECUO_OK || rc == RECUO_ERR_GAVE_UP || rc == RECUO_ERR_TASK_FAILED ||
        rc == RECUO_ERR_IO || rc == gate_rc) {
        *result = r;
    }
    if (a != o->attempts) {
        recuo_attempts_free(a);
    }
    return rc;
}

#ifdef __cplusplus
}
#endif

#endif /* RECUO_CURL_H */
