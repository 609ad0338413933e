// The waits are timers: the event loop keeps running through them, and an AbortSignal ends
// one at once. Also guide A's comRetry and the policy loop's own rules, through the package.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as recuo from '../index.js';

const unavailable = (seconds) => new Response('busy', { status: 503, headers: { 'Retry-After': String(seconds) } });
const noSpread = new recuo.Policy({ spreadMs: 0, deadlineMs: null });

test('a setInterval keeps ticking through a 2 s wait', async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  try {
    const answer = await recuo.retry((attempt) => (attempt.number === 0 ? unavailable(2) : 'done'), { policy: noSpread });
    assert.equal(answer, 'done');
  } finally {
    clearInterval(timer);
  }
  const took = performance.now() - started;
  assert.ok(took >= 2000, `waited ${took} ms`);
  assert.ok(ticks >= 100, `only ${ticks} ticks of the 200 expected: the loop was blocked`);
});

test('aborting in the middle of a 10 s wait rejects within 1 s', async () => {
  const controller = new AbortController();
  let attempts = 0;
  setTimeout(() => controller.abort(), 300);
  const started = performance.now();
  await assert.rejects(
    recuo.retry(() => { attempts++; return unavailable(10); }, { policy: noSpread, signal: controller.signal }),
    (e) => e === controller.signal.reason && e.name === 'AbortError',
  );
  const took = performance.now() - started;
  assert.ok(took < 1300, `rejected after ${took} ms`);
  assert.equal(attempts, 1);
});

test('an aborted signal makes no attempt (retry, comRetry)', async () => {
  const controller = new AbortController();
  controller.abort();
  let calls = 0;
  await assert.rejects(recuo.retry(() => calls++, { signal: controller.signal }), { name: 'AbortError' });
  await assert.rejects(recuo.comRetry(() => calls++, { signal: controller.signal }), { name: 'AbortError' });
  assert.equal(calls, 0);
});

test("comRetry: the task's last error rethrown, the same object; repetirSe as boolean or verdict", async () => {
  const errors = [];
  await assert.rejects(
    recuo.comRetry(() => { const e = new Error(`failure ${errors.length}`); errors.push(e); throw e; }, { tentativas: 3, baseMs: 1, maxMs: 2 }),
    (e) => e === errors[2],
  );
  assert.equal(errors.length, 3);
  // false stops at once; a give-up verdict stops; a retry verdict's server wait is slept.
  let calls = 0;
  await assert.rejects(recuo.comRetry(() => { calls++; throw new Error('x'); }, { repetirSe: () => false }));
  assert.equal(calls, 1);
  calls = 0;
  await assert.rejects(recuo.comRetry(() => { calls++; throw new Error('x'); }, { repetirSe: () => recuo.classify(404) }));
  assert.equal(calls, 1);
  const slept = [];
  calls = 0;
  const value = await recuo.comRetry(
    () => { if (calls++ === 0) throw new Error('429'); return 'ok'; },
    { repetirSe: () => recuo.classify(429, { headers: { 'Retry-After': '3' } }), sleep: async (ms) => { slept.push(ms); } },
  );
  assert.equal(value, 'ok');
  assert.equal(slept.length, 1);
  assert.ok(slept[0] >= 3000 && slept[0] <= 3200, `slept ${slept}`);
  // A value, even a Response, is the task's own: comRetry does not judge it.
  assert.equal((await recuo.comRetry(() => unavailable(1))).status, 503);
});

test('retryDelayMs: guide B', () => {
  assert.equal(recuo.retryDelayMs('12', 0), 12000);
  assert.equal(recuo.retryDelayMs('Sun, 06 Nov 1994 08:49:47 GMT', 0, 784111777000), 10000);
  assert.equal(recuo.retryDelayMs('99999999999999999999', 0), Infinity);
  for (let attempt = 0; attempt < 6; attempt++) {
    const d = recuo.retryDelayMs(undefined, attempt);
    assert.ok(d >= 0 && d <= Math.min(8000, 1000 * 2 ** attempt), `${attempt}: ${d}`);
  }
  assert.throws(() => recuo.retryDelayMs('1', -1), RangeError);
});

test('retry classifies a returned Response: a 404 is returned, attempts exhausted return the last', async () => {
  let calls = 0;
  const notFound = await recuo.retry(() => { calls++; return new Response('', { status: 404 }); });
  assert.equal(notFound.status, 404);
  assert.equal(calls, 1);
  calls = 0;
  const policy = new recuo.Policy({ maxAttempts: 3, baseMs: 1, capMs: 2 });
  const last = await recuo.retry(() => { calls++; return new Response('', { status: 500 }); }, { policy });
  assert.equal(last.status, 500);
  assert.equal(calls, 3);
  // A POST's 500 may have been processed: not repeated without a key.
  calls = 0;
  await recuo.retry(() => { calls++; return new Response('', { status: 500 }); }, { policy, request: { method: 'POST', url: 'https://api.example/pay' } });
  assert.equal(calls, 1);
});

test('retry: a thrown error is judged by classify, else retried; the same object rethrown', async () => {
  const policy = new recuo.Policy({ maxAttempts: 4, baseMs: 1, capMs: 2 });
  const error = new Error('boom');
  let calls = 0;
  await assert.rejects(recuo.retry(() => { calls++; throw error; }, { policy }), (e) => e === error);
  assert.equal(calls, 4);
  calls = 0;
  await assert.rejects(recuo.retry(() => { calls++; throw error; }, { policy, classify: () => false }), (e) => e === error);
  assert.equal(calls, 1);
});

test('nested loops share the outer loop\'s attempts', async () => {
  let calls = 0;
  const policy = new recuo.Policy({ maxAttempts: 5, baseMs: 1, capMs: 1 });
  await assert.rejects(recuo.retry(() => recuo.retry(() => { calls++; throw new Error('x'); }, { policy }), { policy }));
  assert.equal(calls, 5);
});

test('the gate: a regulator spaces the attempts, with timers', async () => {
  const gate = new recuo.Gate({ regulator: new recuo.Regulator('20/s', { burst: 1 }), limit: new recuo.ConcurrencyLimit(2), budget: new recuo.RetryBudget() });
  const starts = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: 6 }, () => recuo.retry(() => { starts.push(performance.now()); return 'ok'; }, { gate })));
  starts.sort((a, b) => a - b);
  assert.equal(starts.length, 6);
  assert.ok(starts[5] - started >= 5 * 50 - 10, `6 starts at 20/s took ${starts[5] - started} ms`);
});

test('records: redacted JSON lines from the machine', async () => {
  const lines = [];
  const url = 'https://ana:pw@api.example/pay?token=s3cret';
  let calls = 0;
  await recuo.retry(() => (calls++ === 0 ? new Response('', { status: 503, headers: { 'Retry-After': '0' } }) : new Response('ok')), {
    request: { method: 'POST', url }, onRecord: (level, line) => lines.push([level, JSON.parse(line)]),
  });
  assert.deepEqual(lines.map(([, r]) => [r.type, r.decision ?? r.result]), [['attempt', 'retry'], ['attempt', 'done'], ['result', 'success']]);
  assert.ok(!JSON.stringify(lines).includes('s3cret') && !JSON.stringify(lines).includes('pw@'));
});

test('bad input is a TypeError, RangeError or RecuoError, never a crash', async () => {
  assert.throws(() => new recuo.Policy({ maxAttempts: 0 }), (e) => e instanceof recuo.RecuoError && e.status === 'zero_attempts');
  assert.throws(() => new recuo.Policy({ baseMs: 10, capMs: 1 }), (e) => e.status === 'cap_below_base');
  assert.throws(() => new recuo.Regulator('0/min'), (e) => e.status === 'invalid_rate');
  assert.throws(() => recuo.plan(600, '120/min', '150/min', 2), (e) => e.status === 'target_above_allowance');
  assert.throws(() => recuo.classify('teapot'), TypeError);
  assert.throws(() => new recuo.Policy({ jitter: 'lots' }), TypeError);
  await assert.rejects(recuo.retry('not a function'), TypeError);
});

test('every argument is checked before any call: a wrong type is a TypeError, a number out of range a RangeError', async () => {
  assert.throws(() => new recuo.Gate({ regulator: '1/s' }), { name: 'TypeError', message: 'regulator must be a recuo Regulator, not "1/s"' });
  assert.throws(() => new recuo.Gate({ limit: 2 }), TypeError);
  assert.throws(() => new recuo.Gate({ budget: {} }), TypeError);
  const regulator = new recuo.Regulator(5);
  for (const bad of [-1, NaN, Infinity, 2 ** 64]) assert.throws(() => regulator.tryAcquireAt(bad), RangeError, String(bad));
  assert.throws(() => regulator.tryAcquireAt('0'), TypeError);
  await assert.rejects(regulator.acquire({ timeoutMs: Infinity }), RangeError);
  await assert.rejects(regulator.acquire({ timeoutMs: NaN }), RangeError);
  const op = new recuo.Operation(new recuo.Policy());
  for (const bad of [-5, NaN, Infinity]) assert.throws(() => op.start(bad), RangeError, String(bad));
  assert.throws(() => op.start(1.5), TypeError);
  op.close();
  // Shared files are gone from the package: across processes, Redis.
  assert.equal(recuo.Regulator.shared, undefined);
  assert.equal(recuo.ConcurrencyLimit.shared, undefined);
});

test("retry over fetch: each attempt's signal ends by the deadline, so a server that trickles cannot outlive it", { timeout: 10000 }, async () => {
  const { createServer } = await import('node:http');
  // Headers promised, the body never finished: a byte every 50 ms, for ever.
  const trickles = [];
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-length': '1000000' });
    trickles.push(setInterval(() => res.write('x'), 50));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const policy = new recuo.Policy({ adapters: true, deadlineMs: 400, baseMs: 1, capMs: 2 });
  const started = performance.now();
  let signalOfTheAttempt;
  try {
    await assert.rejects(
      recuo.retry(async (attempt) => {
        signalOfTheAttempt = attempt.signal;
        const response = await fetch(url, { signal: attempt.signal });
        return new Response(await response.arrayBuffer(), response);
      }, { policy }),
      (e) => e.name === 'TimeoutError' || e instanceof recuo.GiveUpError,
    );
    const took = performance.now() - started;
    assert.ok(took >= 350 && took < 3000, `gave up after ${took} ms`);
    assert.ok(signalOfTheAttempt.aborted, "the attempt's signal fired");
  } finally {
    trickles.forEach(clearInterval);
    server.closeAllConnections();
    server.close();
  }
});

test('an attempt with no deadline hands over the caller\'s own signal', async () => {
  const controller = new AbortController();
  let seen;
  await recuo.retry(async (attempt) => { seen = attempt.signal; return 1; }, { policy: new recuo.Policy({ adapters: true, deadlineMs: null }), signal: controller.signal });
  assert.equal(seen, controller.signal);
});

test("an attempt's signal: timed from the attempt's start, any deadline length, the caller's signal kept after the attempt", async () => {
  // Read late, it still fires when the time the deadline left runs out, counted from the start.
  const policy = new recuo.Policy({ adapters: true, deadlineMs: 300, maxAttempts: 1 });
  let firedAfterRead = null;
  await assert.rejects(recuo.retry(async (attempt) => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const read = performance.now();
    await new Promise((resolve, reject) => attempt.signal.addEventListener('abort', () => {
      firedAfterRead = performance.now() - read;
      reject(attempt.signal.reason);
    }));
  }, { policy }));
  assert.ok(firedAfterRead !== null && firedAfterRead < 250, `fired ${firedAfterRead} ms after being read`);
  // A deadline longer than a timer holds (24.8 days) does not cut the attempt at once.
  const long = new recuo.Policy({ adapters: true, deadlineMs: 30 * 86_400_000 });
  const value = await recuo.retry(async (attempt) => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(attempt.signal.aborted, false);
    return 'done';
  }, { policy: long });
  assert.equal(value, 'done');
  // The caller's abort still reaches what the attempt handed on (a response's body).
  const controller = new AbortController();
  let handedOn;
  await recuo.retry(async (attempt) => { handedOn = attempt.signal; return 1; }, { policy: long, signal: controller.signal });
  controller.abort();
  assert.equal(handedOn.aborted, true);
  // Read only after the attempt ended: the caller's own signal, and no timer left behind.
  let kept;
  const other = new AbortController();
  await recuo.retry(async (attempt) => { kept = attempt; return 1; }, { policy: long, signal: other.signal });
  assert.equal(kept.signal, other.signal);
});

test("Deno's words on an error's cause name the transport failure; text keeps a leading BOM; a BigInt is bounded too", () => {
  const refused = new TypeError('fetch failed', { cause: new Error('tcp connect error: Connection refused (os error 111)') });
  assert.equal(recuo.transportKind(refused), 'connect');
  assert.equal(recuo.transportKind(new TypeError('error reading a body from connection')), 'reset');
  assert.deepEqual(recuo.redactHeaders([['x-foo', '\uFEFFabc']]), [['x-foo', '\uFEFFabc']]);
  assert.throws(() => new recuo.Regulator(5, { burst: 4294967297n }), RangeError);
});
