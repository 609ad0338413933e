// The loops: `retry`, guide A's `comRetry` and `buscarComRetry` drive the core's operation
// machine with the host's effects — calling the operation in its async context (`Attempt`,
// `currentAttempt()`), the gate, the timers, the signal — and surface its end as the core
// says. A first attempt that needs no machine is made before one exists.
// Guide A is “Como repetir requisições com backoff exponencial (retry)”
// (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff); guide B is
// “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.

import { AsyncLocalStorage } from '#context';

import { GiveUpError, HOST_PENDING } from './errors.js';
import { LONGEST_TIMER_MS } from './limits.js';

/** The loops over one loaded library (`ctx`: what every module before this one made). */
export function installLoops(ctx) {
  const { native, integer, isResponse, Policy, theAdaptersPolicy, classify, seenOfError, requestPlan, now,
    wait, abortReason, Gate, AttemptPool, Operation, telemetry } = ctx;
  /** The records a machine keeps: every one when a caller's `onRecord` or the telemetry takes them. */
  const recordsFor = (onRecord) => (onRecord || telemetry.sink ? 'debug' : undefined);

  const context = new AsyncLocalStorage();

  const FETCH_CODES = {
    ECONNREFUSED: 'connect', ENOTFOUND: 'connect', EAI_AGAIN: 'connect', EHOSTUNREACH: 'connect', ENETUNREACH: 'connect',
    EADDRNOTAVAIL: 'connect', UND_ERR_CONNECT_TIMEOUT: 'connect',
    ECONNRESET: 'reset', EPIPE: 'reset', UND_ERR_SOCKET: 'reset', UND_ERR_CLOSED: 'reset',
    ETIMEDOUT: 'timeout', UND_ERR_HEADERS_TIMEOUT: 'timeout', UND_ERR_BODY_TIMEOUT: 'timeout',
    CERT_HAS_EXPIRED: 'tls', DEPTH_ZERO_SELF_SIGNED_CERT: 'tls', SELF_SIGNED_CERT_IN_CHAIN: 'tls',
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls', UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'tls', ERR_TLS_CERT_ALTNAME_INVALID: 'tls',
    CERT_NOT_YET_VALID: 'tls', CERT_UNTRUSTED: 'tls',
    // Bun's codes, on the error itself.
    ConnectionRefused: 'connect', FailedToOpenSocket: 'connect', ConnectionClosed: 'reset',
  };
  // Deno's fetch errors carry no code: what its messages say.
  const FETCH_MESSAGES = [
    [/error reading a body from connection|connection closed before message completed|connection reset/i, 'reset'],
    [/tcp connect error|connection refused|dns error|failed to lookup address/i, 'connect'],
    [/invalid peer certificate|certificate|tls handshake/i, 'tls'],
  ];

  const BROWSER_FETCH_FAILED = /^(fetch failed|error sending request|Failed to fetch|NetworkError when attempting to fetch resource|Load failed)/;

  /** The transport kind of an error `fetch` threw (`connect`, `tls`, `timeout`, `reset`, `other`), or null for any other error. */
  function transportKind(error) {
    if (error == null || typeof error !== 'object') return null;
    if (error.name === 'TimeoutError') return 'timeout';
    // workerd's word for a connection that dropped mid-answer (a plain Error, not a TypeError).
    if (error.message === 'Network connection lost.') return 'reset';
    if (!(error instanceof TypeError)) return null;
    for (let e = error, depth = 0; e != null && depth < 5; e = e.cause, depth++) {
      const kind = Object.hasOwn(FETCH_CODES, e.code) ? FETCH_CODES[e.code] : undefined;
      if (kind) return kind;
      if (typeof e.code === 'string' && e.code.startsWith('ERR_TLS')) return 'tls';
    }
    // Deno's words may be on the error or on its cause ("fetch failed" over "tcp connect error").
    for (let e = error, depth = 0; e != null && depth < 5; e = e.cause, depth++) {
      const message = String(e.message);
      for (const [pattern, kind] of FETCH_MESSAGES) if (pattern.test(message)) return kind;
    }
    // Node's and the browsers' words for a fetch that failed with no cause given (Chromium, Firefox,
    // Safari): whether the request was sent is unknown.
    return error.cause != null || BROWSER_FETCH_FAILED.test(String(error.message)) ? 'other' : null;
  }

  async function release(response) {
    try {
      if (response?.body && !response.bodyUsed) await response.body.cancel();
    } catch {
      // a body already gone is released
    }
  }

  /** Marks the error of an attempt the deadline cut (the host's own timer): the core's `late`. */
  const LATE = Symbol('recuo.late');
  const NOTHING = null;

  /**
   * Drives one operation machine to its end with the host's effects: calls, timers, the
   * gate and the signal. How the end surfaces — the value or the last response, the last
   * error rethrown, or a GiveUpError with the core's message — is the core's answer
   * (`op.ending(style, last)`); `last` is only what this host saw of the last attempt.
   */
  async function drive(op, { call, judge, signal, gate, sleep, onRetry, onRecord, onGiveUp, http, style = 'client', buffered = false, temporario = false, pool, first }) {
    let value;
    let response = null;
    let error;
    let last = NOTHING; // what the last attempt came to, as the core names it
    let failure; // what the last failed attempt came to: its Response or its error
    let judged = null; // a response's verdict, the machine's own, to tell at its classify step
    const sink = telemetry.sink;
    const flush = () => {
      if (!onRecord && !sink) return;
      for (let r = op.pollRecord(); r; r = op.pollRecord()) {
        if (sink) sink(op.recordTelemetry());
        if (onRecord) onRecord(r.level, r.line);
      }
    };
    /** Tells the machine what an attempt came to at `atMs`: a value, a Response, or what it threw (`failed`). */
    const settle = (result, failed, atMs) => {
      if (signal?.aborted) op.cancel();
      failure = result;
      if (failed) {
        response = null;
        error = result;
        const kind = http && !signal?.aborted ? transportKind(result) : null;
        // A thrown error is the operation's own: rethrown unchanged at the end, as a
        // transport failure is (the core's `error` ending).
        last = result?.[LATE] ? { late: true } : { transport: kind ?? 'other' };
        // Only a record shows what the error carried: without one it is not even read.
        return kind ? op.responded(atMs, kind) : op.failed(atMs, null, onRecord ? seenOfError(result) : null);
      }
      if (http && isResponse(result)) {
        response = result;
        last = { status: result.status };
        if (gate?.budget?._channel) {
          // A budget on Redis through the caller's client answers a retry only when asked:
          // the response is told as a failure and judged in the classify step, which asks it.
          const verdict = op.responseVerdict(atMs, result.status, result.headers);
          if (verdict.verdict !== 'success') {
            const step = op.failed(atMs, { status: result.status, headers: result.headers });
            if (step.kind === 'classify') judged = { verdict, atMs };
            return step;
          }
        }
        return op.responded(atMs, result.status, result.headers);
      }
      value = result;
      return op.succeeded(atMs);
    };
    if (signal?.aborted) op.cancel();
    let step;
    if (first) {
      // A first attempt made before the machine (comRetry's, retry's): the machine starts as
      // if that attempt began when it began, then hears what it came to.
      step = op.startAfterFirst(first.startedMs, first.unixMs);
      if (step.kind === 'call') step = settle(first.result, first.failed, first.failedMs);
      if (step.kind !== 'done' && step.kind !== 'gave_up' && response) {
        await release(response); // before the wait, and before the next attempt
        response = null;
      }
    } else {
      step = op.start(now(), Date.now());
    }
    const channels = hostChannels(gate);
    for (;;) {
      flush();
      if (channels) await flushChannels(channels);
      switch (step.kind) {
        case 'enter':
          step = await passGate(op, gate, signal, step.untilMs);
          break;
        case 'call': {
          const attempt = new Attempt(step.attempt, step.timeoutMs, signal, op._header, op);
          let failed = false;
          let result;
          try {
            result = await context.run({ pool, attempt }, () => call(attempt));
          } catch (e) {
            failed = true;
            result = e;
          } finally {
            attempt._end();
          }
          step = settle(result, failed, now());
          if (step.kind !== 'done' && step.kind !== 'gave_up' && response) {
            await release(response); // before the wait, and before the next attempt
            response = null;
          }
          break;
        }
        case 'classify': {
          const told = judged;
          judged = null;
          const verdict = told ? told.verdict : await judge(error);
          const at = told ? told.atMs : now();
          // A budget kept on Redis through the caller's client is asked for the retry the
          // decision would take, before the machine decides (one instant for both) — in one
          // turn, so that no other operation's question takes the answer meanwhile.
          step = gate?.budget?._channel
            ? await inTurn(gate, async () => {
              if (op.wouldDrawOnBudget(at, verdict)) await gate.budget._askWithdrawal();
              return op.judged(at, verdict);
            })
            : op.judged(at, verdict);
          break;
        }
        case 'sleep':
          if (step.delayMs > 0) {
            if (onRetry) await onRetry(step.attempt, failure, step.delayMs);
            const slept = sleep ? (await sleep(step.delayMs, signal), !signal?.aborted) : await wait(step.delayMs, signal);
            if (!slept) op.cancel();
          }
          if (signal?.aborted) op.cancel();
          step = op.slept(now());
          break;
        case 'done':
          flush();
          return response ?? value;
        default: {
          flush();
          const report = op.report(); // its retryAt: the machine's, on the wall clock
          const reason = step.reason;
          if (onGiveUp) await onGiveUp(report);
          // The caller's own AbortSignal: rejected with its reason, as fetch does.
          if (reason === 'cancelled' && signal?.aborted) {
            if (response) await release(response);
            throw abortReason(signal);
          }
          const ending = op.ending(style, last);
          if (ending === 'response') return response;
          if (ending === 'error') throw error;
          if (response && !buffered) await release(response);
          throw new GiveUpError(op.giveUpMessage(now(), last), {
            reason, retryAt: report.retryAt, retryAfterMs: report.retryAfterMs, response, report, temporario,
            cause: last?.late || last?.transport ? error : undefined,
          });
        }
      }
    }
  }

  /**
   * Passes the gate of an `enter` step: the machine looks (a place in flight, then a start
   * slot, within the deadline) and says how long to wait before it looks again; the wait is
   * a timer, ended at once by `signal`. A gate that may ask a Redis server is looked at from
   * a worker thread. The place is the machine's, held until the attempt ends.
   */
  async function passGate(op, gate, signal, untilMs = null) {
    const channels = hostChannels(gate);
    for (;;) {
      if (signal?.aborted) op.cancel();
      const polled = channels ? await inTurn(gate, () => pollHosted(op, channels, untilMs)) : op.pollGate(now());
      if (polled.kind !== 'wait') return polled;
      await wait(polled.delayMs, signal);
    }
  }

  /**
   * One look at a gate whose limits are on Redis through the caller's client: a limit that
   * waits on a call has it run, and is looked at again until it answers.
   */
  async function pollHosted(op, channels, untilMs) {
    for (;;) {
      let polled;
      try {
        polled = op.pollGate(now());
      } catch (e) {
        if (e?.code !== HOST_PENDING) throw e;
        for (const ch of channels) await ch.serve(untilMs);
        continue;
      }
      await flushChannels(channels);
      return polled;
    }
  }

  /**
   * Runs `look` when no other operation is looking at `gate`'s hosted limits: a channel holds
   * one pending call at a time, so the operations of one process (a batch's workers, loops
   * side by side) take turns from the call to its answer.
   */
  function inTurn(gate, look) {
    const turn = (gate._turn ?? Promise.resolve()).then(look);
    gate._turn = turn.catch(() => {});
    return turn;
  }

  /** The channels of a gate's limits kept on Redis through the caller's client (null: none). */
  function hostChannels(gate) {
    if (gate == null) return null;
    if (gate._channels === undefined) {
      const list = [gate.regulator, gate.limit, gate.budget].map((p) => p?._channel).filter(Boolean);
      gate._channels = list.length ? list : null;
    }
    return gate._channels;
  }

  /** Runs the calls the channels queued (places given back, requests counted, 429s told). */
  const flushChannels = (channels) => Promise.all(channels.map((ch) => ch.flush()));

  // Guide A's defaults (5 attempts, 200 ms, 5 s) and the key's header, as the core declares
  // them: read once from its preset, never written here.
  const GUIDE_A = (() => {
    const p = new Policy();
    try {
      return Object.freeze({ tentativas: p.maxAttempts, baseMs: p.baseMs, maxMs: p.capMs, header: p.idempotencyHeader });
    } finally {
      p.close();
    }
  })();
  const COM_RETRY_ATTEMPTS = GUIDE_A.tentativas;
  // comRetry's policy with guide A's defaults, made once (an Operation copies its policy):
  // other figures make one for the call, which the caller closes.
  let guideAPolicy = null;
  // A library that restarts after a trap drops it too: made again when next asked for.
  native.onRestart?.(() => {
    guideAPolicy = null;
  });
  function comRetryPolicy(tentativas, baseMs, maxMs) {
    if (tentativas === GUIDE_A.tentativas && baseMs === GUIDE_A.baseMs && maxMs === GUIDE_A.maxMs) {
      return (guideAPolicy ??= new Policy({ maxAttempts: tentativas, baseMs, capMs: maxMs }));
    }
    return new Policy({ maxAttempts: tentativas, baseMs, capMs: maxMs });
  }
  // Whether a first success needs a machine with no gate, no stats and no records (comRetry's
  // with guide A's defaults, retry's with no gate and no records): the core's answer, asked
  // once. When it does not, the first attempt is made before any machine.
  const FIRST_ALONE = !Operation.successNeedsMachine({});

  /**
   * An attempt, as the operation and `currentAttempt()` see it — one shape on every path: its
   * key is asked of `keyed` (the machine, or comRetry's fast-path frame, which makes the
   * machine only when asked for) when read.
   */
  class Attempt {
    #keyed;
    #outer;
    #signal;
    #timer;
    #started;
    #ended = false;
    constructor(number, timeoutMs, signal, idempotencyHeader, keyed, startedPerf = undefined) {
      this.number = number;
      this.timeoutMs = timeoutMs;
      this.#outer = signal;
      this.idempotencyHeader = idempotencyHeader;
      this.#keyed = keyed;
      this.#started = timeoutMs == null ? 0 : (startedPerf ?? performance.now());
    }
    /**
     * Aborts when the caller's signal does, or when the time the deadline leaves this attempt
     * runs out (then with a `TimeoutError` the loop knows as the deadline's): hand it to
     * `fetch`, and a server that trickles cannot outlive the deadline. Made when first read.
     */
    get signal() {
      if (this.#signal === undefined) {
        const outer = this.#outer;
        if (this.timeoutMs == null || this.#ended) {
          // No deadline, or read after the attempt ended: the caller's own signal.
          this.#signal = outer;
        } else {
          const controller = new AbortController();
          const cut = Object.assign(new Error(`no answer within ${this.timeoutMs} ms, the time the deadline left`), { name: 'TimeoutError', [LATE]: true });
          // Timed from the attempt's start, in steps a timer can hold (2^31 − 1 ms at most).
          const until = this.#started + this.timeoutMs;
          const arm = () => {
            const left = until - performance.now();
            if (left <= 0) controller.abort(cut);
            else this.#timer = setTimeout(arm, Math.min(left, LONGEST_TIMER_MS));
          };
          arm();
          // The caller's signal still reaches the body of a returned response after the attempt.
          this.#signal = outer ? AbortSignal.any([outer, controller.signal]) : controller.signal;
        }
      }
      return this.#signal;
    }
    /** The attempt is over: its deadline timer goes (a later read of `signal` makes none). */
    _end() {
      this.#ended = true;
      if (this.#timer !== undefined) clearTimeout(this.#timer);
    }
    get idempotencyKey() { return this.#keyed.idempotencyKey; }
    /** The headers recuo adds to this attempt, as the request's plan says: its idempotency key, or none. */
    get headers() { return this.#keyed.plan?.key === 'recuo' ? { [this.idempotencyHeader]: this.idempotencyKey } : {}; }
  }

  /**
   * The context of a first attempt made before its machine (the fast paths of comRetry and
   * retry): the pool of the loops nested in it (the enclosing loop's, or this loop's own, made
   * only when one asks: that attempt already drawn from it), and the attempt
   * `currentAttempt()` answers, whose key makes the machine (`make(pool, nested)`) only when
   * asked for. `plan` is the request's plan, as the machine would have it (null: none).
   */
  class FirstFrame {
    constructor(outerPool, maxAttempts, { header = GUIDE_A.header, timeoutMs = null, signal, plan = null, make } = {}) {
      this._outer = outerPool;
      this._max = maxAttempts;
      this._make = make;
      this._chosen = null;
      this._attempt = null;
      this._header = header;
      this._timeoutMs = timeoutMs;
      this._signal = signal;
      this.plan = plan;
      this.op = null;
      this.ended = false;
      // When the attempt began, on the runtime's clock: the machine's clock is read only if it fails.
      this.startedPerf = performance.now();
    }
    /** The first attempt, made when first read (comRetry's task may never ask for it). */
    get attempt() {
      return (this._attempt ??= new Attempt(0, this._timeoutMs, this._signal, this._header, this, this.startedPerf));
    }
    /**
     * A failed first attempt, for the machine that takes it over: when it began and ended on
     * the machine's clock, when it began on the wall clock, and what it came to.
     */
    failed(result, failed) {
      const failedMs = now();
      const tookMs = performance.now() - this.startedPerf;
      // Rounded so that the attempt begins no later than it did: the deadline never grows.
      const startedMs = Math.max(0, failedMs - Math.ceil(tookMs));
      return { startedMs, unixMs: Date.now() - (failedMs - startedMs), failedMs, result, failed, frame: this };
    }
    /** The core's pool for this loop, its first attempt counted as drawn: asked for only when needed. */
    chosen() { return (this._chosen ??= AttemptPool.choose(this._outer, this._max, { afterFirst: true })); }
    /** The context's pool for the loops nested in this attempt. */
    get pool() {
      const chosen = this.chosen();
      return chosen.owned ? chosen.pool : this._outer;
    }
    /** The loop succeeded: its machine (if a key made one) goes, as a loop's does. */
    end() {
      this.ended = true;
      this.op?.close();
    }
    /** The loop's machine, made now, this first attempt already drawn. */
    machine() {
      if (this.ended && this.op === null) throw new Error('recuo: this object was closed');
      if (this.op === null) {
        const { pool, nested } = this.chosen();
        this.op = this._make(pool, nested);
      }
      return this.op;
    }
    /** The key of the loop's machine (made now if need be): what its first attempt answers. */
    get idempotencyKey() { return this.machine().idempotencyKey; }
  }

  /**
   * The pool of a loop starting in this async context, as the core's rule chooses it (nested
   * loops share one limit), and `context`: the pool its attempts keep for the loops nested
   * in them — its own when it owns one, else the enclosing loop's.
   */
  function poolFor(maxAttempts, batchOperation = false) {
    const enclosing = context.getStore()?.pool ?? null;
    const { pool, nested, owned } = AttemptPool.choose(enclosing, maxAttempts, { batchOperation });
    return { pool, nested, context: owned ? pool : enclosing };
  }

  // What retry() reads of each policy, read once (a policy never changes; a closed one is
  // refused before this): otherwise three calls into the core and a new string every time.
  const policyFacts = new WeakMap();
  function factsOf(policy) {
    let facts = policyFacts.get(policy);
    if (facts === undefined) {
      facts = { header: policy.idempotencyHeader, maxAttempts: policy.maxAttempts, deadlineMs: policy.deadlineMs };
      policyFacts.set(policy, facts);
    }
    return facts;
  }

  function checkSignal(signal) {
    if (signal != null && (typeof signal !== 'object' || typeof signal.aborted !== 'boolean')) throw new TypeError('signal must be an AbortSignal');
  }

  /**
   * Runs `fn(attempt)` under a policy (default: the HTTP adapters'), driving the core's
   * operation machine: timers for the waits, the gate passed by every attempt, `signal`
   * cancelling a wait at once. A returned fetch `Response` is classified with the request's
   * method (a 503 is retried); a thrown error is judged by `classify` (default: a fetch
   * network failure by its kind, every other error retried). `request` is the request `fn`
   * sends: its method, its URL (for the records), whether it carries the caller's own key
   * (`ownKey`), whether recuo adds its own (`sendKeys`; `attempt.headers` holds it) and
   * whether its body can be sent again (`replayable`).
   */
  function retry(fn, options = {}) {
    let policy;
    try {
      policy = retryChecked(fn, options);
    } catch (e) {
      return Promise.reject(e); // whatever fails, fails as a rejection
    }
    const { gate, signal, onRecord } = options;
    if (gate == null && !onRecord && !telemetry.sink && !signal?.aborted && FIRST_ALONE) return retryFast(fn, options, policy);
    return retryMachine(fn, options, policy);
  }

  /** retry()'s arguments checked before any call — what the machine would refuse, on the fast path too: its policy. */
  function retryChecked(fn, options) {
    if (typeof fn !== 'function') throw new TypeError('retry needs a function');
    const { policy = theAdaptersPolicy(), gate, signal, request, seed, classify: judge, onRetry, onGiveUp, sleep } = options;
    if (!(policy instanceof Policy)) throw new TypeError('policy must be a recuo Policy');
    if (gate != null && !(gate instanceof Gate)) throw new TypeError('gate must be a recuo Gate');
    checkSignal(signal);
    void policy.ptr; // a closed policy is refused here, as the machine would refuse it
    if (seed !== undefined) integer(seed, 'seed');
    if (request != null && typeof request !== 'object') throw new TypeError('request must be an object');
    if (judge != null && typeof judge !== 'function') throw new TypeError('classify must be a function');
    if (onRetry != null && typeof onRetry !== 'function') throw new TypeError('onRetry must be a function');
    if (onGiveUp != null && typeof onGiveUp !== 'function') throw new TypeError('onGiveUp must be a function');
    if (sleep != null && typeof sleep !== 'function') throw new TypeError('sleep must be a function');
    return policy;
  }

  /** The machine of a retry() call, on `pool` (`nested`: inside an attempt that drew from it). */
  function retryOperation(policy, { seed, gate, onRecord, request }, pool, nested) {
    const op = new Operation(policy, {
      seed, gate, pool, nested, request: request ?? { method: 'GET', url: '' }, records: recordsFor(onRecord),
      // A task with no request has nothing to plan: no key is sent, and it is judged as a GET.
      plan: request == null ? undefined : { callersKey: Boolean(request.ownKey), sendKeys: request.sendKeys },
      replayable: request?.replayable,
    });
    op._header = factsOf(policy).header;
    return op;
  }

  /**
   * retry() with no gate and no records: the first attempt pays only for itself (its context,
   * its deadline's signal if read, one clock read); the machine starts only when it does not
   * succeed — a thrown error, or a Response the core does not call a success — from that
   * attempt, as comRetry's fast path.
   */
  async function retryFast(fn, options, policy) {
    const { signal, request } = options;
    const facts = factsOf(policy);
    const frame = new FirstFrame(context.getStore()?.pool ?? null, facts.maxAttempts, {
      header: facts.header,
      timeoutMs: facts.deadlineMs,
      signal,
      plan: request == null ? null : requestPlan(request.method ?? 'GET', { callersKey: Boolean(request.ownKey), sendKeys: request.sendKeys, policy }),
      make: (pool, nested) => retryOperation(policy, options, pool, nested),
    });
    let result;
    let failed = false;
    try {
      result = await context.run(frame, fn, frame.attempt);
    } catch (e) {
      failed = true;
      result = e;
    } finally {
      frame.attempt._end();
    }
    if (!failed && !signal?.aborted && (!isResponse(result) || classify(result.status, { method: request?.method ?? 'GET', policy }).verdict === 'success')) {
      frame.end();
      return result;
    }
    return retryMachine(fn, options, policy, frame.failed(result, failed));
  }

  /** retry() over its operation machine (after a first attempt made before it, with `first`). */
  async function retryMachine(fn, options, policy, first = undefined) {
    const { gate, signal, classify: judgeError, onRetry, onGiveUp, onRecord, sleep } = options;
    let pool;
    let op;
    if (first) {
      pool = first.frame.pool;
      op = first.frame.machine();
    } else {
      const from = poolFor(factsOf(policy).maxAttempts);
      pool = from.context;
      op = retryOperation(policy, options, from.pool, from.nested);
    }
    try {
      return await drive(op, {
        call: fn,
        judge: async (e) => (judgeError ? judgeError(e) : true),
        signal, gate, sleep, onRetry, onRecord, onGiveUp, http: true, style: 'client', pool, first,
      });
    } finally {
      op.close();
    }
  }

  /**
   * Guide A's `comRetry`: calls `tarefa()` up to `tentativas` times, waiting a full-jitter
   * delay from [0, min(maxMs, baseMs · 2^i)] between attempts while `repetirSe(erro)` answers
   * true (or a retry verdict: its server wait is honoured; a give-up verdict stops), and
   * answers its value or rethrows its last error — the same object.
   */
  function comRetry(tarefa, options) {
    // Both paths are async functions: whatever fails, fails as a rejection.
    if (options === undefined && typeof tarefa === 'function' && FIRST_ALONE && !telemetry.sink) return comRetryFast(tarefa);
    return comRetryMachine(tarefa, options ?? {});
  }

  /**
   * `comRetry(tarefa)` with guide A's defaults: the first attempt pays only for itself (one
   * context for the loops nested in it and `currentAttempt()`, one clock read); the machine
   * starts only when it fails, from that attempt.
   */
  async function comRetryFast(tarefa) {
    const frame = new FirstFrame(context.getStore()?.pool ?? null, COM_RETRY_ATTEMPTS, { make: comRetryOperation });
    try {
      const value = await context.run(frame, tarefa);
      frame.end();
      return value;
    } catch (error) {
      return comRetryMachine(tarefa, {}, frame.failed(error, true));
    }
  }

  /** comRetry's machine with guide A's defaults, on the pool the core chose for it. */
  const comRetryOperation = (pool, nested) =>
    new Operation(comRetryPolicy(COM_RETRY_ATTEMPTS, GUIDE_A.baseMs, GUIDE_A.maxMs), { pool, nested, classifyLastFailure: false, records: recordsFor(null) });

  async function comRetryMachine(tarefa, { tentativas = GUIDE_A.tentativas, baseMs = GUIDE_A.baseMs, maxMs = GUIDE_A.maxMs, repetirSe, seed, sleep, signal } = {}, first = undefined) {
    if (typeof tarefa !== 'function') throw new TypeError('comRetry needs a function');
    if (repetirSe != null && typeof repetirSe !== 'function') throw new TypeError('repetirSe must be a function');
    checkSignal(signal);
    const policy = first ? null : comRetryPolicy(tentativas, baseMs, maxMs);
    let pool;
    let op;
    try {
      // After a first attempt: its machine, on the pool the core chose for it (that attempt drawn).
      if (first) {
        pool = first.frame.pool;
        op = first.frame.machine();
      } else {
        const from = poolFor(policy.maxAttempts);
        pool = from.context;
        op = new Operation(policy, { seed, pool: from.pool, nested: from.nested, classifyLastFailure: false, records: recordsFor(null) });
      }
    } finally {
      if (policy !== null && policy !== guideAPolicy) policy.close();
    }
    op._header = GUIDE_A.header;
    try {
      return await drive(op, {
        call: () => tarefa(),
        judge: async (e) => (repetirSe ? repetirSe(e) : true),
        signal, sleep, http: false, pool, first,
      });
    } finally {
      op.close();
    }
  }

  // Statuses whose response has no body (fetch's Response refuses one).
  const NULL_BODY = new Set([101, 103, 204, 205, 304]);

  /** A response with its body read into memory (so that a body cut short fails the attempt, not the caller's read later). */
  function bufferedResponse(response, body) {
    const copy = new Response(NULL_BODY.has(response.status) ? null : body, {
      status: response.status, statusText: response.statusText, headers: response.headers,
    });
    for (const name of ['url', 'redirected', 'type']) Object.defineProperty(copy, name, { value: response[name] });
    return copy;
  }

  /** A body `fetch` reads once: a stream or an async iterable (a string, bytes, a Blob, a FormData can be sent again). */
  const isStream = (body) =>
    body != null && typeof body === 'object' && (typeof body.getReader === 'function' || typeof body[Symbol.asyncIterator] === 'function');

  /**
   * Guide A's `buscarComRetry(url, opcoes)` over the global `fetch`: 429 and 5xx temporary
   * (with the method), a network failure retried by its kind, other 4xx returned at once,
   * `Retry-After` honoured (never shortened); each attempt reads the whole body, so a body cut
   * short is a failed attempt; `prazoMs` (default 30 s) bounds the whole fetch. After the
   * last attempt on a 429 or 5xx — or a wait that does not fit the deadline — it throws a
   * GiveUpError with `temporario: true`, `status`, `response`, `reason` and `report`.
   */
  async function buscarComRetry(url, opcoes = {}) {
    const {
      tentativas = GUIDE_A.tentativas, baseMs = GUIDE_A.baseMs, maxMs = GUIDE_A.maxMs, prazoMs = theAdaptersPolicy().deadlineMs, timeoutMs = 10000, gate, seed, sleep, signal,
      onRecord, serverHonoursKeys, sendKeys, fetch: fetchFn = globalThis.fetch, ...init
    } = opcoes;
    if (typeof fetchFn !== 'function') throw new TypeError('buscarComRetry needs a global fetch (Node ≥ 20)');
    checkSignal(signal);
    const method = String(init.method ?? 'GET').toUpperCase();
    const policy = new Policy({
      maxAttempts: tentativas, baseMs, capMs: maxMs, deadlineMs: prazoMs, useDateHeader: true, serverHonoursKeys,
    });
    const header = policy.idempotencyHeader;
    const headers = new Headers(init.headers ?? {});
    const { pool, nested, context: inner } = poolFor(policy.maxAttempts);
    const op = new Operation(policy, {
      seed, gate, pool, nested, request: { method, url: String(url) }, records: recordsFor(onRecord),
      plan: { callersKey: headers.has(header), sendKeys }, replayable: !isStream(init.body),
    });
    op._header = header;
    if (op.plan.key === 'recuo') headers.set(header, op.idempotencyKey);
    try {
      return await drive(op, {
        call: async (attempt) => {
          const late = timeoutMs == null || (attempt.timeoutMs != null && attempt.timeoutMs <= timeoutMs);
          const limit = late ? attempt.timeoutMs : timeoutMs;
          const controller = new AbortController();
          const onAbort = () => controller.abort(signal.reason);
          signal?.addEventListener('abort', onAbort, { once: true });
          const timer = limit == null ? null : setTimeout(() => {
            const cut = Object.assign(new Error(`no answer within ${limit} ms`), { name: 'TimeoutError' });
            if (late) cut[LATE] = true;
            controller.abort(cut);
          }, limit);
          try {
            const response = await fetchFn(url, { ...init, method, headers, signal: controller.signal });
            return bufferedResponse(response, await response.arrayBuffer());
          } catch (e) {
            if (controller.signal.aborted && controller.signal.reason?.name === 'TimeoutError') throw controller.signal.reason;
            throw e;
          } finally {
            if (timer) clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
          }
        },
        judge: async () => true,
        signal, gate, sleep, onRecord, http: true, style: 'guide', buffered: true, temporario: true, pool: inner,
      });
    } finally {
      op.close();
      policy.close();
    }
  }

  /** The attempt being made in this async context (inside `retry`, `comRetry`, `buscarComRetry`), or null. */
  function currentAttempt() {
    return context.getStore()?.attempt ?? null;
  }

  return { transportKind, retry, comRetry, buscarComRetry, currentAttempt, drive, poolFor, checkSignal };
}
