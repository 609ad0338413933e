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

test('retry_after.json through retryDelayMs: the same reading, a NUL byte included', () => {
  const { cases } = load('retry_after.json');
  for (const c of cases) {
    const d = recuo.retryDelayMs(c.value, 0, c.now_ms, { seed: 7 });
    // An invalid value is no header: the same seeded draw.
    const want = c.kind === 'unbounded' ? Infinity : c.kind === 'invalid' ? recuo.retryDelayMs(null, 0, c.now_ms, { seed: 7 }) : c.wait_ms;
    assert.equal(d, want, c.name);
  }
  assert.notEqual(recuo.retryDelayMs('12\u00000', 0, 0, { seed: 7 }), 12000, 'a NUL does not cut the value');
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

// What a step after an attempt's verdict decided, as scenarios.json names it.
const DECIDED = { sleep: 'retry', done: 'done', gave_up: 'give_up' };

test('scenarios.json: the machine, told each verdict', () => {
  const { scenarios } = load('scenarios.json');
  assert.ok(scenarios.length >= 19);
  for (const sc of scenarios) {
    const policy = policyOf(sc.policy);
    const op = new recuo.Operation(policy, { seed: 0 });
    sc.steps.forEach((st, i) => {
      const begun = i === 0 ? op.start(st.begin_ms, sc.now_ms + st.begin_ms) : op.slept(st.begin_ms);
      assert.deepEqual([begun.kind, begun.attempt], ['call', i], `${sc.name}, step ${i}`);
      const v = recuo.classify(st.outcome, { method: st.method, headers: st.headers, idempotencyKey: st.idempotency_key, nowMs: sc.now_ms + st.end_ms, policy });
      if (st.cancel) op.cancel();
      let s;
      if (v.verdict === 'success') s = op.succeeded(st.end_ms);
      else {
        s = op.failed(st.end_ms);
        if (s.kind === 'classify') s = op.judged(st.end_ms, v);
      }
      const e = st.expect;
      assert.equal(DECIDED[s.kind], e.decision, `${sc.name}, step ${i}`);
      if (e.decision === 'retry') assert.deepEqual([s.delayMs, s.attempt + 1], [e.delay_ms, e.next_attempt], `${sc.name}, step ${i}`);
      else if (e.decision === 'give_up') assert.deepEqual([s.reason, s.retryAtMs], [e.reason, e.retry_at_ms], `${sc.name}, step ${i}`);
      else assert.equal(s.kind, 'done');
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

// The gate of a vector, and the places of its limit others hold at the start (core/tests/loops.rs:
// gate_with_holders): `taken` start slots of its regulator spent at 0 ns.
function gateOf(g) {
  if (g == null) return { gate: undefined, held: [] };
  const parts = {};
  if (g.budget) parts.budget = new recuo.RetryBudget({ ratio: g.budget.ratio, floorPerS: g.budget.floor_per_s, windowS: g.budget.window_s });
  if (g.limit !== undefined) parts.limit = new recuo.ConcurrencyLimit(g.limit);
  if (g.regulator) {
    parts.regulator = new recuo.Regulator(g.regulator.rate, { burst: g.regulator.burst });
    for (let i = 0; i < (g.regulator.taken ?? 0); i++) assert.equal(parts.regulator.tryAcquireAt(0), 0);
  }
  const held = [];
  if (parts.limit && g.held != null) {
    for (let i = 0; i < g.held; i++) held.push(parts.limit.tryAcquire());
  }
  return { gate: new recuo.Gate(parts), held };
}

// What an attempt received, as the vectors write it (`null`: nothing said).
const seenOf = (v) => (v == null || v.status == null ? null : { status: v.status, headers: v.headers ?? [] });

// The pool of a scenario: the core's rule after a first attempt, or a pool given as it is.
function poolOf(p, policy) {
  if (p == null) return {};
  if (p.after_first) {
    const enclosing = p.enclosing == null ? null : new recuo.AttemptPool(p.enclosing);
    const chosen = recuo.AttemptPool.choose(enclosing, policy.maxAttempts, { afterFirst: true });
    return { pool: chosen.pool, nested: chosen.nested };
  }
  return { pool: new recuo.AttemptPool(p.remaining), nested: p.nested };
}

// A look at the gate as the vectors write it (core/tests/loops.rs: poll_json).
const pollJson = (p) => (p.kind === 'wait' ? { gate: 'wait', delay_ms: p.delayMs } : stepJson(p));

test('loops.json: every operation scenario through the step API', () => {
  const { scenarios } = load('loops.json');
  assert.ok(scenarios.length >= 25);
  const seenEvents = new Set();
  for (const sc of scenarios) {
    const policy = policyOf(sc.policy);
    const stats = new recuo.StatsRecorder();
    const { gate, held } = gateOf(sc.gate);
    const op = new recuo.Operation(policy, {
      request: sc.request, records: 'debug', statsRecorder: stats, classifyLastFailure: !sc.guide,
      ownKey: sc.key_given, gate, ...poolOf(sc.pool, policy),
    });
    let last;
    sc.events.forEach((ev, i) => {
      seenEvents.add(ev.do);
      const at = ev.at ?? 0;
      let step;
      switch (ev.do) {
        case 'start': step = op.start(at, sc.unix_ms); break;
        case 'first': step = op.startAfterFirst(at, sc.unix_ms); break;
        case 'poll_gate': {
          const polled = op.pollGateAt(at, BigInt(at) * 1_000_000n);
          assert.deepEqual(pollJson(polled), ev.expect, `${sc.name}: event ${i}`);
          if (polled.kind !== 'wait') last = polled;
          return;
        }
        case 'release': held.pop().release(); return;
        case 'enter': step = op.entered(at, ev.passed); break;
        case 'respond': step = op.responded(at, ev.status, ev.headers); break;
        case 'transport': step = op.responded(at, ev.kind); break;
        case 'fail': step = op.failed(at, seenOf(ev.seen), seenOf(ev.error_seen)); break;
        case 'succeed': step = op.succeeded(at); break;
        case 'judge':
          step = op.judged(at, { verdict: ev.verdict.verdict, reason: ev.verdict.reason, waitMs: ev.verdict.wait_ms }, seenOf(ev.seen));
          break;
        case 'slept': step = op.slept(at); break;
        case 'cancel': op.cancel(); return;
        case 'stop_queue': op.stopQueue(ev.reason); return;
        default: throw new Error(`${sc.name}: unknown event ${ev.do}`);
      }
      assert.deepEqual(stepJson(step), ev.expect, `${sc.name}: event ${i}`);
      last = step;
    });
    assert.ok(last.kind === 'done' || last.kind === 'gave_up', sc.name);
    // Once finished, the machine repeats its last step.
    assert.deepEqual(op.slept(999999), last, sc.name);
    const r = op.report();
    assert.deepEqual(
      { attempts: r.attempts, reason: r.reason, elapsed_ms: r.elapsedMs, delays_ms: r.delaysMs, stopped_by: r.stoppedBy, retry_at_unix_ms: r.retryAt },
      sc.report, `${sc.name}: report`);
    const s = stats.snapshot();
    assert.deepEqual(
      { initial: s.initial, retries: s.retries, successes: s.successes, failures: s.failures, not_started: s.notStarted, throttled: s.throttled, unavailable: s.unavailable },
      sc.stats, `${sc.name}: stats`);
    const records = [];
    for (let rec = op.pollRecord(); rec; rec = op.pollRecord()) records.push([rec.level, rec.line]);
    assert.deepEqual(records, sc.records, `${sc.name}: records`);
    op.close();
    for (const p of held) p.release();
  }
  // Every kind of event the vectors hold was played.
  for (const kind of ['first', 'poll_gate', 'release', 'fail', 'judge']) assert.ok(seenEvents.has(kind), kind);
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

test('loops.json: the pool a loop draws from (AttemptPool.choose)', () => {
  const { pools } = load('loops.json');
  assert.ok(pools.length >= 7);
  for (const c of pools) {
    const enclosing = c.enclosing == null ? null : new recuo.AttemptPool(c.enclosing);
    const chosen = recuo.AttemptPool.choose(enclosing, c.max_attempts, { batchOperation: c.batch, afterFirst: c.after_first });
    assert.deepEqual({ remaining: chosen.pool.remaining, nested: chosen.nested, owned: chosen.owned }, c.expect, c.name);
    if (enclosing && !chosen.owned) {
      // Joined: one count for both handles.
      const op = new recuo.Operation(new recuo.Policy({ maxAttempts: 5 }), { pool: enclosing, nested: false });
      op.start(0, 0);
      assert.equal(chosen.pool.remaining, enclosing.remaining, `${c.name}: shared`);
      assert.equal(chosen.pool.remaining, c.enclosing - 1, `${c.name}: shared`);
      op.close();
    }
  }
});

test('loops.json: whether a success needs the machine', () => {
  const cases = load('loops.json').success_needs_machine;
  assert.ok(cases.length >= 8);
  for (const c of cases) {
    const { gate } = gateOf(c.gate);
    assert.equal(recuo.Operation.successNeedsMachine({ gate, stats: c.stats, records: c.records }), c.expect, c.name);
  }
});

test('loops.json: a wait rounds up to whole milliseconds', () => {
  const pairs = load('loops.json').wait_ms_from_ns;
  assert.ok(pairs.length >= 6);
  for (const [ns, ms] of pairs) {
    assert.equal(recuo.waitMsFromNs(ns), ms, `${ns} ns`);
    assert.equal(recuo.waitMsFromNs(BigInt(ns)), ms, `${ns}n ns`);
  }
});

test('loops.json: every batch, its queue and its operations on one fake clock', () => {
  const { batches } = load('loops.json');
  assert.ok(batches.length >= 1);
  for (const b of batches) {
    const stats = new recuo.StatsRecorder();
    const policy = policyOf(b.policy);
    const queue = new recuo.BatchQueue(policy, b.len, 0, {
      deadlineMs: b.deadline_ms, stopOnUnreachableWait: b.stop_on_unreachable_wait, statsRecorder: stats,
      records: { requests: b.requests, unixMs: b.unix_ms },
    });
    const ops = Array(b.len).fill(null);
    const results = Array(b.len).fill(null);
    const progress = [];
    const told = (p) => ({
      total: p.total, done: p.done, succeeded: p.succeeded, failed: p.failed, not_started: p.notStarted, retries: p.retries,
    });
    b.events.forEach((ev, i) => {
      const at = ev.at ?? 0;
      let got;
      if (ev.do === 'next') {
        const n = queue.next(at);
        got = { next: n.next };
        if (n.next === 'start') {
          ops[n.index] = new recuo.Operation(n.policy, { request: b.requests[n.index], records: 'debug', statsRecorder: stats });
          Object.assign(got, { index: n.index, deadline_ms: n.deadlineMs });
          n.policy.close();
        } else if (n.next === 'not_started') {
          results[n.index] = { end: 'not_started', reason: n.reason, stopped_by: n.stoppedBy };
          progress.push(told(queue.ended(n.index, { end: 'not_started', reason: n.reason, stoppedBy: n.stoppedBy })));
          Object.assign(got, { index: n.index, reason: n.reason, stopped_by: n.stoppedBy });
        }
      } else if (ev.do === 'finished') {
        const op = ops[ev.op];
        const end = op.batchResult(false);
        results[ev.op] = { end: end.end, reason: end.reason, stopped_by: end.stoppedBy };
        got = { stops: queue.finished(ev.op, op.report().reason) };
        progress.push(told(queue.ended(ev.op, end)));
      } else if (ev.do === 'stop_queue') {
        ops[ev.op].stopQueue(queue.stopped);
        return;
      } else {
        const op = ops[ev.op];
        let step;
        if (ev.do === 'start') step = op.start(at, b.unix_ms + at);
        else if (ev.do === 'slept') step = op.slept(at);
        else if (ev.do === 'respond') step = op.responded(at, ev.status, ev.headers);
        else if (ev.do === 'transport') step = op.responded(at, ev.kind);
        else throw new Error(`${b.name}: unknown event ${ev.do}`);
        got = stepJson(step);
      }
      assert.deepEqual(got, ev.expect, `${b.name}: event ${i}`);
    });
    assert.deepEqual(results, b.results, `${b.name}: results`);
    assert.deepEqual(progress, b.progress, `${b.name}: progress`);
    const records = {};
    ops.forEach((op, n) => {
      if (op === null) return;
      const made = [];
      for (let r = op.pollRecord(); r; r = op.pollRecord()) made.push([r.level, r.line]);
      records[String(n)] = made;
      op.close();
    });
    const made = [];
    for (let r = queue.pollRecord(); r; r = queue.pollRecord()) made.push([r.level, r.line]);
    records.queue = made;
    assert.deepEqual(records, b.records, `${b.name}: records`);
    const s = stats.snapshot();
    assert.deepEqual(
      { initial: s.initial, retries: s.retries, successes: s.successes, failures: s.failures, not_started: s.notStarted, throttled: s.throttled, unavailable: s.unavailable },
      b.stats, `${b.name}: stats`);
    queue.close();
    policy.close();
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
