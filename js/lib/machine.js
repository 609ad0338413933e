// The core's operation machine, step by step: `Operation` (tell it what happened, it answers
// the next step), the batch queue that says which operation starts next, the attempts nested
// loops share, and the stats recorder. Each step is read from the bytes the core writes.

import { utf8 } from './convert.js';
import { SEEN } from './decisions.js';
import { BUFFER_TOO_SMALL } from './errors.js';

/** The machine's classes over one loaded library (`ctx`: what the modules before this one made). */
export function installMachine(ctx) {
  const { f, layout, check, bytes, text, integer, constant, reasonName, steps, levels, reasons, styles,
    endings, batchKinds, nextKinds, statusAndHeaders, cHeaders, outcomeOf, Handle, Policy, theDefaultPolicy, cSeen,
    predicateVerdict, verdictFrom, sendKeysCode, planFrom, cLast, Gate } = ctx;

  // A step comes back in one scratch buffer, read field by field (every call is synchronous,
  // so one buffer serves them all): decoding the struct into a new object cost ~3 µs a
  // step, several times the machine's own work.
  const stepBuffer = new Uint8Array(layout.sizeof('recuo_step'));
  const stepAt = Object.fromEntries(['kind', 'attempt', 'delay_ms', 'has_until', 'until_ms', 'has_timeout', 'timeout_ms',
    'reason', 'has_retry_at', 'retry_at_ms'].map((field) => [field, layout.offsetof('recuo_step', field)]));
  const stepView = new DataView(stepBuffer.buffer);
  const u64At = (v, at) => Number(v.getBigUint64(at, true));

  /** The step in `b` (a recuo_step's bytes). */
  function stepFrom(b) {
    const v = b === stepBuffer ? stepView : new DataView(b.buffer, b.byteOffset, b.byteLength);
    const kind = steps.byCode.get(v.getUint32(stepAt.kind, true));
    const step = { kind, attempt: v.getUint32(stepAt.attempt, true) };
    if (kind === 'enter') step.untilMs = b[stepAt.has_until] ? u64At(v, stepAt.until_ms) : null;
    else if (kind === 'call') step.timeoutMs = b[stepAt.has_timeout] ? u64At(v, stepAt.timeout_ms) : null;
    else if (kind === 'sleep') step.delayMs = u64At(v, stepAt.delay_ms);
    else if (kind === 'gave_up') {
      step.reason = reasonName(v.getUint32(stepAt.reason, true));
      step.retryAtMs = b[stepAt.has_retry_at] ? u64At(v, stepAt.retry_at_ms) : null;
    }
    return step;
  }

  /** The next record `poll(level, buf, cap, written)` writes, its buffer grown until it fits: `{ level, line }`, or null. */
  function polledRecord(poll) {
    for (let cap = 1024; ; cap *= 4) {
      const buf = new Uint8Array(cap);
      const level = [0];
      const written = [0];
      const rc = poll(level, buf, cap, written);
      if (rc === BUFFER_TOO_SMALL) continue;
      check(rc);
      if (level[0] === 0) return null;
      return { level: levels.byCode.get(level[0]), line: utf8(buf.subarray(0, Number(written[0]))) };
    }
  }

  /** A `recuo_stats` as JavaScript's stats (camelCase; instants and spacings in ns). */
  const statsFrom = (s) => ({
    initial: Number(s.initial), retries: Number(s.retries), successes: Number(s.successes), failures: Number(s.failures),
    notStarted: Number(s.not_started), throttled: Number(s.throttled), unavailable: Number(s.unavailable),
    maxInFlight: Number(s.max_in_flight), minSpacingNs: s.has_spacing ? Number(s.min_spacing_ns) : null,
    meanSpacingNs: s.has_spacing ? s.mean_spacing_ns : null,
    firstStartNs: s.has_starts ? Number(s.first_start_ns) : null, lastStartNs: s.has_starts ? Number(s.last_start_ns) : null,
  });
  /** JavaScript's stats as a `recuo_stats` (the mean spacing follows from the rest). */
  function statsTo(stats, what) {
    if (stats == null || typeof stats !== 'object') throw new TypeError(`${what} must be stats`);
    const count = (name) => integer(stats[name] ?? 0, `${what}.${name}`);
    const at = (name) => (stats[name] == null ? null : integer(stats[name], `${what}.${name}`));
    const [spacing, first, last] = [at('minSpacingNs'), at('firstStartNs'), at('lastStartNs')];
    return {
      initial: count('initial'), retries: count('retries'), successes: count('successes'), failures: count('failures'),
      not_started: count('notStarted'), throttled: count('throttled'), unavailable: count('unavailable'),
      max_in_flight: count('maxInFlight'), has_spacing: spacing !== null, min_spacing_ns: spacing ?? 0, mean_spacing_ns: 0,
      has_starts: first !== null && last !== null, first_start_ns: first ?? 0, last_start_ns: last ?? 0, elapsed_ms: 0,
    };
  }
  /**
   * Two recorders' stats added up, as the core merges them: counts add up; the shortest
   * spacing of either and the span of both; `maxInFlight` adds up (an upper bound when both
   * ran at once). Stats from another process (JSON) merge the same way.
   */
  function mergeStats(a, b) {
    const out = {};
    check(f.recuo_stats_merge(statsTo(a, 'a'), statsTo(b, 'b'), out));
    return statsFrom(out);
  }

  /** Counts starts, retries, 429s, 503s and results, shared by any number of operations. */
  class StatsRecorder extends Handle {
    constructor() {
      super(f.recuo_stats_recorder_new(), f.recuo_stats_recorder_free, 'a stats recorder');
    }
    snapshot() {
      const s = {};
      check(f.recuo_stats_recorder_snapshot(this.ptr, s));
      return statsFrom(s);
    }
  }

  /** Attempts shared by nested loops: the innermost operation is called at most the outermost loop's attempts in all. */
  class AttemptPool extends Handle {
    constructor(attempts, { _ptr } = {}) {
      super(_ptr ?? f.recuo_attempt_pool_new(integer(attempts, 'attempts', 0xffffffff)), f.recuo_attempt_pool_free, 'an attempt pool');
    }
    get remaining() { return f.recuo_attempt_pool_remaining(this.ptr); }
    /**
     * The pool a loop draws from when it starts with `enclosing` as its context's pool (the
     * outermost loop's there, or null): `{ pool, nested, owned }` — the enclosing pool joined,
     * or one of `maxAttempts` of its own (`owned`: the context's pool for the loops nested in
     * it, until it ends). `batchOperation`: an operation of a batch owns its pool;
     * `afterFirst`: its first attempt was made before its machine, already drawn.
     */
    static choose(enclosing, maxAttempts, { batchOperation = false, afterFirst = false } = {}) {
      if (enclosing != null && !(enclosing instanceof AttemptPool)) throw new TypeError('enclosing must be a recuo AttemptPool or null');
      const out = [null];
      const nested = [false];
      const owned = [false];
      check(f.recuo_loop_pool_choose(enclosing == null ? null : enclosing.ptr, integer(maxAttempts, 'maxAttempts', 0xffffffff),
        Boolean(batchOperation), Boolean(afterFirst), out, nested, owned));
      return { pool: new AttemptPool(undefined, { _ptr: out[0] }), nested: nested[0], owned: owned[0] };
    }
  }

  /**
   * The core's operation machine, step by step: tell it what happened, it answers
   * the next step. For hosts with their own loop; `retry` drives it for you.
   */
  class Operation extends Handle {
    constructor(policy = theDefaultPolicy(), options = {}) {
      const out = [null];
      if (!(policy instanceof Policy)) throw new TypeError('policy must be a recuo Policy');
      check(options.seed !== undefined
        ? f.recuo_attempts_new_seeded(policy.ptr, integer(options.seed, 'seed'), out)
        : f.recuo_attempts_new(policy.ptr, out));
      super(out[0], f.recuo_attempts_free, 'an operation');
      const p = this.ptr;
      const o = options;
      let m = null;
      if (o.request) {
        m = bytes(o.request.method ?? 'GET');
        const u = bytes(o.request.url ?? '');
        check(f.recuo_attempts_set_request(p, m, m.length, u, u.length));
      }
      if (o.records !== undefined && o.records !== null) check(f.recuo_attempts_set_records(p, constant(levels, o.records, 'records')));
      if (o.statsRecorder) check(f.recuo_attempts_set_stats_recorder(p, o.statsRecorder.ptr));
      if (o.classifyLastFailure === false) check(f.recuo_attempts_set_classify_last_failure(p, false));
      if (o.ownKey) check(f.recuo_attempts_set_own_key(p));
      this._plan = null;
      if (o.plan) {
        // The machine plans now; the plan's fields are read (decoded) only when asked for.
        m ??= bytes('GET');
        const callers = Boolean(o.plan.callersKey);
        const sendKeys = sendKeysCode(o.plan.sendKeys);
        check(f.recuo_attempts_set_plan(p, m, m.length, callers, sendKeys, null));
        this._plan = () => {
          const out = {};
          check(f.recuo_plan_request(policy.ptr, m, m.length, callers, sendKeys, out));
          return planFrom(out);
        };
      }
      if (o.replayable === false) check(f.recuo_attempts_set_replayable(p, false));
      if (o.gate) check(f.recuo_attempts_set_gate(p, o.gate.ptr));
      if (o.pool) check(f.recuo_attempts_set_pool(p, o.pool.ptr, Boolean(o.nested)));
      this._keep = [o.statsRecorder, o.gate, o.pool];
      this._waitOut = [0];
    }
    /**
     * Whether a first attempt that succeeds needs the machine at all with `gate`, `stats`
     * (a StatsRecorder) and records of `records` and above: when it does not, a loop may
     * make that attempt before any machine exists (`startAfterFirst` on a failure). The
     * core's answer, the same for every attempt of one policy and gate.
     */
    static successNeedsMachine({ gate = null, stats = false, records = null } = {}) {
      if (gate != null && !(gate instanceof Gate)) throw new TypeError('gate must be a recuo Gate');
      const level = records == null || records === 'none' ? 0 : constant(levels, records, 'records');
      const out = [false];
      check(f.recuo_success_needs_machine(gate ? gate.ptr : null, Boolean(stats), level, out));
      return out[0];
    }
    /** The request's plan (`{ key, idempotent }`), or null for an operation with none. */
    get plan() {
      if (typeof this._plan === 'function') this._plan = this._plan();
      return this._plan;
    }
    _step(call) {
      check(call(stepBuffer));
      return stepFrom(stepBuffer);
    }
    start(nowMs, unixMs = Date.now()) { return this._step((o) => f.recuo_attempts_start(this.ptr, integer(nowMs, 'nowMs'), Math.trunc(unixMs), o)); }
    entered(nowMs, passed) { return this._step((o) => f.recuo_attempts_entered(this.ptr, integer(nowMs, 'nowMs'), Boolean(passed), o)); }
    succeeded(nowMs) { return this._step((o) => f.recuo_attempts_succeeded(this.ptr, integer(nowMs, 'nowMs'), o)); }
    /**
     * Starts the operation whose first attempt was already made, begun at `nowMs` (`unixMs`
     * on the wall clock), before the machine existed: answers that attempt's `call` step;
     * tell its outcome next.
     */
    startAfterFirst(nowMs, unixMs = Date.now()) {
      return this._step((o) => f.recuo_attempts_start_after_first(this.ptr, integer(nowMs, 'nowMs'), Math.trunc(unixMs), o));
    }
    /**
     * One look at the gate for the attempt of an `enter` step: `{ kind: 'wait', delayMs }`
     * (wait that long, then look again), or the next step (`call`, or `gave_up`).
     */
    pollGate(nowMs) { return this._polled(f.recuo_attempts_poll_gate(this.ptr, integer(nowMs, 'nowMs'), this._waitOut, stepBuffer), stepBuffer); }
    /** `pollGate` with the regulator asked at `regulatorNowNs` (fake clocks). */
    pollGateAt(nowMs, regulatorNowNs) {
      return this._polled(f.recuo_attempts_poll_gate_at(this.ptr, integer(nowMs, 'nowMs'), integer(regulatorNowNs, 'regulatorNowNs'), this._waitOut, stepBuffer), stepBuffer);
    }
    _polled(rc, out) {
      check(rc);
      const delayMs = Number(this._waitOut[0]);
      return delayMs > 0 ? { kind: 'wait', delayMs } : stepFrom(out);
    }
    /**
     * The attempt failed (an error with no HTTP meaning of its own): `seen` is what the
     * attempt said it received, `errorSeen` what its error carried (each a `Response`,
     * `{ status, headers }` or null) — its record shows the first the machine takes.
     */
    failed(nowMs, seen = null, errorSeen = null) {
      if (seen == null && errorSeen == null) return this._step((o) => f.recuo_attempts_failed(this.ptr, integer(nowMs, 'nowMs'), o));
      const a = cSeen(seen);
      const b = cSeen(errorSeen);
      return this._step((o) => f.recuo_attempts_failed_noted(this.ptr, integer(nowMs, 'nowMs'), a.outcome, a.headers, a.count, b.outcome, b.headers, b.count, o));
    }
    /**
     * Whether `judged(nowMs, verdict)` would take a retry from the gate's budget (nothing
     * changes): a budget kept on a Redis server through your client is asked for it first.
     */
    wouldDrawOnBudget(nowMs, verdict) {
      const out = [false];
      check(f.recuo_attempts_would_draw_on_budget(this.ptr, integer(nowMs, 'nowMs'), predicateVerdict(verdict), out));
      return out[0];
    }
    /** The verdict on a failure; `seen` (or the verdict's own, from `classify`) is what its classifier saw. */
    judged(nowMs, verdict, seen = null) {
      const v = predicateVerdict(verdict);
      const saw = seen ?? (verdict != null && typeof verdict === 'object' ? verdict[SEEN] ?? null : null);
      if (saw == null) return this._step((o) => f.recuo_attempts_judged(this.ptr, integer(nowMs, 'nowMs'), v, o));
      const a = cSeen(saw);
      return this._step((o) => f.recuo_attempts_judged_seen(this.ptr, integer(nowMs, 'nowMs'), v, a.outcome, a.headers, a.count, o));
    }
    /**
     * The verdict `responded(nowMs, outcome, headers)` would act on (nothing changes): a
     * host whose budget answers through it asks the budget first, then tells the machine
     * `failed(nowMs, seen)` and `judged(nowMs, verdict)` — which is `responded`.
     */
    responseVerdict(nowMs, outcome, headers) {
      const [o, h] = statusAndHeaders(outcome, headers);
      const list = cHeaders(h);
      const out = {};
      const c = outcomeOf(o);
      check(f.recuo_attempts_response_verdict(this.ptr, integer(nowMs, 'nowMs'), c, list, list.length, out));
      return verdictFrom(out, typeof o === 'number' ? { status: o, headers: h } : { transport: o });
    }
    /** What came back: a status (with the response's headers), a `Response`, or a transport kind. */
    responded(nowMs, outcome, headers) {
      const [o, h] = statusAndHeaders(outcome, headers);
      const list = cHeaders(h);
      return this._step((out) => f.recuo_attempts_responded(this.ptr, integer(nowMs, 'nowMs'), outcomeOf(o), list, list.length, out));
    }
    slept(nowMs) { return this._step((o) => f.recuo_attempts_slept(this.ptr, integer(nowMs, 'nowMs'), o)); }
    cancel() { check(f.recuo_attempts_cancel(this.ptr)); }
    stopQueue(reason) { check(f.recuo_attempts_stop_queue(this.ptr, constant(reasons, reason, 'reason'))); }
    /** The next record `{ level, line }` (a redacted JSON line), or null. */
    pollRecord() {
      return polledRecord((level, buf, cap, written) => f.recuo_attempts_poll_record(this.ptr, level, buf, cap, written));
    }
    /** What the record `pollRecord` answered last means to telemetry (the core's mapping): `{ operation, span, points }`, or null. */
    recordTelemetry() {
      const json = text((b, len, w) => f.recuo_attempts_record_telemetry(this.ptr, b, len, w), 2048);
      return json === '' ? null : JSON.parse(json);
    }
    /** How the operation's end reaches a caller of `style` (`'client'`, `'guide'`), its last attempt having come to `last`. */
    ending(style, last) {
      const out = [0];
      check(f.recuo_attempts_ending(this.ptr, constant(styles, style, 'style'), cLast(last), out));
      return endings.byCode.get(out[0]);
    }
    /** The give-up's message at `nowMs` (the machine's clock), its last attempt having come to `last`; '' unless it gave up. */
    giveUpMessage(nowMs, last) {
      const l = cLast(last);
      return text((b, len, w) => f.recuo_attempts_give_up_message(this.ptr, integer(nowMs, 'nowMs'), l, b, len, w));
    }
    /** The operation's idempotency key: one UUID v4, the same for every attempt. */
    get idempotencyKey() {
      const buf = new Uint8Array(37);
      const written = [0];
      check(f.recuo_attempts_idempotency_key(this.ptr, buf, buf.length, written));
      return utf8(buf.subarray(0, Number(written[0])));
    }
    report() {
      const r = {};
      check(f.recuo_attempts_report(this.ptr, r, null, 0, null));
      const n = Number(r.delay_count);
      const delays = new BigUint64Array(Math.max(n, 1));
      check(f.recuo_attempts_report(this.ptr, r, delays, n, null));
      return {
        attempts: r.attempts,
        reason: reasonName(r.reason),
        elapsedMs: Number(r.elapsed_ms),
        delaysMs: Array.from(delays.subarray(0, n), Number),
        retryAfterMs: r.has_retry_after ? Number(r.retry_after_ms) : null,
        stoppedBy: reasonName(r.stopped_by),
        retryAt: r.has_retry_at_unix_ms ? Number(r.retry_at_unix_ms) : null,
      };
    }
    /**
     * How this operation ended for its batch: `{ end, reason, stoppedBy }`, `end` one of
     * `'succeeded'`, `'gave_up'`, `'not_started'` (a give-up with no attempt made, unless its
     * gate could not be used: `gateFailed`).
     */
    batchResult(gateFailed = false) {
      const out = {};
      check(f.recuo_attempts_batch_result(this.ptr, Boolean(gateFailed), out));
      return { end: batchKinds.byCode.get(out.kind), reason: reasonName(out.reason), stoppedBy: reasonName(out.stopped_by) };
    }
  }

  /** The core's batch queue: which operation starts next, or that none will. */
  class BatchQueue extends Handle {
    /**
     * `records`: `{ requests, unixMs }` — the queue makes the record of each operation it does
     * not start (`pollRecord`), naming it by its request (`requests[index]`: `{ method, url }`,
     * the URL redacted), timed from `unixMs`, the wall clock at `nowMs`.
     */
    constructor(policy, length, nowMs, { deadlineMs = null, stopOnUnreachableWait = true, statsRecorder, records } = {}) {
      const out = [null];
      check(f.recuo_batch_queue_new(policy.ptr, integer(length, 'length'), integer(nowMs, 'nowMs'), deadlineMs !== null, deadlineMs ?? 0,
        Boolean(stopOnUnreachableWait), statsRecorder ? statsRecorder.ptr : null, out));
      super(out[0], f.recuo_batch_queue_free, 'a batch queue');
      this._keep = statsRecorder;
      if (records != null) {
        const lines = Array.from(records.requests ?? [], (r) => {
          const m = bytes(r?.method ?? '');
          const u = bytes(r?.url ?? '');
          return { method: m, method_len: m.length, url: u, url_len: u.length };
        });
        check(f.recuo_batch_queue_set_records(this.ptr, lines, lines.length, Math.trunc(records.unixMs ?? Date.now())));
      }
    }
    /** The next record the queue made (an operation it did not start): `{ level, line }`, or null. */
    pollRecord() {
      return polledRecord((level, buf, cap, written) => f.recuo_batch_queue_poll_record(this.ptr, level, buf, cap, written));
    }
    /** What the record `pollRecord` answered last means to telemetry, as `Operation.recordTelemetry`. */
    recordTelemetry() {
      const json = text((b, len, w) => f.recuo_batch_queue_record_telemetry(this.ptr, b, len, w), 2048);
      return json === '' ? null : JSON.parse(json);
    }
    next(nowMs) {
      const n = {};
      check(f.recuo_batch_queue_next(this.ptr, integer(nowMs, 'nowMs'), n));
      const kind = nextKinds.byCode.get(n.kind);
      if (kind === 'start') {
        return { next: kind, index: Number(n.index), deadlineMs: n.has_deadline ? Number(n.deadline_ms) : null, policy: Policy._wrap(n.policy) };
      }
      if (kind === 'not_started') return { next: kind, index: Number(n.index), reason: reasonName(n.reason), stoppedBy: reasonName(n.stopped_by) };
      return { next: kind };
    }
    finished(index, reason) {
      const stops = [false];
      check(f.recuo_batch_queue_finished(this.ptr, integer(index, 'index'), reason == null ? 0 : constant(reasons, reason, 'reason'), stops));
      return stops[0];
    }
    /**
     * Operation `index` ended as `end` — `{ end, reason, stoppedBy }`, as `batchResult()`
     * answers it or as `next()` said an operation is not started: the batch's progress, for a
     * progress display. Tell the queue of every operation's end exactly once.
     */
    ended(index, end) {
      const out = {};
      check(f.recuo_batch_queue_ended(this.ptr, integer(index, 'index'), constant(batchKinds, end?.end, 'end'),
        end?.reason == null ? 0 : constant(reasons, end.reason, 'reason'),
        end?.stoppedBy == null ? 0 : constant(reasons, end.stoppedBy, 'stoppedBy'), out));
      return {
        total: Number(out.total), done: Number(out.done), succeeded: Number(out.succeeded), failed: Number(out.failed),
        notStarted: Number(out.not_started), retries: Number(out.retries),
      };
    }
    stop(reason) { check(f.recuo_batch_queue_stop(this.ptr, constant(reasons, reason, 'reason'))); }
    get stopped() { return reasonName(f.recuo_batch_queue_stopped(this.ptr)); }
  }

  return { StatsRecorder, AttemptPool, Operation, BatchQueue, mergeStats };
}
