// tests/vectors/policies.json through Policy.fromValue and toValue, as core/tests/policy_values.rs
// and tests/c/test_vectors.c read it: the plain form written back must be exactly `expect`, a
// refused value must name the core's error. Then the constructor's options, which become the
// same plain form.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import * as recuo from '../index.js';

const { valid, invalid, presets } = JSON.parse(readFileSync(new URL('../../tests/vectors/policies.json', import.meta.url), 'utf8'));


test('policies.json: valid values answer their plain form, which reads back', () => {
  assert.equal(valid.length, 8);
  for (const c of valid) {
    const policy = recuo.Policy.fromValue(c.value);
    assert.deepEqual(policy.toValue(), c.expect, c.name);
    assert.deepEqual(JSON.parse(JSON.stringify(policy)), c.expect, c.name);
    const again = recuo.Policy.fromValue(policy.toValue());
    assert.deepEqual(again.toValue(), c.expect, `${c.name}: read back`);
    again.close();
    policy.close();
  }
});

test('policies.json: each preset, made by its name, writes its plain form', () => {
  assert.equal(presets.length, 5);
  for (const c of presets) {
    const name = c.name.replace(/_(.)/g, (_, ch) => ch.toUpperCase());
    const policy = recuo.Policy[name]();
    assert.ok(policy instanceof recuo.Policy, c.name);
    assert.deepEqual(policy.toValue(), c.expect, c.name);
    policy.close();
  }
});

test('policies.json: invalid values are refused with the core\'s error', () => {
  assert.equal(invalid.length, 21);
  for (const c of invalid) {
    assert.throws(
      () => recuo.Policy.fromValue(c.value),
      (e) => e instanceof recuo.RecuoError && e.status === c.error,
      `${c.name}: expected ${c.error}`,
    );
  }
});

test('fromValue: what JSON cannot say is refused, not read as null', () => {
  const invalidValue = (e) => e instanceof recuo.RecuoError && e.status === 'invalid_value' && e.code === 109;
  assert.throws(() => recuo.Policy.fromValue({ max_attempts: NaN }), invalidValue);
  assert.throws(() => recuo.Policy.fromValue({ deadline_ms: Infinity }), invalidValue);
  assert.throws(() => recuo.Policy.fromValue({ spread_ms: NaN }), invalidValue);
  assert.throws(() => recuo.Policy.fromValue(undefined), invalidValue);
  assert.throws(() => recuo.Policy.fromValue('{}'), invalidValue);
  assert.throws(() => recuo.Policy.fromValue({ base_ms: ' '.repeat(70000) }), (e) => e.status === 'length_too_large');
  // A field left undefined is left out, as JSON.stringify leaves it: guide A's value.
  assert.equal(recuo.Policy.fromValue({ max_attempts: undefined }).maxAttempts, 5);
  assert.equal(recuo.Policy.fromValue({ deadline_ms: null }).deadlineMs, null);
});

test('the constructor\'s options are the same plain form', () => {
  const guideA = recuo.Policy.fromValue({}).toValue();
  assert.deepEqual(new recuo.Policy().toValue(), guideA);
  const b = new recuo.Policy({ guideB: true });
  assert.deepEqual(b.toValue(), { ...guideA, base_ms: 1000, cap_ms: 8000, deadline_ms: 30000 });
  const adapters = new recuo.Policy({ adapters: true, maxAttempts: 3, deadlineMs: null });
  assert.deepEqual(adapters.toValue(), { ...guideA, max_attempts: 3, base_ms: 1000, cap_ms: 8000, use_date_header: true });
  const every = new recuo.Policy({
    maxAttempts: 7, baseMs: 50, capMs: 50, jitter: 'decorrelated', deadlineMs: 120000, spreadMs: 250,
    idempotencyHeader: 'X-Request-Id', useDateHeader: true, serverHonoursKeys: true, quota403IsRateLimit: false,
    statusRetry: { 418: 'always', 503: 'never' }, transportRetry: { tls: 'if_idempotent' }, methodIdempotent: { post: true },
  });
  assert.deepEqual(every.toValue(), {
    max_attempts: 7, base_ms: 50, cap_ms: 50, jitter: 'decorrelated', deadline_ms: 120000, spread_ms: 250,
    idempotency_header: 'X-Request-Id', use_date_header: true, server_honours_keys: true, quota_403_as_rate_limit: false,
    status_retry: { 418: 'always', 503: 'never' }, transport_retry: { tls: 'if_idempotent' }, idempotent_methods: { POST: true },
  });
  assert.deepEqual(JSON.parse(JSON.stringify({ policy: every })), { policy: every.toValue() });
  // The getters read the same policy.
  assert.deepEqual([every.maxAttempts, every.baseMs, every.jitter, every.deadlineMs, every.spreadMs, every.idempotencyHeader],
    [7, 50, 'decorrelated', 120000, 250, 'X-Request-Id']);
  assert.ok(every.methodIdempotent('POST'));
  // The core's errors, by the core's names.
  assert.throws(() => new recuo.Policy({ statusRetry: { 302: 'always' } }), (e) => e.status === 'status_out_of_range');
  assert.throws(() => new recuo.Policy({ methodIdempotent: { BREW: true } }), (e) => e.status === 'unknown_name');
  assert.throws(() => new recuo.Policy({ idempotencyHeader: 'Bad Name' }), (e) => e.status === 'invalid_header_name');
  for (const p of [b, adapters, every]) p.close();
});
