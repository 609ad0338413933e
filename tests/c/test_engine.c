/*
 * test_engine.c — the policy engine from C (issue 3): the policy handle and every setter and
 * getter, recuo_classify, the state machine (recuo_attempts_*), the attempt pool (nested
 * loops: 5 calls, not 25), recuo_retry with its options, hooks, report and idempotency key,
 * and a cancellation from another thread waking a sleeping recuo_retry. Every return code,
 * every NULL argument, every enum name.
 *
 * The shared vectors (classify.json, scenarios.json) are run by test_vectors.c.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "recuo.h"

#include "check.h"

/* The numbers are ABI: they may never change. */
_Static_assert(RECUO_JITTER_FULL == 1 && RECUO_JITTER_EQUAL == 2 &&
                   RECUO_JITTER_DECORRELATED == 3 && RECUO_JITTER_NONE == 4,
               "recuo_jitter");
_Static_assert(RECUO_RULE_NEVER == 1 && RECUO_RULE_IF_IDEMPOTENT == 2 && RECUO_RULE_ALWAYS == 3,
               "recuo_status_rule");
_Static_assert(RECUO_TRANSPORT_CONNECT == 1 && RECUO_TRANSPORT_TLS == 2 &&
                   RECUO_TRANSPORT_TIMEOUT == 3 && RECUO_TRANSPORT_RESET == 4 &&
                   RECUO_TRANSPORT_OTHER == 5,
               "recuo_transport");
_Static_assert(RECUO_OUTCOME_SUCCESS == 1 && RECUO_OUTCOME_STATUS == 2 &&
                   RECUO_OUTCOME_TRANSPORT == 3,
               "recuo_outcome_kind");
_Static_assert(RECUO_VERDICT_SUCCESS == 1 && RECUO_VERDICT_RETRY == 2 &&
                   RECUO_VERDICT_GIVE_UP == 3,
               "recuo_verdict_kind");
_Static_assert(RECUO_CAUSE_SUCCESS == 1 && RECUO_CAUSE_RATE_LIMITED == 2 &&
                   RECUO_CAUSE_UNAVAILABLE == 3 && RECUO_CAUSE_SERVER_ERROR == 4 &&
                   RECUO_CAUSE_CONNECT == 5 && RECUO_CAUSE_TIMEOUT == 6 &&
                   RECUO_CAUSE_RESET == 7 && RECUO_CAUSE_OTHER == 8 &&
                   RECUO_CAUSE_NOT_IDEMPOTENT == 9 && RECUO_CAUSE_PERMANENT == 10 &&
                   RECUO_CAUSE_TLS == 11,
               "recuo_cause");
_Static_assert(RECUO_WAIT_NONE == 0 && RECUO_WAIT_MS == 1 && RECUO_WAIT_UNBOUNDED == 2,
               "recuo_wait_kind");
_Static_assert(RECUO_DECISION_DONE == 1 && RECUO_DECISION_RETRY == 2 &&
                   RECUO_DECISION_GIVE_UP == 3,
               "recuo_decision_kind");
_Static_assert(RECUO_GIVE_UP_NONE == 0 && RECUO_GIVE_UP_PERMANENT == 1 &&
                   RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED == 2 &&
                   RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE == 3 &&
                   RECUO_GIVE_UP_BUDGET_EXHAUSTED == 4 && RECUO_GIVE_UP_CANCELLED == 5,
               "recuo_give_up_reason");
_Static_assert(RECUO_IDEMPOTENCY_KEY_SIZE == 37, "36 characters and the NUL");
_Static_assert(sizeof(recuo_outcome) == 12, "recuo_outcome layout");
_Static_assert(sizeof(recuo_verdict) == 24, "recuo_verdict layout");

/* Sun, 06 Nov 1994 08:49:37 GMT */
#define NOW_MS INT64_C(784111777000)

/* A header from two string literals, with their exact lengths (no NUL needed). */
#define HDR(name, value) {(name), sizeof(name) - 1, (value), sizeof(value) - 1}

static int streq(const char *a, const char *b) {
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---- names ------------------------------------------------------------------------------ */

static void enum_names(void) {
    static const struct {
        const char *(*fn)(uint32_t);
        uint32_t value;
        const char *name;
    } table[] = {
        {recuo_jitter_name, RECUO_JITTER_FULL, "full"},
        {recuo_jitter_name, RECUO_JITTER_EQUAL, "equal"},
        {recuo_jitter_name, RECUO_JITTER_DECORRELATED, "decorrelated"},
        {recuo_jitter_name, RECUO_JITTER_NONE, "none"},
        {recuo_jitter_name, 0, "unknown"},
        {recuo_status_rule_name, RECUO_RULE_NEVER, "never"},
        {recuo_status_rule_name, RECUO_RULE_IF_IDEMPOTENT, "if_idempotent"},
        {recuo_status_rule_name, RECUO_RULE_ALWAYS, "always"},
        {recuo_status_rule_name, 4, "unknown"},
        {recuo_transport_name, RECUO_TRANSPORT_CONNECT, "connect"},
        {recuo_transport_name, RECUO_TRANSPORT_TLS, "tls"},
        {recuo_transport_name, RECUO_TRANSPORT_TIMEOUT, "timeout"},
        {recuo_transport_name, RECUO_TRANSPORT_RESET, "reset"},
        {recuo_transport_name, RECUO_TRANSPORT_OTHER, "other"},
        {recuo_transport_name, 0, "unknown"},
        {recuo_outcome_kind_name, RECUO_OUTCOME_SUCCESS, "success"},
        {recuo_outcome_kind_name, RECUO_OUTCOME_STATUS, "status"},
        {recuo_outcome_kind_name, RECUO_OUTCOME_TRANSPORT, "transport"},
        {recuo_outcome_kind_name, 0, "unknown"},
        {recuo_verdict_kind_name, RECUO_VERDICT_SUCCESS, "success"},
        {recuo_verdict_kind_name, RECUO_VERDICT_RETRY, "retry"},
        {recuo_verdict_kind_name, RECUO_VERDICT_GIVE_UP, "give_up"},
        {recuo_verdict_kind_name, 0, "unknown"},
        {recuo_cause_name, RECUO_CAUSE_SUCCESS, "success"},
        {recuo_cause_name, RECUO_CAUSE_RATE_LIMITED, "rate_limited"},
        {recuo_cause_name, RECUO_CAUSE_UNAVAILABLE, "unavailable"},
        {recuo_cause_name, RECUO_CAUSE_SERVER_ERROR, "server_error"},
        {recuo_cause_name, RECUO_CAUSE_CONNECT, "connect"},
        {recuo_cause_name, RECUO_CAUSE_TIMEOUT, "timeout"},
        {recuo_cause_name, RECUO_CAUSE_RESET, "reset"},
        {recuo_cause_name, RECUO_CAUSE_OTHER, "other"},
        {recuo_cause_name, RECUO_CAUSE_NOT_IDEMPOTENT, "not_idempotent"},
        {recuo_cause_name, RECUO_CAUSE_PERMANENT, "permanent"},
        {recuo_cause_name, RECUO_CAUSE_TLS, "tls"},
        {recuo_cause_name, 0, "unknown"},
        {recuo_cause_name, UINT32_MAX, "unknown"},
        {recuo_wait_kind_name, RECUO_WAIT_NONE, "none"},
        {recuo_wait_kind_name, RECUO_WAIT_MS, "ms"},
        {recuo_wait_kind_name, RECUO_WAIT_UNBOUNDED, "unbounded"},
        {recuo_wait_kind_name, 3, "unknown"},
        {recuo_decision_kind_name, RECUO_DECISION_DONE, "done"},
        {recuo_decision_kind_name, RECUO_DECISION_RETRY, "retry"},
        {recuo_decision_kind_name, RECUO_DECISION_GIVE_UP, "give_up"},
        {recuo_decision_kind_name, 4, "unknown"}, /* retired */
        {recuo_decision_kind_name, 5, "unknown"}, /* retired */
        {recuo_decision_kind_name, 0, "unknown"},
        {recuo_give_up_reason_name, RECUO_GIVE_UP_NONE, "none"},
        {recuo_give_up_reason_name, RECUO_GIVE_UP_PERMANENT, "permanent"},
        {recuo_give_up_reason_name, RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED, "attempts_exhausted"},
        {recuo_give_up_reason_name, RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE,
         "wait_exceeds_deadline"},
        {recuo_give_up_reason_name, RECUO_GIVE_UP_BUDGET_EXHAUSTED, "budget_exhausted"},
        {recuo_give_up_reason_name, RECUO_GIVE_UP_CANCELLED, "cancelled"},
        {recuo_give_up_reason_name, RECUO_GIVE_UP_QUEUE_STOPPED, "queue_stopped"},
        {recuo_give_up_reason_name, 7, "unknown"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const char *name = table[i].fn(table[i].value);
        CHECK_CTX(streq(name, table[i].name), "row %zu: %s, expected %s", i,
                  name ? name : "NULL", table[i].name);
    }
}

static void monotonic_clock(void) {
    uint64_t a = recuo_monotonic_ms();
    sleep_ms(20);
    uint64_t b = recuo_monotonic_ms();
    CHECK_CTX(b >= a + 15 && b < a + 10000, "%" PRIu64 " then %" PRIu64, a, b);
}

/* ---- the policy ------------------------------------------------------------------------- */

static void policy_defaults(void) {
    recuo_policy *a = recuo_policy_new();
    recuo_policy *b = recuo_policy_new_guide_b();
    CHECK(a != NULL && b != NULL);
    CHECK_STATUS(recuo_policy_validate(a), RECUO_OK);
    CHECK_STATUS(recuo_policy_validate(b), RECUO_OK);

    /* Guide A: 5 attempts, 200 ms, 5 s, full jitter, no deadline. */
    CHECK_EQ_U64(recuo_policy_max_attempts(a), 5);
    CHECK_EQ_U64(recuo_policy_base_ms(a), 200);
    CHECK_EQ_U64(recuo_policy_cap_ms(a), 5000);
    CHECK_EQ_U64(recuo_policy_jitter(a), RECUO_JITTER_FULL);
    uint64_t ms = 777;
    CHECK(!recuo_policy_deadline_ms(a, &ms) && ms == 777);
    CHECK(!recuo_policy_spread_ms(a, &ms) && ms == 777);
    CHECK(!recuo_policy_use_date_header(a));
    CHECK(recuo_policy_quota_403_is_rate_limit(a));
    char name[64];
    size_t written = 0;
    CHECK_STATUS(recuo_policy_idempotency_header(a, name, sizeof name, &written), RECUO_OK);
    CHECK(streq(name, "Idempotency-Key") && written == 15);

    /* Guide B: 5 attempts, 1 s, 8 s, 30 s deadline. */
    CHECK_EQ_U64(recuo_policy_max_attempts(b), 5);
    CHECK_EQ_U64(recuo_policy_base_ms(b), 1000);
    CHECK_EQ_U64(recuo_policy_cap_ms(b), 8000);
    CHECK(recuo_policy_deadline_ms(b, &ms) && ms == 30000);
    CHECK(recuo_policy_deadline_ms(b, NULL));

    /* SPEC §5's table. */
    static const struct {
        uint16_t status;
        uint32_t rule;
    } statuses[] = {
        {100, 0},                         {200, 0},
        {399, 0},                         {400, RECUO_RULE_NEVER},          {403, RECUO_RULE_NEVER},
        {404, RECUO_RULE_NEVER},          {408, RECUO_RULE_NEVER},
        {422, RECUO_RULE_NEVER},          {429, RECUO_RULE_ALWAYS},
        {500, RECUO_RULE_IF_IDEMPOTENT},  {501, RECUO_RULE_NEVER},
        {502, RECUO_RULE_IF_IDEMPOTENT},  {503, RECUO_RULE_ALWAYS},
        {504, RECUO_RULE_IF_IDEMPOTENT},  {505, RECUO_RULE_NEVER},
        {507, RECUO_RULE_IF_IDEMPOTENT},  {599, RECUO_RULE_IF_IDEMPOTENT},
    };
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        uint32_t rule = recuo_policy_status_retry(a, statuses[i].status);
        CHECK_CTX(rule == statuses[i].rule, "%u: %s", statuses[i].status,
                  recuo_status_rule_name(rule));
    }
    CHECK_EQ_U64(recuo_policy_status_retry(a, 99), 0);
    CHECK_EQ_U64(recuo_policy_status_retry(a, 600), 0);
    CHECK_EQ_U64(recuo_policy_transport_retry(a, RECUO_TRANSPORT_CONNECT), RECUO_RULE_ALWAYS);
    CHECK_EQ_U64(recuo_policy_transport_retry(a, RECUO_TRANSPORT_TLS), RECUO_RULE_NEVER);
    CHECK_EQ_U64(recuo_policy_transport_retry(a, RECUO_TRANSPORT_TIMEOUT),
                 RECUO_RULE_IF_IDEMPOTENT);
    CHECK_EQ_U64(recuo_policy_transport_retry(a, RECUO_TRANSPORT_RESET), RECUO_RULE_IF_IDEMPOTENT);
    CHECK_EQ_U64(recuo_policy_transport_retry(a, RECUO_TRANSPORT_OTHER), RECUO_RULE_IF_IDEMPOTENT);
    CHECK_EQ_U64(recuo_policy_transport_retry(a, 0), 0);
    static const char *idempotent[] = {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE", "get",
                                       "Put"};
    for (size_t i = 0; i < sizeof idempotent / sizeof idempotent[0]; i++) {
        CHECK_CTX(recuo_policy_method_idempotent(a, idempotent[i], strlen(idempotent[i])), "%s",
                  idempotent[i]);
    }
    static const char *not_idempotent[] = {"POST", "PATCH", "CONNECT", "BREW", ""};
    for (size_t i = 0; i < sizeof not_idempotent / sizeof not_idempotent[0]; i++) {
        CHECK_CTX(!recuo_policy_method_idempotent(a, not_idempotent[i],
                                                  strlen(not_idempotent[i])),
                  "%s", not_idempotent[i]);
    }
    CHECK(!recuo_policy_method_idempotent(a, "G\xff", 2));
    CHECK(!recuo_policy_method_idempotent(a, NULL, 3));
    /* The explicit length: "GETX" with length 3 is "GET". */
    CHECK(recuo_policy_method_idempotent(a, "GETX", 3));

    /* Getters on NULL answer 0 / false. */
    CHECK(recuo_policy_max_attempts(NULL) == 0 && recuo_policy_base_ms(NULL) == 0 &&
          recuo_policy_cap_ms(NULL) == 0 && recuo_policy_jitter(NULL) == 0);
    CHECK(!recuo_policy_deadline_ms(NULL, &ms) && !recuo_policy_spread_ms(NULL, &ms));
    CHECK(!recuo_policy_use_date_header(NULL) && !recuo_policy_quota_403_is_rate_limit(NULL));
    CHECK(recuo_policy_status_retry(NULL, 500) == 0 &&
          recuo_policy_transport_retry(NULL, RECUO_TRANSPORT_CONNECT) == 0);
    CHECK(!recuo_policy_method_idempotent(NULL, "GET", 3));
    CHECK_STATUS(recuo_policy_idempotency_header(NULL, name, sizeof name, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_idempotency_header(a, NULL, 16, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_validate(NULL), RECUO_ERR_NULL_ARGUMENT);

    /* A short buffer: truncated and terminated, as recuo_status_message. */
    char small[4];
    CHECK_STATUS(recuo_policy_idempotency_header(a, small, sizeof small, &written),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(streq(small, "Ide") && written == 3);

    recuo_policy_free(a);
    recuo_policy_free(b);
    recuo_policy_free(NULL);
}

static void policy_setters(void) {
    recuo_policy *p = recuo_policy_new();
    uint64_t ms = 0;
    char name[64];

    CHECK_STATUS(recuo_policy_set_max_attempts(p, 9), RECUO_OK);
    CHECK_EQ_U64(recuo_policy_max_attempts(p), 9);
    CHECK_STATUS(recuo_policy_set_base_ms(p, 10), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_cap_ms(p, 80), RECUO_OK);
    CHECK(recuo_policy_base_ms(p) == 10 && recuo_policy_cap_ms(p) == 80);
    for (uint32_t j = RECUO_JITTER_FULL; j <= RECUO_JITTER_NONE; j++) {
        CHECK_STATUS(recuo_policy_set_jitter(p, j), RECUO_OK);
        CHECK_EQ_U64(recuo_policy_jitter(p), j);
    }
    CHECK_STATUS(recuo_policy_set_deadline_ms(p, 1234), RECUO_OK);
    CHECK(recuo_policy_deadline_ms(p, &ms) && ms == 1234);
    CHECK_STATUS(recuo_policy_clear_deadline(p), RECUO_OK);
    CHECK(!recuo_policy_deadline_ms(p, &ms));
    CHECK_STATUS(recuo_policy_set_spread_ms(p, 0), RECUO_OK);
    CHECK(recuo_policy_spread_ms(p, &ms) && ms == 0);
    CHECK_STATUS(recuo_policy_clear_spread(p), RECUO_OK);
    CHECK(!recuo_policy_spread_ms(p, NULL));
    CHECK_STATUS(recuo_policy_set_use_date_header(p, true), RECUO_OK);
    CHECK(recuo_policy_use_date_header(p));
    CHECK_STATUS(recuo_policy_set_quota_403_is_rate_limit(p, false), RECUO_OK);
    CHECK(!recuo_policy_quota_403_is_rate_limit(p));
    /* The name's length is explicit: "X-Op-Key!!" with length 8 is "X-Op-Key". */
    CHECK_STATUS(recuo_policy_set_idempotency_header(p, "X-Op-Key!!", 8), RECUO_OK);
    CHECK_STATUS(recuo_policy_idempotency_header(p, name, sizeof name, NULL), RECUO_OK);
    CHECK(streq(name, "X-Op-Key"));

    CHECK_STATUS(recuo_policy_set_status_retry(p, 408, RECUO_RULE_ALWAYS), RECUO_OK);
    CHECK_EQ_U64(recuo_policy_status_retry(p, 408), RECUO_RULE_ALWAYS);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 503, RECUO_RULE_IF_IDEMPOTENT), RECUO_OK);
    CHECK_EQ_U64(recuo_policy_status_retry(p, 503), RECUO_RULE_IF_IDEMPOTENT);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 502, RECUO_RULE_NEVER), RECUO_OK);
    CHECK_EQ_U64(recuo_policy_status_retry(p, 502), RECUO_RULE_NEVER);
    /* The statuses a rule may be set for are 400–599, in every language (SPEC §5). */
    CHECK_STATUS(recuo_policy_set_status_retry(p, 100, RECUO_RULE_NEVER),
                 RECUO_ERR_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 399, RECUO_RULE_ALWAYS),
                 RECUO_ERR_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 400, RECUO_RULE_ALWAYS), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 599, RECUO_RULE_ALWAYS), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_transport_retry(p, RECUO_TRANSPORT_TLS, RECUO_RULE_ALWAYS),
                 RECUO_OK);
    CHECK_EQ_U64(recuo_policy_transport_retry(p, RECUO_TRANSPORT_TLS), RECUO_RULE_ALWAYS);
    CHECK_STATUS(recuo_policy_set_transport_retry(p, RECUO_TRANSPORT_CONNECT,
                                                  RECUO_RULE_IF_IDEMPOTENT),
                 RECUO_OK);
    CHECK_EQ_U64(recuo_policy_transport_retry(p, RECUO_TRANSPORT_CONNECT),
                 RECUO_RULE_IF_IDEMPOTENT);
    CHECK_STATUS(recuo_policy_set_transport_retry(p, RECUO_TRANSPORT_RESET, RECUO_RULE_NEVER),
                 RECUO_OK);
    CHECK_EQ_U64(recuo_policy_transport_retry(p, RECUO_TRANSPORT_RESET), RECUO_RULE_NEVER);
    CHECK_STATUS(recuo_policy_set_method_idempotent(p, "post", 4, true), RECUO_OK);
    CHECK(recuo_policy_method_idempotent(p, "POST", 4));
    CHECK_STATUS(recuo_policy_set_method_idempotent(p, "DELETE", 6, false), RECUO_OK);
    CHECK(!recuo_policy_method_idempotent(p, "delete", 6));
    CHECK_STATUS(recuo_policy_validate(p), RECUO_OK);

    /* Refused values: the status says why and the policy is unchanged. */
    recuo_status rc = recuo_policy_set_max_attempts(p, 0);
    CHECK_STATUS(rc, RECUO_ERR_ZERO_ATTEMPTS);
    CHECK(recuo_status_is_config_error(rc));
    CHECK_EQ_U64(recuo_policy_max_attempts(p), 9);
    rc = recuo_policy_set_idempotency_header(p, "", 0);
    CHECK_STATUS(rc, RECUO_ERR_INVALID_HEADER_NAME);
    CHECK(recuo_status_is_config_error(rc));
    CHECK_STATUS(recuo_policy_set_idempotency_header(p, NULL, 0), RECUO_ERR_INVALID_HEADER_NAME);
    CHECK_STATUS(recuo_policy_set_idempotency_header(p, "Bad Name", 8),
                 RECUO_ERR_INVALID_HEADER_NAME);
    CHECK_STATUS(recuo_policy_set_idempotency_header(p, "Key\0", 4),
                 RECUO_ERR_INVALID_HEADER_NAME);
    CHECK_STATUS(recuo_policy_set_idempotency_header(p, "K\xe9y", 3), RECUO_ERR_NOT_UTF8);
    CHECK_STATUS(recuo_policy_set_idempotency_header(p, NULL, 3), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_idempotency_header(p, "K", SIZE_MAX),
                 RECUO_ERR_LENGTH_TOO_LARGE);
    CHECK_STATUS(recuo_policy_idempotency_header(p, name, sizeof name, NULL), RECUO_OK);
    CHECK(streq(name, "X-Op-Key"));
    CHECK_STATUS(recuo_policy_set_jitter(p, 0), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_policy_set_jitter(p, 5), RECUO_ERR_INVALID_ENUM);
    CHECK_EQ_U64(recuo_policy_jitter(p), RECUO_JITTER_NONE);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 99, RECUO_RULE_ALWAYS),
                 RECUO_ERR_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 600, RECUO_RULE_ALWAYS),
                 RECUO_ERR_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 500, 0), RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 500, 4), RECUO_ERR_INVALID_ENUM);
    CHECK_EQ_U64(recuo_policy_status_retry(p, 500), RECUO_RULE_IF_IDEMPOTENT);
    CHECK_STATUS(recuo_policy_set_transport_retry(p, 0, RECUO_RULE_ALWAYS),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_policy_set_transport_retry(p, 6, RECUO_RULE_ALWAYS),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_policy_set_transport_retry(p, RECUO_TRANSPORT_OTHER, 9),
                 RECUO_ERR_INVALID_ENUM);
    CHECK_EQ_U64(recuo_policy_transport_retry(p, RECUO_TRANSPORT_OTHER), RECUO_RULE_IF_IDEMPOTENT);
    CHECK_STATUS(recuo_policy_set_method_idempotent(p, "BREW", 4, true),
                 RECUO_ERR_UNKNOWN_METHOD);
    CHECK_STATUS(recuo_policy_set_method_idempotent(p, "", 0, true), RECUO_ERR_UNKNOWN_METHOD);
    CHECK_STATUS(recuo_policy_set_method_idempotent(p, "GE\xff", 3, true), RECUO_ERR_NOT_UTF8);
    CHECK_STATUS(recuo_policy_set_method_idempotent(p, NULL, 3, true), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_validate(p), RECUO_OK);

    /* A cap below the base is stored, and refused by validate and wherever it is used. */
    CHECK_STATUS(recuo_policy_set_cap_ms(p, 5), RECUO_OK);
    rc = recuo_policy_validate(p);
    CHECK_STATUS(rc, RECUO_ERR_CAP_BELOW_BASE);
    CHECK(recuo_status_is_config_error(rc));
    CHECK_STATUS(recuo_policy_set_base_ms(p, 5), RECUO_OK);
    CHECK_STATUS(recuo_policy_validate(p), RECUO_OK);

    /* Every setter refuses a NULL policy. */
    CHECK_STATUS(recuo_policy_set_max_attempts(NULL, 3), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_base_ms(NULL, 3), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_cap_ms(NULL, 3), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_jitter(NULL, RECUO_JITTER_FULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_deadline_ms(NULL, 3), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_clear_deadline(NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_spread_ms(NULL, 3), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_clear_spread(NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_use_date_header(NULL, true), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_idempotency_header(NULL, "K", 1), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_status_retry(NULL, 500, RECUO_RULE_ALWAYS),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_transport_retry(NULL, 1, RECUO_RULE_ALWAYS),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_method_idempotent(NULL, "GET", 3, true),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_quota_403_is_rate_limit(NULL, true), RECUO_ERR_NULL_ARGUMENT);
    recuo_policy_free(p);
}

/* ---- classification --------------------------------------------------------------------- */

static recuo_outcome status_outcome(uint16_t status) {
    recuo_outcome o = {RECUO_OUTCOME_STATUS, status, 0};
    return o;
}

static recuo_outcome transport_outcome(recuo_transport t) {
    recuo_outcome o = {RECUO_OUTCOME_TRANSPORT, 0, t};
    return o;
}

/* Classifies under `p`, checking the status is RECUO_OK. */
static recuo_verdict classify(const recuo_policy *p, recuo_outcome o, const char *method,
                              bool key, const recuo_header *h, size_t n) {
    recuo_verdict v;
    memset(&v, 0xAB, sizeof v);
    recuo_status rc = recuo_classify(p, &o, method, strlen(method), key, h, n, NOW_MS, &v);
    CHECK_CTX(rc == RECUO_OK, "%s %u: %s", method, (unsigned)o.status, recuo_status_name(rc));
    return v;
}

#define CHECK_VERDICT(v, kind, why, wait_kind, ms)                                           \
    CHECK_CTX((v).verdict == (kind) && (v).cause == (why) && (v).wait == (wait_kind) &&      \
                  (v).wait_ms == (ms),                                                       \
              "got %s/%s/%s/%" PRIu64, recuo_verdict_kind_name((v).verdict),                 \
              recuo_cause_name((v).cause), recuo_wait_kind_name((v).wait), (v).wait_ms)

static void classification(void) {
    recuo_policy *p = recuo_policy_new();
    recuo_verdict v;

    v = classify(p, status_outcome(200), "POST", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_SUCCESS, RECUO_CAUSE_SUCCESS, RECUO_WAIT_NONE, 0);
    recuo_outcome ok = {RECUO_OUTCOME_SUCCESS, 0, 0};
    v = classify(p, ok, "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_SUCCESS, RECUO_CAUSE_SUCCESS, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(429), "POST", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(503), "PATCH", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_UNAVAILABLE, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(500), "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(500), "POST", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_NOT_IDEMPOTENT, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(500), "POST", true, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(501), "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_PERMANENT, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(404), "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_PERMANENT, RECUO_WAIT_NONE, 0);
    /* Outside 100-599: treated as 500. */
    v = classify(p, status_outcome(999), "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR, RECUO_WAIT_NONE, 0);
    v = classify(p, transport_outcome(RECUO_TRANSPORT_CONNECT), "POST", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_CONNECT, RECUO_WAIT_NONE, 0);
    v = classify(p, transport_outcome(RECUO_TRANSPORT_TIMEOUT), "POST", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_NOT_IDEMPOTENT, RECUO_WAIT_NONE, 0);
    v = classify(p, transport_outcome(RECUO_TRANSPORT_TIMEOUT), "put", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_TIMEOUT, RECUO_WAIT_NONE, 0);
    v = classify(p, transport_outcome(RECUO_TRANSPORT_RESET), "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_RESET, RECUO_WAIT_NONE, 0);
    v = classify(p, transport_outcome(RECUO_TRANSPORT_OTHER), "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_OTHER, RECUO_WAIT_NONE, 0);
    v = classify(p, transport_outcome(RECUO_TRANSPORT_TLS), "GET", true, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_TLS, RECUO_WAIT_NONE, 0);

    /* Server waits: seconds, a date, unbounded, rate-limit hints, a spent-quota 403. */
    recuo_header seconds[] = {HDR("Content-Type", "text/plain"), HDR("retry-after", " 12 ")};
    v = classify(p, status_outcome(503), "GET", false, seconds, 2);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_UNAVAILABLE, RECUO_WAIT_MS, 12000);
    recuo_header date[] = {HDR("Retry-After", "Sun, 06 Nov 1994 08:50:07 GMT")};
    v = classify(p, status_outcome(429), "GET", false, date, 1);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED, RECUO_WAIT_MS, 30000);
    recuo_header huge[] = {HDR("Retry-After", "99999999999999999999")};
    v = classify(p, status_outcome(429), "GET", false, huge, 1);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED, RECUO_WAIT_UNBOUNDED, 0);
    recuo_header quota[] = {HDR("X-RateLimit-Remaining", "0"), HDR("X-RateLimit-Reset", "30")};
    v = classify(p, status_outcome(403), "GET", false, quota, 2);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED, RECUO_WAIT_MS, 30000);
    /* A give-up carries no wait. */
    v = classify(p, status_outcome(404), "GET", false, seconds, 2);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_PERMANENT, RECUO_WAIT_NONE, 0);

    /* Header bytes: explicit lengths, NUL bytes and non-UTF-8 make a header invalid, never the
     * call. The first header of a name wins, so an invalid first one hides a later one. */
    const char ra[] = "Retry-After";
    const char twelve_x[] = {'1', '2', 'x'};
    recuo_header cut[] = {{ra, 11, twelve_x, 2}}; /* "12", no NUL anywhere */
    v = classify(p, status_outcome(503), "GET", false, cut, 1);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_UNAVAILABLE, RECUO_WAIT_MS, 12000);
    recuo_header with_nul[] = {{ra, 11, "12\0", 3}};
    v = classify(p, status_outcome(503), "GET", false, with_nul, 1);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_UNAVAILABLE, RECUO_WAIT_NONE, 0);
    recuo_header latin1[] = {HDR("Retry-After", "12\xff"), HDR("Retry-After", "5")};
    v = classify(p, status_outcome(503), "GET", false, latin1, 2);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_UNAVAILABLE, RECUO_WAIT_NONE, 0);
    recuo_header bad_name[] = {HDR("Retry-After\xc3", "7"), HDR("X-Note", "\xe9t\xe9"),
                               HDR("Retry-After", "9")};
    v = classify(p, status_outcome(503), "GET", false, bad_name, 3);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_UNAVAILABLE, RECUO_WAIT_MS, 9000);
    recuo_header empty[] = {{NULL, 0, NULL, 0}, HDR("Retry-After", "1")};
    v = classify(p, status_outcome(503), "GET", false, empty, 2);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_UNAVAILABLE, RECUO_WAIT_MS, 1000);

    /* The response's Date as "now", when the policy says so. */
    recuo_header dated[] = {HDR("Date", "Sun, 06 Nov 1994 08:49:47 GMT"),
                            HDR("Retry-After", "Sun, 06 Nov 1994 08:50:07 GMT")};
    v = classify(p, status_outcome(429), "GET", false, dated, 2);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED, RECUO_WAIT_MS, 30000);
    CHECK_STATUS(recuo_policy_set_use_date_header(p, true), RECUO_OK);
    v = classify(p, status_outcome(429), "GET", false, dated, 2);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED, RECUO_WAIT_MS, 20000);

    /* The configured sets decide. */
    CHECK_STATUS(recuo_policy_set_status_retry(p, 408, RECUO_RULE_ALWAYS), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_status_retry(p, 503, RECUO_RULE_NEVER), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_method_idempotent(p, "POST", 4, true), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_quota_403_is_rate_limit(p, false), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_transport_retry(p, RECUO_TRANSPORT_TLS, RECUO_RULE_ALWAYS),
                 RECUO_OK);
    CHECK_STATUS(recuo_policy_set_transport_retry(p, RECUO_TRANSPORT_RESET, RECUO_RULE_NEVER),
                 RECUO_OK);
    v = classify(p, status_outcome(408), "PATCH", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(503), "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_PERMANENT, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(500), "POST", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR, RECUO_WAIT_NONE, 0);
    v = classify(p, status_outcome(403), "GET", false, quota, 2);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_PERMANENT, RECUO_WAIT_NONE, 0);
    v = classify(p, transport_outcome(RECUO_TRANSPORT_TLS), "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_RETRY, RECUO_CAUSE_TLS, RECUO_WAIT_NONE, 0);
    v = classify(p, transport_outcome(RECUO_TRANSPORT_RESET), "GET", false, NULL, 0);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_PERMANENT, RECUO_WAIT_NONE, 0);

    /* Errors: nothing is written. */
    recuo_verdict untouched = {RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_TLS, RECUO_WAIT_MS, 4242};
    recuo_outcome o = status_outcome(503);
    CHECK_STATUS(recuo_classify(NULL, &o, "GET", 3, false, NULL, 0, NOW_MS, &untouched),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_classify(p, NULL, "GET", 3, false, NULL, 0, NOW_MS, &untouched),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_classify(p, &o, "GET", 3, false, NULL, 0, NOW_MS, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_classify(p, &o, NULL, 3, false, NULL, 0, NOW_MS, &untouched),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_classify(p, &o, "GET", 3, false, NULL, 2, NOW_MS, &untouched),
                 RECUO_ERR_NULL_ARGUMENT);
    recuo_header null_value[] = {{ra, 11, NULL, 2}};
    CHECK_STATUS(recuo_classify(p, &o, "GET", 3, false, null_value, 1, NOW_MS, &untouched),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_classify(p, &o, "GET", 3, false, seconds, SIZE_MAX, NOW_MS, &untouched),
                 RECUO_ERR_LENGTH_TOO_LARGE);
    CHECK_STATUS(recuo_classify(p, &o, "GET", SIZE_MAX, false, NULL, 0, NOW_MS, &untouched),
                 RECUO_ERR_LENGTH_TOO_LARGE);
    CHECK_STATUS(recuo_classify(p, &o, "G\xc3T", 3, false, NULL, 0, NOW_MS, &untouched),
                 RECUO_ERR_NOT_UTF8);
    recuo_outcome bad_kind = {0, 200, 0};
    CHECK_STATUS(recuo_classify(p, &bad_kind, "GET", 3, false, NULL, 0, NOW_MS, &untouched),
                 RECUO_ERR_INVALID_ENUM);
    recuo_outcome bad_kind2 = {4, 200, 0};
    CHECK_STATUS(recuo_classify(p, &bad_kind2, "GET", 3, false, NULL, 0, NOW_MS, &untouched),
                 RECUO_ERR_INVALID_ENUM);
    recuo_outcome bad_transport = {RECUO_OUTCOME_TRANSPORT, 0, 6};
    CHECK_STATUS(
        recuo_classify(p, &bad_transport, "GET", 3, false, NULL, 0, NOW_MS, &untouched),
        RECUO_ERR_INVALID_ENUM);
    CHECK_STATUS(recuo_policy_set_cap_ms(p, 1), RECUO_OK);
    CHECK_STATUS(recuo_classify(p, &o, "GET", 3, false, NULL, 0, NOW_MS, &untouched),
                 RECUO_ERR_CAP_BELOW_BASE);
    CHECK(untouched.verdict == RECUO_VERDICT_GIVE_UP && untouched.cause == RECUO_CAUSE_TLS &&
          untouched.wait == RECUO_WAIT_MS && untouched.wait_ms == 4242);

    /* An empty method (NULL, 0) is no idempotent method. */
    CHECK_STATUS(recuo_policy_set_cap_ms(p, 5000), RECUO_OK);
    recuo_outcome timeout = transport_outcome(RECUO_TRANSPORT_TIMEOUT);
    CHECK_STATUS(recuo_classify(p, &timeout, NULL, 0, false, NULL, 0, NOW_MS, &v), RECUO_OK);
    CHECK_VERDICT(v, RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_NOT_IDEMPOTENT, RECUO_WAIT_NONE, 0);
    recuo_policy_free(p);
}

/* ---- the state machine ------------------------------------------------------------------ */

static const recuo_verdict RETRY = {.verdict = RECUO_VERDICT_RETRY,
                                    .cause = RECUO_CAUSE_SERVER_ERROR};
static const recuo_verdict GIVE_UP = {.verdict = RECUO_VERDICT_GIVE_UP,
                                      .cause = RECUO_CAUSE_PERMANENT};

/* A policy with exact delays: jitter none, base/cap as given. */
static recuo_policy *exact_policy(uint32_t attempts, uint64_t base, uint64_t cap) {
    recuo_policy *p = recuo_policy_new();
    CHECK_STATUS(recuo_policy_set_max_attempts(p, attempts), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_base_ms(p, base), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_cap_ms(p, cap), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_jitter(p, RECUO_JITTER_NONE), RECUO_OK);
    CHECK_STATUS(recuo_policy_set_spread_ms(p, 0), RECUO_OK);
    return p;
}

#define CHECK_STEP(s, k, at, delay, why)                                                     \
    CHECK_CTX((s).kind == (k) && (s).attempt == (at) && (s).delay_ms == (delay) &&          \
                  (s).reason == (why),                                                       \
              "got %s attempt %u delay %" PRIu64 " reason %s", recuo_step_kind_name((s).kind), \
              (unsigned)(s).attempt, (s).delay_ms, recuo_give_up_reason_name((s).reason))

/* Attempt `s->attempt` failed with verdict `v` at `now`: `recuo_attempts_failed`, then
 * `recuo_attempts_judged` when the machine asks for the verdict; `*s` is the next step. */
static void failed_with(recuo_attempts *a, const recuo_verdict *v, uint64_t now,
                        recuo_step *s) {
    CHECK_STATUS(recuo_attempts_failed(a, now, s), RECUO_OK);
    if (s->kind == RECUO_STEP_CLASSIFY) {
        CHECK_STATUS(recuo_attempts_judged(a, now, v, s), RECUO_OK);
    }
}

/* As failed_with, then the sleep the machine asks for (if it does) ends after its delay:
 * `*s` is the next attempt's CALL, or the end. */
static void failed_and_slept(recuo_attempts *a, const recuo_verdict *v, uint64_t now,
                             recuo_step *s) {
    failed_with(a, v, now, s);
    if (s->kind == RECUO_STEP_SLEEP) {
        CHECK_STATUS(recuo_attempts_slept(a, now + s->delay_ms, s), RECUO_OK);
    }
}

static int is_uuid_v4(const char *k) {
    if (strlen(k) != 36) {
        return 0;
    }
    for (int i = 0; i < 36; i++) {
        char c = k[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-') {
                return 0;
            }
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return 0;
        }
    }
    return k[14] == '4' && strchr("89ab", k[19]) != NULL;
}

static void attempts_sequence(void) {
    recuo_policy *p = exact_policy(4, 100, 250);
    recuo_attempts *a = NULL;
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK(a != NULL);
    /* The machine has its own copy: the policy may go. */
    recuo_policy_free(p);

    recuo_step s;
    memset(&s, 0xCD, sizeof s);
    CHECK_STATUS(recuo_attempts_start(a, 1000, 0, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_CALL, 0, 0, RECUO_GIVE_UP_NONE);
    CHECK(!s.has_retry_at && s.retry_at_ms == 0);
    failed_with(a, &RETRY, 1010, &s);
    CHECK_STEP(s, RECUO_STEP_SLEEP, 0, 100, RECUO_GIVE_UP_NONE);
    CHECK_STATUS(recuo_attempts_slept(a, 1110, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_CALL, 1, 0, RECUO_GIVE_UP_NONE);
    failed_with(a, &RETRY, 1120, &s);
    CHECK_STEP(s, RECUO_STEP_SLEEP, 1, 200, RECUO_GIVE_UP_NONE);
    CHECK_STATUS(recuo_attempts_slept(a, 1320, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_CALL, 2, 0, RECUO_GIVE_UP_NONE);
    /* A server wait wins over the cap (250): 1500 + spread 0. */
    recuo_verdict waited = RETRY;
    waited.wait = RECUO_WAIT_MS;
    waited.wait_ms = 1500;
    failed_with(a, &waited, 1330, &s);
    CHECK_STEP(s, RECUO_STEP_SLEEP, 2, 1500, RECUO_GIVE_UP_NONE);
    CHECK_STATUS(recuo_attempts_slept(a, 2830, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_CALL, 3, 0, RECUO_GIVE_UP_NONE);
    CHECK_STATUS(recuo_attempts_succeeded(a, 2900, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_DONE, 3, 0, RECUO_GIVE_UP_NONE);

    recuo_report r;
    uint64_t delays[8] = {0};
    size_t n = 99;
    CHECK_STATUS(recuo_attempts_report(a, &r, delays, 8, &n), RECUO_OK);
    CHECK(r.attempts == 4 && r.reason == RECUO_GIVE_UP_NONE && r.elapsed_ms == 1900);
    CHECK(r.delay_count == 3 && n == 3 && !r.has_retry_after && r.retry_after_ms == 0);
    CHECK(delays[0] == 100 && delays[1] == 200 && delays[2] == 1500 && delays[3] == 0);

    /* Fewer slots than delays: what fits, and the count says there are more. */
    uint64_t two[2] = {0, 0};
    CHECK_STATUS(recuo_attempts_report(a, &r, two, 2, &n), RECUO_OK);
    CHECK(n == 2 && r.delay_count == 3 && two[0] == 100 && two[1] == 200);
    CHECK_STATUS(recuo_attempts_report(a, &r, NULL, 0, NULL), RECUO_OK);
    CHECK(r.attempts == 4);
    recuo_attempts_free(a);
}

static void attempts_give_up_reasons(void) {
    recuo_step s;
    recuo_report r;

    /* Permanent: a verdict that gave up. */
    recuo_policy *p = exact_policy(3, 100, 100);
    recuo_attempts *a = NULL;
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    failed_with(a, &GIVE_UP, 5, &s);
    CHECK_STEP(s, RECUO_STEP_GAVE_UP, 0, 0, RECUO_GIVE_UP_PERMANENT);
    CHECK_STATUS(recuo_attempts_report(a, &r, NULL, 0, NULL), RECUO_OK);
    CHECK(r.attempts == 1 && r.reason == RECUO_GIVE_UP_PERMANENT && r.elapsed_ms == 5);
    recuo_attempts_free(a);

    /* Attempts exhausted: 3 attempts, the third's retry verdict gives up. */
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    for (uint64_t i = 0; i < 3; i++) {
        CHECK_STEP(s, RECUO_STEP_CALL, i, 0, RECUO_GIVE_UP_NONE);
        failed_and_slept(a, &RETRY, i * 100, &s);
    }
    CHECK_STEP(s, RECUO_STEP_GAVE_UP, 2, 0, RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);
    /* A step after the end answers the end again. */
    CHECK_STATUS(recuo_attempts_slept(a, 300, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_GAVE_UP, 2, 0, RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);
    recuo_attempts_free(a);

    /* Cancelled: before the start, and before a retry. */
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_cancel(a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_GAVE_UP, 0, 0, RECUO_GIVE_UP_CANCELLED);
    CHECK_STATUS(recuo_attempts_report(a, &r, NULL, 0, NULL), RECUO_OK);
    CHECK(r.attempts == 0 && r.reason == RECUO_GIVE_UP_CANCELLED);
    recuo_attempts_free(a);
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    CHECK_STATUS(recuo_attempts_cancel(a), RECUO_OK);
    failed_with(a, &RETRY, 1, &s);
    CHECK_STEP(s, RECUO_STEP_GAVE_UP, 0, 0, RECUO_GIVE_UP_CANCELLED);
    recuo_attempts_free(a);
    recuo_policy_free(p);

    /* Wait exceeds deadline: finite (with the instant and the wait left) and unbounded. */
    p = recuo_policy_new_guide_b();
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 10000, 0, &s), RECUO_OK);
    recuo_verdict forty = {RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED, RECUO_WAIT_MS, 40000};
    failed_with(a, &forty, 10500, &s);
    CHECK_STEP(s, RECUO_STEP_GAVE_UP, 0, 0, RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE);
    CHECK(s.has_retry_at && s.retry_at_ms == 50500);
    CHECK_STATUS(recuo_attempts_report(a, &r, NULL, 0, NULL), RECUO_OK);
    CHECK(r.reason == RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE && r.has_retry_after &&
          r.retry_after_ms == 40000 && r.elapsed_ms == 500);
    recuo_attempts_free(a);
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    recuo_verdict forever = {RECUO_VERDICT_RETRY, RECUO_CAUSE_RATE_LIMITED, RECUO_WAIT_UNBOUNDED,
                             0};
    failed_with(a, &forever, 1, &s);
    CHECK_STEP(s, RECUO_STEP_GAVE_UP, 0, 0, RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE);
    CHECK(!s.has_retry_at && s.retry_at_ms == 0);
    CHECK_STATUS(recuo_attempts_report(a, &r, NULL, 0, NULL), RECUO_OK);
    CHECK(!r.has_retry_after && r.retry_after_ms == 0);
    recuo_attempts_free(a);
    recuo_policy_free(p);
}

static void attempts_errors(void) {
    recuo_policy *p = recuo_policy_new();
    static char dummy;
    recuo_attempts *const sentinel = (recuo_attempts *)(void *)&dummy;
    recuo_attempts *a = sentinel; /* must stay untouched by the failing calls */
    CHECK_STATUS(recuo_attempts_new(NULL, &a), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_new(p, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_new_seeded(NULL, 1, &a), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_new_seeded(p, 1, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_policy_set_cap_ms(p, 1), RECUO_OK);
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_ERR_CAP_BELOW_BASE);
    CHECK_STATUS(recuo_attempts_new_seeded(p, 1, &a), RECUO_ERR_CAP_BELOW_BASE);
    CHECK(a == sentinel);
    CHECK_STATUS(recuo_policy_set_cap_ms(p, 5000), RECUO_OK);
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);

    recuo_step s = {.kind = RECUO_STEP_DONE, .delay_ms = 77};
    CHECK_STATUS(recuo_attempts_start(NULL, 0, 0, &s), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_judged(NULL, 0, &RETRY, &s), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_judged(a, 0, NULL, &s), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_judged(a, 0, &RETRY, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK(s.kind == RECUO_STEP_DONE && s.delay_ms == 77);

    /* Verdicts with fields that are no constants: refused, nothing changes. */
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    CHECK_STATUS(recuo_attempts_failed(a, 10, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_CLASSIFY, 0, 0, RECUO_GIVE_UP_NONE);
    recuo_verdict zero;
    memset(&zero, 0, sizeof zero);
    recuo_verdict bad_cause = {RECUO_VERDICT_RETRY, 0, RECUO_WAIT_NONE, 0};
    recuo_verdict bad_kind = {9, RECUO_CAUSE_PERMANENT, RECUO_WAIT_NONE, 0};
    recuo_verdict bad_wait = {RECUO_VERDICT_RETRY, RECUO_CAUSE_SERVER_ERROR, 3, 0};
    /* A retry or a give-up names any cause but success, as in every recuo language. */
    recuo_verdict retry_success = {RECUO_VERDICT_RETRY, RECUO_CAUSE_SUCCESS, RECUO_WAIT_NONE, 0};
    recuo_verdict give_up_success = {RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_SUCCESS, RECUO_WAIT_NONE,
                                     0};
    const recuo_verdict *bad[] = {&zero,     &bad_cause,     &bad_kind,
                                  &bad_wait, &retry_success, &give_up_success};
    for (size_t i = 0; i < 6; i++) {
        s.kind = RECUO_STEP_DONE;
        CHECK_STATUS(recuo_attempts_judged(a, 10, bad[i], &s), RECUO_ERR_INVALID_ENUM);
        CHECK(s.kind == RECUO_STEP_DONE);
    }
    /* The wait of a verdict that is no retry is not read. */
    recuo_verdict give_up_any_wait = {RECUO_VERDICT_GIVE_UP, RECUO_CAUSE_PERMANENT, 99, 5};
    recuo_report r;
    CHECK_STATUS(recuo_attempts_report(a, &r, NULL, 0, NULL), RECUO_OK);
    CHECK(r.attempts == 1 && r.reason == RECUO_GIVE_UP_NONE && r.delay_count == 0);
    CHECK_STATUS(recuo_attempts_judged(a, 10, &give_up_any_wait, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_GAVE_UP, 0, 0, RECUO_GIVE_UP_PERMANENT);

    CHECK_STATUS(recuo_attempts_cancel(NULL), RECUO_ERR_NULL_ARGUMENT);
    recuo_report untouched = {.attempts = 42};
    uint64_t delays[2];
    CHECK_STATUS(recuo_attempts_report(NULL, &untouched, NULL, 0, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_report(a, NULL, NULL, 0, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_report(a, &untouched, NULL, 2, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_report(a, &untouched, delays, SIZE_MAX, NULL),
                 RECUO_ERR_LENGTH_TOO_LARGE);
    CHECK(untouched.attempts == 42);
    recuo_attempts_free(a);
    recuo_attempts_free(NULL);
    recuo_policy_free(p);
}

static void attempts_idempotency_key(void) {
    recuo_policy *p = recuo_policy_new();
    recuo_attempts *a = NULL, *b = NULL, *c = NULL;
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_new(p, &b), RECUO_OK);
    char k1[RECUO_IDEMPOTENCY_KEY_SIZE], k2[64], k3[RECUO_IDEMPOTENCY_KEY_SIZE];
    size_t written = 0;
    CHECK_STATUS(recuo_attempts_idempotency_key(a, k1, sizeof k1, &written), RECUO_OK);
    CHECK_CTX(is_uuid_v4(k1) && written == 36, "%s", k1);
    /* The same key on every call for this operation, across attempts... */
    recuo_step s;
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    failed_and_slept(a, &RETRY, 0, &s);
    CHECK_STEP(s, RECUO_STEP_CALL, 1, 0, RECUO_GIVE_UP_NONE);
    CHECK_STATUS(recuo_attempts_idempotency_key(a, k2, sizeof k2, NULL), RECUO_OK);
    CHECK(strcmp(k1, k2) == 0);
    /* ...and another for another operation. */
    CHECK_STATUS(recuo_attempts_idempotency_key(b, k3, sizeof k3, NULL), RECUO_OK);
    CHECK(is_uuid_v4(k3) && strcmp(k1, k3) != 0);

    /* A seed never makes the key (SPEC §5): two machines with one seed, two keys. */
    CHECK_STATUS(recuo_attempts_new_seeded(p, 7, &c), RECUO_OK);
    CHECK_STATUS(recuo_attempts_idempotency_key(c, k2, sizeof k2, NULL), RECUO_OK);
    recuo_attempts_free(c);
    CHECK_STATUS(recuo_attempts_new_seeded(p, 7, &c), RECUO_OK);
    CHECK_STATUS(recuo_attempts_idempotency_key(c, k3, sizeof k3, NULL), RECUO_OK);
    CHECK(is_uuid_v4(k2) && is_uuid_v4(k3) && strcmp(k2, k3) != 0);
    recuo_attempts_free(c);

    /* A buffer too small gets nothing at all: a cut key must never be sent. */
    char small[36];
    memset(small, 'x', sizeof small);
    written = 99;
    CHECK_STATUS(recuo_attempts_idempotency_key(a, small, sizeof small, &written),
                 RECUO_ERR_BUFFER_TOO_SMALL);
    CHECK(small[0] == 'x' && small[35] == 'x' && written == 99);
    CHECK_STATUS(recuo_attempts_idempotency_key(a, NULL, 37, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_idempotency_key(NULL, k1, sizeof k1, NULL),
                 RECUO_ERR_NULL_ARGUMENT);
    recuo_attempts_free(a);
    recuo_attempts_free(b);
    recuo_policy_free(p);
}

static void attempts_seeded_jitter_repeats(void) {
    recuo_policy *p = recuo_policy_new();
    uint64_t first[4], second[4];
    for (int run = 0; run < 2; run++) {
        recuo_attempts *a = NULL;
        CHECK_STATUS(recuo_attempts_new_seeded(p, 99, &a), RECUO_OK);
        uint64_t now = 0;
        recuo_step s;
        CHECK_STATUS(recuo_attempts_start(a, now, 0, &s), RECUO_OK);
        for (int i = 0; i < 4; i++) {
            failed_with(a, &RETRY, now, &s);
            CHECK(s.kind == RECUO_STEP_SLEEP);
            uint64_t window = 0;
            CHECK_STATUS(recuo_backoff_window_ms(200, 5000, (uint32_t)i, &window), RECUO_OK);
            CHECK_CTX(s.delay_ms <= window, "delay %" PRIu64 " > window %" PRIu64, s.delay_ms,
                      window);
            (run == 0 ? first : second)[i] = s.delay_ms;
            now += s.delay_ms;
            CHECK_STATUS(recuo_attempts_slept(a, now, &s), RECUO_OK);
        }
        recuo_attempts_free(a);
    }
    CHECK(memcmp(first, second, sizeof first) == 0);
    recuo_policy_free(p);
}

/* ---- the attempt pool: nested loops share one limit ------------------------------------- */

static void pool_basics(void) {
    recuo_attempt_pool *pool = recuo_attempt_pool_new(3);
    CHECK(pool != NULL);
    CHECK_EQ_U64(recuo_attempt_pool_remaining(pool), 3);
    CHECK_EQ_U64(recuo_attempt_pool_remaining(NULL), 0);

    recuo_policy *p = exact_policy(5, 0, 0);
    recuo_attempts *a = NULL;
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_pool(NULL, pool, false), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_set_pool(a, NULL, false), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_attempts_set_pool(a, pool, false), RECUO_OK);
    /* The machine keeps the count alive: the handle may go first. */
    recuo_attempt_pool_free(pool);
    recuo_step s;
    uint32_t made = 0;
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    while (s.kind == RECUO_STEP_CALL && made < 10) {
        made++;
        failed_and_slept(a, &RETRY, 0, &s);
    }
    CHECK_EQ_U64(made, 3);
    CHECK(s.kind == RECUO_STEP_GAVE_UP && s.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);
    /* Too late to change the pool once the machine has started. */
    recuo_attempt_pool *other = recuo_attempt_pool_new(9);
    CHECK_STATUS(recuo_attempts_set_pool(a, other, false), RECUO_ERR_ALREADY_STARTED);
    recuo_attempts_free(a);

    /* An empty pool refuses even the first attempt of an outermost loop. */
    recuo_attempt_pool *empty = recuo_attempt_pool_new(0);
    CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_set_pool(a, empty, false), RECUO_OK);
    CHECK_STATUS(recuo_attempts_start(a, 0, 0, &s), RECUO_OK);
    CHECK_STEP(s, RECUO_STEP_GAVE_UP, 0, 0, RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);
    recuo_attempts_free(a);
    recuo_attempt_pool_free(empty);
    recuo_attempt_pool_free(other);
    recuo_attempt_pool_free(NULL);
    recuo_policy_free(p);
}

/* Runs an always-failing operation under an inner loop of 5 inside an outer loop of 5, both
 * drawing from `pool` when it is not NULL; answers the number of calls. */
static uint32_t nested_machines(const recuo_policy *p, const recuo_attempt_pool *pool) {
    uint32_t calls = 0;
    recuo_attempts *outer = NULL;
    CHECK_STATUS(recuo_attempts_new(p, &outer), RECUO_OK);
    if (pool != NULL) {
        CHECK_STATUS(recuo_attempts_set_pool(outer, pool, false), RECUO_OK);
    }
    recuo_step os;
    CHECK_STATUS(recuo_attempts_start(outer, 0, 0, &os), RECUO_OK);
    while (os.kind == RECUO_STEP_CALL) {
        /* The outer attempt is an inner loop. */
        recuo_attempts *inner = NULL;
        CHECK_STATUS(recuo_attempts_new(p, &inner), RECUO_OK);
        if (pool != NULL) {
            CHECK_STATUS(recuo_attempts_set_pool(inner, pool, true), RECUO_OK);
        }
        recuo_step is;
        CHECK_STATUS(recuo_attempts_start(inner, 0, 0, &is), RECUO_OK);
        while (is.kind == RECUO_STEP_CALL) {
            calls++;
            failed_and_slept(inner, &RETRY, 0, &is);
        }
        CHECK(is.kind == RECUO_STEP_GAVE_UP && is.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);
        recuo_attempts_free(inner);
        failed_and_slept(outer, &RETRY, 0, &os);
    }
    CHECK(os.kind == RECUO_STEP_GAVE_UP && os.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);
    recuo_attempts_free(outer);
    return calls;
}

static void pool_nested_machines(void) {
    recuo_policy *p = exact_policy(5, 0, 0);
    recuo_attempt_pool *pool = recuo_attempt_pool_new(recuo_policy_max_attempts(p));
    uint32_t calls = nested_machines(p, pool);
    CHECK_CTX(calls == 5, "%u calls, expected 5 (not 25)", (unsigned)calls);
    CHECK_EQ_U64(recuo_attempt_pool_remaining(pool), 0);
    recuo_attempt_pool_free(pool);
    /* In C the shared limit is explicit: without a pool the loops multiply. */
    calls = nested_machines(p, NULL);
    CHECK_CTX(calls == 25, "%u calls without a pool", (unsigned)calls);
    recuo_policy_free(p);
}

/* ---- recuo_retry ------------------------------------------------------------------------ */

enum { MAX_EVENTS = 64 };

/* What an operation does, and what the callbacks saw. */
struct run {
    const recuo_policy *policy;
    /* The operation: script[i] is the status of attempt i (0: write no verdict; -1: write a
     * garbage verdict; past the end: the last one again). */
    const int *script;
    size_t nscript;
    /* Headers every response carries. */
    const recuo_header *headers;
    size_t nheaders;
    uint32_t calls;
    char keys[8][RECUO_IDEMPOTENCY_KEY_SIZE];
    /* The log: 'o' operation(attempt), 'r' on_retry(attempt, delay), 's' sleep(delay), 'g'
     * on_give_up(attempts). */
    char kinds[MAX_EVENTS];
    uint64_t values[MAX_EVENTS];
    uint32_t attempts_seen[MAX_EVENTS];
    size_t nevents;
    recuo_verdict retry_verdicts[8];
    recuo_report give_up_report;
    int give_ups;
    void *seen_user_data;
    /* Nested: the operation runs an inner recuo_retry with these. */
    const recuo_retry_options *inner_options;
    struct run *inner;
    /* A cancel token to cancel from within a sleep. */
    recuo_cancel_token *cancel_in_sleep;
};

static void log_event(struct run *r, char kind, uint32_t attempt, uint64_t value) {
    if (r->nevents < MAX_EVENTS) {
        r->kinds[r->nevents] = kind;
        r->attempts_seen[r->nevents] = attempt;
        r->values[r->nevents] = value;
        r->nevents++;
    }
}

static void http_operation(uint32_t attempt, const char *key, recuo_verdict *verdict_out,
                           void *user_data) {
    struct run *r = user_data;
    r->seen_user_data = user_data;
    if (r->calls < 8) {
        memcpy(r->keys[r->calls], key, RECUO_IDEMPOTENCY_KEY_SIZE);
    }
    r->calls++;
    log_event(r, 'o', attempt, 0);
    if (r->inner != NULL) {
        recuo_status rc = recuo_retry(r->inner->policy, http_operation, r->inner,
                                      r->inner_options, NULL, NULL, 0, NULL);
        CHECK_STATUS(rc, RECUO_ERR_GAVE_UP);
    }
    size_t i = attempt < r->nscript ? attempt : r->nscript - 1;
    int status = r->script[i];
    if (status == 0) {
        return; /* no verdict */
    }
    if (status == -1) {
        verdict_out->verdict = 42;
        return;
    }
    /* The response lives on this stack frame: recuo_classify reads it before we return. */
    char body_headers[2][32];
    snprintf(body_headers[0], sizeof body_headers[0], "req-%u", (unsigned)attempt);
    snprintf(body_headers[1], sizeof body_headers[1], "%s", "text/plain");
    recuo_header local[2] = {{"X-Request-Id", 12, body_headers[0], strlen(body_headers[0])},
                             {"Content-Type", 12, body_headers[1], strlen(body_headers[1])}};
    recuo_header all[8];
    size_t n = 0;
    for (size_t h = 0; h < 2; h++) {
        all[n++] = local[h];
    }
    for (size_t h = 0; h < r->nheaders && n < 8; h++) {
        all[n++] = r->headers[h];
    }
    recuo_outcome o = {RECUO_OUTCOME_STATUS, (uint16_t)status, 0};
    CHECK_STATUS(recuo_classify(r->policy, &o, "GET", 3, true, all, n, recuo_now_ms(),
                                verdict_out),
                 RECUO_OK);
}

static void record_retry(uint32_t attempt, const recuo_verdict *verdict, uint64_t delay_ms,
                         void *user_data) {
    struct run *r = user_data;
    if (attempt < 8) {
        r->retry_verdicts[attempt] = *verdict;
    }
    log_event(r, 'r', attempt, delay_ms);
}

static void record_sleep(uint64_t ms, void *user_data) {
    struct run *r = user_data;
    log_event(r, 's', 0, ms);
    if (r->cancel_in_sleep != NULL) {
        CHECK_STATUS(recuo_cancel_token_cancel(r->cancel_in_sleep), RECUO_OK);
    }
}

static void record_give_up(const recuo_report *report, void *user_data) {
    struct run *r = user_data;
    r->give_up_report = *report;
    r->give_ups++;
    log_event(r, 'g', report->attempts, report->reason);
}

/* Options recording everything, with a fake sleep and a seed. */
static recuo_retry_options *recording_options(void) {
    recuo_retry_options *o = recuo_retry_options_new();
    CHECK(o != NULL);
    CHECK_STATUS(recuo_retry_options_set_seed(o, 3), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_sleep(o, record_sleep), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_on_retry(o, record_retry), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_on_give_up(o, record_give_up), RECUO_OK);
    return o;
}

static void retry_hooks_in_order(void) {
    recuo_policy *p = exact_policy(4, 100, 400);
    static const int script[] = {503, 502, 500, 504};
    struct run r = {.policy = p, .script = script, .nscript = 4};
    recuo_retry_options *o = recording_options();
    recuo_report report;
    uint64_t delays[8];
    size_t n = 0;
    recuo_status rc = recuo_retry(p, http_operation, &r, o, &report, delays, 8, &n);
    CHECK_STATUS(rc, RECUO_ERR_GAVE_UP);
    CHECK(!recuo_status_is_argument_error(rc) && !recuo_status_is_config_error(rc));
    CHECK(r.seen_user_data == &r);

    /* op0 retry0(100) sleep(100) op1 retry1(200) sleep(200) op2 retry2(400) sleep(400) op3
     * give_up(4 attempts, attempts_exhausted) */
    static const char kinds[] = "orsorsorsog";
    static const uint64_t values[] = {0, 100, 100, 0, 200, 200, 0, 400, 400, 0,
                                      RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED};
    static const uint32_t attempts[] = {0, 0, 0, 1, 1, 0, 2, 2, 0, 3, 4};
    CHECK_CTX(r.nevents == strlen(kinds), "%zu events", r.nevents);
    for (size_t i = 0; i < r.nevents && i < strlen(kinds); i++) {
        CHECK_CTX(r.kinds[i] == kinds[i] && r.values[i] == values[i] &&
                      r.attempts_seen[i] == attempts[i],
                  "event %zu: %c(%u, %" PRIu64 "), expected %c(%u, %" PRIu64 ")", i, r.kinds[i],
                  (unsigned)r.attempts_seen[i], r.values[i], kinds[i], (unsigned)attempts[i],
                  values[i]);
    }
    /* The hook saw each attempt's verdict. */
    CHECK(r.retry_verdicts[0].cause == RECUO_CAUSE_UNAVAILABLE &&
          r.retry_verdicts[1].cause == RECUO_CAUSE_SERVER_ERROR &&
          r.retry_verdicts[2].verdict == RECUO_VERDICT_RETRY);
    /* The report, the hook's and the out-parameter, agree. */
    CHECK(r.give_ups == 1);
    CHECK(report.attempts == 4 && report.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);
    CHECK(report.delay_count == 3 && n == 3 && delays[0] == 100 && delays[1] == 200 &&
          delays[2] == 400);
    CHECK(!report.has_retry_after);
    CHECK(r.give_up_report.attempts == report.attempts &&
          r.give_up_report.reason == report.reason &&
          r.give_up_report.delay_count == report.delay_count);
    CHECK_CTX(report.elapsed_ms < 5000, "%" PRIu64 " ms with fake sleeps", report.elapsed_ms);
    /* One key for the whole operation, UUID v4. */
    CHECK(is_uuid_v4(r.keys[0]));
    for (int i = 1; i < 4; i++) {
        CHECK(strcmp(r.keys[0], r.keys[i]) == 0);
    }
    recuo_retry_options_free(o);
    recuo_policy_free(p);
}

static void retry_success_and_keys(void) {
    recuo_policy *p = exact_policy(5, 10, 10);
    static const int script[] = {503, 200};
    struct run r = {.policy = p, .script = script, .nscript = 2};
    recuo_retry_options *o = recording_options();
    recuo_report report = {.attempts = 99, .reason = RECUO_GIVE_UP_CANCELLED};
    uint64_t delays[1];
    size_t n = 99;
    CHECK_STATUS(recuo_retry(p, http_operation, &r, o, &report, delays, 1, &n), RECUO_OK);
    CHECK(r.calls == 2 && r.give_ups == 0);
    CHECK(report.attempts == 2 && report.reason == RECUO_GIVE_UP_NONE &&
          report.delay_count == 1 && n == 1 && delays[0] == 10);
    CHECK(strcmp(r.keys[0], r.keys[1]) == 0);

    /* The same seed never draws the same key (SPEC §5: keys come from the operating system),
     * and neither does the state machine with that seed. */
    struct run again = {.policy = p, .script = script, .nscript = 2};
    CHECK_STATUS(recuo_retry(p, http_operation, &again, o, NULL, NULL, 0, NULL), RECUO_OK);
    CHECK(strcmp(again.keys[0], again.keys[1]) == 0);
    CHECK(strcmp(r.keys[0], again.keys[0]) != 0);
    recuo_attempts *a = NULL;
    char key[RECUO_IDEMPOTENCY_KEY_SIZE];
    CHECK_STATUS(recuo_attempts_new_seeded(p, 3, &a), RECUO_OK);
    CHECK_STATUS(recuo_attempts_idempotency_key(a, key, sizeof key, NULL), RECUO_OK);
    CHECK_CTX(strcmp(key, r.keys[0]) != 0 && strcmp(key, again.keys[0]) != 0, "%s", key);
    recuo_attempts_free(a);

    /* Without a seed (NULL options: the defaults, real sleeps), each operation its own key. */
    static const int twice[] = {503, 200};
    struct run u1 = {.policy = p, .script = twice, .nscript = 2};
    struct run u2 = {.policy = p, .script = twice, .nscript = 2};
    CHECK_STATUS(recuo_retry(p, http_operation, &u1, NULL, NULL, NULL, 0, NULL), RECUO_OK);
    CHECK_STATUS(recuo_retry(p, http_operation, &u2, NULL, NULL, NULL, 0, NULL), RECUO_OK);
    CHECK(u1.calls == 2 && is_uuid_v4(u1.keys[0]) && strcmp(u1.keys[0], u1.keys[1]) == 0);
    CHECK(strcmp(u1.keys[0], u2.keys[0]) != 0);

    /* A first success: one call, no delay, no hook. */
    static const int ok[] = {204};
    struct run first = {.policy = p, .script = ok, .nscript = 1};
    CHECK_STATUS(recuo_retry(p, http_operation, &first, o, &report, NULL, 0, NULL), RECUO_OK);
    CHECK(first.calls == 1 && first.nevents == 1 && report.attempts == 1 &&
          report.delay_count == 0);
    recuo_retry_options_free(o);
    recuo_policy_free(p);
}

static void retry_give_up_reasons(void) {
    recuo_retry_options *o = recording_options();
    recuo_report report;

    /* Permanent: a 404 stops at once. */
    recuo_policy *p = exact_policy(5, 10, 10);
    static const int not_found[] = {404};
    struct run r = {.policy = p, .script = not_found, .nscript = 1};
    CHECK_STATUS(recuo_retry(p, http_operation, &r, o, &report, NULL, 0, NULL), RECUO_ERR_GAVE_UP);
    CHECK(r.calls == 1 && report.reason == RECUO_GIVE_UP_PERMANENT && r.give_ups == 1);
    recuo_policy_free(p);

    /* Wait exceeds the deadline: the server's 40 s against guide B's 30 s, with the wait. */
    p = recuo_policy_new_guide_b();
    static const int limited[] = {429};
    recuo_header forty[] = {HDR("Retry-After", "40")};
    struct run w = {.policy = p, .script = limited, .nscript = 1, .headers = forty,
                    .nheaders = 1};
    CHECK_STATUS(recuo_retry(p, http_operation, &w, o, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK(w.calls == 1 && report.reason == RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE);
    CHECK_CTX(report.has_retry_after && report.retry_after_ms == 40000, "%" PRIu64,
              report.retry_after_ms);
    CHECK(w.give_ups == 1 && w.give_up_report.has_retry_after &&
          w.give_up_report.retry_after_ms == 40000);

    /* A server wait within the deadline is slept: 2 s (+ spread up to 1 s). */
    static const int then_ok[] = {503, 200};
    recuo_header two[] = {HDR("Retry-After", "2")};
    struct run s = {.policy = p, .script = then_ok, .nscript = 2, .headers = two, .nheaders = 1};
    CHECK_STATUS(recuo_retry(p, http_operation, &s, o, &report, NULL, 0, NULL), RECUO_OK);
    CHECK(s.nevents == 4 && s.kinds[2] == 's');
    CHECK_CTX(s.values[2] >= 2000 && s.values[2] <= 3000, "slept %" PRIu64, s.values[2]);
    recuo_policy_free(p);

    /* SPEC §6: the last attempt is judged too (issue 10). A 404 after a 503, two attempts:
     * `permanent`, not `attempts_exhausted`; a final 429 is counted in the stats. */
    recuo_policy *last2 = exact_policy(2, 10, 10);
    static const int then_404[] = {503, 404};
    struct run pl = {.policy = last2, .script = then_404, .nscript = 2};
    CHECK_STATUS(recuo_retry(last2, http_operation, &pl, o, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK_CTX(pl.calls == 2 && report.attempts == 2 && report.reason == RECUO_GIVE_UP_PERMANENT,
              "%s", recuo_give_up_reason_name(report.reason));
    recuo_retry_options *counted = recuo_retry_options_new();
    recuo_stats_recorder *rec = recuo_stats_recorder_new();
    CHECK_STATUS(recuo_retry_options_set_stats_recorder(counted, rec), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_sleep(counted, record_sleep), RECUO_OK);
    static const int then_429[] = {503, 429};
    struct run fl = {.policy = last2, .script = then_429, .nscript = 2};
    CHECK_STATUS(recuo_retry(last2, http_operation, &fl, counted, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    recuo_stats st;
    CHECK_STATUS(recuo_stats_recorder_snapshot(rec, &st), RECUO_OK);
    CHECK(report.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED && st.throttled == 1 &&
          st.unavailable == 1 && st.initial == 1 && st.retries == 1 && st.failures == 1);
    recuo_stats_recorder_free(rec);
    recuo_retry_options_free(counted);
    recuo_policy_free(last2);

    /* No verdict: the loop stops there as on a permanent failure (the report says
     * permanent), with no hook, also on the last attempt. */
    p = exact_policy(3, 10, 10);
    static const int silent[] = {503, 0};
    struct run nv = {.policy = p, .script = silent, .nscript = 2};
    CHECK_STATUS(recuo_retry(p, http_operation, &nv, o, &report, NULL, 0, NULL),
                 RECUO_ERR_NO_VERDICT);
    CHECK(nv.calls == 2 && nv.give_ups == 0 && report.attempts == 2 &&
          report.reason == RECUO_GIVE_UP_PERMANENT && report.delay_count == 1);
    static const int garbage[] = {-1};
    struct run gv = {.policy = p, .script = garbage, .nscript = 1};
    CHECK_STATUS(recuo_retry(p, http_operation, &gv, o, &report, NULL, 0, NULL),
                 RECUO_ERR_NO_VERDICT);
    CHECK(gv.calls == 1 && gv.give_ups == 0);
    recuo_policy *once = exact_policy(1, 10, 10);
    struct run last = {.policy = once, .script = silent + 1, .nscript = 1};
    CHECK_STATUS(recuo_retry(once, http_operation, &last, o, &report, NULL, 0, NULL),
                 RECUO_ERR_NO_VERDICT);
    CHECK(last.calls == 1 && last.give_ups == 0 && report.reason == RECUO_GIVE_UP_PERMANENT);
    recuo_policy_free(once);

    /* Cancelled before the first attempt: none is made, the hook runs once. */
    recuo_cancel_token *t = recuo_cancel_token_new();
    CHECK(t != NULL && !recuo_cancel_token_is_cancelled(t));
    CHECK_STATUS(recuo_cancel_token_cancel(t), RECUO_OK);
    CHECK_STATUS(recuo_cancel_token_cancel(t), RECUO_OK);
    CHECK(recuo_cancel_token_is_cancelled(t));
    recuo_retry_options *oc = recording_options();
    CHECK_STATUS(recuo_retry_options_set_cancel_token(oc, t), RECUO_OK);
    recuo_cancel_token_free(t); /* the options keep the flag */
    static const int any[] = {503};
    struct run c = {.policy = p, .script = any, .nscript = 1};
    CHECK_STATUS(recuo_retry(p, http_operation, &c, oc, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK(c.calls == 0 && report.attempts == 0 && report.reason == RECUO_GIVE_UP_CANCELLED &&
          c.give_ups == 1);
    /* NULL removes the token. */
    CHECK_STATUS(recuo_retry_options_set_cancel_token(oc, NULL), RECUO_OK);
    static const int fine[] = {200};
    struct run f = {.policy = p, .script = fine, .nscript = 1};
    CHECK_STATUS(recuo_retry(p, http_operation, &f, oc, NULL, NULL, 0, NULL), RECUO_OK);
    recuo_retry_options_free(oc);

    /* Cancelled during a (fake) sleep: seen when it returns; no further attempt. */
    recuo_cancel_token *t2 = recuo_cancel_token_new();
    recuo_retry_options *o2 = recording_options();
    CHECK_STATUS(recuo_retry_options_set_cancel_token(o2, t2), RECUO_OK);
    struct run cs = {.policy = p, .script = any, .nscript = 1, .cancel_in_sleep = t2};
    CHECK_STATUS(recuo_retry(p, http_operation, &cs, o2, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK(cs.calls == 1 && report.attempts == 1 && report.reason == RECUO_GIVE_UP_CANCELLED);
    recuo_retry_options_free(o2);
    recuo_cancel_token_free(t2);
    recuo_policy_free(p);
    recuo_retry_options_free(o);
}

static void retry_real_sleeps(void) {
    /* No sleep callback: the real sleep (kept short), which a cancellation would wake. */
    recuo_policy *p = exact_policy(3, 20, 20);
    static const int script[] = {503, 503, 200};
    struct run r = {.policy = p, .script = script, .nscript = 3};
    recuo_retry_options *o = recuo_retry_options_new();
    CHECK_STATUS(recuo_retry_options_set_on_retry(o, record_retry), RECUO_OK);
    recuo_report report;
    uint64_t before = recuo_monotonic_ms();
    CHECK_STATUS(recuo_retry(p, http_operation, &r, o, &report, NULL, 0, NULL), RECUO_OK);
    uint64_t took = recuo_monotonic_ms() - before;
    CHECK(r.calls == 3 && report.attempts == 3 && report.delay_count == 2);
    CHECK_CTX(took >= 35 && report.elapsed_ms >= 35 && report.elapsed_ms <= took + 1,
              "took %" PRIu64 ", reported %" PRIu64, took, report.elapsed_ms);
    /* set_sleep(NULL) keeps the real sleep; removing hooks works. */
    CHECK_STATUS(recuo_retry_options_set_sleep(o, NULL), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_on_retry(o, NULL), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_on_give_up(o, NULL), RECUO_OK);
    struct run quiet = {.policy = p, .script = script, .nscript = 3};
    CHECK_STATUS(recuo_retry(p, http_operation, &quiet, o, NULL, NULL, 0, NULL), RECUO_OK);
    CHECK(quiet.nevents == 3);
    recuo_retry_options_free(o);
    recuo_policy_free(p);
}

static void retry_nested_pool(void) {
    recuo_policy *p = exact_policy(5, 1, 1);
    static const int failing[] = {503};
    recuo_attempt_pool *pool = recuo_attempt_pool_new(5);
    recuo_retry_options *outer_o = recording_options();
    recuo_retry_options *inner_o = recording_options();
    CHECK_STATUS(recuo_retry_options_set_pool(outer_o, pool, false), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_pool(inner_o, pool, true), RECUO_OK);
    recuo_attempt_pool_free(pool); /* the options keep the count */

    struct run inner = {.policy = p, .script = failing, .nscript = 1};
    struct run outer = {.policy = p, .script = failing, .nscript = 1, .inner = &inner,
                        .inner_options = inner_o};
    recuo_report report;
    CHECK_STATUS(recuo_retry(p, http_operation, &outer, outer_o, &report, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK_CTX(inner.calls == 5, "%u inner calls, expected 5 (not 25)", (unsigned)inner.calls);
    CHECK(outer.calls == 1 && report.attempts == 1 &&
          report.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);
    CHECK(inner.give_ups == 1 && inner.give_up_report.attempts == 5 &&
          inner.give_up_report.reason == RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED);

    /* Without the pool each loop has its own five. */
    CHECK_STATUS(recuo_retry_options_set_pool(outer_o, NULL, false), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_pool(inner_o, NULL, false), RECUO_OK);
    struct run inner2 = {.policy = p, .script = failing, .nscript = 1};
    struct run outer2 = {.policy = p, .script = failing, .nscript = 1, .inner = &inner2,
                         .inner_options = inner_o};
    CHECK_STATUS(recuo_retry(p, http_operation, &outer2, outer_o, NULL, NULL, 0, NULL),
                 RECUO_ERR_GAVE_UP);
    CHECK_CTX(inner2.calls == 25, "%u inner calls without a pool", (unsigned)inner2.calls);
    recuo_retry_options_free(outer_o);
    recuo_retry_options_free(inner_o);
    recuo_policy_free(p);
}

static void retry_bad_arguments(void) {
    recuo_policy *p = recuo_policy_new();
    static const int ok[] = {200};
    struct run r = {.policy = p, .script = ok, .nscript = 1};
    recuo_report report = {.attempts = 77};
    uint64_t delays[2];
    size_t n = 55;
    CHECK_STATUS(recuo_retry(NULL, http_operation, &r, NULL, &report, delays, 2, &n),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry(p, NULL, &r, NULL, &report, delays, 2, &n),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry(p, http_operation, &r, NULL, &report, NULL, 2, &n),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry(p, http_operation, &r, NULL, &report, delays, SIZE_MAX, &n),
                 RECUO_ERR_LENGTH_TOO_LARGE);
    CHECK_STATUS(recuo_policy_set_cap_ms(p, 1), RECUO_OK);
    recuo_status rc = recuo_retry(p, http_operation, &r, NULL, &report, delays, 2, &n);
    CHECK_STATUS(rc, RECUO_ERR_CAP_BELOW_BASE);
    CHECK(r.calls == 0 && report.attempts == 77 && n == 55);

    CHECK_STATUS(recuo_retry_options_set_seed(NULL, 1), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_sleep(NULL, record_sleep), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_cancel_token(NULL, NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_pool(NULL, NULL, false), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_on_retry(NULL, record_retry), RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_retry_options_set_on_give_up(NULL, record_give_up),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_cancel_token_cancel(NULL), RECUO_ERR_NULL_ARGUMENT);
    CHECK(!recuo_cancel_token_is_cancelled(NULL));
    recuo_retry_options_free(NULL);
    recuo_cancel_token_free(NULL);
    recuo_policy_free(p);
}

/* ---- argument errors come before the policy's own (issue 14) ----------------------------- */

/* Every function that uses a policy answers the same argument error for a valid policy and
 * for one whose values only fail together (a base above the cap, set with success): the
 * arguments are checked first, the policy's configuration last. */
static void argument_errors_before_policy_errors(void) {
    recuo_policy *valid = recuo_policy_new();
    recuo_policy *invalid = recuo_policy_new();
    CHECK_STATUS(recuo_policy_set_base_ms(invalid, UINT64_MAX), RECUO_OK);
    CHECK_STATUS(recuo_policy_validate(invalid), RECUO_ERR_CAP_BELOW_BASE);
    static const int ok[] = {200};
    recuo_policy *policies[] = {valid, invalid};
    for (size_t i = 0; i < 2; i++) {
        recuo_policy *p = policies[i];
        recuo_outcome o = status_outcome(503);
        recuo_outcome bad_kind = {77, 0, 0};
        recuo_outcome bad_transport = {RECUO_OUTCOME_TRANSPORT, 0, 99};
        recuo_verdict v;
        CHECK_STATUS(recuo_classify(p, &o, "GET", 3, false, NULL, 0, 0, NULL),
                     RECUO_ERR_NULL_ARGUMENT);
        CHECK_STATUS(recuo_classify(p, NULL, "GET", 3, false, NULL, 0, 0, &v),
                     RECUO_ERR_NULL_ARGUMENT);
        CHECK_STATUS(recuo_classify(p, &bad_kind, "GET", 3, false, NULL, 0, 0, &v),
                     RECUO_ERR_INVALID_ENUM);
        CHECK_STATUS(recuo_classify(p, &bad_transport, "GET", 3, false, NULL, 0, 0, &v),
                     RECUO_ERR_INVALID_ENUM);
        CHECK_STATUS(recuo_classify(p, &o, NULL, 3, false, NULL, 0, 0, &v),
                     RECUO_ERR_NULL_ARGUMENT);
        CHECK_STATUS(recuo_classify(p, &o, "G\xff", 2, false, NULL, 0, 0, &v),
                     RECUO_ERR_NOT_UTF8);
        CHECK_STATUS(recuo_classify(p, &o, "GET", 3, false, NULL, 2, 0, &v),
                     RECUO_ERR_NULL_ARGUMENT);

        recuo_attempts *a = NULL;
        CHECK_STATUS(recuo_attempts_new(p, NULL), RECUO_ERR_NULL_ARGUMENT);
        CHECK_STATUS(recuo_attempts_new_seeded(p, 1, NULL), RECUO_ERR_NULL_ARGUMENT);
        CHECK(a == NULL);

        struct run r = {.policy = valid, .script = ok, .nscript = 1};
        uint64_t delays[2];
        CHECK_STATUS(recuo_retry(p, NULL, &r, NULL, NULL, delays, 2, NULL),
                     RECUO_ERR_NULL_ARGUMENT);
        CHECK_STATUS(recuo_retry(p, http_operation, &r, NULL, NULL, NULL, 2, NULL),
                     RECUO_ERR_NULL_ARGUMENT);
        CHECK_STATUS(recuo_retry(p, http_operation, &r, NULL, NULL, delays, SIZE_MAX, NULL),
                     RECUO_ERR_LENGTH_TOO_LARGE);
        CHECK_STATUS(recuo_retry_http(p, NULL, &r, NULL, NULL, delays, 2, NULL),
                     RECUO_ERR_NULL_ARGUMENT);
        CHECK(r.calls == 0);

        CHECK_STATUS(recuo_batch_run(p, NULL, 1, NULL, NULL, 1, 0, NULL, NULL, NULL),
                     RECUO_ERR_NULL_ARGUMENT);
        recuo_batch_queue *q = NULL;
        CHECK_STATUS(recuo_batch_queue_new(p, 1, 0, false, 0, false, NULL, NULL),
                     RECUO_ERR_NULL_ARGUMENT);
        CHECK(q == NULL);

        /* The setters check their own value first, whatever the rest of the policy. */
        CHECK_STATUS(recuo_policy_set_jitter(p, 99), RECUO_ERR_INVALID_ENUM);
        CHECK_STATUS(recuo_policy_set_status_retry(p, 503, 99), RECUO_ERR_INVALID_ENUM);
        CHECK_STATUS(recuo_policy_set_transport_retry(p, 99, RECUO_RULE_NEVER),
                     RECUO_ERR_INVALID_ENUM);
        CHECK_STATUS(recuo_policy_set_method_idempotent(p, NULL, 3, true),
                     RECUO_ERR_NULL_ARGUMENT);
        CHECK_STATUS(recuo_policy_set_idempotency_header(p, NULL, 3), RECUO_ERR_NULL_ARGUMENT);
        CHECK_STATUS(recuo_policy_set_max_attempts(p, 0), RECUO_ERR_ZERO_ATTEMPTS);
    }
    /* With valid arguments, the invalid policy's own error, and nothing written. */
    recuo_outcome o = status_outcome(503);
    recuo_verdict v = {.verdict = 77};
    CHECK_STATUS(recuo_classify(invalid, &o, "GET", 3, false, NULL, 0, 0, &v),
                 RECUO_ERR_CAP_BELOW_BASE);
    CHECK(v.verdict == 77);
    recuo_attempts *a = NULL;
    CHECK_STATUS(recuo_attempts_new(invalid, &a), RECUO_ERR_CAP_BELOW_BASE);
    CHECK(a == NULL);
    recuo_policy_free(valid);
    recuo_policy_free(invalid);
}

/* ---- cancellation from another thread --------------------------------------------------- */

struct canceller {
    pthread_mutex_t lock;
    pthread_cond_t sleeping;
    int retries;
    recuo_cancel_token *token;
    uint64_t cancelled_at;
};

static void signal_retry(uint32_t attempt, const recuo_verdict *verdict, uint64_t delay_ms,
                         void *user_data) {
    struct canceller *c = user_data;
    (void)attempt;
    (void)verdict;
    (void)delay_ms;
    pthread_mutex_lock(&c->lock);
    c->retries++;
    pthread_cond_signal(&c->sleeping);
    pthread_mutex_unlock(&c->lock);
}

static void always_retry(uint32_t attempt, const char *key, recuo_verdict *verdict_out,
                         void *user_data) {
    (void)attempt;
    (void)key;
    (void)user_data;
    verdict_out->verdict = RECUO_VERDICT_RETRY;
    verdict_out->cause = RECUO_CAUSE_UNAVAILABLE;
}

static void *cancel_soon(void *arg) {
    struct canceller *c = arg;
    pthread_mutex_lock(&c->lock);
    while (c->retries == 0) {
        pthread_cond_wait(&c->sleeping, &c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    sleep_ms(100);
    c->cancelled_at = recuo_monotonic_ms();
    CHECK_STATUS(recuo_cancel_token_cancel(c->token), RECUO_OK);
    return NULL;
}

static void retry_cancelled_from_another_thread(void) {
    /* A 60 s backoff: only the cancellation can end the sleep early. */
    recuo_policy *p = exact_policy(3, 60000, 60000);
    struct canceller c = {.retries = 0};
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.sleeping, NULL);
    c.token = recuo_cancel_token_new();
    recuo_retry_options *o = recuo_retry_options_new();
    CHECK_STATUS(recuo_retry_options_set_cancel_token(o, c.token), RECUO_OK);
    CHECK_STATUS(recuo_retry_options_set_on_retry(o, signal_retry), RECUO_OK);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, cancel_soon, &c) == 0);
    recuo_report report;
    uint64_t delays[4];
    size_t n = 0;
    uint64_t before = recuo_monotonic_ms();
    recuo_status rc = recuo_retry(p, always_retry, &c, o, &report, delays, 4, &n);
    uint64_t after = recuo_monotonic_ms();
    pthread_join(thread, NULL);
    CHECK_STATUS(rc, RECUO_ERR_GAVE_UP);
    CHECK(report.attempts == 1 && report.reason == RECUO_GIVE_UP_CANCELLED && c.retries == 1);
    CHECK(n == 1 && delays[0] == 60000);
    /* Woken promptly: well before the 60 s, soon after the cancel (bounds generous for
     * valgrind). */
    CHECK_CTX(after - before >= 100 && after - before < 20000, "took %" PRIu64 " ms",
              after - before);
    CHECK_CTX(after >= c.cancelled_at && after - c.cancelled_at < 10000,
              "woke %" PRIu64 " ms after the cancel", after - c.cancelled_at);
    recuo_retry_options_free(o);
    recuo_cancel_token_free(c.token);
    pthread_cond_destroy(&c.sleeping);
    pthread_mutex_destroy(&c.lock);
    recuo_policy_free(p);
}

int main(int argc, char **argv) {
    (void)argc;
    enum_names();
    monotonic_clock();
    policy_defaults();
    policy_setters();
    classification();
    attempts_sequence();
    attempts_give_up_reasons();
    attempts_errors();
    attempts_idempotency_key();
    attempts_seeded_jitter_repeats();
    pool_basics();
    pool_nested_machines();
    retry_hooks_in_order();
    retry_success_and_keys();
    retry_give_up_reasons();
    retry_real_sleeps();
    retry_nested_pool();
    retry_bad_arguments();
    argument_errors_before_policy_errors();
    retry_cancelled_from_another_thread();
    return check_summary(argv[0]);
}
