// Every shared vector file of tests/vectors/ through the package, as tests/c/test_vectors.c
// and tests/c/test_loops.c read them: the answers must be exactly the ones written there.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import * as recuo from '../index.js';

const dir = fileURLToPath(new URL('../../tests/vectors/', import.meta.url));
const load = (name) => JSON.parse(readFileSync(dir + name, 'utf8'));

test('retry_after.json: parseRetryAfter', () => {
  const { cases } = load('retry_after.json');
  assert.ok(cases.length >= 60);
  assert.ok(cases.some((c) => c.value.includes('\u0000')), 'a value with a NUL byte');
  for (const c of cases) {
    const got = recuo.parseRetryAfter(c.value, c.now_ms);
    assert.equal(got.kind, c.kind, c.name);
    const want = c.kind === 'unbounded' ? Infinity : c.wait_ms;
    assert.equal(got.waitMs, want, c.name);
  }
});

test('backoff.json: backoffWindowMs and its errors', () => {
  const { windows, errors } = load('backoff.json');
  for (const w of windows) assert.equal(recuo.backoffWindowMs(w.base_ms, w.cap_ms, w.n), w.window_ms, JSON.stringify(w));
  for (const e of errors) {
    assert.throws(() => recuo.backoffWindowMs(e.base_ms, e.cap_ms, 0), (x) => x instanceof recuo.RecuoError && x.status === e.error, JSON.stringify(e));
  }
  assert.ok(windows.length > 0 && errors.length > 0);
});

test('seeded.json: retryDelayMs and comRetry with a seed', async () => {
  const { retry_delay_ms: delays, com_retry: loops } = load('seeded.json');
  for (const c of delays) {
    const d = recuo.retryDelayMs(c.retry_after, c.attempt, c.now_ms, { seed: c.seed });
    assert.equal(d, c.unbounded ? Infinity : c.delay_ms, JSON.stringify(c));
  }
  for (const c of loops) {
    let calls = 0;
    const sleeps = [];
    const errors = [];
    let result;
    let thrown;
    try {
      result = await recuo.comRetry(
        async () => {
          calls++;
          if (calls <= c.failures) {
            const e = new Error(`failure ${calls}`);
            errors.push(e);
            throw e;
          }
          return calls;
        },
        { tentativas: c.tentativas, baseMs: c.base_ms, maxMs: c.max_ms, seed: c.seed, sleep: async (ms) => { sleeps.push(ms); } },
      );
    } catch (e) {
      thrown = e;
    }
    assert.equal(calls, c.calls, `seed ${c.seed}`);
    if (c.outcome === 'ok') assert.equal(result, calls);
    else assert.equal(thrown, errors.at(-1), 'the last error, the same object');
    assert.deepEqual(sleeps, c.sleeps_ms, `seed ${c.seed}`);
  }
});

test('classify.json: classify under the default policy', () => {
  const { cases } = load('classify.json');
  assert.ok(cases.length >= 90);
  for (const c of cases) {
    const v = recuo.classify(c.outcome, { method: c.method, headers: c.headers, idempotencyKey: c.idempotency_key, nowMs: c.now_ms });
    assert.equal(v.verdict, c.verdict, c.name);
    assert.equal(v.reason, c.reason, c.name);
    assert.equal(v.waitMs, c.wait_ms, c.name);
    assert.equal(v.waitUnbounded, c.wait_unbounded, c.name);
  }
});

const policyOf = (p) =>
  new recuo.Policy({
    maxAttempts: p.max_attempts, baseMs: p.base_ms, capMs: p.cap_ms, jitter: p.jitter,
    deadlineMs: p.deadline_ms, spreadMs: p.spread_ms, useDateHeader: p.use_date_header,
  });

test('scenarios.json: the coarse form of the machine (begin / next)', () => {
  const { scenarios } = load('scenarios.json');
  assert.ok(scenarios.length >= 19);
  for (const sc of scenarios) {
    const policy = policyOf(sc.policy);
    const op = new recuo.Operation(policy, { seed: 0 });
    sc.steps.forEach((st, i) => {
      const begun = op.begin(st.begin_ms);
      assert.equal(begun.kind, 'proceed', `${sc.name}, step ${i}`);
      assert.equal(begun.nextAttempt, i);
      const v = recuo.classify(st.outcome, { method: st.method, headers: st.headers, idempotencyKey: st.idempotency_key, nowMs: sc.now_ms + st.end_ms, policy });
      if (st.cancel) op.cancel();
      const d = op.next(v, st.end_ms);
      const e = st.expect;
      assert.equal(d.kind, e.decision, `${sc.name}, step ${i}`);
      if (e.decision === 'retry') assert.deepEqual([d.delayMs, d.nextAttempt], [e.delay_ms, e.next_attempt], `${sc.name}, step ${i}`);
      else if (e.decision === 'give_up') assert.deepEqual([d.reason, d.retryAtMs], [e.reason, e.retry_at_ms], `${sc.name}, step ${i}`);
      else assert.deepEqual([d.reason, d.retryAtMs], [null, null]);
    });
    const r = op.report();
    assert.deepEqual([r.attempts, r.reason, r.elapsedMs, r.delaysMs], [sc.report.attempts, sc.report.reason, sc.report.elapsed_ms, sc.report.delays_ms], sc.name);
    op.close();
    policy.close();
  }
});

// A step as the vectors write it (core/tests/loops.rs: step_json).
function stepJson(s) {
  const j = { step: s.kind };
  if (s.kind === 'enter') Object.assign(j, { attempt: s.attempt, until_ms: s.untilMs });
  else if (s.kind === 'call') Object.assign(j, { attempt: s.attempt, timeout_ms: s.timeoutMs });
  else if (s.kind === 'classify') j.attempt = s.attempt;
  else if (s.kind === 'sleep') Object.assign(j, { attempt: s.attempt, delay_ms: s.delayMs });
  else if (s.kind === 'gave_up') Object.assign(j, { reason: s.reason, retry_at_ms: s.retryAtMs });
  return j;
}

function gateOf(g) {
  if (g == null) return undefined;
  const parts = {};
  if (g.budget) parts.budget = new recuo.RetryBudget({ ratio: g.budget.ratio, floorPerS: g.budget.floor_per_s, windowS: g.budget.window_s });
  if (g.limit !== undefined) parts.limit = new recuo.ConcurrencyLimit(g.limit);
  return new recuo.Gate(parts);
}

test('loops.json: every operation scenario through the step API', () => {
  const { scenarios } = load('loops.json');
  assert.ok(scenarios.length >= 12);
  for (const sc of scenarios) {
    const policy = policyOf(sc.policy);
    const stats = new recuo.StatsRecorder();
    const pool = sc.pool ? new recuo.AttemptPool(sc.pool.remaining) : undefined;
    const op = new recuo.Operation(policy, {
      request: sc.request, records: 'debug', statsRecorder: stats, classifyLastFailure: !sc.guide,
      ownKey: sc.key_given, gate: gateOf(sc.gate), pool, nested: sc.pool?.nested,
    });
    let last;
    sc.events.forEach((ev, i) => {
      let step;
      switch (ev.do) {
        case 'start': step = op.start(ev.at, sc.unix_ms); break;
        case 'enter': step = op.entered(ev.at, ev.passed); break;
        case 'respond': step = op.responded(ev.at, ev.status, ev.headers); break;
        case 'transport': step = op.responded(ev.at, ev.kind); break;
        case 'fail': step = op.failed(ev.at); break;
        case 'succeed': step = op.succeeded(ev.at); break;
        case 'judge': step = op.judged(ev.at, { verdict: ev.verdict.verdict, reason: ev.verdict.reason, waitMs: ev.verdict.wait_ms }); break;
        case 'slept': step = op.slept(ev.at); break;
        case 'cancel': op.cancel(); return;
        case 'stop_queue': op.stopQueue(ev.reason); return;
        default: throw new Error(`unknown event ${ev.do}`);
      }
      assert.deepEqual(stepJson(step), ev.expect, `${sc.name}: event ${i}`);
      last = step;
    });
    assert.ok(last.kind === 'done' || last.kind === 'gave_up', sc.name);
    // Once finished, the machine repeats its last step.
    assert.deepEqual(op.slept(999999), last, sc.name);
    const r = op.report();
    assert.deepEqual(
      { attempts: r.attempts, reason: r.reason, elapsed_ms: r.elapsedMs, delays_ms: r.delaysMs, stopped_by: r.stoppedBy },
      sc.report, `${sc.name}: report`);
    const s = stats.snapshot();
    assert.deepEqual(
      { initial: s.initial, retries: s.retries, successes: s.successes, failures: s.failures, not_started: s.notStarted, throttled: s.throttled, unavailable: s.unavailable },
      sc.stats, `${sc.name}: stats`);
    const records = [];
    for (let rec = op.pollRecord(); rec; rec = op.pollRecord()) records.push([rec.level, rec.line]);
    assert.deepEqual(records, sc.records, `${sc.name}: records`);
    op.close();
  }
});

test('loops.json: every queue scenario through the batch queue', () => {
  const { queues } = load('loops.json');
  assert.ok(queues.length >= 1);
  for (const q of queues) {
    const policy = policyOf(q.policy);
    const stats = new recuo.StatsRecorder();
    const queue = new recuo.BatchQueue(policy, q.len, 0, { deadlineMs: q.deadline_ms, stopOnUnreachableWait: q.stop_on_unreachable_wait, statsRecorder: stats });
    q.events.forEach((ev, i) => {
      if (ev.do === 'next') {
        const n = queue.next(ev.at);
        const got = { next: n.next };
        if (n.next === 'start') {
          Object.assign(got, { index: n.index, deadline_ms: n.deadlineMs });
          assert.equal(n.policy.deadlineMs, n.deadlineMs, 'the policy handed out carries the deadline');
          n.policy.close();
        } else if (n.next === 'not_started') Object.assign(got, { index: n.index, reason: n.reason, stopped_by: n.stoppedBy });
        assert.deepEqual(got, ev.expect, `${q.name}: event ${i}`);
      } else if (ev.do === 'finished') {
        assert.deepEqual({ stops: queue.finished(ev.index, ev.reason) }, ev.expect, `${q.name}: event ${i}`);
      } else if (ev.do === 'stop') {
        queue.stop(ev.reason);
        assert.equal(queue.stopped, ev.reason);
      } else throw new Error(`unknown event ${ev.do}`);
    });
    assert.equal(stats.snapshot().notStarted, q.not_started, q.name);
    queue.close();
  }
});

test('redaction.json: redactUrl, redactHeaders and the attempt record', () => {
  const { cases } = load('redaction.json');
  assert.ok(cases.length >= 40);
  let exact = 0;
  for (const c of cases) {
    const { url, malformed } = recuo.redactUrlDetailed(c.url);
    assert.equal(malformed, c.malformed, c.name);
    if (c.redacted_url != null) {
      assert.equal(url, c.redacted_url, c.name);
      exact++;
    }
    const shown = [url, ...recuo.redactHeaders(c.headers).map(([n, v]) => `${n}: ${v}`)].join('\n');
    const record = recuo.attemptRecord({
      startUnixMs: 0, elapsedMs: 1, method: 'GET', url: c.url, outcome: 503, headers: c.headers,
      verdict: { verdict: 'retry', reason: 'unavailable' }, decision: { kind: 'retry', delayMs: 10, nextAttempt: 1 },
    });
    assert.ok(record.includes('"status":503') && record.includes('"decision":"retry","reason":"unavailable"'), record);
    for (const secret of c.secrets) {
      assert.ok(!shown.includes(secret), `${c.name}: ${secret} survives in ${shown}`);
      assert.ok(!record.includes(secret), `${c.name}: ${secret} survives in ${record}`);
    }
    for (const keep of c.keep) assert.ok(shown.includes(keep), `${c.name}: ${keep} lost from ${shown}`);
  }
  assert.ok(exact > 0);
});

test('origin.json: whoAnswered', () => {
  const { cases } = load('origin.json');
  assert.ok(cases.length >= 17);
  for (const c of cases) {
    const w = recuo.whoAnswered(c.headers, { expectedContentType: c.expected_content_type });
    assert.equal(w.origin, c.origin, c.name);
    assert.equal(w.confidence, c.confidence, c.name);
    const evidence = w.evidence.join('\n');
    for (const part of c.evidence_contains) assert.ok(evidence.includes(part), `${c.name}: ${part} not in ${evidence}`);
  }
});
