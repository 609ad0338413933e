// buscarComRetry and retry around fetch against `recuo serve` (a simulated rate-limited API
// on 127.0.0.1): 20 reads and 5 POSTs through 429s and 503s, and a spent daily quota.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as recuo from '../index.js';
import { haveServe, RECUO_BIN, serve, stats } from './helpers.js';

const skip = haveServe ? false : `no recuo command at ${RECUO_BIN} (cargo build -p recuo-cli)`;

// Enough attempts that every call ends 200 through a storm of 429s and 503s.
const policy = new recuo.Policy({ maxAttempts: 12, baseMs: 50, capMs: 500, deadlineMs: 30000, useDateHeader: true });

for (const retryAfter of ['seconds', 'date']) {
  test(`20 reads and 5 POSTs all end 200, every wait the server's (Retry-After as ${retryAfter})`, { skip, timeout: 120000 }, async () => {
    const server = await serve('--allowance', '600/min', '--burst', '3', '--fail-rate', '0.2', '--latency', '1ms', '--seed', '11', '--retry-after', retryAfter);
    try {
      const { url } = server;
      const reports = [];
      const delays = [];
      const keys = [];
      const calls = [];
      for (let i = 0; i < 10; i++) {
        calls.push(recuo.buscarComRetry(`${url}/items/${i}`, { tentativas: 12, baseMs: 50, maxMs: 500 }));
        calls.push(recuo.retry(() => fetch(`${url}/items/${10 + i}`), { policy, request: { method: 'GET', url: `${url}/items/${10 + i}` }, onGiveUp: (r) => reports.push(r) }));
      }
      for (let i = 0; i < 3; i++) {
        calls.push(recuo.buscarComRetry(`${url}/payments/${i}`, { method: 'POST', body: '{"amount": 100}', headers: { 'content-type': 'application/json' }, tentativas: 12, baseMs: 50, maxMs: 500 }));
      }
      for (let i = 3; i < 5; i++) {
        calls.push(recuo.retry(
          (attempt) => {
            if (attempt.number === 0) keys.push(attempt.idempotencyKey);
            return fetch(`${url}/payments/${i}`, { method: 'POST', body: '{"amount": 100}', headers: { [attempt.idempotencyHeader]: attempt.idempotencyKey } });
          },
          { policy, request: { method: 'POST', url: `${url}/payments/${i}` }, onRetry: (n, response, delay) => delays.push(delay) },
        ));
      }
      const answers = await Promise.all(calls);
      const served = await stats(url);
      assert.deepEqual(answers.map((a) => a.status), Array(25).fill(200));
      assert.deepEqual(reports, [], 'no call gave up');
      assert.ok(served.throttled > 0 && served.unavailable > 0, JSON.stringify(served));
      assert.equal(served.early_retries, 0, 'every wait at least the server asked for');
      assert.ok(delays.every((d) => d >= 1000), `delays ${delays}`);
      const perKey = served.requests_per_idempotency_key;
      assert.equal(Object.keys(perKey).length, 5, 'one key per POST, none on the reads');
      assert.equal(served.idempotency_key_conflicts, 0);
      for (const key of keys) assert.ok(perKey[key] >= 1, `the key ${key} was sent`);
      assert.equal(Object.values(perKey).reduce((a, b) => a + b, 0), served.methods.POST, 'every POST attempt carried its key');
    } finally {
      await server.stop();
    }
  });
}

test('a spent quota gives up at once with retryAt', { skip, timeout: 60000 }, async () => {
  const server = await serve('--quota', '2', '--fail-rate', '0', '--latency', '1ms');
  try {
    const { url } = server;
    assert.equal((await recuo.buscarComRetry(`${url}/items/1`)).status, 200);
    assert.equal((await recuo.retry(() => fetch(`${url}/items/2`))).status, 200);
    for (const call of [
      () => recuo.buscarComRetry(`${url}/items/3`),
      () => recuo.retry(() => fetch(`${url}/items/4`), { policy: new recuo.Policy({ deadlineMs: 30000 }) }),
    ]) {
      const started = performance.now();
      await assert.rejects(call(), (e) => {
        assert.ok(e instanceof recuo.GiveUpError, String(e));
        assert.equal(e.reason, 'wait_exceeds_deadline');
        assert.ok(e.retryAt - Date.now() > 23 * 3600 * 1000, `retryAt ${e.retryAt}`);
        assert.equal(e.response.status, 429);
        assert.equal(e.report.attempts, 1);
        return true;
      });
      assert.ok(performance.now() - started < 1000, 'at once');
    }
    const served = await stats(url);
    assert.equal(served.requests, 4);
    assert.equal(served.quota_refused, 2);
  } finally {
    await server.stop();
  }
});

test('a network failure is retried; a 404 is returned at once', { skip, timeout: 60000 }, async () => {
  // A port nobody listens on: connect failures, retried, then the last one rethrown.
  let calls = 0;
  const fetchCounting = (...args) => { calls++; return fetch(...args); };
  await assert.rejects(recuo.buscarComRetry('http://127.0.0.1:9/x', { tentativas: 3, baseMs: 1, maxMs: 2, fetch: fetchCounting }), TypeError);
  assert.equal(calls, 3);
  const server = await serve('--fail-rate', '0', '--latency', '1ms');
  try {
    let attempts = 0;
    const response = await recuo.buscarComRetry(`${server.url}/stats/nope`, {
      fetch: async (u, init) => { attempts++; await fetch(u, init); return new Response('no', { status: 404 }); },
    });
    assert.equal(response.status, 404);
    assert.equal(attempts, 1);
  } finally {
    await server.stop();
  }
});
