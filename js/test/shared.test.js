// One allowance for two runtimes: a Node process and a Python process started here share one
// Regulator file and together stay within its rate (the window check of
// tests/python/test_regulator.py, with its 25 ms allowance for scheduling on a real clock).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import * as recuo from '../index.js';
import { havePython, PYTHON } from './helpers.js';

const run = promisify(execFile);
const RATE = '50/s';
const BURST = 2;
const PYTHON_CHILD = `
import json, sys, time, recuo
path, rate, burst, begin, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
regulator = recuo.Regulator.shared(path, rate, burst)
time.sleep(max(0.0, (begin - recuo.monotonic_ns()) / 1e9))
starts = []
while True:
    left = (end - recuo.monotonic_ns()) / 1e9
    if left <= 0 or not regulator.acquire(left):
        break
    starts.append(recuo.monotonic_ns())
print(json.dumps(starts))
`;

test('a Node and a Python process share one Regulator file and stay within its rate', {
  skip: havePython ? false : `no Python at ${PYTHON} (make build-python)`, timeout: 60000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-js-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'regulator');
  const mine = recuo.Regulator.shared(path, RATE, { burst: BURST }); // set up first: the settings
  assert.equal(mine.burst, BURST);
  const begin = recuo.monotonicNs() + 1.5e9; // both start together, once both are running
  const end = begin + 1.5e9;
  const args = [path, RATE, String(BURST), String(begin), String(end)];
  const [node, python] = await Promise.all([
    run(process.execPath, [fileURLToPath(new URL('./children/regulator.js', import.meta.url)), ...args]),
    run(PYTHON, ['-c', PYTHON_CHILD, ...args]),
  ]);
  const fromNode = JSON.parse(node.stdout);
  const fromPython = JSON.parse(python.stdout);
  assert.ok(fromNode.length >= 10 && fromPython.length >= 10, `node ${fromNode.length}, python ${fromPython.length}: both took starts`);
  const starts = [...fromNode, ...fromPython].sort((a, b) => a - b);
  const interval = 1e9 / mine.ratePerSecond;
  for (let i = 0; i < starts.length; i++) {
    for (let j = i; j < starts.length; j++) {
      const allowed = BURST + (starts[j] - starts[i] + 25e6) / interval;
      assert.ok(j - i + 1 <= allowed, `${j - i + 1} starts in ${(starts[j] - starts[i]) / 1e6} ms, more than ${allowed}`);
    }
  }
  const possible = BURST + (end - begin) / interval;
  assert.ok(starts.length <= possible + 1, `${starts.length} starts, at most ${possible} allowed`);
  assert.ok(starts.length >= 0.8 * possible, `only ${starts.length} of ${possible} starts used`);
});

test('a second opener asking for another rate is refused with both settings named', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-js-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'regulator');
  recuo.Regulator.shared(path, '90/min', { burst: 3 });
  assert.equal(recuo.Regulator.shared(path, 1.5, { burst: 3 }).burst, 3);
  assert.throws(() => recuo.Regulator.shared(path, '2/s', { burst: 3 }), (e) => e.status === 'shared_mismatch' && /1\.5/.test(e.message) && /2\.0/.test(e.message));
});

test('tryAcquire answers the wait without taking; acquire waits with timers', async () => {
  const r = new recuo.Regulator('10/s', { burst: 1 });
  assert.equal(r.tryAcquire(), 0);
  const w = r.tryAcquire();
  assert.ok(w > 0 && w <= 100, `wait ${w}`);
  const started = performance.now();
  assert.equal(await r.acquire(), true);
  assert.ok(performance.now() - started >= w - 5);
  assert.equal(await r.acquire({ timeoutMs: 10 }), false, 'not within 10 ms: nothing taken');
});
