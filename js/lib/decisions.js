// The core's decisions on one outcome: the wait a `Retry-After` asks for, guide B's delay, the
// backoff window, and the verdict (`classify`) — with verdicts, and what an attempt received,
// as the C structs the operation machine takes.
// Guide A is “Como repetir requisições com backoff exponencial (retry)”
// (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff); guide B is
// “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.

import { OUTCOME } from './convert.js';

const VERDICT = Symbol.for('recuo.verdict');
export const SEEN = Symbol('recuo.seen');

/** The decisions over one loaded library (`ctx`: lib/convert.js's helpers, lib/policy.js's policies). */
export function installDecisions(ctx) {
  const { f, check, bytes, integer, ms, constant, kinds, verdicts, causes, waits, outcomeOf, cHeaders,
    headerPairs, statusAndHeaders, theDefaultPolicy } = ctx;

  /** A `Retry-After` value: `{ kind, waitMs }` — waitMs `Infinity` for unbounded, `null` for invalid. */
  function parseRetryAfter(value, nowMs = Date.now()) {
    const b = value == null ? new Uint8Array(0) : bytes(value);
    const out = {};
    check(f.recuo_parse_retry_after(b, b.length, Math.trunc(nowMs), out));
    const kind = kinds.byCode.get(out.kind);
    return { kind, waitMs: kind === 'unbounded' ? Infinity : kind === 'invalid' ? null : Number(out.wait_ms) };
  }

  /** Guide B's `retryDelayMs`: the server's wait, or a full-jitter draw from min(8000, 1000·2^attempt); `Infinity` for an unbounded wait. */
  function retryDelayMs(retryAfter, attempt, nowMs = Date.now(), { seed } = {}) {
    // The header's bytes with their length: a NUL inside is part of the value (invalid).
    const value = retryAfter == null ? null : bytes(String(retryAfter));
    integer(attempt, 'attempt', 0xffffffff);
    const seeded = seed === undefined ? null : [integer(seed, 'seed', Number.MAX_SAFE_INTEGER)];
    return f.recuo_retry_delay_ms_bytes(value, value === null ? 0 : value.length, attempt, Math.trunc(nowMs), seeded);
  }

  /** The backoff window: min(cap, base · 2^n), saturating. */
  function backoffWindowMs(baseMs, capMs, n) {
    const out = [0];
    check(f.recuo_backoff_window_ms(integer(baseMs, 'baseMs'), integer(capMs, 'capMs'), integer(n, 'n', 0xffffffff), out));
    return Number(out[0]);
  }

  function verdictFrom(v, seen) {
    const verdict = {
      verdict: verdicts.byCode.get(v.verdict),
      reason: causes.byCode.get(v.cause),
      waitMs: v.wait === waits.byName.get('ms') ? Number(v.wait_ms) : null,
      waitUnbounded: v.wait === waits.byName.get('unbounded'),
    };
    Object.defineProperty(verdict, VERDICT, { value: true });
    // What the classifier saw, for the record of the attempt it judges (never enumerated).
    if (seen) Object.defineProperty(verdict, SEEN, { value: seen });
    return Object.freeze(verdict);
  }

  /** What an attempt received (a `Response`, `{ status, headers }`, `{ transport }`, or null) as the C arguments. */
  function cSeen(seen) {
    if (seen == null) return { outcome: null, headers: null, count: 0 };
    if (typeof seen !== 'object') throw new TypeError('what an attempt received is a Response, { status, headers }, { transport } or null');
    const outcome = outcomeOf(seen.transport != null ? seen.transport : seen.status);
    const headers = cHeaders(seen.headers);
    return { outcome, headers, count: headers.length };
  }

  /**
   * What an error carried, for its attempt's record: a status of three digits (and the
   * headers) on the error itself or on its `response` (a `GiveUpError`, ky's and axios's
   * errors); null when it carries none. A record never fails because an error is odd.
   */
  function seenOfError(error) {
    try {
      for (let o = error, depth = 0; o != null && typeof o === 'object' && depth < 2; o = o.response, depth++) {
        const { status } = o;
        if (Number.isInteger(status) && status >= 100 && status <= 999) {
          const headers = o.headers;
          return { status, headers: headers != null && typeof headers === 'object' ? headerPairs(headers) : null };
        }
      }
    } catch {
      // an error whose fields cannot be read carried nothing
    }
    return null;
  }

  /** A verdict object (what `classify` answers, or one written by hand) as the C struct. */
  function cVerdict(v) {
    if (v == null || typeof v !== 'object') throw new TypeError('a verdict is an object { verdict, reason, waitMs }');
    const verdict = constant(verdicts, v.verdict, 'verdict');
    const cause = constant(causes, v.reason ?? (v.verdict === 'success' ? 'success' : v.verdict === 'retry' ? 'server_error' : 'permanent'), 'reason');
    if (v.waitUnbounded) return { verdict, cause, wait: waits.byName.get('unbounded'), wait_ms: 0 };
    if (v.waitMs != null) return { verdict, cause, wait: waits.byName.get('ms'), wait_ms: ms(v.waitMs, 'waitMs') };
    return { verdict, cause, wait: 0, wait_ms: 0 };
  }

  /** A predicate's answer — a boolean, or a verdict — as the C struct (true: retry with no server wait; false: give up). */
  function predicateVerdict(answer) {
    if (answer != null && typeof answer === 'object') return cVerdict(answer);
    return answer ? { verdict: verdicts.byName.get('retry'), cause: causes.byName.get('server_error'), wait: 0, wait_ms: 0 }
      : { verdict: verdicts.byName.get('give_up'), cause: causes.byName.get('permanent'), wait: 0, wait_ms: 0 };
  }

  /**
   * What an outcome is worth. `outcome` is a status, a fetch `Response`, a transport
   * kind ('connect', 'tls', 'timeout', 'reset', 'other') or 'success'.
   */
  function classify(outcome, { method = 'GET', headers, idempotencyKey = false, nowMs = Date.now(), policy } = {}) {
    const [o, h] = statusAndHeaders(outcome, headers);
    const m = bytes(method);
    const list = cHeaders(h);
    const out = {};
    const c = outcomeOf(o);
    check(f.recuo_classify((policy ?? theDefaultPolicy()).ptr, c, m, m.length, Boolean(idempotencyKey), list, list.length, Math.trunc(nowMs), out));
    const seen = c.kind === OUTCOME.status ? { status: o, headers: h } : c.kind === OUTCOME.transport ? { transport: o } : null;
    return verdictFrom(out, seen);
  }

  return { parseRetryAfter, retryDelayMs, backoffWindowMs, cSeen, seenOfError, cVerdict, predicateVerdict, verdictFrom,
    classify };
}
