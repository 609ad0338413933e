// tests/vectors/http.json through the package: the request plans, the endings and the
// give-up messages through the binding, and every scripted request through `retry` over
// fetch ('client' cases) and `buscarComRetry` ('guide' cases) against one
// `recuo serve --script tests/vectors/http.json`, checked from the server's own log.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import * as recuo from '../index.js';
import { haveServe, RECUO_BIN, serve } from './helpers.js';

const file = fileURLToPath(new URL('../../tests/vectors/http.json', import.meta.url));
const doc = JSON.parse(readFileSync(file, 'utf8'));
const skip = haveServe ? false : `no recuo command at ${RECUO_BIN} (cargo build -p recuo-cli)`;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('http.json plans: the key sent and whether the request is idempotent, from the core', () => {
  assert.ok(doc.plans.length >= 8);
  for (const c of doc.plans) {
    const policy = new recuo.Policy({ adapters: true, serverHonoursKeys: c.server_honours_keys });
    assert.equal(policy.serverHonoursKeys, c.server_honours_keys);
    const plan = recuo.requestPlan(c.method, { callersKey: c.callers_key, sendKeys: c.send_keys, policy });
    assert.deepEqual(plan, { key: c.key, idempotent: c.idempotent }, JSON.stringify(c));
    policy.close();
  }
});

test('http.json endings and messages: the core\'s, through the binding', () => {
  assert.ok(doc.endings.length >= 11 && doc.messages.length >= 6);
  for (const c of doc.endings) {
    assert.equal(recuo.endingFor(c.style, c.reason, c.last), c.ending, JSON.stringify(c));
  }
  for (const c of doc.messages) {
    assert.equal(recuo.giveUpMessage(c.reason, c.attempts, c.last, c.retry_in_ms), c.message, JSON.stringify(c));
  }
  assert.throws(() => recuo.endingFor('library', null, {}), TypeError);
  assert.throws(() => recuo.giveUpMessage('tired', 1, {}), TypeError);
});

test('the adapters\' default policy is the core\'s', () => {
  const p = new recuo.Policy({ adapters: true });
  assert.deepEqual(
    [p.maxAttempts, p.baseMs, p.capMs, p.jitter, p.deadlineMs, p.useDateHeader, p.serverHonoursKeys, p.idempotencyHeader],
    [5, 1000, 8000, 'full', 30000, true, false, 'Idempotency-Key'],
  );
  assert.throws(() => new recuo.Policy({ adapters: true, guideB: true }), TypeError);
});

/** A body for the case's method: a stream (sent once) when it cannot be replayed. */
function bodyOf(c) {
  if (!c.replayable) {
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"amount": 100}'));
        controller.close();
      },
    });
    return { body: stream, duplex: 'half' };
  }
  return c.method === 'GET' || c.method === 'HEAD' ? {} : { body: '{"amount": 100}' };
}

// Deno's and Bun's fetch send a request again, once, on their own when a connection they
// reused drops before any answer: each attempt here gets a fresh connection, so the attempts
// the server sees are the ones recuo decided.
const freshConnection = globalThis.Deno
  ? { client: globalThis.Deno.createHttpClient({ poolMaxIdlePerHost: 0 }) }
  : globalThis.process?.versions?.bun
    ? { keepalive: false }
    : {};
// workerd's and Chromium's fetch also resend a request whose connection dropped before any
// answer, and no option turns that off: there, the cases that drop a connection are not
// played (recuo saw one attempt where the server saw two).
const resendsOnItsOwn = globalThis.navigator?.userAgent === 'Cloudflare-Workers' || Boolean(globalThis.RECUO_SERVERS?.browser);
// A page sends a stream body only over HTTP/2 (recuo serve speaks HTTP/1.1): there, the cases
// whose body cannot be replayed are not played.
const streamsBodies = !globalThis.RECUO_SERVERS?.browser;

/** Plays one case through the surface its style names: what it answered or threw, and its records. */
async function play(base, c) {
  const p = c.policy;
  const prefix = c.style === 'client' ? 'js-retry' : 'js-buscar';
  const url = `${base}/${prefix}/${c.id}`;
  const decisions = [];
  let resultRecord = null;
  const onRecord = (level, line) => {
    const r = JSON.parse(line);
    if (r.type === 'attempt') decisions.push(r.decision);
    if (r.type === 'result') resultRecord = r;
  };
  // Every retry decided takes a token: a body that cannot be replayed takes none.
  const budget = new recuo.RetryBudget({ ratio: 1, floorPerS: 100, windowS: 10 });
  const gate = new recuo.Gate({ budget });
  const callers = c.callers_key == null ? {} : { 'Idempotency-Key': c.callers_key };
  let answer;
  let thrown;
  try {
    if (c.style === 'client') {
      const policy = new recuo.Policy({
        adapters: true, maxAttempts: p.max_attempts, baseMs: p.base_ms, capMs: p.cap_ms, deadlineMs: p.deadline_ms,
        serverHonoursKeys: p.server_honours_keys,
      });
      answer = await recuo.retry(
        async (attempt) => {
          const response = await fetch(url, { method: c.method, headers: { ...callers, ...attempt.headers }, ...bodyOf(c), ...freshConnection });
          // The body read inside the attempt: a body cut short is this attempt's failure.
          return new Response(await response.arrayBuffer(), response);
        },
        {
          policy, gate, onRecord,
          request: { method: c.method, url, ownKey: c.callers_key != null, sendKeys: c.send_keys, replayable: c.replayable },
        },
      );
    } else {
      answer = await recuo.buscarComRetry(url, {
        method: c.method, headers: callers, ...bodyOf(c), tentativas: p.max_attempts, baseMs: p.base_ms, maxMs: p.cap_ms,
        prazoMs: p.deadline_ms, serverHonoursKeys: p.server_honours_keys, sendKeys: c.send_keys, gate, onRecord,
      });
    }
  } catch (e) {
    thrown = e;
  }
  const log = await (await fetch(`${base}/__script/log/${prefix}/${c.id}`)).json();
  return { answer, thrown, decisions, resultRecord, log, retries: budget.counts().retries };
}

test('http.json requests: retry over fetch and buscarComRetry against recuo serve --script', { skip, timeout: 60000 }, async () => {
  const server = await serve('--script', file);
  try {
    assert.ok(doc.requests.length >= 16);
    for (const c of doc.requests) {
      if (resendsOnItsOwn && c.script.some((ev) => ev.reset)) continue;
      if (!streamsBodies && !c.replayable) continue;
      const e = c.expect;
      const name = c.id;
      const got = await play(server.url, c);
      const policy = new recuo.Policy({ adapters: true, serverHonoursKeys: c.policy.server_honours_keys });
      assert.deepEqual(
        recuo.requestPlan(c.method, { callersKey: c.callers_key != null, sendKeys: c.send_keys, policy }),
        { key: e.key, idempotent: e.idempotent }, name,
      );
      // The attempts the server saw, and the key each carried.
      assert.equal(got.log.length, e.attempts, `${name}: ${JSON.stringify(got.log)}; ${got.thrown?.name}: ${got.thrown?.message} (${got.thrown?.constructor?.name})`);
      assert.ok(got.log.every((r) => r.method === c.method), name);
      const keys = got.log.map((r) => r.key);
      if (e.key === 'none') assert.deepEqual(keys, Array(e.attempts).fill(null), name);
      if (e.key === 'caller') assert.deepEqual(keys, Array(e.attempts).fill(c.callers_key), name);
      if (e.key === 'recuo') {
        assert.match(keys[0], UUID_V4, name);
        assert.deepEqual(keys, Array(e.attempts).fill(keys[0]), name);
      }
      assert.deepEqual(got.decisions, e.decisions, name);
      assert.equal(got.retries, e.decisions.filter((d) => d === 'retry').length, `${name}: the budget paid for each retry only`);
      assert.equal(got.resultRecord?.reason ?? null, e.reason, `${name}: ${JSON.stringify(got.resultRecord)}`);
      if (e.ending === 'response') {
        assert.equal(got.thrown, undefined, `${name}: ${got.thrown}`);
        assert.equal(got.answer.status, e.status, name);
      } else if (e.ending === 'error') {
        // The client's own error, raised again (fetch's TypeError; workerd's Error).
        assert.ok(got.thrown instanceof Error && !(got.thrown instanceof recuo.GiveUpError), `${name}: ${got.thrown}`);
        // A page sees no cause of a failed fetch: it is `other` there, as a browser's rule says.
        assert.equal(recuo.transportKind(got.thrown), globalThis.RECUO_SERVERS?.browser ? 'other' : e.error, name);
      } else {
        const g = got.thrown;
        assert.ok(g instanceof recuo.GiveUpError, `${name}: ${g}`);
        assert.equal(g.reason, e.reason, name);
        assert.equal(g.message, e.message, name);
        assert.equal(g.retryAt !== null, e.retry_at, name);
        assert.equal(g.status, e.status, name);
        assert.equal(g.response?.status ?? null, e.status, name);
        assert.equal(g.report.attempts, e.attempts, name);
        assert.equal(g.temporario, c.style === 'guide', name);
        // The body was read in the attempt: whole, and readable by the caller's catch.
        if (c.style === 'guide') assert.equal((await g.response.arrayBuffer()).byteLength, Number(g.response.headers.get('content-length')), name);
      }
    }
  } finally {
    await server.stop();
  }
});

test('buscarComRetry: a final 503 is a GiveUpError the guide\'s catch reads; its body is readable', async () => {
  let calls = 0;
  const fetch503 = async () => { calls++; return new Response('busy', { status: 503, headers: { 'Retry-After': '0' } }); };
  const e = await recuo.buscarComRetry('https://api.example/items/7', { tentativas: 2, baseMs: 1, maxMs: 2, fetch: fetch503 }).then(
    () => null, (error) => error,
  );
  assert.ok(e instanceof recuo.GiveUpError, String(e));
  assert.equal(e.temporario, true);
  assert.equal(e.status, 503);
  assert.equal(e.reason, 'attempts_exhausted');
  assert.equal(e.retryAt, null);
  assert.equal(e.report.attempts, 2);
  assert.equal(e.message, 'recuo gave up after 2 attempts (attempts_exhausted): HTTP 503');
  assert.equal(await e.response.text(), 'busy');
  assert.equal(calls, 2);
});

test('buscarComRetry: a stream body is sent once; no attempt made is a GiveUpError with the core\'s reason', async () => {
  let calls = 0;
  const stream = new ReadableStream({ start(c) { c.enqueue(new Uint8Array([1])); c.close(); } });
  const answer = await recuo.buscarComRetry('https://api.example/upload', {
    method: 'PUT', body: stream, duplex: 'half', tentativas: 3, baseMs: 1, maxMs: 2,
    fetch: async () => { calls++; return new Response('', { status: 404 }); },
  });
  assert.equal(answer.status, 404);
  assert.equal(calls, 1);
  // A regulator whose next start is later than the deadline: the gate is never passed.
  const regulator = new recuo.Regulator('1/h', { burst: 1 });
  regulator.tryAcquire();
  calls = 0;
  await assert.rejects(
    recuo.buscarComRetry('https://api.example/items/7', { prazoMs: 50, gate: new recuo.Gate({ regulator }), fetch: async () => { calls++; return new Response(''); } }),
    (e) => {
      assert.ok(e instanceof recuo.GiveUpError);
      assert.equal(e.reason, 'wait_exceeds_deadline');
      assert.equal(e.response, null);
      assert.equal(e.status, null);
      assert.equal(e.message, 'recuo gave up after 0 attempts (wait_exceeds_deadline): no attempt was made');
      assert.equal(e.retryAt, null);
      assert.equal(e.report.attempts, 0);
      return true;
    },
  );
  assert.equal(calls, 0);
});

test('buscarComRetry: an attempt the deadline cuts is a GiveUpError saying so', async () => {
  const slow = (u, init) => new Promise((resolve, reject) => {
    init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true });
  });
  const started = performance.now();
  await assert.rejects(recuo.buscarComRetry('https://api.example/slow', { prazoMs: 60, seed: 1, fetch: slow }), (e) => {
    assert.ok(e instanceof recuo.GiveUpError, String(e));
    assert.equal(e.reason, 'wait_exceeds_deadline');
    // The core's words: the backoff's wait (seed 1: under a second) did not fit either.
    assert.equal(
      e.message,
      'recuo gave up after 1 attempt (wait_exceeds_deadline): the deadline passed while the server was still answering; a retry is allowed in 1 s',
    );
    assert.equal(e.status, null);
    assert.equal(e.response, null);
    assert.equal(e.cause.name, 'TimeoutError');
    return true;
  });
  assert.ok(performance.now() - started < 1000);
  // The attempt's own timeout, shorter than the deadline, is a timeout: retried for a GET.
  let calls = 0;
  const slowCounting = (u, init) => { calls++; return slow(u, init); };
  await assert.rejects(recuo.buscarComRetry('https://api.example/slow', { tentativas: 2, baseMs: 1, maxMs: 2, timeoutMs: 20, fetch: slowCounting }), (e) => e.name === 'TimeoutError');
  assert.equal(calls, 2);
});
