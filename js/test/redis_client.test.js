// The limits on Redis through a client the caller already has — node-redis (`redis`) and
// ioredis — in every runtime: the package hands the client recuo-redis's own calls and reads
// the replies through the core. Against a real redis-server this file starts on 127.0.0.1:
// tests/vectors/gcra.json answered exactly; a key set up otherwise refused by name; a
// concurrency limit of 1 holding its place across two handles until released; a gate of the
// three holding `retry` to the budget's one retry; a server gone named in the error.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import * as recuo from '../index.js';
import { haveRedis, redisServer } from './redis_server.js';

const skip = (await haveRedis()) ? false : 'no redis-server (make deps installs it)';
const VECTORS = JSON.parse(readFileSync(fileURLToPath(new URL('../../tests/vectors/gcra.json', import.meta.url)), 'utf8'));

let server;
const clients = [];
before(async () => {
  if (!skip) server = await redisServer();
});
after(async () => {
  for (const c of clients) await c.quit().catch(() => {});
  await server?.stop();
});

/** A connected client of `kind` ('redis': node-redis; 'ioredis'). */
async function client(kind) {
  if (kind === 'redis') {
    const { createClient } = await import('redis');
    const c = createClient({ url: server.url });
    c.on('error', () => {});
    await c.connect();
    clients.push(c);
    return c;
  }
  const { default: Redis } = await import('ioredis');
  const c = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  c.on('error', () => {});
  await c.connect();
  clients.push(c);
  return c;
}

for (const kind of ['redis', 'ioredis']) {
  test(`gcra.json through ${kind}: the same answers as the core's regulator`, { skip, timeout: 60000 }, async () => {
    const c = await client(kind);
    let reservations = 0;
    for (const cs of VECTORS.cases) {
      const holders = new Map();
      for (const [i, step] of cs.steps.entries()) {
        if (!holders.has(step.holder)) {
          holders.set(step.holder, await recuo.Regulator.redis(c, `${kind}:vectors:${cs.name}`, 1e6 / cs.interval_us, { burst: cs.burst, adaptive: cs.adaptive }));
        }
        const r = holders.get(step.holder);
        if (step.event) {
          await (step.event === 'throttled' ? r.onThrottled() : r.onSuccess());
          continue;
        }
        const got = await r._reserveAt(BigInt(step.now_us) * 1000n, step.cost, BigInt(step.max_wait_us) * 1000n);
        assert.deepEqual(got, { reserved: step.reserved, waitNs: step.wait_us * 1000 }, `${cs.name} #${i}`);
        reservations++;
      }
    }
    assert.equal(reservations, 300);
  });
}

test('a key set up otherwise is refused with both settings named', { skip }, async () => {
  const c = await client('redis');
  await recuo.Regulator.redis(c, 'agreed', 10, { burst: 2 });
  await assert.rejects(recuo.Regulator.redis(c, 'agreed', 10, { burst: 3 }), (e) => {
    assert.ok(e instanceof recuo.RecuoError && e.status === 'shared_mismatch', String(e));
    assert.match(e.message, /burst of 2/);
    assert.match(e.message, /burst of 3/);
    return true;
  });
  await assert.rejects(recuo.ConcurrencyLimit.redis(c, 'agreed-limit', 0, 1000), (e) => e instanceof recuo.RecuoError && e.status === 'zero_limit');
  await assert.rejects(recuo.Regulator.redis({}, 'k', 1), TypeError);
});

test('a concurrency limit of 1 through ioredis: the second handle waits for the first place', { skip }, async () => {
  const c = await client('ioredis');
  const a = await recuo.ConcurrencyLimit.redis(c, 'one-place', 1, 10000);
  const b = await recuo.ConcurrencyLimit.redis(c, 'one-place', 1, 10000);
  const held = await a.tryAcquire();
  assert.ok(held, 'the place');
  assert.equal(await b.tryAcquire(), null, 'taken on the server');
  assert.equal(await b.acquire({ timeoutMs: 30 }), null, 'a bounded wait gives up');
  assert.equal(await held.renew(), true);
  await held.release();
  const next = await b.acquire({ timeoutMs: 1000 });
  assert.ok(next, 'given back, then taken by the other handle');
  await next.release();
});

test('retry with a gate on Redis: a place, a start slot, and the budget\'s one retry', { skip, timeout: 30000 }, async () => {
  const c = await client('redis');
  const gate = new recuo.Gate({
    regulator: await recuo.Regulator.redis(c, 'gate', 1000, { burst: 1 }),
    limit: await recuo.ConcurrencyLimit.redis(c, 'gate', 1, 10000),
    budget: await recuo.RetryBudget.redis(c, 'gate', { ratio: 0, floorPerS: 0.1, windowS: 10 }),
  });
  let calls = 0;
  const error = await recuo.retry(async () => {
    calls++;
    throw new Error('boom');
  }, { gate, policy: new recuo.Policy({ maxAttempts: 4, baseMs: 1, capMs: 2 }) }).catch((e) => e);
  assert.equal(calls, 2, 'the first attempt and the one retry the budget allowed');
  assert.equal(error.message, 'boom');
  assert.deepEqual(await gate.budget.counts(), { requests: 1, retries: 1 });
  // Every place was given back on the server.
  assert.ok(await gate.limit.tryAcquire().then((p) => p && (p.release(), true)));
});

test('operations side by side take turns at a gate on Redis: a batch of three workers runs to its end', { skip, timeout: 30000 }, async () => {
  const c = await client('redis');
  const gate = new recuo.Gate({
    regulator: await recuo.Regulator.redis(c, 'turns:regulator', '50/s'),
    limit: await recuo.ConcurrencyLimit.redis(c, 'turns:limit', 2, 30000),
    budget: await recuo.RetryBudget.redis(c, 'turns:budget'),
  });
  let inFlight = 0;
  let most = 0;
  const op = async () => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    await new Promise((resolve) => setTimeout(resolve, 20));
    inFlight -= 1;
    return 'ok';
  };
  // Before the turns, two operations looking at once answered each other's calls, and the
  // batch stalled until its deadline.
  const report = await recuo.runBatch(Array(12).fill(op), { gate, workers: 3, deadlineMs: 10000 });
  assert.deepEqual(report.results.map((r) => r.status), Array(12).fill('succeeded'));
  assert.equal(most, 2);
});

test('a server gone: the error names it and the cause', { skip }, async () => {
  const c = await client('ioredis');
  const limit = await recuo.ConcurrencyLimit.redis(c, 'gone', 1, 1000);
  c.disconnect();
  await assert.rejects(limit.tryAcquire(), (e) => {
    assert.ok(e instanceof recuo.RecuoError && e.status === 'io', String(e));
    assert.match(e.message, /Redis at 127\.0\.0\.1:\d+/);
    assert.ok(e.cause, 'the client\'s own error');
    return true;
  });
});

test('a server that stops answering holds an operation no longer than its deadline', { skip, timeout: 30000 }, async () => {
  const frozen = await redisServer();
  const { default: Redis } = await import('ioredis');
  const client = new Redis(frozen.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  await client.connect();
  try {
    const limit = await recuo.ConcurrencyLimit.redis(client, 'frozen', 1, 10000);
    const gate = new recuo.Gate({ limit });
    frozen.freeze(true);
    const started = performance.now();
    let calls = 0;
    await assert.rejects(
      recuo.retry(async () => { calls++; }, { gate, policy: new recuo.Policy({ maxAttempts: 3, deadlineMs: 300 }) }),
      (e) => e instanceof recuo.RecuoError && e.status === 'io' && /Redis at 127\.0\.0\.1:\d+ .*no answer within/.test(e.message),
    );
    assert.equal(calls, 0, 'no attempt without the server\'s word');
    assert.ok(performance.now() - started < 2000, `${performance.now() - started} ms`);
  } finally {
    frozen.freeze(false);
    client.disconnect();
    await frozen.stop();
  }
});
