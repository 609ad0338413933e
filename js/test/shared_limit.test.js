// A concurrency limit in a shared file, from JavaScript: two handles share one place; a second
// opener with another limit is refused; a Node process holding the place and killed with
// SIGKILL gives it back at once (within the 250 ms docs/limits.md states).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import * as recuo from '../index.js';

const INDEX = fileURLToPath(new URL('../index.js', import.meta.url));
const BOUND_MS = 250;

function folder(t) {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-js-limit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'limit');
}

test('two handles on one file share its places; another limit is refused', (t) => {
  const path = folder(t);
  const a = recuo.ConcurrencyLimit.shared(path, 1);
  const b = recuo.ConcurrencyLimit.shared(path, 1);
  assert.equal(a.limit, 1);
  const held = a.tryAcquire();
  assert.ok(held);
  assert.equal(b.tryAcquire(), null);
  assert.equal(b.inFlight, 1);
  held.release();
  assert.equal(a.inFlight, 0);
  const again = b.tryAcquire();
  assert.ok(again);
  again.release();
  assert.throws(() => recuo.ConcurrencyLimit.shared(path, 2), (e) => e instanceof recuo.RecuoError && /1/.test(e.message) && /2/.test(e.message));
  a.close();
  b.close();
});

test('a holder killed with SIGKILL gives its place back at once', async (t) => {
  const path = folder(t);
  const child = spawn(process.execPath, ['--input-type=module', '-e', `
    const recuo = await import(${JSON.stringify(INDEX)});
    const limit = recuo.ConcurrencyLimit.shared(${JSON.stringify(path)}, 1);
    globalThis.held = limit.tryAcquire();
    process.stdout.write(globalThis.held ? 'held\\n' : 'refused\\n');
    setInterval(() => {}, 1000);
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  const said = await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(String(d).trim()));
    child.once('exit', (code) => reject(new Error(`the holder exited (${code}) before holding`)));
  });
  assert.equal(said, 'held');
  const limit = recuo.ConcurrencyLimit.shared(path, 1);
  assert.equal(limit.tryAcquire(), null, 'the child holds the only place');
  const waiting = limit.acquire({ timeoutMs: 5000 });
  const killedAt = performance.now();
  child.kill('SIGKILL');
  const permit = await waiting;
  const after = performance.now() - killedAt;
  assert.ok(permit, 'the place came back');
  assert.ok(after <= BOUND_MS, `the next start came ${after.toFixed(1)} ms after the kill`);
  permit.release();
  limit.close();
});
