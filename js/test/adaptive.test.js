// An adaptive regulator shared by two Node processes on a real redis-server this file starts
// on 127.0.0.1, each through a node-redis client of its own made from the URL: a 429 reported
// by process A (a child) halves the rate process B (this one) reserves at, and B's successes
// give it back. Both reserve at the same fake instants, so every wait is exact.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import * as recuo from '../index.js';
import { haveRedis, redisServer } from './redis_server.js';

const run = promisify(execFile);
const MS = 1_000_000;
const T = 1_000_000_000_000; // the fake instant both processes reserve at, ns
const INDEX = new URL('../index.js', import.meta.url).href;
// Process A: one start at T, a 429, and the interval in force it then sees (ns).
const PROCESS_A = `
import { Regulator } from ${JSON.stringify(INDEX)};
const [url, key] = process.argv.slice(1);
const r = await Regulator.redis(url, key, '10/s', { burst: 1, adaptive: true });
if ((await r.tryAcquireAt(${T})) !== 0) process.exit(3);
await r.onThrottled();
process.stdout.write(String(Math.round(1e9 / r.ratePerSecond)));
r.close();
`;
const skip = globalThis.Deno || process.versions.bun ? 'spawns Node' : (await haveRedis()) ? false : 'no redis-server (make deps installs it)';

let redis;
before(async () => {
  if (!skip) redis = await redisServer();
});
after(async () => {
  await redis?.stop();
});

test('a 429 in one process halves the rate of another through Redis', { skip, timeout: 30000 }, async () => {
  const b = await recuo.Regulator.redis(redis.url, 'js:adaptive', '10/s', { burst: 1, adaptive: true });
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', PROCESS_A, redis.url, 'js:adaptive'], { timeout: 30000 });
  assert.equal(stdout, '200000000');
  // A's start at T holds the slot until T + 100 ms; B's first start takes it, and its next one
  // comes 200 ms later — the halved rate — not 100 ms.
  assert.equal(await b.tryAcquireAt(T + 100 * MS), 0);
  assert.equal(b.ratePerSecond, 5);
  assert.equal(await b.tryAcquireAt(T + 100 * MS), 200 * MS);
  await b.onSuccess();
  assert.equal(Math.round(1e9 / b.ratePerSecond), 177_777_778);
  for (let i = 0; i < 7; i++) await b.onSuccess();
  assert.equal(b.ratePerSecond, 10);
  await assert.rejects(recuo.Regulator.redis(redis.url, 'js:adaptive', '10/s'), (e) => e.status === 'shared_mismatch'
    && /this process asked for one every 100000 µs with a burst of 1, not adaptive/.test(e.message));
  b.close();
});
