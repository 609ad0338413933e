// Issue 18: comRetry(f) with no options makes its first attempt before any machine exists and
// hands a failure to the machine. Each case runs that fast path beside the same loop given
// its options (the machine from the start): the answers must be the same.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as recuo from '../index.js';

const noSleep = async () => {};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('a loop inside the first attempt draws from the fast path\'s attempts', async () => {
  const run = async (loop) => {
    let inner = 0;
    const value = await loop(async () => {
      await recuo.comRetry(() => { inner++; throw new Error('inner'); }, { sleep: noSleep }).catch(() => {});
      return 'outer';
    });
    return [value, inner];
  };
  const fast = await run((f) => recuo.comRetry(f));
  const slow = await run((f) => recuo.comRetry(f, { tentativas: 5 }));
  assert.deepEqual(fast, ['outer', 5]);
  assert.deepEqual(fast, slow);
});

test('a fast loop inside another loop\'s attempt draws nothing when it succeeds', async () => {
  const calls = [];
  await assert.rejects(recuo.comRetry(async () => {
    calls.push('outer');
    calls.push(await recuo.comRetry(() => 'inner'));
    throw new Error('outer');
  }, { sleep: noSleep }), /outer/);
  assert.deepEqual(calls, Array(5).fill(['outer', 'inner']).flat());
});

test('a first failure is the machine\'s first attempt: numbers, pool, key, value', async () => {
  const run = async (loop) => {
    const seen = [];
    let inner = 0;
    const value = await loop(async () => {
      const attempt = recuo.currentAttempt();
      seen.push([attempt.number, attempt.timeoutMs, attempt.idempotencyHeader, UUID.test(attempt.idempotencyKey)]);
      if (seen.length === 1) {
        await recuo.comRetry(() => { if (++inner < 3) throw new Error('inner'); }, { sleep: noSleep }).catch(() => {});
        throw new Error('first');
      }
      return 'second';
    });
    return [value, seen, inner, recuo.currentAttempt()];
  };
  // Guide A's first delay is at most 200 ms: the fast path sleeps it for real.
  const fast = await run((f) => recuo.comRetry(f));
  const slow = await run((f) => recuo.comRetry(f, { sleep: noSleep }));
  assert.deepEqual(fast, ['second', [[0, null, 'Idempotency-Key', true], [1, null, 'Idempotency-Key', true]], 3, null]);
  assert.deepEqual(fast, slow);
});

test('the key is the operation\'s on every attempt, made at the first ask', async () => {
  const run = async (loop) => {
    const keys = [];
    const attempts = [];
    const value = await loop(() => {
      const attempt = recuo.currentAttempt();
      attempts.push(attempt);
      if (attempt.number === 0) throw new Error('not yet');
      // Asked only now: the first attempt's object answers the same key.
      keys.push(attempt.idempotencyKey, attempts[0].idempotencyKey);
      return 'done';
    });
    // The loop is over: its machine too, as the key says.
    assert.throws(() => attempts[0].idempotencyKey, /closed/);
    return [value, keys.length, new Set(keys).size, UUID.test(keys[0])];
  };
  const fast = await run((f) => recuo.comRetry(f));
  const slow = await run((f) => recuo.comRetry(f, { sleep: noSleep }));
  assert.deepEqual(fast, ['done', 2, 1, true]);
  assert.deepEqual(fast, slow);
  // A success at once: a key when asked, the same at every ask; another loop's, another.
  const keys = [];
  const ask = () => { const a = recuo.currentAttempt(); keys.push(a.idempotencyKey, a.idempotencyKey); };
  await recuo.comRetry(ask);
  await recuo.comRetry(ask);
  assert.equal(keys[0], keys[1]);
  assert.equal(keys[2], keys[3]);
  assert.notEqual(keys[0], keys[2]);
});

test('giving up after a fast first attempt rejects with the last error, the very object', async () => {
  const thrown = [];
  // Guide A's delays are slept for real: at most 3 s, 1.5 s on average.
  const e = await recuo.comRetry(() => { throw thrown[thrown.length] = new Error(`failure ${thrown.length + 1}`); }).catch((x) => x);
  assert.equal(thrown.length, 5);
  assert.equal(e, thrown[4]);
});

test('values and rejections of every kind come back as they are', async () => {
  const object = {};
  assert.equal(await recuo.comRetry(() => object), object);
  assert.equal(await recuo.comRetry(async () => object), object);
  assert.equal(await recuo.comRetry(() => undefined), undefined);
  await assert.rejects(recuo.comRetry('not a function'), TypeError);
  await assert.rejects(recuo.comRetry(null, undefined), TypeError);
  assert.equal(recuo.currentAttempt(), null);
});

test('comRetry\'s figures are its own on every call: guide A\'s, others, bad ones refused as ever', async () => {
  const failing = (calls) => () => { calls.push(calls.length); throw new Error('again'); };
  for (const tentativas of [5, 2, 5, 3]) {
    const calls = [];
    await assert.rejects(recuo.comRetry(failing(calls), { tentativas, sleep: noSleep }), /again/);
    assert.equal(calls.length, tentativas);
  }
  const calls = [];
  await assert.rejects(recuo.comRetry(failing(calls), { baseMs: 0, maxMs: 0 }), /again/);
  assert.equal(calls.length, 5);
  await assert.rejects(recuo.comRetry(() => 1, { tentativas: 0 }), /zero_attempts: attempts must be at least 1/);
  await assert.rejects(recuo.comRetry(() => 1, { tentativas: -1 }), { name: 'RangeError', message: 'maxAttempts must be between 0 and 4294967295; got -1' });
  await assert.rejects(recuo.comRetry(() => 1, { tentativas: 'x' }), { name: 'TypeError', message: 'maxAttempts must be an integer, not x' });
  assert.equal(await recuo.comRetry(() => 'still', { tentativas: 5 }), 'still');
});

test('every field of the machine\'s steps comes back', () => {
  const policy = new recuo.Policy({ deadlineMs: 1000 });
  const op = new recuo.Operation(policy, { seed: 7 });
  assert.deepEqual(
    [op.start(0, 0), op.failed(10), op.judged(10, true), op.slept(50), op.responded(60, 503, { 'retry-after': '5' })],
    [
      { kind: 'call', attempt: 0, timeoutMs: 1000 },
      { kind: 'classify', attempt: 0 },
      { kind: 'sleep', attempt: 0, delayMs: 6 },
      { kind: 'call', attempt: 1, timeoutMs: 950 },
      { kind: 'gave_up', attempt: 1, reason: 'wait_exceeds_deadline', retryAtMs: 5060 },
    ],
  );
  const gated = new recuo.Operation(policy, { gate: new recuo.Gate({ limit: new recuo.ConcurrencyLimit(1) }) });
  assert.deepEqual(gated.start(0, 0), { kind: 'enter', attempt: 0, untilMs: 1000 });
  const open = new recuo.Operation(new recuo.Policy());
  assert.deepEqual(open.start(0, 0), { kind: 'call', attempt: 0, timeoutMs: null });
  assert.deepEqual(open.succeeded(1), { kind: 'done', attempt: 0 });
  for (const o of [op, gated, open]) o.close();
  policy.close();
});

test('retry\'s attempts name their policy\'s idempotency header, call after call', async () => {
  const own = new recuo.Policy({ idempotencyHeader: 'X-Request-Key' });
  const seen = [];
  for (const policy of [own, undefined, own, new recuo.Policy({ idempotencyHeader: 'Other-Key' })]) {
    seen.push(await recuo.retry((attempt) => attempt.idempotencyHeader, policy ? { policy } : {}));
  }
  assert.deepEqual(seen, ['X-Request-Key', 'Idempotency-Key', 'X-Request-Key', 'Other-Key']);
  own.close();
  await assert.rejects(recuo.retry(() => 1, { policy: own }), /this object was closed/);
});

test('an attempt has one shape on every path: the fast first attempt, the machine\'s, retry()\'s', async () => {
  const shapes = [];
  const look = (given) => {
    const a = given ?? recuo.currentAttempt(); // comRetry's task takes no argument
    shapes.push({
      keys: Object.keys(a),
      json: JSON.parse(JSON.stringify(a)),
      proto: Object.getPrototypeOf(a),
      key: a.idempotencyKey,
      current: recuo.currentAttempt() === a,
    });
  };
  await recuo.comRetry(() => look());
  await recuo.comRetry(() => look(), { tentativas: 2 });
  await recuo.retry((a) => look(a));
  const [fast, machine, retried] = shapes;
  // `signal` and `idempotencyKey` are getters: each is made only when read.
  assert.deepEqual(fast.keys, ['number', 'timeoutMs', 'idempotencyHeader']);
  for (const s of [machine, retried]) {
    assert.deepEqual(s.keys, fast.keys);
    assert.equal(s.proto, fast.proto);
  }
  assert.deepEqual(fast.json, { number: 0, timeoutMs: null, idempotencyHeader: 'Idempotency-Key' });
  assert.deepEqual(machine.json, fast.json);
  for (const s of shapes) {
    assert.match(s.key, UUID);
    assert.equal(s.current, true);
  }
});

test('retry() makes its first attempt before the machine when it has no gate and no records: the same answers', async () => {
  const response = (status, headers = {}) => new Response(status === 204 ? null : 'body', { status, headers });
  // Each case: what each attempt answers (a value, a status, or an error thrown).
  const cases = [
    ['a value', ['v']],
    ['a 200', [200]],
    ['a 503, then a 200', [503, 200]],
    ['a 429 naming 2 s, then a 204', [[429, { 'Retry-After': '2' }], 204]],
    ['a 404 returned at once', [404]],
    ['an error, then a value', [new Error('first'), 'v']],
    ['errors to the end', [new Error('1'), new Error('2'), new Error('3'), new Error('4'), new Error('5')]],
  ];
  const run = async (script, records) => {
    const seen = [];
    const delays = [];
    let i = 0;
    let outcome;
    try {
      const got = await recuo.retry(async (attempt) => {
        seen.push([attempt.number, attempt.timeoutMs, attempt.headers]);
        const a = script[Math.min(i++, script.length - 1)];
        if (a instanceof Error) throw a;
        if (typeof a === 'number') return response(a);
        if (Array.isArray(a)) return response(...a);
        return a;
      }, {
        seed: 3, sleep: noSleep, onRetry: (_n, _f, ms) => delays.push(ms),
        request: { method: 'POST', url: 'http://x/' },
        ...(records ? { onRecord: () => {} } : {}),
      });
      outcome = got instanceof Response ? `response ${got.status}` : got;
    } catch (e) {
      outcome = `threw ${e.message}`;
    }
    // One key for the whole operation, sent on every attempt.
    const keys = new Set(seen.map(([, , h]) => h['Idempotency-Key']));
    assert.equal(keys.size, 1);
    assert.match([...keys][0], UUID);
    return { outcome, attempts: seen.map(([n]) => n), firstTimeoutMs: seen[0][1], delays };
  };
  for (const [name, script] of cases) {
    const { firstTimeoutMs: fastTimeout, ...fast } = await run(script, false);
    const { firstTimeoutMs: slowTimeout, ...slow } = await run(script, true);
    assert.deepEqual(fast, slow, name);
    // The fast first attempt begins as the operation does: the whole deadline is its own.
    assert.equal(fastTimeout, 30000, name);
    assert.ok(slowTimeout <= 30000 && slowTimeout >= 29000, name);
  }
  assert.deepEqual((await run(['v'], false)).outcome, 'v');
  assert.deepEqual((await run([404], false)).outcome, 'response 404');
  assert.deepEqual((await run([[429, { 'Retry-After': '2' }], 204], false)).delays.length, 1);
});

test('retry()\'s fast first attempt checks its options before any call, as the machine does', async () => {
  let calls = 0;
  const f = () => ++calls;
  await assert.rejects(recuo.retry(f, { seed: 'x' }), TypeError);
  await assert.rejects(recuo.retry(f, { onRetry: 1 }), TypeError);
  await assert.rejects(recuo.retry(f, { request: 'GET' }), TypeError);
  assert.equal(calls, 0);
});
