// An adaptive regulator shared by two Node processes — in a file, and on a real redis-server
// this file starts on 127.0.0.1: a 429 reported by process A (a child) halves the rate
// process B (this one) reserves at, and B's successes give it back. Both reserve at the same
// fake instants, so every wait is exact.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import * as recuo from '../index.js';
import { haveRedis, redisServer } from './redis_server.js';
import { nativeOnly } from './helpers.js';

const run = promisify(execFile);
const MS = 1_000_000;
const T = 1_000_000_000_000; // the fake instant both processes reserve at, ns
const INDEX = new URL('../index.js', import.meta.url).href;
// Process A: one start at T, a 429, and the interval in force it then sees (ns).
const PROCESS_A = `
import { Regulator } from ${JSON.stringify(INDEX)};
const [kind, where, key] = process.argv.slice(1);
const r = kind === 'file'
  ? Regulator.shared(where, '10/s', { burst: 1, adaptive: true })
  : Regulator.redis(where, key, '10/s', { burst: 1, adaptive: true });
if (r.tryAcquireAt(${T}) !== 0) process.exit(3);
r.onThrottled();
process.stdout.write(String(Math.round(1e9 / r.ratePerSecond)));
`;
const skipRedis = (await haveRedis()) ? false : 'no redis-server (make deps installs it)';

let redis;
before(async () => {
  if (!skipRedis) redis = await redisServer();
});
after(async () => {
  await redis?.stop();
});

async function processA(...args) {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', PROCESS_A, ...args], { timeout: 30000 });
  return stdout;
}

function bSeesTheCut(b) {
  // A's start at T holds the slot until T + 100 ms; B's first start takes it, and its next one
  // comes 200 ms later — the halved rate — not 100 ms.
  assert.equal(b.tryAcquireAt(T + 100 * MS), 0);
  assert.equal(b.ratePerSecond, 5);
  assert.equal(b.tryAcquireAt(T + 100 * MS), 200 * MS);
  b.onSuccess();
  assert.equal(Math.round(1e9 / b.ratePerSecond), 177_777_778);
  for (let i = 0; i < 7; i++) b.onSuccess();
  assert.equal(b.ratePerSecond, 10);
}

test('a 429 in one process halves the rate of another through a file', { skip: nativeOnly, timeout: 30000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-js-adaptive-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'regulator');
  const b = recuo.Regulator.shared(path, '10/s', { burst: 1, adaptive: true });
  assert.equal(await processA('file', path), '200000000');
  bSeesTheCut(b);
  assert.throws(() => recuo.Regulator.shared(path, '10/s', { burst: 1 }), (e) => e.status === 'shared_mismatch'
    && /adaptive \(a 429 slows every holder\); this process asked for 10.000000\/s with a burst of 1, not adaptive/.test(e.message));
  // No process switches it for the others.
  assert.throws(() => b.setAdaptive(false), (e) => e instanceof recuo.RecuoError && e.status === 'shared_mismatch');
  b.setAdaptive(true);
  b.close();
});

test('a 429 in one process halves the rate of another through Redis', { skip: nativeOnly || skipRedis, timeout: 30000 }, async () => {
  const b = recuo.Regulator.redis(redis.url, 'js:adaptive', '10/s', { burst: 1, adaptive: true });
  assert.equal(await processA('redis', redis.url, 'js:adaptive'), '200000000');
  bSeesTheCut(b);
  assert.throws(() => recuo.Regulator.redis(redis.url, 'js:adaptive', '10/s'), (e) => e.status === 'shared_mismatch'
    && /this process asked for one every 100000 µs with a burst of 1, not adaptive/.test(e.message));
  b.close();
});
