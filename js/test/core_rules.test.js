// The loops keep no rule of their own (issue 25): the gate is passed as the machine's
// pollGate says, the pool is the core's choice, a record shows what the machine was told,
// and a give-up's retryAt is the machine's. Each case checks what a user sees of it.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as recuo from '../index.js';

const noSleep = async () => {};

test('a full limit: the attempt starts soon after the place is given back, the place held through the attempt', async () => {
  const limit = new recuo.ConcurrencyLimit(1);
  const gate = new recuo.Gate({ limit });
  const held = limit.tryAcquire();
  let releasedAt = null;
  setTimeout(() => {
    releasedAt = performance.now();
    held.release();
  }, 60);
  const inFlight = [];
  const value = await recuo.retry(() => {
    inFlight.push(limit.inFlight);
    return performance.now() - releasedAt;
  }, { gate, policy: new recuo.Policy({ deadlineMs: 5000 }) });
  // The machine looks every 5 ms: a generous bound for a busy machine.
  assert.ok(value >= 0 && value < 250, `started ${value} ms after the release`);
  assert.deepEqual(inFlight, [1], 'the attempt holds the place');
  assert.equal(limit.inFlight, 0, 'given back when the attempt ended');
});

test('a full limit at the deadline gives up wait_exceeds_deadline, with no attempt', async () => {
  const limit = new recuo.ConcurrencyLimit(1);
  const held = limit.tryAcquire();
  let calls = 0;
  const started = performance.now();
  const e = await recuo.retry(() => calls++, { gate: new recuo.Gate({ limit }), policy: new recuo.Policy({ deadlineMs: 100 }) }).catch((x) => x);
  const took = performance.now() - started;
  assert.ok(e instanceof recuo.GiveUpError, String(e));
  assert.equal(e.reason, 'wait_exceeds_deadline');
  assert.equal(e.report.attempts, 0);
  assert.equal(calls, 0);
  assert.ok(took >= 95 && took < 1500, `gave up after ${took} ms`);
  held.release();
  assert.equal(limit.inFlight, 0);
});

test('a start slot past the deadline is refused at once; an abort ends a gate wait at once', async () => {
  const regulator = new recuo.Regulator('1/min');
  assert.equal(regulator.tryAcquire(), 0);
  const gate = new recuo.Gate({ regulator });
  let started = performance.now();
  await assert.rejects(recuo.retry(() => 1, { gate, policy: new recuo.Policy({ deadlineMs: 1000 }) }), { reason: 'wait_exceeds_deadline' });
  assert.ok(performance.now() - started < 500, 'refused at once');
  // No deadline: the slot is a minute away, and the caller aborts after 50 ms.
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  started = performance.now();
  await assert.rejects(recuo.retry(() => 1, { gate, signal: controller.signal, policy: new recuo.Policy({ deadlineMs: null }) }), { name: 'AbortError' });
  assert.ok(performance.now() - started < 1000, 'the wait ended at once');
  // The slot reserved for the aborted loop was given back: the next start is a minute from the first.
  const wait = regulator.tryAcquire();
  assert.ok(wait > 55_000 && wait <= 60_000, `next slot in ${wait} ms`);
});

test('a full limit and an abort: rejected at once, nothing held', async () => {
  const limit = new recuo.ConcurrencyLimit(1);
  const held = limit.tryAcquire();
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 30);
  const started = performance.now();
  await assert.rejects(recuo.retry(() => 1, { gate: new recuo.Gate({ limit }), signal: controller.signal }), { name: 'AbortError' });
  assert.ok(performance.now() - started < 1000);
  held.release();
  assert.equal(limit.inFlight, 0);
});

test("a record shows what the attempt's error carried, and what the verdict's classifier saw", async () => {
  const lines = [];
  const onRecord = (level, line) => lines.push(JSON.parse(line));
  const policy = new recuo.Policy({ maxAttempts: 2, baseMs: 1, capMs: 1 });
  // An error carrying a response (ky's HTTPError, a GiveUpError): its status in the record.
  const carried = Object.assign(new Error('busy'), { response: new Response('', { status: 503, headers: { 'Retry-After': '0' } }) });
  await assert.rejects(recuo.retry(() => { throw carried; }, { policy, onRecord, sleep: noSleep }), (e) => e === carried);
  const attempts = lines.filter((r) => r.type === 'attempt');
  assert.deepEqual(attempts.map((r) => [r.status, r.wait_headers]), [[503, { 'retry-after': '0' }], [503, { 'retry-after': '0' }]]);
  // The verdict's classifier saw a 429: its word comes before the error's.
  lines.length = 0;
  await assert.rejects(recuo.retry(() => { throw carried; }, {
    policy, onRecord, sleep: noSleep, classify: () => recuo.classify(429, { headers: { 'Retry-After': '0' } }),
  }));
  assert.deepEqual(lines.filter((r) => r.type === 'attempt').map((r) => r.status), [429, 429]);
  // An error that carries nothing is an error with no HTTP meaning.
  lines.length = 0;
  await assert.rejects(recuo.retry(() => { throw new Error('plain'); }, { policy, onRecord, sleep: noSleep }));
  assert.deepEqual(lines.filter((r) => r.type === 'attempt').map((r) => [r.status, r.transport]), [[undefined, 'other'], [undefined, 'other']]);
});

test("a give-up's retryAt is the machine's instant on the wall clock", async () => {
  const before = Date.now();
  const e = await recuo.retry(() => new Response('', { status: 429, headers: { 'Retry-After': '3600' } })).catch((x) => x);
  const after = Date.now();
  assert.equal(e.reason, 'wait_exceeds_deadline');
  assert.ok(e.retryAt >= before + 3_600_000 && e.retryAt <= after + 3_600_000, `${e.retryAt - before}`);
  assert.equal(e.report.retryAt, e.retryAt);
});

test('the pool a loop draws from is the core\'s choice; a nested loop after a fast first attempt joins it', async () => {
  const outer = new recuo.AttemptPool(3);
  const chosen = recuo.AttemptPool.choose(outer, 5);
  assert.deepEqual([chosen.pool.remaining, chosen.nested, chosen.owned], [3, true, false]);
  const own = recuo.AttemptPool.choose(null, 5, { afterFirst: true });
  assert.deepEqual([own.pool.remaining, own.nested, own.owned], [4, true, true]);
  assert.throws(() => recuo.AttemptPool.choose({}, 5), TypeError);
  // comRetry(f): its first attempt made before any machine; a loop nested in its second
  // attempt draws from the same pool of 5.
  let inner = 0;
  let outerCalls = 0;
  await assert.rejects(recuo.comRetry(async () => {
    outerCalls++;
    if (outerCalls === 2) await recuo.comRetry(() => { inner++; throw new Error('inner'); }, { sleep: noSleep }).catch(() => {});
    throw new Error('outer');
  }), /outer/);
  // The first attempt, the second (which draws one), and the inner loop's: its first rides on
  // the outer attempt, the rest draw what is left.
  assert.deepEqual([outerCalls, inner], [2, 4]);
});

test('successNeedsMachine: the core\'s answer', () => {
  assert.equal(recuo.Operation.successNeedsMachine(), false);
  assert.equal(recuo.Operation.successNeedsMachine({ records: 'debug' }), true);
  assert.equal(recuo.Operation.successNeedsMachine({ records: 'info' }), false);
  assert.equal(recuo.Operation.successNeedsMachine({ gate: new recuo.Gate({ limit: new recuo.ConcurrencyLimit(1) }) }), true);
  assert.throws(() => recuo.Operation.successNeedsMachine({ records: 'loud' }), TypeError);
});

test('a retry or a give-up never names success, as in every language: the core refuses the verdict', async () => {
  const op = new recuo.Operation(new recuo.Policy({ maxAttempts: 3 }), { seed: 1 });
  op.start(0, 0);
  assert.deepEqual(op.failed(10), { kind: 'classify', attempt: 0 });
  for (const verdict of [{ verdict: 'retry', reason: 'success' }, { verdict: 'give_up', reason: 'success' }]) {
    assert.throws(() => op.judged(10, verdict), (e) => e instanceof recuo.RecuoError && e.status === 'invalid_enum');
  }
  // Nothing changed: the machine still waits for its verdict.
  assert.equal(op.judged(10, { verdict: 'retry', reason: 'server_error' }).kind, 'sleep');
  // A classifier answering such a verdict ends the loop with the same error.
  await assert.rejects(
    recuo.retry(() => { throw new Error('boom'); }, { classify: () => ({ verdict: 'retry', reason: 'success' }), sleep: noSleep }),
    (e) => e instanceof recuo.RecuoError && e.status === 'invalid_enum',
  );
});
