// The limits on Redis from Node, against a real redis-server this file starts on 127.0.0.1
// (test/redis_server.js): the regulator's burst and its shared allowance; a concurrency limit
// of 2 refusing the third place on any handle and giving it back on release; a lease renewed
// holding its place and one not renewed freed when it ends; other settings refused with both
// named; the retry budget shared by two processes granting exactly its ratio; a closed port
// failing at once; a gate with the Redis limit holding `recuo serve`'s max_in_flight for two
// processes; and, once the server is gone, the gate's error from retry() with no request sent.
// Leases are short (300 ms), waits bounded.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import * as recuo from '../index.js';
import { haveServe, RECUO_BIN, serve, stats } from './helpers.js';
import { freePort, haveRedis, redisServer } from './redis_server.js';

const run = promisify(execFile);
const CHILD = fileURLToPath(new URL('./children/redis.js', import.meta.url));
const skip = (await haveRedis()) ? false : 'no redis-server (make deps installs it)';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let redis;
before(async () => {
  if (!skip) redis = await redisServer();
});
after(async () => {
  await redis?.stop();
});

/** The RecuoError `fn` throws, checked to carry `status`. */
function refused(fn, status) {
  let error;
  assert.throws(fn, (e) => {
    error = e;
    return e instanceof recuo.RecuoError && e.status === status;
  });
  return error;
}

test('a Redis regulator: the burst, then the server paces every handle', { skip, timeout: 20000 }, async () => {
  const r = recuo.Regulator.redis(redis.url, 'js:regulator', '2/s', { burst: 2 });
  const other = recuo.Regulator.redis(redis.url, 'js:regulator', 2, { burst: 2 });
  assert.equal(r.burst, 2);
  assert.equal(r.tryAcquire(), 0);
  assert.equal(other.tryAcquire(), 0);
  const wait = r.tryAcquire();
  assert.ok(wait > 0 && wait <= 500, `${wait} ms`);
  assert.ok(other.tryAcquire() > 0, 'one allowance for both handles');
  const t0 = Date.now();
  assert.equal(await other.acquire({ timeoutMs: 3000 }), true);
  assert.ok(Date.now() - t0 >= 300, 'waited for the next slot');
  assert.equal(await r.acquire({ timeoutMs: 0 }), false, 'the next slot is an interval away');
  const e = refused(() => recuo.Regulator.redis(redis.url, 'js:regulator', '3/s', { burst: 2 }), 'shared_mismatch');
  assert.match(e.message, /one start every 500000 µs.*one every 333333 µs/);
  refused(() => recuo.Regulator.redis(redis.url, 'js:regulator-z', 1, { burst: 0 }), 'zero_burst');
  r.close();
  other.close();
});

test('a Redis limit of 2 refuses the third place on any handle, and a release gives it back', { skip, timeout: 20000 }, async () => {
  const a = recuo.ConcurrencyLimit.redis(redis.url, 'js:limit', 2, 10000);
  const b = recuo.ConcurrencyLimit.redis(redis.url, 'js:limit', 2, 10000);
  assert.ok(a instanceof recuo.ConcurrencyLimit);
  assert.equal(a.limit, 2);
  const p1 = a.tryAcquire();
  const p2 = b.tryAcquire();
  assert.ok(p1 && p2);
  assert.equal(a.tryAcquire(), null);
  assert.equal(b.tryAcquire(), null);
  assert.equal(await b.acquire({ timeoutMs: 100 }), null);
  assert.deepEqual([a.inFlight, b.inFlight], [1, 1], "each handle counts its own places");
  p1.release();
  const p3 = b.tryAcquire();
  assert.ok(p3, 'the place came back');
  assert.equal(b.maxInFlight, 2);
  // Full again: a wait on the other handle gets the place a release gives back.
  setTimeout(() => p2.release(), 150);
  const t0 = Date.now();
  const p4 = await a.acquire({ timeoutMs: 5000 });
  assert.ok(p4 && Date.now() - t0 >= 100, 'the waiter got the released place');
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(a.acquire({ signal: controller.signal }), { name: 'AbortError' });
  p3.release();
  p4.release();
  p4.release(); // twice: harmless
  a.close();
  b.close();
});

test('a lease renewed keeps its place; one not renewed frees it when it ends', { skip, timeout: 20000 }, async () => {
  const holder = recuo.ConcurrencyLimit.redis(redis.url, 'js:lease', 1, 300);
  const other = recuo.ConcurrencyLimit.redis(redis.url, 'js:lease', 1, 300);
  const p = holder.tryAcquire();
  assert.ok(p);
  for (let i = 0; i < 3; i++) { // 3 × 150 ms: longer than the lease, held by renewing
    await sleep(150);
    assert.equal(p.renew(), true, `renewal ${i}`);
    assert.equal(other.tryAcquire(), null);
  }
  const t0 = Date.now();
  const q = await other.acquire({ timeoutMs: 3000 });
  const took = Date.now() - t0;
  assert.ok(q, 'the place came back when the lease ended');
  assert.ok(took >= 150 && took < 2000, `${took} ms`);
  assert.equal(p.renew(), false, 'expired: not taken back');
  p.release(); // after expiry: harmless, q keeps the place
  assert.equal(holder.tryAcquire(), null);
  q.release();
  assert.equal(q.renew(), false, 'released');
  const local = new recuo.ConcurrencyLimit(1).tryAcquire();
  assert.equal(local.renew(), true, 'a local permit has no lease to lose');
  local.release();
  holder.close();
  other.close();
});

test('a Redis limit set up otherwise, or asked for no place or no lease, is refused', { skip }, () => {
  const a = recuo.ConcurrencyLimit.redis(redis.url, 'js:limit-k', 2, 1000);
  let e = refused(() => recuo.ConcurrencyLimit.redis(redis.url, 'js:limit-k', 3, 1000), 'shared_mismatch');
  assert.match(e.message, /limits 2 requests in flight with leases of 1000 ms; this process asked for 3 with leases of 1000 ms/);
  refused(() => recuo.ConcurrencyLimit.redis(redis.url, 'js:limit-k', 2, 2000), 'shared_mismatch');
  refused(() => recuo.ConcurrencyLimit.redis(redis.url, 'js:limit-z', 0, 1000), 'zero_limit');
  e = refused(() => recuo.ConcurrencyLimit.redis(redis.url, 'js:limit-z', 1, 0), 'invalid_lease');
  assert.match(e.message, /lease/);
  refused(() => recuo.ConcurrencyLimit.redis(redis.url, 'js:limit-z', 1, 86400001), 'invalid_lease');
  assert.throws(() => recuo.ConcurrencyLimit.redis(redis.url, 'js:limit-z', 1, 1.5), TypeError);
  a.close();
});

test('the Redis budget is shared by two processes: exactly its ratio', { skip, timeout: 30000 }, async () => {
  const settings = { ratio: 0.5, floorPerS: 0, windowS: 10 };
  const a = recuo.RetryBudget.redis(redis.url, 'js:budget', settings);
  const b = recuo.RetryBudget.redis(redis.url, 'js:budget', settings);
  assert.equal(a.tryWithdraw(), false, 'nothing earned yet');
  const { stdout } = await run(process.execPath, [CHILD, 'budget', redis.url, 'js:budget', '4'], { timeout: 20000 });
  assert.equal(stdout, 'counted');
  a.recordRequest();
  b.recordRequest();
  // 6 first attempts × 0.5: 3 retries, from either handle, and not one more.
  assert.deepEqual([a.tryWithdraw(), b.tryWithdraw(), a.tryWithdraw(), b.tryWithdraw(), a.tryWithdraw()], [true, true, true, false, false]);
  assert.deepEqual(b.counts(), { requests: 6, retries: 3 });
  const e = refused(() => recuo.RetryBudget.redis(redis.url, 'js:budget', { ...settings, ratio: 0.2 }), 'shared_mismatch');
  assert.match(e.message, /ratio 0\.5.*ratio 0\.2/);
  refused(() => recuo.RetryBudget.redis(redis.url, 'js:budget-z', { ratio: -1 }), 'invalid_budget');
  refused(() => recuo.RetryBudget.redis(redis.url, 'js:budget-z', { windowS: 0 }), 'invalid_budget');
  a.close();
  b.close();
});

test('a server out of reach is a clear error at once, never the password', async () => {
  const port = await freePort();
  const t0 = Date.now();
  for (const open of [
    () => recuo.Regulator.redis(`redis://127.0.0.1:${port}`, 'k', 1),
    () => recuo.ConcurrencyLimit.redis(`redis://127.0.0.1:${port}`, 'k', 2, 1000),
    () => recuo.RetryBudget.redis(`redis://127.0.0.1:${port}`, 'k'),
  ]) {
    const e = refused(open, 'io');
    assert.match(e.message, new RegExp(`Redis at 127\\.0\\.0\\.1:${port}`));
  }
  assert.ok(Date.now() - t0 < 3000, `${Date.now() - t0} ms`);
  const e = refused(() => recuo.ConcurrencyLimit.redis(`redis://app:pa55word@127.0.0.1:${port}`, 'k', 2, 1000), 'io');
  assert.doesNotMatch(e.message, /pa55word/);
});

test("a gate with the Redis limit holds recuo serve's max_in_flight for two processes; a lost server is the gate's error", {
  skip: skip || (haveServe ? false : `no recuo command at ${RECUO_BIN} (cargo build -p recuo-cli)`), timeout: 60000,
}, async () => {
  const server = await serve('--allowance', '6000/min', '--burst', '100', '--fail-rate', '0', '--latency', '150ms');
  try {
    const gate = new recuo.Gate({ limit: recuo.ConcurrencyLimit.redis(redis.url, 'js:fleet', 2, 10000) });
    const policy = new recuo.Policy({ maxAttempts: 2, baseMs: 5, capMs: 20 });
    const child = run(process.execPath, [CHILD, 'fleet', redis.url, 'js:fleet', server.url, '3'], { timeout: 50000 });
    const mine = await Promise.all(Array.from({ length: 3 }, () => recuo.retry(() => fetch(`${server.url}/fleet`), { policy, gate })));
    const { stdout } = await child;
    assert.deepEqual(mine.map((r) => r.status), [200, 200, 200]);
    assert.equal(stdout, '3', 'the other process: 3 answered 200');
    const served = await stats(server.url);
    assert.equal(served.ok, 6);
    assert.equal(served.max_in_flight, 2, 'never more than the fleet limit at once');

    const budget = recuo.RetryBudget.redis(redis.url, 'js:lost-budget', { ratio: 1 });
    for (let i = 0; i < 10; i++) budget.recordRequest();
    await redis.stop();
    // Its own methods say why; in a gate it fails closed (no retry).
    assert.throws(() => budget.tryWithdraw(), (e) => e.status === 'io');
    assert.throws(() => budget.recordRequest(), (e) => e.status === 'io');
    assert.throws(() => budget.counts(), (e) => e.status === 'io');
    budget.close();
    await assert.rejects(
      recuo.retry(() => fetch(`${server.url}/fleet`), { policy, gate }),
      (e) => e instanceof recuo.RecuoError && e.status === 'io' && /Redis server/.test(e.message),
    );
    assert.equal((await stats(server.url)).requests, 6, 'no request without a place');
    assert.throws(() => gate.limit.tryAcquire(), (e) => e.status === 'io');
    gate.close();
    policy.close();
  } finally {
    await server.stop();
  }
});
