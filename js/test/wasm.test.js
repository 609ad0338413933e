// The WebAssembly build itself: a panic inside recuo (a trap of the module) is a RecuoError and
// a fresh instance serves the next calls; what the module takes from its host.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';

import { loadWasm } from '../lib/load-file.js';
import { recuoApi, RecuoError } from '../lib/api.js';

test('a trap is a RecuoError (900, panic); the next calls run on a fresh instance', () => {
  const lib = loadWasm();
  const recuo = recuoApi(lib);
  const before = new recuo.Policy({ maxAttempts: 3 });
  assert.throws(() => lib.fn.recuo_test_force_panic(), (e) => e instanceof RecuoError && e.code === 900 && e.status === 'panic' && /trapped/.test(e.message));
  // What the old instance held is gone, and said so; closing it is harmless.
  assert.throws(() => before.toValue(), (e) => e instanceof RecuoError && e.code === 900 && /made before the module trapped/.test(e.message));
  before.close();
  // The fresh instance answers as the first did.
  assert.deepEqual(recuo.parseRetryAfter('12', 0), { kind: 'seconds', waitMs: 12000 });
  assert.equal(new recuo.Policy({ maxAttempts: 3 }).toValue().max_attempts, 3);
});

test('the host gives the clocks and the randomness: jitter draws differ unseeded, agree seeded', () => {
  const recuo = recuoApi(loadWasm());
  const draws = new Set(Array.from({ length: 8 }, () => recuo.retryDelayMs(null, 10)));
  assert.ok(draws.size > 1, `unseeded draws: ${[...draws]}`);
  assert.equal(recuo.retryDelayMs(null, 10, 0, { seed: 3 }), recuo.retryDelayMs(null, 10, 0, { seed: 3 }));
  const t0 = recuo.monotonicNs();
  assert.ok(recuo.monotonicNs() >= t0);
  assert.ok(Math.abs(Number(recuo.monotonicMs()) - performance.now()) < 1000, 'monotonic time is performance.now()');
});

test('recuo.wasm is at most 250 kB, as the package promises', () => {
  const size = statSync(new URL('../recuo.wasm', import.meta.url)).size;
  assert.ok(size <= 250_000, `recuo.wasm is ${size} bytes`);
});

test('the module exports no blocking wait and imports only what the host gives', async () => {
  const { readFileSync } = await import('node:fs');
  const { PROTOTYPES, TEST_ONLY } = await import('../lib/abi.js');
  const module = new WebAssembly.Module(readFileSync(new URL('../recuo.wasm', import.meta.url)));
  const exported = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  // They block the calling thread (threads, sleeps, condition variables): they would trap.
  for (const blocking of ['recuo_retry', 'recuo_retry_http', 'recuo_com_retry', 'recuo_batch_run', 'recuo_gate_wait',
    'recuo_regulator_acquire', 'recuo_regulator_acquire_until', 'recuo_concurrency_limit_acquire']) {
    assert.ok(!exported.has(blocking), `${blocking} is exported`);
  }
  for (const proto of PROTOTYPES) {
    const name = /(recuo_[a-z0-9_]+)\(/.exec(proto)[1];
    // The tests' own functions are left out of the module the package ships.
    assert.equal(exported.has(name), !TEST_ONLY.includes(name), `${name} is ${TEST_ONLY.includes(name) ? 'shipped' : 'missing'}`);
  }
  assert.deepEqual(
    WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}`).sort(),
    ['recuo_host.monotonic_ns', 'recuo_host.random_fill', 'recuo_host.unix_ms'],
  );
});

test('after a trap, the loops make again what they kept (their default policies)', async () => {
  const lib = loadWasm();
  const recuo = recuoApi(lib);
  assert.equal(await recuo.retry(async () => 1), 1);
  assert.equal(await recuo.comRetry(async () => 2), 2);
  assert.throws(() => lib.fn.recuo_test_force_panic(), RecuoError);
  assert.equal(await recuo.retry(async () => 3), 3);
  assert.equal(await recuo.comRetry(async () => 4, { tentativas: 2 }), 4);
});
