/*
 * test_vectors.c — the shared vectors (the JSON files in tests/vectors), as the C ABI answers them.
 *
 * Usage: test_vectors VECTORS_DIR
 *
 * cJSON keeps strings NUL-terminated without a length, so a Retry-After value holding
 * "\u0000" would be cut short ("12\u0000" would read as "12"). The values are therefore also
 * decoded here, with their exact length, straight from the JSON text, and checked against
 * cJSON's reading up to the first NUL. The classification and scenario files hold no NUL
 * (checked: a "\u0000" there fails the run rather than being cut short silently), so their
 * strings are taken from cJSON with strlen.
 *
 * classify.json runs through recuo_classify under the default policy; scenarios.json drives
 * the state machine (recuo_attempts_*) exactly as core/tests/vectors.rs drives the core: each
 * step begins at begin_ms, is classified at the wall clock now_ms + end_ms, is cancelled first
 * when the step says so, and is decided at end_ms; the decisions and the final report must be
 * the expected ones to the millisecond.
 *
 * redaction.json runs every URL and header set through recuo_redact_url,
 * recuo_redact_header_value and recuo_record_attempt_json (as core/tests/vectors.rs does with
 * the core): no secret may survive in the redacted URL, the redacted headers or the attempt
 * record, everything to keep must survive in the URL and headers, the exact redacted URL and
 * the malformed flag must be the expected ones, and the documented buffer of 3 * len + 11
 * bytes must suffice. origin.json runs through recuo_who_answered and
 * recuo_who_answered_evidence.
 *
 * policies.json runs every plain form through recuo_policy_from_json (the vector's value
 * printed by cJSON) and recuo_policy_to_json: a valid value's written form must be its
 * expect, compared as JSON (cJSON_Compare), and read back to the same text; an invalid one
 * must be refused with the status named as the core names the error. Then the arguments: a length above
 * RECUO_POLICY_JSON_MAX, NULL pointers, text that is not UTF-8, a buffer too small.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recuo.h"

#include "check.h"
#include "vectors.h"

static int hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') {
            v |= (unsigned)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            v |= (unsigned)(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            v |= (unsigned)(c - 'A' + 10);
        } else {
            return 0;
        }
    }
    *out = v;
    return 1;
}

static size_t put_utf8(unsigned cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes the JSON string literal starting at the quote `p` into `out` (UTF-8, NULs kept).
 * Returns the length, or (size_t)-1 on a malformed literal or a value longer than `cap`. */
static size_t decode_json_string(const char *p, char *out, size_t cap) {
    size_t len = 0;
    if (*p++ != '"') {
        return (size_t)-1;
    }
    while (*p != '"') {
        if (*p == '\0' || len + 4 > cap) {
            return (size_t)-1;
        }
        if (*p != '\\') {
            out[len++] = *p++;
            continue;
        }
        p++;
        char c = *p++;
        unsigned cp;
        switch (c) {
        case '"': case '\\': case '/': out[len++] = c; break;
        case 'b': out[len++] = '\b'; break;
        case 'f': out[len++] = '\f'; break;
        case 'n': out[len++] = '\n'; break;
        case 'r': out[len++] = '\r'; break;
        case 't': out[len++] = '\t'; break;
        case 'u':
            if (!hex4(p, &cp)) {
                return (size_t)-1;
            }
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned low;
                if (p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, &low) || low < 0xDC00 ||
                    low > 0xDFFF) {
                    return (size_t)-1;
                }
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            len += put_utf8(cp, out + len);
            break;
        default:
            return (size_t)-1;
        }
    }
    return len;
}

/* The raw literal of the next `"value":` key at or after `*cursor`, advancing the cursor. A
 * key is a quoted name followed by a colon, which no string content can imitate (quotes
 * inside strings are escaped). */
static const char *next_value_literal(const char **cursor) {
    const char *p = *cursor;
    while ((p = strstr(p, "\"value\"")) != NULL) {
        const char *q = p + strlen("\"value\"");
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') {
            q++;
        }
        if (*q == ':') {
            q++;
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') {
                q++;
            }
            *cursor = q;
            return q;
        }
        p = q;
    }
    return NULL;
}

static recuo_retry_after_kind kind_named(const char *name) {
    if (strcmp(name, "seconds") == 0) return RECUO_RETRY_AFTER_SECONDS;
    if (strcmp(name, "date") == 0) return RECUO_RETRY_AFTER_DATE;
    if (strcmp(name, "unbounded") == 0) return RECUO_RETRY_AFTER_UNBOUNDED;
    if (strcmp(name, "invalid") == 0) return RECUO_RETRY_AFTER_INVALID;
    fprintf(stderr, "unknown kind \"%s\"\n", name);
    exit(2);
}

static void retry_after_cases(const char *dir) {
    char *text = read_file(dir, "retry_after.json");
    cJSON *doc = parse(text, "retry_after.json");
    const cJSON *cases = field(doc, "cases");
    const char *cursor = text;
    /* A decoded literal is never longer than the JSON text holding it. */
    size_t value_cap = strlen(text) + 4;
    char *value = malloc(value_cap);
    if (value == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    int count = 0, with_nul = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *name = cJSON_GetStringValue(field(c, "name"));
        const char *cjson_value = cJSON_GetStringValue(field(c, "value"));
        const char *literal = next_value_literal(&cursor);
        size_t len = literal ? decode_json_string(literal, value, value_cap) : (size_t)-1;
        count++;
        CHECK_CTX(name != NULL && cjson_value != NULL && len != (size_t)-1, "case %d", count);
        if (name == NULL || cjson_value == NULL || len == (size_t)-1) {
            continue;
        }
        /* The raw decoding and cJSON's must agree up to the first NUL. */
        size_t visible = strlen(cjson_value);
        CHECK_CTX(visible <= len && memcmp(value, cjson_value, visible) == 0 &&
                      (visible == len || value[visible] == '\0'),
                  "%s: raw and cJSON readings differ", name);
        with_nul += visible != len;

        int64_t now_ms = (int64_t)number(c, "now_ms");
        recuo_retry_after_kind kind = kind_named(cJSON_GetStringValue(field(c, "kind")));
        const cJSON *wait = field(c, "wait_ms");
        recuo_retry_after out = {0, 12345};
        recuo_status rc = recuo_parse_retry_after(value, len, now_ms, &out);
        CHECK_CTX(rc == RECUO_OK, "%s: status %s", name, recuo_status_name(rc));
        CHECK_CTX(out.kind == kind, "%s: kind %u, expected %u", name, (unsigned)out.kind,
                  (unsigned)kind);
        if (cJSON_IsNull(wait)) {
            CHECK_CTX(out.wait_ms == 0, "%s: wait %" PRIu64 " for a kind without a wait", name,
                      out.wait_ms);
        } else {
            uint64_t expected = (uint64_t)number(c, "wait_ms");
            CHECK_CTX(out.wait_ms == expected, "%s: wait %" PRIu64 ", expected %" PRIu64, name,
                      out.wait_ms, expected);
        }
        /* Guide B's delay from the same bytes: the server's wait, or (invalid) the very draw
         * of no header at all, from the same seed. */
        const uint64_t seed = 7;
        double delay = recuo_retry_delay_ms_bytes((const uint8_t *)value, len, 0, now_ms, &seed);
        double want = kind == RECUO_RETRY_AFTER_INVALID
                          ? recuo_retry_delay_ms_bytes(NULL, 0, 0, now_ms, &seed)
                      : kind == RECUO_RETRY_AFTER_UNBOUNDED ? INFINITY
                                                            : (double)out.wait_ms;
        CHECK_CTX(delay == want, "%s: recuo_retry_delay_ms_bytes %f, expected %f", name, delay,
                  want);
    }
    CHECK_CTX(count >= 60, "only %d Retry-After cases", count);
    CHECK_CTX(next_value_literal(&cursor) == NULL, "more \"value\" keys than cases");
    CHECK_CTX(with_nul > 0, "no case with a NUL byte: the explicit length went untested");
    free(value);
    cJSON_Delete(doc);
    free(text);
}

static void backoff_cases(const char *dir) {
    char *text = read_file(dir, "backoff.json");
    cJSON *doc = parse(text, "backoff.json");
    const cJSON *c;
    int windows = 0, errors = 0;
    cJSON_ArrayForEach(c, field(doc, "windows")) {
        uint64_t base = (uint64_t)number(c, "base_ms"), cap = (uint64_t)number(c, "cap_ms");
        uint32_t n = (uint32_t)number(c, "n");
        uint64_t expected = (uint64_t)number(c, "window_ms"), got = 0;
        recuo_status rc = recuo_backoff_window_ms(base, cap, n, &got);
        CHECK_CTX(rc == RECUO_OK && got == expected,
                  "window(%" PRIu64 ", %" PRIu64 ", %" PRIu32 ") = %" PRIu64 " (%s), expected %"
                  PRIu64, base, cap, n, got, recuo_status_name(rc), expected);
        windows++;
    }
    cJSON_ArrayForEach(c, field(doc, "errors")) {
        uint64_t base = (uint64_t)number(c, "base_ms"), cap = (uint64_t)number(c, "cap_ms");
        const char *error = cJSON_GetStringValue(field(c, "error"));
        uint64_t got = 777;
        recuo_status rc = recuo_backoff_window_ms(base, cap, 0, &got);
        CHECK_CTX(error != NULL && strcmp(recuo_status_name(rc), error) == 0,
                  "window(%" PRIu64 ", %" PRIu64 ") answered %s, expected %s", base, cap,
                  recuo_status_name(rc), error ? error : "?");
        CHECK(recuo_status_is_config_error(rc));
        CHECK_CTX(got == 777, "the output was written on an error");
        errors++;
    }
    CHECK(windows > 0 && errors > 0);
    cJSON_Delete(doc);
    free(text);
}

struct recorder {
    uint64_t failures;
    uint64_t calls;
    uint64_t sleeps[64];
    size_t nsleeps;
    int overflow;
};

static int fails_then_succeeds(void *user_data) {
    struct recorder *r = user_data;
    r->calls++;
    return r->calls <= r->failures ? (int)r->calls : 0;
}

static void record_sleep(uint64_t ms, void *user_data) {
    struct recorder *r = user_data;
    if (r->nsleeps < sizeof r->sleeps / sizeof r->sleeps[0]) {
        r->sleeps[r->nsleeps++] = ms;
    } else {
        r->overflow = 1;
    }
}

static void seeded_cases(const char *dir) {
    char *text = read_file(dir, "seeded.json");
    cJSON *doc = parse(text, "seeded.json");
    const cJSON *c;
    int delays = 0, loops = 0;
    cJSON_ArrayForEach(c, field(doc, "retry_delay_ms")) {
        const cJSON *header = field(c, "retry_after");
        const char *value = cJSON_IsNull(header) ? NULL : cJSON_GetStringValue(header);
        CHECK(cJSON_IsNull(header) || value != NULL);
        uint32_t attempt = (uint32_t)number(c, "attempt");
        int64_t now_ms = (int64_t)number(c, "now_ms");
        uint64_t seed = (uint64_t)number(c, "seed");
        double d = recuo_retry_delay_ms_seeded(value, attempt, now_ms, seed);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "unbounded"))) {
            CHECK_CTX(isinf(d) && d > 0, "%s (seed %" PRIu64 "): %f, expected +inf",
                      value ? value : "NULL", seed, d);
        } else {
            double expected = number(c, "delay_ms");
            CHECK_CTX(d == expected, "%s attempt %" PRIu32 " (seed %" PRIu64 "): %f, expected %f",
                      value ? value : "NULL", attempt, seed, d, expected);
        }
        delays++;
    }
    recuo_com_retry_options *options = recuo_com_retry_options_new();
    CHECK(options != NULL);
    CHECK_STATUS(recuo_com_retry_options_set_sleep(options, record_sleep), RECUO_OK);
    cJSON_ArrayForEach(c, field(doc, "com_retry")) {
        uint64_t seed = (uint64_t)number(c, "seed");
        struct recorder r = {.failures = (uint64_t)number(c, "failures")};
        int last_error = -1;
        uint32_t attempts = 0;
        CHECK_STATUS(recuo_com_retry_options_set_seed(options, seed), RECUO_OK);
        recuo_status rc = recuo_com_retry_with_options(
            fails_then_succeeds, &r, (uint32_t)number(c, "tentativas"),
            (uint64_t)number(c, "base_ms"), (uint64_t)number(c, "max_ms"), NULL, options,
            &last_error, &attempts);
        const char *outcome = cJSON_GetStringValue(field(c, "outcome"));
        int ok = outcome != NULL && strcmp(outcome, "ok") == 0;
        CHECK_CTX(rc == (ok ? RECUO_OK : RECUO_ERR_TASK_FAILED), "seed %" PRIu64 ": %s", seed,
                  recuo_status_name(rc));
        CHECK_CTX(r.calls == (uint64_t)number(c, "calls") && attempts == r.calls,
                  "seed %" PRIu64 ": %" PRIu64 " calls, %" PRIu32 " attempts", seed, r.calls,
                  attempts);
        CHECK_CTX(last_error == (ok ? 0 : (int)r.calls), "seed %" PRIu64 ": last error %d", seed,
                  last_error);
        const cJSON *expected = field(c, "sleeps_ms");
        CHECK_CTX(!r.overflow && (size_t)cJSON_GetArraySize(expected) == r.nsleeps,
                  "seed %" PRIu64 ": %zu sleeps, expected %d", seed, r.nsleeps,
                  cJSON_GetArraySize(expected));
        size_t i = 0;
        const cJSON *ms;
        cJSON_ArrayForEach(ms, expected) {
            if (i < r.nsleeps) {
                CHECK_CTX(r.sleeps[i] == (uint64_t)ms->valuedouble,
                          "seed %" PRIu64 ": sleep %zu = %" PRIu64 ", expected %.0f", seed, i,
                          r.sleeps[i], ms->valuedouble);
            }
            i++;
        }
        loops++;
    }
    recuo_com_retry_options_free(options);
    CHECK(delays > 0 && loops > 0);
    cJSON_Delete(doc);
    free(text);
}

static void no_nul_in(const char *text, const char *name) {
    if (strstr(text, "\\u0000") != NULL) {
        fprintf(stderr, "%s holds a \\u0000: teach test_vectors.c to read it with its length\n",
                name);
        exit(2);
    }
}

static const char *string(const cJSON *object, const char *name) {
    const char *s = cJSON_GetStringValue(field(object, name));
    if (s == NULL) {
        fprintf(stderr, "\"%s\" is not a string\n", name);
        exit(2);
    }
    return s;
}

/* A status code (a number) or a transport kind (its name, as recuo_transport_name says). */
static recuo_outcome outcome_of(const cJSON *object) {
    const cJSON *o = field(object, "outcome");
    recuo_outcome out = {RECUO_OUTCOME_STATUS, 0, 0};
    if (cJSON_IsNumber(o)) {
        out.status = (uint16_t)number(object, "outcome");
        return out;
    }
    const char *name = cJSON_GetStringValue(o);
    for (uint32_t t = RECUO_TRANSPORT_CONNECT; t <= RECUO_TRANSPORT_OTHER; t++) {
        if (name != NULL && strcmp(recuo_transport_name(t), name) == 0) {
            out.kind = RECUO_OUTCOME_TRANSPORT;
            out.transport = t;
            return out;
        }
    }
    fprintf(stderr, "unknown outcome \"%s\"\n", name ? name : "?");
    exit(2);
}

/* The [[name, value], ...] pairs as recuo_headers (pointing into cJSON's strings); free the
 * array. */
static recuo_header *headers_of(const cJSON *object, size_t *count) {
    const cJSON *pairs = field(object, "headers");
    size_t n = (size_t)cJSON_GetArraySize(pairs);
    recuo_header *h = calloc(n > 0 ? n : 1, sizeof *h);
    if (h == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    size_t i = 0;
    const cJSON *pair;
    cJSON_ArrayForEach(pair, pairs) {
        const char *name = cJSON_GetStringValue(cJSON_GetArrayItem(pair, 0));
        const char *value = cJSON_GetStringValue(cJSON_GetArrayItem(pair, 1));
        if (name == NULL || value == NULL || cJSON_GetArraySize(pair) != 2) {
            fprintf(stderr, "a header is not a [name, value] pair of strings\n");
            exit(2);
        }
        h[i].name = name;
        h[i].name_len = strlen(name);
        h[i].value = value;
        h[i].value_len = strlen(value);
        i++;
    }
    *count = n;
    return h;
}

static bool boolean(const cJSON *object, const char *name) {
    const cJSON *b = field(object, name);
    if (!cJSON_IsBool(b)) {
        fprintf(stderr, "\"%s\" is not a boolean\n", name);
        exit(2);
    }
    return cJSON_IsTrue(b);
}

static void classify_cases(const char *dir) {
    char *text = read_file(dir, "classify.json");
    no_nul_in(text, "classify.json");
    cJSON *doc = parse(text, "classify.json");
    recuo_policy *policy = recuo_policy_new();
    CHECK(policy != NULL);
    int count = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, field(doc, "cases")) {
        const char *name = string(c, "name");
        recuo_outcome outcome = outcome_of(c);
        const char *method = string(c, "method");
        size_t nheaders = 0;
        recuo_header *headers = headers_of(c, &nheaders);
        recuo_verdict v = {0, 0, 0, 0};
        recuo_status rc = recuo_classify(policy, &outcome, method, strlen(method),
                                         boolean(c, "idempotency_key"), headers, nheaders,
                                         (int64_t)number(c, "now_ms"), &v);
        CHECK_CTX(rc == RECUO_OK, "%s: %s", name, recuo_status_name(rc));
        const char *verdict = string(c, "verdict"), *reason = string(c, "reason");
        CHECK_CTX(strcmp(recuo_verdict_kind_name(v.verdict), verdict) == 0, "%s: verdict %s, "
                  "expected %s", name, recuo_verdict_kind_name(v.verdict), verdict);
        CHECK_CTX(strcmp(recuo_cause_name(v.cause), reason) == 0, "%s: reason %s, expected %s",
                  name, recuo_cause_name(v.cause), reason);
        const cJSON *wait = field(c, "wait_ms");
        if (cJSON_IsNull(wait)) {
            CHECK_CTX(v.wait != RECUO_WAIT_MS && v.wait_ms == 0, "%s: wait %s %" PRIu64
                      ", expected none", name, recuo_wait_kind_name(v.wait), v.wait_ms);
        } else {
            uint64_t expected = (uint64_t)number(c, "wait_ms");
            CHECK_CTX(v.wait == RECUO_WAIT_MS && v.wait_ms == expected, "%s: wait %s %" PRIu64
                      ", expected %" PRIu64, name, recuo_wait_kind_name(v.wait), v.wait_ms,
                      expected);
        }
        bool unbounded = boolean(c, "wait_unbounded");
        CHECK_CTX((v.wait == RECUO_WAIT_UNBOUNDED) == unbounded, "%s: wait %s", name,
                  recuo_wait_kind_name(v.wait));
        free(headers);
        count++;
    }
    CHECK_CTX(count >= 90, "only %d classification cases", count);
    recuo_policy_free(policy);
    cJSON_Delete(doc);
    free(text);
}

static uint32_t jitter_named(const char *name) {
    for (uint32_t j = RECUO_JITTER_FULL; j <= RECUO_JITTER_NONE; j++) {
        if (strcmp(recuo_jitter_name(j), name) == 0) {
            return j;
        }
    }
    fprintf(stderr, "unknown jitter \"%s\"\n", name);
    exit(2);
}

/* The scenario's policy, through the setters. */
static recuo_policy *policy_of(const cJSON *p) {
    recuo_policy *policy = recuo_policy_new();
    CHECK(policy != NULL);
    CHECK_STATUS(recuo_policy_set_max_attempts(policy, (uint32_t)number(p, "max_attempts")),
                 RECUO_OK);
    CHECK_STATUS(recuo_policy_set_base_ms(policy, (uint64_t)number(p, "base_ms")), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_cap_ms(policy, (uint64_t)number(p, "cap_ms")), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_jitter(policy, jitter_named(string(p, "jitter"))), RECUO_OK);
    if (cJSON_IsNull(field(p, "deadline_ms"))) {
        CHECK_STATUS(recuo_policy_clear_deadline(policy), RECUO_OK);
    } else {
        CHECK_STATUS(recuo_policy_set_deadline_ms(policy, (uint64_t)number(p, "deadline_ms")),
                     RECUO_OK);
    }
    if (cJSON_IsNull(field(p, "spread_ms"))) {
        CHECK_STATUS(recuo_policy_clear_spread(policy), RECUO_OK);
    } else {
        CHECK_STATUS(recuo_policy_set_spread_ms(policy, (uint64_t)number(p, "spread_ms")),
                     RECUO_OK);
    }
    CHECK_STATUS(recuo_policy_set_use_date_header(policy, boolean(p, "use_date_header")),
                 RECUO_OK);
    CHECK_STATUS(recuo_policy_validate(policy), RECUO_OK);
    return policy;
}

/* The vectors' name for what step `s` decided after an attempt's verdict: "retry" (a sleep),
 * "done" or "give_up". */
static const char *decided(const recuo_step *s) {
    switch (s->kind) {
    case RECUO_STEP_SLEEP:
        return "retry";
    case RECUO_STEP_DONE:
        return "done";
    case RECUO_STEP_GAVE_UP:
        return "give_up";
    default:
        return recuo_step_kind_name(s->kind);
    }
}

static void check_decision(const char *name, int step, const recuo_step *s,
                           const cJSON *expect) {
    const char *kind = string(expect, "decision");
    CHECK_CTX(strcmp(decided(s), kind) == 0, "%s, step %d: %s, expected %s", name, step,
              decided(s), kind);
    if (strcmp(kind, "retry") == 0) {
        uint64_t delay = (uint64_t)number(expect, "delay_ms");
        uint32_t next = (uint32_t)number(expect, "next_attempt");
        CHECK_CTX(s->delay_ms == delay && s->attempt + 1 == next, "%s, step %d: retry after "
                  "%" PRIu64 " as attempt %u, expected %" PRIu64 " as %u", name, step,
                  s->delay_ms, (unsigned)s->attempt + 1, delay, (unsigned)next);
    } else if (strcmp(kind, "give_up") == 0) {
        const char *reason = string(expect, "reason");
        CHECK_CTX(strcmp(recuo_give_up_reason_name(s->reason), reason) == 0, "%s, step %d: "
                  "%s, expected %s", name, step, recuo_give_up_reason_name(s->reason), reason);
        const cJSON *at = field(expect, "retry_at_ms");
        if (cJSON_IsNull(at)) {
            CHECK_CTX(!s->has_retry_at && s->retry_at_ms == 0, "%s, step %d: retry at %" PRIu64,
                      name, step, s->retry_at_ms);
        } else {
            uint64_t expected = (uint64_t)number(expect, "retry_at_ms");
            CHECK_CTX(s->has_retry_at && s->retry_at_ms == expected, "%s, step %d: retry at %"
                      PRIu64 ", expected %" PRIu64, name, step, s->retry_at_ms, expected);
        }
    } else {
        CHECK_CTX(s->reason == RECUO_GIVE_UP_NONE && !s->has_retry_at, "%s, step %d", name,
                  step);
    }
}

static void scenario_cases(const char *dir) {
    char *text = read_file(dir, "scenarios.json");
    no_nul_in(text, "scenarios.json");
    cJSON *doc = parse(text, "scenarios.json");
    int scenarios = 0, steps = 0;
    const cJSON *sc;
    cJSON_ArrayForEach(sc, field(doc, "scenarios")) {
        const char *name = string(sc, "name");
        recuo_policy *policy = policy_of(field(sc, "policy"));
        int64_t wall0 = (int64_t)number(sc, "now_ms");
        recuo_attempts *a = NULL;
        CHECK_STATUS(recuo_attempts_new_seeded(policy, 0, &a), RECUO_OK);
        int step = 0;
        const cJSON *st;
        cJSON_ArrayForEach(st, field(sc, "steps")) {
            /* The attempt starts: the machine's start, or the end of its sleep. */
            uint64_t begin = (uint64_t)number(st, "begin_ms");
            recuo_step s;
            memset(&s, 0, sizeof s);
            if (step == 0) {
                CHECK_STATUS(recuo_attempts_start(a, begin, wall0 + (int64_t)begin, &s),
                             RECUO_OK);
            } else {
                CHECK_STATUS(recuo_attempts_slept(a, begin, &s), RECUO_OK);
            }
            CHECK_CTX(s.kind == RECUO_STEP_CALL && s.attempt == (uint32_t)step,
                      "%s, step %d: the start answered %s", name, step,
                      recuo_step_kind_name(s.kind));
            uint64_t end = (uint64_t)number(st, "end_ms");
            recuo_outcome outcome = outcome_of(st);
            const char *method = string(st, "method");
            size_t nheaders = 0;
            recuo_header *headers = headers_of(st, &nheaders);
            recuo_verdict v = {0, 0, 0, 0};
            CHECK_STATUS(recuo_classify(policy, &outcome, method, strlen(method),
                                        boolean(st, "idempotency_key"), headers, nheaders,
                                        wall0 + (int64_t)end, &v),
                         RECUO_OK);
            free(headers);
            if (boolean(st, "cancel")) {
                CHECK_STATUS(recuo_attempts_cancel(a), RECUO_OK);
            }
            /* What the attempt came to: a success, or a failure judged by its verdict. */
            memset(&s, 0, sizeof s);
            if (v.verdict == RECUO_VERDICT_SUCCESS) {
                CHECK_STATUS(recuo_attempts_succeeded(a, end, &s), RECUO_OK);
            } else {
                CHECK_STATUS(recuo_attempts_failed(a, end, &s), RECUO_OK);
                if (s.kind == RECUO_STEP_CLASSIFY) {
                    CHECK_STATUS(recuo_attempts_judged(a, end, &v, &s), RECUO_OK);
                }
            }
            check_decision(name, step, &s, field(st, "expect"));
            step++;
            steps++;
        }
        const cJSON *want = field(sc, "report");
        recuo_report r;
        uint64_t delays[32];
        size_t n = 0;
        CHECK_STATUS(recuo_attempts_report(a, &r, delays, 32, &n), RECUO_OK);
        CHECK_CTX(r.attempts == (uint32_t)number(want, "attempts"), "%s: %u attempts", name,
                  (unsigned)r.attempts);
        const cJSON *reason = field(want, "reason");
        const char *expected_reason = cJSON_IsNull(reason) ? "none" : string(want, "reason");
        CHECK_CTX(strcmp(recuo_give_up_reason_name(r.reason), expected_reason) == 0,
                  "%s: reason %s, expected %s", name, recuo_give_up_reason_name(r.reason),
                  expected_reason);
        CHECK_CTX(r.elapsed_ms == (uint64_t)number(want, "elapsed_ms"), "%s: elapsed %" PRIu64,
                  name, r.elapsed_ms);
        const cJSON *want_delays = field(want, "delays_ms");
        CHECK_CTX(r.delay_count == (size_t)cJSON_GetArraySize(want_delays) &&
                      n == r.delay_count,
                  "%s: %zu delays, expected %d", name, r.delay_count,
                  cJSON_GetArraySize(want_delays));
        size_t i = 0;
        const cJSON *ms;
        cJSON_ArrayForEach(ms, want_delays) {
            CHECK_CTX(i < n && delays[i] == (uint64_t)ms->valuedouble, "%s: delay %zu", name, i);
            i++;
        }
        recuo_attempts_free(a);
        recuo_policy_free(policy);
        scenarios++;
    }
    CHECK_CTX(scenarios >= 19 && steps > scenarios, "only %d scenarios, %d steps", scenarios,
              steps);
    cJSON_Delete(doc);
    free(text);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n > 0 ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* Appends `text` (`len` bytes) to the growing string *s of length *n. */
static void append(char **s, size_t *n, const char *text, size_t len) {
    char *bigger = realloc(*s, *n + len + 1);
    if (bigger == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memcpy(bigger + *n, text, len);
    *n += len;
    bigger[*n] = '\0';
    *s = bigger;
}

/* The attempt record of a 503 that will be retried in 10 ms, as core/tests/vectors.rs builds
 * it, into a buffer grown until the line fits (the way a caller without a bound does it).
 * Free the result. */
static char *attempt_record(const char *url, const recuo_header *headers, size_t n) {
    recuo_outcome outcome = {RECUO_OUTCOME_STATUS, 503, 0};
    recuo_verdict verdict = {RECUO_VERDICT_RETRY, RECUO_CAUSE_UNAVAILABLE, RECUO_WAIT_NONE, 0};
    recuo_decision decision = {RECUO_DECISION_RETRY, 10, 1, RECUO_GIVE_UP_NONE, false, 0};
    size_t cap = 64;
    for (;;) {
        char *line = xmalloc(cap);
        size_t written = 0;
        recuo_status rc = recuo_record_attempt_json(0, 1, "GET", 3, url, strlen(url), &outcome,
                                                    headers, n, &verdict, &decision, line, cap,
                                                    &written);
        if (rc == RECUO_OK) {
            CHECK(written == strlen(line));
            return line;
        }
        CHECK_CTX(rc == RECUO_ERR_BUFFER_TOO_SMALL && written < cap && written == strlen(line),
                  "%s: %s", url, recuo_status_name(rc));
        free(line);
        if (rc != RECUO_ERR_BUFFER_TOO_SMALL || cap > (1u << 24)) {
            return NULL;
        }
        cap *= 2;
    }
}

static void redaction_cases(const char *dir) {
    char *text = read_file(dir, "redaction.json");
    no_nul_in(text, "redaction.json");
    cJSON *doc = parse(text, "redaction.json");
    int count = 0, exact = 0, malformed_cases = 0, secrets = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, field(doc, "cases")) {
        const char *name = string(c, "name");
        const char *url = string(c, "url");
        size_t nheaders = 0;
        recuo_header *headers = headers_of(c, &nheaders);

        /* The URL, in the buffer the header promises is enough. */
        size_t cap = 3 * strlen(url) + 11, written = 0;
        char *redacted = xmalloc(cap);
        bool malformed = !boolean(c, "malformed");
        recuo_status rc = recuo_redact_url(url, strlen(url), redacted, cap, &written, &malformed);
        CHECK_CTX(rc == RECUO_OK && written == strlen(redacted), "%s: %s", name,
                  recuo_status_name(rc));
        CHECK_CTX(malformed == boolean(c, "malformed"), "%s: malformed %d", name, malformed);
        malformed_cases += malformed;
        const cJSON *want = field(c, "redacted_url");
        if (!cJSON_IsNull(want)) {
            CHECK_CTX(strcmp(redacted, string(c, "redacted_url")) == 0, "%s: %s, expected %s",
                      name, redacted, string(c, "redacted_url"));
            exact++;
        }

        /* What would be shown: the URL, then "name: value" per header, redacted. */
        char *shown = NULL;
        size_t shown_len = 0;
        append(&shown, &shown_len, redacted, written);
        for (size_t i = 0; i < nheaders; i++) {
            size_t vcap = 3 * headers[i].value_len + 11, vlen = 0;
            char *value = xmalloc(vcap);
            rc = recuo_redact_header_value(headers[i].name, headers[i].name_len, headers[i].value,
                                           headers[i].value_len, value, vcap, &vlen);
            CHECK_CTX(rc == RECUO_OK, "%s: header %s: %s", name, headers[i].name,
                      recuo_status_name(rc));
            append(&shown, &shown_len, "\n", 1);
            append(&shown, &shown_len, headers[i].name, headers[i].name_len);
            append(&shown, &shown_len, ": ", 2);
            append(&shown, &shown_len, value, vlen);
            free(value);
        }

        char *record = attempt_record(url, headers, nheaders);
        CHECK_CTX(record != NULL && strstr(record, "\"status\":503") != NULL, "%s: %s", name,
                  record ? record : "no record");
        CHECK_CTX(record != NULL && strstr(record, "\"decision\":\"retry\",\"reason\":"
                                                   "\"unavailable\"") != NULL,
                  "%s: %s", name, record ? record : "no record");
        const cJSON *item;
        cJSON_ArrayForEach(item, field(c, "secrets")) {
            const char *secret = cJSON_GetStringValue(item);
            CHECK_CTX(secret != NULL && strstr(shown, secret) == NULL, "%s: %s survives in %s",
                      name, secret ? secret : "?", shown);
            CHECK_CTX(secret != NULL && record != NULL && strstr(record, secret) == NULL,
                      "%s: %s survives in %s", name, secret ? secret : "?",
                      record ? record : "no record");
            secrets++;
        }
        cJSON_ArrayForEach(item, field(c, "keep")) {
            const char *keep = cJSON_GetStringValue(item);
            CHECK_CTX(keep != NULL && strstr(shown, keep) != NULL, "%s: %s lost from %s", name,
                      keep ? keep : "?", shown);
        }
        free(record);
        free(shown);
        free(redacted);
        free(headers);
        count++;
    }
    CHECK_CTX(count >= 40, "only %d redaction cases", count);
    CHECK_CTX(exact > 0 && malformed_cases > 0 && secrets > count, "%d exact, %d malformed, %d "
              "secrets", exact, malformed_cases, secrets);
    cJSON_Delete(doc);
    free(text);
}

static void origin_cases(const char *dir) {
    char *text = read_file(dir, "origin.json");
    no_nul_in(text, "origin.json");
    cJSON *doc = parse(text, "origin.json");
    int count = 0, with_expected = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, field(doc, "cases")) {
        const char *name = string(c, "name");
        size_t nheaders = 0;
        recuo_header *headers = headers_of(c, &nheaders);
        const cJSON *ect = field(c, "expected_content_type");
        const char *expected = cJSON_IsNull(ect) ? NULL : string(c, "expected_content_type");
        size_t expected_len = expected != NULL ? strlen(expected) : 0;
        with_expected += expected != NULL;
        recuo_who_answered_result w = {0, 0, 0};
        recuo_status rc = recuo_who_answered(headers, nheaders, expected, expected_len, &w);
        CHECK_CTX(rc == RECUO_OK, "%s: %s", name, recuo_status_name(rc));
        CHECK_CTX(strcmp(recuo_origin_name(w.origin), string(c, "origin")) == 0,
                  "%s: origin %s, expected %s", name, recuo_origin_name(w.origin),
                  string(c, "origin"));
        CHECK_CTX(strcmp(recuo_confidence_name(w.confidence), string(c, "confidence")) == 0,
                  "%s: confidence %s, expected %s", name, recuo_confidence_name(w.confidence),
                  string(c, "confidence"));
        /* Every evidence line, then each expected part in one of them. */
        char *evidence = NULL;
        size_t evidence_len = 0;
        for (size_t i = 0; i < w.evidence_count; i++) {
            char line[512];
            size_t n = 0;
            rc = recuo_who_answered_evidence(headers, nheaders, expected, expected_len, i, line,
                                             sizeof line, &n);
            CHECK_CTX(rc == RECUO_OK && n == strlen(line) && n > 0, "%s: evidence %zu: %s",
                      name, i, recuo_status_name(rc));
            append(&evidence, &evidence_len, line, n);
            append(&evidence, &evidence_len, "\n", 1);
        }
        char line[8];
        CHECK_STATUS(recuo_who_answered_evidence(headers, nheaders, expected, expected_len,
                                                 w.evidence_count, line, sizeof line, NULL),
                     RECUO_ERR_INDEX_OUT_OF_RANGE);
        const cJSON *item;
        cJSON_ArrayForEach(item, field(c, "evidence_contains")) {
            const char *part = cJSON_GetStringValue(item);
            CHECK_CTX(part != NULL && evidence != NULL && strstr(evidence, part) != NULL,
                      "%s: %s not in the evidence:\n%s", name, part ? part : "?",
                      evidence ? evidence : "(none)");
        }
        /* And none of the parts that must not be quoted (secrets, what is past 100 chars). */
        const cJSON *excluded = cJSON_GetObjectItemCaseSensitive(c, "evidence_excludes");
        cJSON_ArrayForEach(item, excluded) {
            const char *part = cJSON_GetStringValue(item);
            CHECK_CTX(part != NULL && (evidence == NULL || strstr(evidence, part) == NULL),
                      "%s: %s in the evidence:\n%s", name, part ? part : "?",
                      evidence ? evidence : "(none)");
        }
        free(evidence);
        free(headers);
        count++;
    }
    CHECK_CTX(count >= 17 && with_expected > 0, "only %d origin cases", count);
    cJSON_Delete(doc);
    free(text);
}


/* recuo_policy_to_json into a fresh allocation grown until the text fits (as a C program
 * would); NULL after a failure other than a buffer too small. */
static char *policy_json(const recuo_policy *policy) {
    for (size_t cap = 64;; cap *= 2) {
        char *buf = xmalloc(cap);
        size_t written = 0;
        recuo_status rc = recuo_policy_to_json(policy, buf, cap, &written);
        if (rc == RECUO_OK) {
            CHECK_CTX(written == strlen(buf), "written %zu, strlen %zu", written, strlen(buf));
            return buf;
        }
        free(buf);
        if (rc != RECUO_ERR_BUFFER_TOO_SMALL) {
            CHECK_STATUS(rc, RECUO_OK);
            return NULL;
        }
    }
}

static void policy_valid_cases(const cJSON *cases) {
    int count = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *name = string(c, "name");
        char *value = cJSON_PrintUnformatted(field(c, "value"));
        recuo_policy *policy = NULL;
        recuo_status rc = recuo_policy_from_json(value, strlen(value), &policy);
        CHECK_CTX(rc == RECUO_OK && policy != NULL, "%s: %s", name, recuo_status_name(rc));
        char *written = policy != NULL ? policy_json(policy) : NULL;
        cJSON *back = written != NULL ? cJSON_Parse(written) : NULL;
        CHECK_CTX(back != NULL && cJSON_Compare(back, field(c, "expect"), true),
                  "%s: wrote %s", name, written ? written : "nothing");
        /* The written form reads back into the same policy: the same text again. */
        recuo_policy *again = NULL;
        if (written != NULL) {
            CHECK_STATUS(recuo_policy_from_json(written, strlen(written), &again), RECUO_OK);
        }
        char *rewritten = again != NULL ? policy_json(again) : NULL;
        CHECK_CTX(rewritten != NULL && written != NULL && strcmp(rewritten, written) == 0,
                  "%s: %s read back as %s", name, written ? written : "-",
                  rewritten ? rewritten : "-");
        free(rewritten);
        recuo_policy_free(again);
        cJSON_Delete(back);
        free(written);
        recuo_policy_free(policy);
        cJSON_free(value);
        count++;
    }
    CHECK_CTX(count >= 8, "only %d valid policy cases", count);
}

/* Each preset, made by its name, writes its plain form. */
static void policy_presets(const cJSON *cases) {
    int count = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *name = string(c, "name");
        recuo_policy *policy = strcmp(name, "guide_a") == 0       ? recuo_policy_new()
                               : strcmp(name, "guide_b") == 0     ? recuo_policy_new_guide_b()
                               : strcmp(name, "adapters") == 0    ? recuo_policy_new_adapters()
                               : strcmp(name, "interactive") == 0 ? recuo_policy_new_interactive()
                               : strcmp(name, "batch") == 0       ? recuo_policy_new_batch()
                                                                  : NULL;
        CHECK_CTX(policy != NULL, "no preset %s", name);
        char *written = policy != NULL ? policy_json(policy) : NULL;
        cJSON *back = written != NULL ? cJSON_Parse(written) : NULL;
        CHECK_CTX(back != NULL && cJSON_Compare(back, field(c, "expect"), true), "%s: wrote %s",
                  name, written ? written : "nothing");
        cJSON_Delete(back);
        free(written);
        recuo_policy_free(policy);
        count++;
    }
    CHECK_CTX(count == 5, "%d presets", count);
}

static void policy_invalid_cases(const cJSON *cases) {
    int count = 0, names_seen = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *name = string(c, "name");
        const char *error = string(c, "error");
        char *value = cJSON_PrintUnformatted(field(c, "value"));
        static char untouched;
        recuo_policy *sentinel = (recuo_policy *)(void *)&untouched, *policy = sentinel;
        recuo_status rc = recuo_policy_from_json(value, strlen(value), &policy);
        CHECK_CTX(strcmp(recuo_status_name(rc), error) == 0,
                  "%s: %s gave %s (%u), expected %s", name, value, recuo_status_name(rc),
                  (unsigned)rc, error);
        CHECK_CTX(policy == sentinel, "%s: the output was written", name);
        names_seen += strcmp(error, "unknown_name") == 0 || strcmp(error, "invalid_value") == 0;
        cJSON_free(value);
        count++;
    }
    CHECK_CTX(count >= 20 && names_seen > 0, "only %d invalid policy cases", count);
    /* The new statuses follow the house rule: 100 + the core's code. */
    CHECK_STATUS(RECUO_ERR_UNKNOWN_NAME, (recuo_status)108);
    CHECK_STATUS(RECUO_ERR_INVALID_VALUE, (recuo_status)109);
    CHECK(recuo_status_is_config_error(RECUO_ERR_UNKNOWN_NAME) &&
          recuo_status_is_config_error(RECUO_ERR_INVALID_VALUE));
}

static void policy_arguments(void) {
    recuo_policy *policy = NULL;
    /* Longer than RECUO_POLICY_JSON_MAX: refused before it is read. */
    size_t big = (size_t)RECUO_POLICY_JSON_MAX + 1;
    char *padded = xmalloc(big);
    memset(padded, ' ', big);
    padded[0] = '{';
    padded[big - 1] = '}';
    CHECK_STATUS(recuo_policy_from_json(padded, big, &policy), RECUO_ERR_LENGTH_TOO_LARGE);
    CHECK(policy == NULL);
    /* Exactly RECUO_POLICY_JSON_MAX bytes are read: guide A's policy, all defaults. */
    padded[big - 2] = '}';
    CHECK_STATUS(recuo_policy_from_json(padded, big - 1, &policy), RECUO_OK);
    free(padded);
    recuo_policy *guide_a = recuo_policy_new();
    char *expected = policy_json(guide_a);
    char *got = policy != NULL ? policy_json(policy) : NULL;
    CHECK_CTX(got != NULL && expected != NULL && strcmp(got, expected) == 0, "%s", got);
    free(got);
    recuo_policy_free(policy);
    policy = NULL;

    /* NULL pointers, text that is not UTF-8, text that is no JSON. */
    CHECK_STATUS(recuo_policy_from_json(NULL, 2, &policy), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_from_json("{}", 2, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_from_json(NULL, 0, &policy), RECUO_ERR_INVALID_VALUE);
    CHECK_STATUS(recuo_policy_from_json("{\"jitter\":\"\xff\"}", 14, &policy),
                 RECUO_ERR_NOT_UTF8);
    CHECK_STATUS(recuo_policy_from_json("{\"max_attempts\":3", 17, &policy),
                 RECUO_ERR_INVALID_VALUE);
    /* The length is the caller's: the bytes after it are never read. */
    CHECK_STATUS(recuo_policy_from_json("{}garbage", 2, &policy), RECUO_OK);
    recuo_policy_free(policy);
    policy = NULL;
    CHECK(policy == NULL);

    char buf[512];
    size_t written = 999;
    CHECK_STATUS(recuo_policy_to_json(NULL, buf, sizeof buf, &written), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_to_json(guide_a, NULL, sizeof buf, &written),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_EQ_U64(written, 999);
    /* written may be NULL. */
    CHECK_STATUS(recuo_policy_to_json(guide_a, buf, sizeof buf, NULL), RECUO_OK);
    CHECK_CTX(expected != NULL && strcmp(buf, expected) == 0, "%s", buf);

    /* A buffer too small: what fits, NUL-terminated, and the status says so. */
    size_t full = expected != NULL ? strlen(expected) : 0;
    memset(buf, 'x', sizeof buf);
    CHECK_STATUS(recuo_policy_to_json(guide_a, buf, full, &written), RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK_EQ_U64(written, full - 1);
    CHECK(buf[full - 1] == '\0' && expected != NULL && strncmp(buf, expected, full - 1) == 0);
    CHECK(buf[full] == 'x');
    CHECK_STATUS(recuo_policy_to_json(guide_a, buf, full + 1, &written), RECUO_OK);
    CHECK_EQ_U64(written, full);
    CHECK_STATUS(recuo_policy_to_json(guide_a, buf, 0, &written), RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK_EQ_U64(written, 0);

    /* A policy the core refuses (a cap set below the base) has no plain form. */
    CHECK_STATUS(recuo_policy_set_cap_ms(guide_a, 100), RECUO_OK);
    buf[0] = 'x';
    CHECK_STATUS(recuo_policy_to_json(guide_a, buf, sizeof buf, &written),
                 RECUO_ERR_CAP_BELOW_BASE);
    CHECK(buf[0] == 'x');

    /* The setters and the plain form are one policy. */
    recuo_policy *set = recuo_policy_new();
    recuo_policy_set_max_attempts(set, 7);
    recuo_policy_set_base_ms(set, 50);
    recuo_policy_set_cap_ms(set, 50);
    recuo_policy_set_jitter(set, RECUO_JITTER_DECORRELATED);
    recuo_policy_set_deadline_ms(set, 120000);
    recuo_policy_set_status_retry(set, 418, RECUO_RULE_ALWAYS);
    recuo_policy_set_method_idempotent(set, "post", 4, true);
    const char *json = "{\"max_attempts\":7,\"base_ms\":50,\"cap_ms\":50,"
                       "\"jitter\":\"decorrelated\",\"deadline_ms\":120000,"
                       "\"status_retry\":{\"418\":\"always\"},"
                       "\"idempotent_methods\":{\"POST\":true}}";
    CHECK_STATUS(recuo_policy_from_json(json, strlen(json), &policy), RECUO_OK);
    char *from_setters = policy_json(set);
    char *from_json = policy != NULL ? policy_json(policy) : NULL;
    CHECK_CTX(from_setters != NULL && from_json != NULL && strcmp(from_setters, from_json) == 0,
              "setters %s, JSON %s", from_setters, from_json);
    free(from_setters);
    free(from_json);
    recuo_policy_free(policy);
    recuo_policy_free(set);
    free(expected);
    recuo_policy_free(guide_a);
}

static void policy_cases(const char *dir) {
    char *text = read_file(dir, "policies.json");
    cJSON *doc = parse(text, "policies.json");
    policy_valid_cases(field(doc, "valid"));
    policy_invalid_cases(field(doc, "invalid"));
    policy_presets(field(doc, "presets"));
    policy_arguments();
    cJSON_Delete(doc);
    free(text);
}

#define LIT(s) (s), (sizeof(s) - 1)

/* telemetry.json: each record, as JSON, through recuo_telemetry_json: the span and the
 * points the core says it means (compared as JSON values); then what the function refuses. */
static void telemetry_cases(const char *dir) {
    char *text = read_file(dir, "telemetry.json");
    cJSON *doc = parse(text, "telemetry.json");
    const cJSON *c;
    int n = 0;
    cJSON_ArrayForEach(c, field(doc, "cases")) {
        const char *name = cJSON_GetStringValue(field(c, "name"));
        char *record = cJSON_PrintUnformatted(field(c, "record"));
        char out[8192];
        size_t written = 0;
        CHECK_STATUS(recuo_telemetry_json(record, strlen(record), out, sizeof out, &written),
                     RECUO_OK);
        cJSON *got = cJSON_Parse(out);
        CHECK_CTX(got != NULL && written == strlen(out), "%s: %s", name, out);
        if (got != NULL) {
            CHECK_CTX(cJSON_Compare(field(got, "span"), field(c, "span"), 1), "%s: span %s", name,
                      out);
            CHECK_CTX(cJSON_Compare(field(got, "points"), field(c, "points"), 1),
                      "%s: points %s", name, out);
        }
        cJSON_Delete(got);
        cJSON_free(record);
        n++;
    }
    CHECK_CTX(n == 10, "%d telemetry cases", n);
    char out[64];
    CHECK_STATUS(recuo_telemetry_json(LIT("{\"type\":\"attempt\"}"), out, sizeof out, NULL),
                 RECUO_ERR_INVALID_VALUE);
    CHECK_STATUS(recuo_telemetry_json(LIT("{\"type\":\"result\",\"start_unix_ms\":0,"
                                          "\"method\":\"\",\"url\":\"\",\"attempts\":1,"
                                          "\"reason\":\"tired\",\"total_ms\":0}"),
                                      out, sizeof out, NULL),
                 RECUO_ERR_INVALID_VALUE);
    CHECK_STATUS(recuo_telemetry_json(LIT("{\"type\":\"result\",\"start_unix_ms\":0,"
                                          "\"method\":\"\",\"url\":\"\",\"attempts\":1,"
                                          "\"total_ms\":0}"),
                                      out, 8, NULL),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK_STATUS(recuo_telemetry_json(NULL, 1, out, sizeof out, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_telemetry_json(LIT("{}"), NULL, 0, NULL), RECUO_ERR_NULL_ARGUMENT);
    cJSON_Delete(doc);
    free(text);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTORS_DIR\n", argv[0]);
        return 2;
    }
    retry_after_cases(argv[1]);
    backoff_cases(argv[1]);
    seeded_cases(argv[1]);
    classify_cases(argv[1]);
    scenario_cases(argv[1]);
    redaction_cases(argv[1]);
    origin_cases(argv[1]);
    policy_cases(argv[1]);
    telemetry_cases(argv[1]);
    return check_summary(argv[0]);
}
