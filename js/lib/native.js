// The C ABI of librecuo as koffi declares it: the library found, its version checked, and
// every function the package calls declared once. Nothing here decides anything.

import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);

/** The package's version: librecuo's `recuo_version()` must say the same. */
export const PACKAGE_VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;

/** The library's file name on this platform, as `make js` bundles it. */
const BUNDLED_NAME = process.platform === 'darwin' ? 'librecuo.dylib' : 'librecuo.so';
/** The system's library after `make install` (its SONAME). */
const SYSTEM_NAMES =
  process.platform === 'darwin'
    ? ['librecuo.0.1.dylib', '/usr/local/lib/librecuo.0.1.dylib']
    : ['librecuo.so.0.1', '/usr/local/lib/librecuo.so.0.1', '/usr/lib/librecuo.so.0.1'];

/** Thrown at import (or by `openRecuo`) when no usable librecuo can be loaded. */
export class LibraryError extends Error {
  constructor(message, tried) {
    super(message);
    this.name = 'LibraryError';
    this.tried = tried;
  }
}

/**
 * Where to look, in order: an explicit path (or `RECUO_LIB`), the copy bundled in the
 * package, the system's `librecuo.so.0.1`. An explicit path is the only candidate when given:
 * a wrong one is an error, never a silent fall-back to another library.
 */
export function candidates(path) {
  const explicit = path ?? (process.env.RECUO_LIB || undefined);
  if (explicit !== undefined) {
    return [{ path: String(explicit), from: path !== undefined ? 'the path option' : 'RECUO_LIB' }];
  }
  return [
    { path: join(root, 'native', BUNDLED_NAME), from: 'the package', file: true },
    ...SYSTEM_NAMES.map((p) => ({ path: p, from: 'the system', file: p.startsWith('/') })),
  ];
}

let koffi;
function loadKoffi() {
  if (koffi === undefined) {
    try {
      koffi = require('koffi');
    } catch (e) {
      throw new LibraryError(`recuo: koffi could not be loaded (${e.message}); run npm install`, []);
    }
  }
  return koffi;
}

let typesDeclared = false;
function declareTypes(k) {
  if (typesDeclared) return;
  typesDeclared = true;
  for (const name of [
    'recuo_policy', 'recuo_attempts', 'recuo_attempt_pool', 'recuo_gate', 'recuo_regulator',
    'recuo_concurrency_limit', 'recuo_permit', 'recuo_retry_budget', 'recuo_stats_recorder',
    'recuo_batch_queue', 'recuo_pass', 'recuo_cancel_token',
  ]) {
    k.opaque(name);
  }
  k.struct('recuo_retry_after', { kind: 'uint32_t', wait_ms: 'uint64_t' });
  k.struct('recuo_verdict', { verdict: 'uint32_t', cause: 'uint32_t', wait: 'uint32_t', wait_ms: 'uint64_t' });
  k.struct('recuo_outcome', { kind: 'uint32_t', status: 'uint16_t', transport: 'uint32_t' });
  k.struct('recuo_header', { name: 'const uint8_t *', name_len: 'size_t', value: 'const uint8_t *', value_len: 'size_t' });
  k.struct('recuo_step', {
    kind: 'uint32_t', attempt: 'uint32_t', delay_ms: 'uint64_t', has_until: 'bool', until_ms: 'uint64_t',
    has_timeout: 'bool', timeout_ms: 'uint64_t', reason: 'uint32_t', has_retry_at: 'bool', retry_at_ms: 'uint64_t',
  });
  k.struct('recuo_decision', {
    kind: 'uint32_t', delay_ms: 'uint64_t', next_attempt: 'uint32_t', reason: 'uint32_t',
    has_retry_at: 'bool', retry_at_ms: 'uint64_t',
  });
  k.struct('recuo_report', {
    attempts: 'uint32_t', reason: 'uint32_t', elapsed_ms: 'uint64_t', delay_count: 'size_t',
    has_retry_after: 'bool', retry_after_ms: 'uint64_t', stopped_by: 'uint32_t',
    has_retry_at_unix_ms: 'bool', retry_at_unix_ms: 'int64_t',
  });
  k.struct('recuo_plan_result', {
    interval_ms: 'uint64_t', duration_s: 'double', retries: 'double', in_flight: 'double', warning_count: 'size_t',
  });
  k.struct('recuo_stats', {
    initial: 'uint64_t', retries: 'uint64_t', successes: 'uint64_t', failures: 'uint64_t', not_started: 'uint64_t',
    throttled: 'uint64_t', unavailable: 'uint64_t', max_in_flight: 'uint64_t', has_spacing: 'bool',
    min_spacing_ns: 'uint64_t', mean_spacing_ns: 'double', has_starts: 'bool', first_start_ns: 'uint64_t',
    last_start_ns: 'uint64_t', elapsed_ms: 'uint64_t',
  });
  k.struct('recuo_batch_next', {
    kind: 'uint32_t', index: 'size_t', policy: 'recuo_policy *', has_deadline: 'bool', deadline_ms: 'uint64_t',
    reason: 'uint32_t', stopped_by: 'uint32_t',
  });
  k.struct('recuo_request_line', { method: 'const uint8_t *', method_len: 'size_t', url: 'const uint8_t *', url_len: 'size_t' });
  k.struct('recuo_batch_result', {
    kind: 'uint32_t', reason: 'uint32_t', attempts: 'uint32_t', no_verdict: 'bool', gate_error: 'bool', stopped_by: 'uint32_t',
  });
  k.struct('recuo_request_plan', { key: 'uint32_t', idempotent: 'bool' });
  k.struct('recuo_last', { kind: 'uint32_t', status: 'uint16_t', transport: 'uint32_t' });
  k.struct('recuo_who_answered_result', { origin: 'uint32_t', confidence: 'uint32_t', evidence_count: 'size_t' });
}

// Every function the package calls, as recuo.h declares it (text as bytes with a length).
const PROTOTYPES = [
  'const char *recuo_version(void)',
  'const char *recuo_status_name(uint32_t code)',
  'uint32_t recuo_status_message(uint32_t code, _Out_ uint8_t *buf, size_t len, _Out_ size_t *written)',
  'int64_t recuo_now_ms(void)',
  'uint64_t recuo_monotonic_ms(void)',
  'uint64_t recuo_monotonic_ns(void)',
  'uint64_t recuo_wait_ms_from_ns(uint64_t ns)',
  'uint32_t recuo_parse_retry_after(const uint8_t *value, size_t len, int64_t now_ms, _Out_ recuo_retry_after *out)',
  'double recuo_retry_delay_ms(const char *retry_after, uint32_t attempt, int64_t now_ms)',
  'double recuo_retry_delay_ms_seeded(const char *retry_after, uint32_t attempt, int64_t now_ms, uint64_t seed)',
  'const char *recuo_retry_after_kind_name(uint32_t kind)',
  'uint32_t recuo_backoff_window_ms(uint64_t base_ms, uint64_t cap_ms, uint32_t n, _Out_ uint64_t *window_ms_out)',
  'const char *recuo_transport_name(uint32_t transport)',
  'recuo_policy *recuo_policy_new_guide_b(void)',
  'recuo_policy *recuo_policy_new_adapters(void)',
  'uint32_t recuo_policy_from_json(const uint8_t *json, size_t len, _Out_ recuo_policy **out)',
  'void recuo_policy_free(recuo_policy *policy)',
  'uint32_t recuo_policy_to_json(const recuo_policy *policy, _Out_ uint8_t *buf, size_t buf_len, _Out_ size_t *written)',
  'bool recuo_policy_server_honours_keys(const recuo_policy *policy)',
  'uint32_t recuo_policy_max_attempts(const recuo_policy *policy)',
  'uint64_t recuo_policy_base_ms(const recuo_policy *policy)',
  'uint64_t recuo_policy_cap_ms(const recuo_policy *policy)',
  'uint32_t recuo_policy_jitter(const recuo_policy *policy)',
  'bool recuo_policy_deadline_ms(const recuo_policy *policy, _Out_ uint64_t *deadline_ms_out)',
  'bool recuo_policy_spread_ms(const recuo_policy *policy, _Out_ uint64_t *spread_ms_out)',
  'bool recuo_policy_use_date_header(const recuo_policy *policy)',
  'uint32_t recuo_policy_idempotency_header(const recuo_policy *policy, _Out_ uint8_t *buf, size_t len, _Out_ size_t *written)',
  'bool recuo_policy_method_idempotent(const recuo_policy *policy, const uint8_t *method, size_t len)',
  'const char *recuo_jitter_name(uint32_t jitter)',
  'uint32_t recuo_classify(const recuo_policy *policy, const recuo_outcome *outcome, const uint8_t *method, size_t method_len, bool has_idempotency_key, const recuo_header *headers, size_t header_count, int64_t now_ms, _Out_ recuo_verdict *out)',
  'const char *recuo_verdict_kind_name(uint32_t verdict)',
  'const char *recuo_cause_name(uint32_t cause)',
  'const char *recuo_wait_kind_name(uint32_t wait)',
  'recuo_attempt_pool *recuo_attempt_pool_new(uint32_t attempts)',
  'void recuo_attempt_pool_free(recuo_attempt_pool *pool)',
  'uint32_t recuo_attempt_pool_remaining(const recuo_attempt_pool *pool)',
  'uint32_t recuo_attempts_new(const recuo_policy *policy, _Out_ recuo_attempts **out)',
  'uint32_t recuo_attempts_new_seeded(const recuo_policy *policy, uint64_t seed, _Out_ recuo_attempts **out)',
  'void recuo_attempts_free(recuo_attempts *attempts)',
  'uint32_t recuo_attempts_set_pool(recuo_attempts *attempts, const recuo_attempt_pool *pool, bool nested)',
  'uint32_t recuo_attempts_set_gate(recuo_attempts *attempts, const recuo_gate *gate)',
  'uint32_t recuo_attempts_set_stats_recorder(recuo_attempts *attempts, const recuo_stats_recorder *recorder)',
  'uint32_t recuo_attempts_set_request(recuo_attempts *attempts, const uint8_t *method, size_t method_len, const uint8_t *url, size_t url_len)',
  'uint32_t recuo_attempts_set_records(recuo_attempts *attempts, uint32_t min_level)',
  'uint32_t recuo_attempts_set_classify_last_failure(recuo_attempts *attempts, bool yes)',
  'uint32_t recuo_attempts_set_own_key(recuo_attempts *attempts)',
  'uint32_t recuo_attempts_start(recuo_attempts *attempts, uint64_t now_ms, int64_t unix_ms, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_start_after_first(recuo_attempts *attempts, uint64_t now_ms, int64_t unix_ms, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_poll_gate(recuo_attempts *attempts, uint64_t now_ms, _Out_ uint64_t *wait_ms, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_poll_gate_at(recuo_attempts *attempts, uint64_t now_ms, uint64_t regulator_now_ns, _Out_ uint64_t *wait_ms, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_failed_noted(recuo_attempts *attempts, uint64_t now_ms, const recuo_outcome *seen, const recuo_header *seen_headers, size_t seen_header_count, const recuo_outcome *error_seen, const recuo_header *error_headers, size_t error_header_count, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_judged_seen(recuo_attempts *attempts, uint64_t now_ms, const recuo_verdict *verdict, const recuo_outcome *seen, const recuo_header *seen_headers, size_t seen_header_count, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_batch_result(const recuo_attempts *attempts, bool gate_failed, _Out_ recuo_batch_result *out)',
  'uint32_t recuo_success_needs_machine(const recuo_gate *gate, bool stats, uint32_t min_level, _Out_ bool *out)',
  'uint32_t recuo_loop_pool_choose(const recuo_attempt_pool *enclosing, uint32_t max_attempts, bool batch_operation, bool after_first, _Out_ recuo_attempt_pool **pool_out, _Out_ bool *nested, _Out_ bool *owned)',
  'uint32_t recuo_attempts_entered(recuo_attempts *attempts, uint64_t now_ms, bool passed, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_succeeded(recuo_attempts *attempts, uint64_t now_ms, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_failed(recuo_attempts *attempts, uint64_t now_ms, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_judged(recuo_attempts *attempts, uint64_t now_ms, const recuo_verdict *verdict, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_responded(recuo_attempts *attempts, uint64_t now_ms, const recuo_outcome *outcome, const recuo_header *headers, size_t header_count, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_slept(recuo_attempts *attempts, uint64_t now_ms, _Out_ recuo_step *out)',
  'uint32_t recuo_attempts_cancel(recuo_attempts *attempts)',
  'uint32_t recuo_attempts_stop_queue(recuo_attempts *attempts, uint32_t reason)',
  'uint32_t recuo_attempts_poll_record(recuo_attempts *attempts, _Out_ uint32_t *level_out, _Out_ uint8_t *buf, size_t len, _Out_ size_t *written)',
  'uint32_t recuo_attempts_idempotency_key(recuo_attempts *attempts, _Out_ uint8_t *buf, size_t len, _Out_ size_t *written)',
  'uint32_t recuo_attempts_report(const recuo_attempts *attempts, _Out_ recuo_report *out, _Out_ uint64_t *delays, size_t delays_len, _Out_ size_t *delays_written)',
  'const char *recuo_give_up_reason_name(uint32_t reason)',
  'uint32_t recuo_plan_request(const recuo_policy *policy, const uint8_t *method, size_t method_len, bool callers_key, int32_t send_keys, _Out_ recuo_request_plan *out)',
  'uint32_t recuo_ending_for(uint32_t style, uint32_t reason, const recuo_last *last, _Out_ uint32_t *out)',
  'uint32_t recuo_give_up_message(uint32_t reason, uint32_t attempts, const recuo_last *last, bool has_retry_in, uint64_t retry_in_ms, _Out_ uint8_t *buf, size_t len, _Out_ size_t *written)',
  'uint32_t recuo_attempts_set_plan(recuo_attempts *attempts, const uint8_t *method, size_t method_len, bool callers_key, int32_t send_keys, _Out_ recuo_request_plan *out)',
  'uint32_t recuo_attempts_set_replayable(recuo_attempts *attempts, bool yes)',
  'uint32_t recuo_attempts_ending(const recuo_attempts *attempts, uint32_t style, const recuo_last *last, _Out_ uint32_t *out)',
  'uint32_t recuo_attempts_give_up_message(const recuo_attempts *attempts, uint64_t now_ms, const recuo_last *last, _Out_ uint8_t *buf, size_t len, _Out_ size_t *written)',
  'const char *recuo_key_to_send_name(uint32_t key)',
  'const char *recuo_style_name(uint32_t style)',
  'const char *recuo_ending_name(uint32_t ending)',
  'const char *recuo_last_kind_name(uint32_t kind)',
  'const char *recuo_decision_kind_name(uint32_t kind)',
  'const char *recuo_step_kind_name(uint32_t kind)',
  'const char *recuo_level_name(uint32_t level)',
  'uint32_t recuo_rate_parse(const uint8_t *text, size_t len, _Out_ double *per_second_out)',
  'uint32_t recuo_rate_format(double per_second, _Out_ uint8_t *buf, size_t len, _Out_ size_t *written)',
  'uint32_t recuo_plan(uint64_t requests, double allowance_per_s, double target_per_s, double latency_s, double retry_fraction, _Out_ recuo_plan_result *out)',
  'uint32_t recuo_plan_warning(uint64_t requests, double allowance_per_s, double target_per_s, double latency_s, double retry_fraction, size_t index, _Out_ uint8_t *buf, size_t len, _Out_ size_t *written)',
  'uint32_t recuo_regulator_new(double per_second, uint32_t burst, _Out_ recuo_regulator **out)',
  'uint32_t recuo_regulator_new_redis(const uint8_t *url, size_t url_len, const uint8_t *key, size_t key_len, double per_second, uint32_t burst, _Out_ recuo_regulator **out, _Out_ uint8_t *detail, size_t detail_len)',
  'uint32_t recuo_regulator_new_redis_with(const uint8_t *url, size_t url_len, const uint8_t *key, size_t key_len, double per_second, uint32_t burst, bool adaptive, _Out_ recuo_regulator **out, _Out_ uint8_t *detail, size_t detail_len)',
  'uint32_t recuo_regulator_new_shared(const uint8_t *path, size_t path_len, double per_second, uint32_t burst, _Out_ recuo_regulator **out, _Out_ uint8_t *detail, size_t detail_len)',
  'uint32_t recuo_regulator_new_shared_with(const uint8_t *path, size_t path_len, double per_second, uint32_t burst, bool adaptive, _Out_ recuo_regulator **out, _Out_ uint8_t *detail, size_t detail_len)',
  'void recuo_regulator_free(recuo_regulator *regulator)',
  'uint32_t recuo_regulator_try_acquire(const recuo_regulator *regulator, uint32_t cost, _Out_ uint64_t *wait_ns_out)',
  'uint32_t recuo_regulator_reserve(const recuo_regulator *regulator, uint32_t cost, uint64_t max_wait_ns, _Out_ uint64_t *wait_ns_out)',
  'uint32_t recuo_regulator_try_acquire_at(const recuo_regulator *regulator, uint64_t now_ns, uint32_t cost, _Out_ uint64_t *wait_ns_out)',
  'uint32_t recuo_regulator_set_adaptive(const recuo_regulator *regulator, bool adaptive)',
  'uint32_t recuo_regulator_on_throttled(const recuo_regulator *regulator)',
  'uint32_t recuo_regulator_on_success(const recuo_regulator *regulator)',
  'double recuo_regulator_rate_per_s(const recuo_regulator *regulator)',
  'uint32_t recuo_regulator_burst(const recuo_regulator *regulator)',
  'uint32_t recuo_concurrency_limit_new(uint32_t limit, _Out_ recuo_concurrency_limit **out)',
  'uint32_t recuo_concurrency_limit_new_shared(const uint8_t *path, size_t path_len, uint32_t limit, _Out_ recuo_concurrency_limit **out, _Out_ uint8_t *detail, size_t detail_len)',
  'uint32_t recuo_concurrency_limit_new_redis(const uint8_t *url, size_t url_len, const uint8_t *key, size_t key_len, uint32_t limit, uint64_t lease_ms, _Out_ recuo_concurrency_limit **out, _Out_ uint8_t *detail, size_t detail_len)',
  'void recuo_concurrency_limit_free(recuo_concurrency_limit *limit)',
  'uint32_t recuo_concurrency_limit_try_acquire(const recuo_concurrency_limit *limit, _Out_ recuo_permit **out)',
  'void recuo_permit_release(recuo_permit *permit)',
  'uint32_t recuo_permit_renew(const recuo_permit *permit, _Out_ bool *renewed_out)',
  'uint32_t recuo_concurrency_limit_limit(const recuo_concurrency_limit *limit)',
  'uint32_t recuo_concurrency_limit_in_flight(const recuo_concurrency_limit *limit)',
  'uint32_t recuo_concurrency_limit_max_in_flight(const recuo_concurrency_limit *limit)',
  'uint32_t recuo_retry_budget_new(double ratio, double floor_per_s, uint32_t window_s, _Out_ recuo_retry_budget **out)',
  'uint32_t recuo_retry_budget_new_default(_Out_ recuo_retry_budget **out)',
  'uint32_t recuo_retry_budget_new_redis(const uint8_t *url, size_t url_len, const uint8_t *key, size_t key_len, double ratio, double floor_per_s, uint32_t window_s, _Out_ recuo_retry_budget **out, _Out_ uint8_t *detail, size_t detail_len)',
  'void recuo_retry_budget_free(recuo_retry_budget *budget)',
  'uint32_t recuo_retry_budget_record_request(const recuo_retry_budget *budget)',
  'uint32_t recuo_retry_budget_try_withdraw(const recuo_retry_budget *budget)',
  'uint32_t recuo_retry_budget_counts(const recuo_retry_budget *budget, _Out_ uint64_t *requests_out, _Out_ uint64_t *retries_out)',
  'recuo_gate *recuo_gate_new(void)',
  'void recuo_gate_free(recuo_gate *gate)',
  'uint32_t recuo_gate_set_regulator(recuo_gate *gate, const recuo_regulator *regulator)',
  'uint32_t recuo_gate_set_limit(recuo_gate *gate, const recuo_concurrency_limit *limit)',
  'uint32_t recuo_gate_set_budget(recuo_gate *gate, const recuo_retry_budget *budget)',
  'bool recuo_gate_is_remote(const recuo_gate *gate)',
  'uint32_t recuo_batch_queue_new(const recuo_policy *policy, size_t len, uint64_t now_ms, bool has_deadline, uint64_t deadline_ms, bool stop_on_unreachable_wait, const recuo_stats_recorder *recorder, _Out_ recuo_batch_queue **out)',
  'void recuo_batch_queue_free(recuo_batch_queue *queue)',
  'uint32_t recuo_batch_queue_next(recuo_batch_queue *queue, uint64_t now_ms, _Out_ recuo_batch_next *out)',
  'uint32_t recuo_batch_queue_finished(recuo_batch_queue *queue, size_t index, uint32_t reason, _Out_ bool *stops)',
  'uint32_t recuo_batch_queue_stop(recuo_batch_queue *queue, uint32_t reason)',
  'uint32_t recuo_batch_queue_stopped(const recuo_batch_queue *queue)',
  'const char *recuo_batch_next_kind_name(uint32_t kind)',
  'uint32_t recuo_batch_queue_set_records(recuo_batch_queue *queue, const recuo_request_line *requests, size_t count, int64_t unix_ms)',
  'uint32_t recuo_batch_queue_poll_record(recuo_batch_queue *queue, _Out_ uint32_t *level_out, _Out_ uint8_t *buf, size_t len, _Out_ size_t *written)',
  'const char *recuo_batch_result_kind_name(uint32_t kind)',
  'recuo_stats_recorder *recuo_stats_recorder_new(void)',
  'void recuo_stats_recorder_free(recuo_stats_recorder *recorder)',
  'uint32_t recuo_stats_recorder_snapshot(const recuo_stats_recorder *recorder, _Out_ recuo_stats *out)',
  'uint32_t recuo_redact_url(const uint8_t *url, size_t url_len, _Out_ uint8_t *buf, size_t buf_len, _Out_ size_t *written, _Out_ bool *malformed_out)',
  'uint32_t recuo_redact_header_value(const uint8_t *name, size_t name_len, const uint8_t *value, size_t value_len, _Out_ uint8_t *buf, size_t buf_len, _Out_ size_t *written)',
  'bool recuo_is_sensitive_name(const uint8_t *name, size_t name_len)',
  'uint32_t recuo_who_answered(const recuo_header *headers, size_t header_count, const uint8_t *expected_content_type, size_t expected_len, _Out_ recuo_who_answered_result *out)',
  'uint32_t recuo_who_answered_evidence(const recuo_header *headers, size_t header_count, const uint8_t *expected_content_type, size_t expected_len, size_t index, _Out_ uint8_t *buf, size_t buf_len, _Out_ size_t *written)',
  'const char *recuo_origin_name(uint32_t origin)',
  'const char *recuo_confidence_name(uint32_t confidence)',
  'uint32_t recuo_record_attempt_json(int64_t start_unix_ms, uint64_t elapsed_ms, const uint8_t *method, size_t method_len, const uint8_t *url, size_t url_len, const recuo_outcome *outcome, const recuo_header *headers, size_t header_count, const recuo_verdict *verdict, const recuo_decision *decision, _Out_ uint8_t *buf, size_t buf_len, _Out_ size_t *written)',
];

function declare(k, lib) {
  const fns = {};
  for (const proto of PROTOTYPES) {
    const name = /(recuo_[a-z0-9_]+)\(/.exec(proto)[1];
    fns[name] = lib.func(proto);
  }
  return fns;
}

/**
 * Loads librecuo from the first candidate that opens, checks `recuo_version()` against the
 * package's version and declares its functions. Throws one `LibraryError` naming every place
 * tried when none will do.
 */
export function openLibrary(path) {
  const k = loadKoffi();
  declareTypes(k);
  const tried = [];
  for (const c of candidates(path)) {
    if (c.file && !existsSync(c.path)) {
      tried.push(`${c.path} (${c.from}): not found`);
      continue;
    }
    let lib;
    try {
      lib = k.load(c.path);
    } catch (e) {
      tried.push(`${c.path} (${c.from}): ${e.message}`);
      continue;
    }
    let version;
    try {
      version = lib.func('const char *recuo_version(void)')();
    } catch (e) {
      tried.push(`${c.path} (${c.from}): not librecuo (${e.message})`);
      continue;
    }
    if (version !== PACKAGE_VERSION) {
      throw new LibraryError(
        `recuo: ${c.path} (${c.from}) is librecuo ${version}, but this package is recuo ${PACKAGE_VERSION}: ` +
          'build the matching library (make js) or point RECUO_LIB at it',
        [...tried, `${c.path} (${c.from}): version ${version}`],
      );
    }
    try {
      return { koffi: k, path: c.path, from: c.from, version, fn: declare(k, lib) };
    } catch (e) {
      throw new LibraryError(`recuo: ${c.path} (${c.from}) lacks a function this package needs: ${e.message}`, tried);
    }
  }
  throw new LibraryError(
    'recuo: librecuo was not found. Set RECUO_LIB to its path, run `make js` (which bundles it ' +
      'into the package) or `make install`. Tried:\n  ' + tried.join('\n  '),
    tried,
  );
}
