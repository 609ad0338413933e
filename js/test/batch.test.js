// runBatch: operations through one policy and one gate on the core's BatchQueue, `workers` at
// a time, a deadline for the whole batch, and the batch's progress told as each operation ends.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as recuo from '../index.js';

const quick = () => new recuo.Policy({ maxAttempts: 2, baseMs: 1, capMs: 1, jitter: 'none' });
const counts = (p) => [p.total, p.done, p.succeeded, p.failed, p.notStarted, p.retries];

test('runBatch: progress is told once per operation, in order, with the counts so far', async () => {
  let calls = 0;
  const told = [];
  const report = await recuo.runBatch([
    async () => {
      calls += 1;
      if (calls === 1) throw new Error('once');
      return 'ok';
    },
    async () => { throw new RangeError('never'); },
    async () => 'fine',
  ], {
    policy: quick(),
    classify: (e) => !(e instanceof RangeError),
    onProgress: (p) => told.push(counts(p)),
  });
  assert.deepEqual(told, [[3, 1, 1, 0, 0, 1], [3, 2, 1, 1, 0, 1], [3, 3, 2, 1, 0, 1]]);
  assert.deepEqual(report.results.map((r) => [r.status, r.value ?? null, r.reason, r.attempts]), [
    ['succeeded', 'ok', null, 2],
    ['gave_up', null, 'permanent', 1],
    ['succeeded', 'fine', null, 1],
  ]);
  assert.ok(report.results[1].error instanceof RangeError);
  assert.equal(report.results[1].report.attempts, 1);
  const s = report.stats;
  assert.deepEqual([s.initial, s.retries, s.successes, s.failures, s.notStarted], [3, 1, 2, 1, 0]);
});

test('runBatch: operations the deadline leaves unstarted are told too', async () => {
  const told = [];
  const gate = new recuo.Gate({ regulator: new recuo.Regulator('10/s') }); // one start every 100 ms
  const report = await recuo.runBatch([1, 2, 3, 4].map((n) => async () => n), {
    gate, deadlineMs: 150, onProgress: (p) => told.push([p.done, p.succeeded, p.notStarted]),
  });
  assert.deepEqual(told, [[1, 1, 0], [2, 2, 0], [3, 2, 1], [4, 2, 2]]);
  assert.deepEqual(report.results.map((r) => r.status), ['succeeded', 'succeeded', 'not_started', 'not_started']);
  assert.equal(report.results[2].reason, 'wait_exceeds_deadline');
  assert.equal(report.stats.notStarted, 2);
});

test('runBatch: many workers tell every count once, in order, and run at most `workers` at once', async () => {
  const done = [];
  let inFlight = 0;
  let most = 0;
  const op = async () => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    await new Promise((resolve) => setTimeout(resolve, 1));
    inFlight -= 1;
  };
  await recuo.runBatch(Array(40).fill(op), { workers: 4, onProgress: (p) => done.push(p.done) });
  assert.deepEqual(done, Array.from({ length: 40 }, (_, i) => i + 1));
  assert.equal(most, 4);
});

test('runBatch: a returned 503 is retried, and counts as a failure when it stays', async () => {
  const report = await recuo.runBatch([async () => new Response(null, { status: 503 })], { policy: quick() });
  const [r] = report.results;
  assert.deepEqual([r.status, r.reason, r.attempts], ['gave_up', 'attempts_exhausted', 2]);
  assert.deepEqual([report.stats.unavailable, report.stats.failures], [2, 1]);
});

test('runBatch: an error thrown by onProgress ends the batch and rejects with it', async () => {
  let ran = 0;
  const boom = new Error('progress');
  await assert.rejects(recuo.runBatch([async () => { ran += 1; }, async () => { ran += 1; }], {
    onProgress: () => { throw boom; },
  }), (e) => e === boom);
  assert.equal(ran, 1);
});

test('runBatch: the caller\'s signal stops what has not started', async () => {
  const controller = new AbortController();
  const report = await recuo.runBatch([
    async () => { controller.abort(); return 1; },
    async () => 2,
  ], { signal: controller.signal });
  assert.deepEqual(report.results.map((r) => [r.status, r.reason]), [['succeeded', null], ['not_started', 'cancelled']]);
});

test('runBatch: bad arguments are refused before anything runs', async () => {
  let ran = false;
  const op = async () => { ran = true; };
  await assert.rejects(recuo.runBatch(3), TypeError);
  await assert.rejects(recuo.runBatch([op, 'no']), /operations\[1\] must be a function/);
  await assert.rejects(recuo.runBatch([op], { workers: 0 }), RangeError);
  await assert.rejects(recuo.runBatch([op], { onProgress: 3 }), /onProgress must be a function/);
  await assert.rejects(recuo.runBatch([op], { policy: {} }), /policy must be a recuo Policy/);
  assert.equal(ran, false);
});

test('Policy.interactive and Policy.batch differ only in the deadline', () => {
  const interactive = recuo.Policy.interactive().toValue();
  const batch = recuo.Policy.batch().toValue();
  assert.deepEqual(interactive, recuo.Policy.adapters().toValue());
  assert.deepEqual([interactive.deadline_ms, batch.deadline_ms], [30000, null]);
  assert.deepEqual({ ...batch, deadline_ms: 30000 }, interactive);
});

test('runBatch: what a worker process sends back as JSON reads back and merges through the core', async () => {
  const { execFileSync } = await import('node:child_process');
  const index = new URL('../index.js', import.meta.url).href;
  const script = `
    import { runBatch, Policy } from ${JSON.stringify(index)};
    const n = Number(process.argv[1]);
    const report = await runBatch(Array.from({ length: n }, (_, i) => async () => i), { policy: Policy.batch() });
    process.stdout.write(JSON.stringify({ stats: report.stats, results: report.results }));`;
  // Worker processes are Node's, whichever runtime runs this test.
  const run = (n) => JSON.parse(execFileSync('node', ['--input-type=module', '-e', script, String(n)], { encoding: 'utf8' }));
  const [a, b] = [run(2), run(3)];
  assert.deepEqual(b.results.map((r) => [r.status, r.value, r.attempts]), [['succeeded', 0, 1], ['succeeded', 1, 1], ['succeeded', 2, 1]]);
  const total = recuo.mergeStats(a.stats, b.stats);
  assert.deepEqual([total.initial, total.retries, total.successes, total.failures, total.notStarted], [5, 0, 5, 0, 0]);
  // The core's merge: the earliest first start and the latest last (each process's own clock
  // in JavaScript, so only the counts are the batch's), in-flight figures added up.
  assert.equal(total.firstStartNs, Math.min(a.stats.firstStartNs, b.stats.firstStartNs));
  assert.equal(total.maxInFlight, a.stats.maxInFlight + b.stats.maxInFlight);
  assert.deepEqual(JSON.parse(JSON.stringify(total)), total);
  assert.throws(() => recuo.mergeStats({ ...a.stats, firstStartNs: 5, lastStartNs: 1 }, b.stats), recuo.RecuoError);
  assert.throws(() => recuo.mergeStats({ ...a.stats, initial: -1 }, b.stats), RangeError);
});
