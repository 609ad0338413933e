// recuo's JavaScript surface over librecuo's C ABI. Everything here is conversion: JS values to
// the C structs and back, errors to exceptions, and the host's own effects (calling the
// operation, timers for the waits, AbortSignal). Every decision — the delays, the verdicts,
// when to stop, the records — comes from the core's operation machine behind the C ABI.

import { AsyncLocalStorage } from '#context';

import { installRedis } from './redis.js';

const OK = 0;
const BUFFER_TOO_SMALL = 2;
const INVALID_VALUE = 109;
const WOULD_WAIT = 210;
const TIMED_OUT = 211;
const BUDGET_EXHAUSTED = 213;

// Enum constants, as recuo.h numbers them (their names come from the library itself).
const OUTCOME = { success: 1, status: 2, transport: 3 };
const LEVELS = { none: 0, debug: 1, info: 2, warning: 3 };
const STEP_GAVE_UP = 6;
/** The longest delay a timer takes (Node fires a longer one at once). */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** An error the core answered (a configuration it refused, a bad argument): `code` and `name` are stable. */
export class RecuoError extends Error {
  constructor(code, name, message) {
    super(message);
    this.name = 'RecuoError';
    this.code = code;
    this.status = name;
  }
}

/**
 * recuo gave up on an operation in a way its own result cannot say: a server wait past the
 * deadline (with the last response), an attempt the deadline cut, no attempt made — and, from
 * `buscarComRetry`, a last 429 or 5xx, as guide A's function throws (`temporario: true`).
 */
export class GiveUpError extends Error {
  constructor(message, { reason, retryAt = null, retryAfterMs = null, response = null, report = null, temporario = false, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'GiveUpError';
    this.reason = reason;
    this.retryAt = retryAt;
    this.retryAfterMs = retryAfterMs;
    this.response = response;
    this.status = response === null ? null : response.status;
    this.report = report;
    this.temporario = temporario;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
/** UTF-8 bytes as text. */
export const utf8 = (b) => decoder.decode(b);

const VERDICT = Symbol.for('recuo.verdict');
const SEEN = Symbol('recuo.seen');

/** Builds the whole API over one loaded library (`native`, from lib/native.js). */
export function recuoApi(native) {
  const f = native.fn;
  const koffi = native.koffi;

  // ---- conversion helpers -------------------------------------------------------------

  // `unknown` names a number that is no constant — except recuo_origin's own `unknown`.
  const names = (nameOf, unknownCode = -1) => {
    const byName = new Map();
    const byCode = new Map();
    for (let code = 0; code < 64; code++) {
      const name = nameOf(code);
      if (name && (name !== 'unknown' || code === unknownCode)) {
        byName.set(name, code);
        byCode.set(code, name);
      }
    }
    return { byName, byCode };
  };
  const causes = names(f.recuo_cause_name);
  const verdicts = names(f.recuo_verdict_kind_name);
  const waits = names(f.recuo_wait_kind_name);
  const transports = names(f.recuo_transport_name);
  const reasons = names(f.recuo_give_up_reason_name);
  const steps = names(f.recuo_step_kind_name);
  const decisions = names(f.recuo_decision_kind_name);
  const levels = names(f.recuo_level_name);
  const jitters = names(f.recuo_jitter_name);
  const kinds = names(f.recuo_retry_after_kind_name);
  const nextKinds = names(f.recuo_batch_next_kind_name);
  const batchKinds = names(f.recuo_batch_result_kind_name);
  const origins = names(f.recuo_origin_name, 4);
  const confidences = names(f.recuo_confidence_name);
  const keysToSend = names(f.recuo_key_to_send_name);
  const styles = names(f.recuo_style_name);
  const endings = names(f.recuo_ending_name);
  const lastKinds = names(f.recuo_last_kind_name);
  const RULES = { never: 1, if_idempotent: 2, always: 3 };

  const constant = (table, name, what) => {
    const code = table.byName.get(name);
    if (code === undefined) throw new TypeError(`${what} must be one of ${[...table.byName.keys()].join(', ')}; got ${String(name)}`);
    return code;
  };
  const reasonName = (code) => (code === 0 ? null : reasons.byCode.get(code) ?? null);

  function statusMessage(code) {
    const buf = new Uint8Array(512);
    const written = [0];
    f.recuo_status_message(code, buf, buf.length, written);
    return utf8(buf.subarray(0, Number(written[0])));
  }

  function check(code, detail) {
    if (code !== OK) {
      const name = f.recuo_status_name(code);
      throw new RecuoError(code, name, `recuo: ${name}: ${detail || statusMessage(code)}`);
    }
  }

  const bytes = (s) => (s instanceof Uint8Array ? s : encoder.encode(String(s)));

  /** Text the library writes into a buffer of ours, grown until it fits. */
  function text(call, cap = 256) {
    for (;;) {
      const buf = new Uint8Array(cap);
      const written = [0];
      const rc = call(buf, cap, written);
      if (rc === BUFFER_TOO_SMALL) {
        cap *= 4;
        continue;
      }
      check(rc);
      return utf8(buf.subarray(0, Number(written[0])));
    }
  }

  const integer = (v, what, max = Number.MAX_SAFE_INTEGER) => {
    if (typeof v === 'bigint') {
      if (v < 0n || v > BigInt(max)) throw new RangeError(`${what} must be between 0 and ${max}; got ${v}`);
      return v;
    }
    if (typeof v !== 'number') throw new TypeError(`${what} must be an integer, not ${String(v)}`);
    if (!Number.isFinite(v)) throw new RangeError(`${what} must be a finite integer, not ${v}`);
    if (!Number.isInteger(v)) throw new TypeError(`${what} must be an integer, not ${v}`);
    if (v < 0 || v > max) throw new RangeError(`${what} must be between 0 and ${max}; got ${v}`);
    return v;
  };
  const ms = (v, what) => {
    if (typeof v !== 'number') throw new TypeError(`${what} must be a number of milliseconds, not ${String(v)}`);
    if (Number.isNaN(v) || v < 0 || v > Number.MAX_SAFE_INTEGER) {
      throw new RangeError(`${what} must be between 0 and ${Number.MAX_SAFE_INTEGER} milliseconds; got ${v}`);
    }
    return Math.round(v);
  };
  /** A file's path as bytes: a non-empty string or bytes, never `String(null)`'s "null". */
  const pathBytes = (path) => {
    if (!(typeof path === 'string' || path instanceof Uint8Array) || path.length === 0) {
      throw new TypeError(`path must be a non-empty string, not ${String(path)}`);
    }
    return bytes(path);
  };
  /** `v` if it is one of recuo's `Class` (or null/undefined: none), else a TypeError naming `what`. */
  const oneOf = (v, Class, what) => {
    if (v != null && !(v instanceof Class)) throw new TypeError(`${what} must be a recuo ${Class.name}, not ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
    return v ?? null;
  };

  /** Any header collection (fetch `Headers`, a `Map`, `[name, value]` pairs, an object) as pairs. */
  function headerPairs(headers) {
    if (headers == null) return [];
    const pairs = [];
    if (typeof headers.forEach === 'function' && typeof headers.get === 'function' && !(headers instanceof Map)) {
      // fetch's Headers: one line per name (values combined), set-cookie kept apart.
      const cookies = typeof headers.getSetCookie === 'function' ? headers.getSetCookie() : [];
      headers.forEach((value, name) => {
        if (name.toLowerCase() !== 'set-cookie' || cookies.length === 0) pairs.push([name, value]);
      });
      for (const c of cookies) pairs.push(['set-cookie', c]);
      return pairs;
    }
    const entries = headers instanceof Map || Array.isArray(headers) ? headers : Object.entries(headers);
    for (const entry of entries) {
      const [name, value] = entry;
      if (Array.isArray(value)) for (const v of value) pairs.push([String(name), String(v)]);
      else pairs.push([String(name), String(value)]);
    }
    return pairs;
  }

  function cHeaders(headers) {
    const list = headerPairs(headers).map(([n, v]) => {
      const name = bytes(n);
      const value = bytes(v);
      return { name, name_len: name.length, value, value_len: value.length };
    });
    return list;
  }

  const isResponse = (v) =>
    v != null && typeof v === 'object' && typeof v.status === 'number' && v.headers != null &&
    typeof v.headers.get === 'function' && ('ok' in v || 'body' in v);

  function outcomeOf(outcome) {
    if (outcome === 'success' || outcome === true) return { kind: OUTCOME.success, status: 0, transport: 0 };
    if (typeof outcome === 'number') {
      if (!Number.isInteger(outcome) || outcome < 0 || outcome > 65535) throw new RangeError(`a status must be an integer 0–65535, not ${outcome}`);
      return { kind: OUTCOME.status, status: outcome, transport: 0 };
    }
    if (typeof outcome === 'string') {
      return { kind: OUTCOME.transport, status: 0, transport: constant(transports, outcome, 'a transport failure') };
    }
    throw new TypeError(`an outcome is a status, a transport kind (${[...transports.byName.keys()].join(', ')}) or 'success'`);
  }

  const registry = new FinalizationRegistry(({ free, ptr }) => free(ptr));
  /** Owns a native handle: freed by `close()` or when garbage-collected. */
  class Handle {
    constructor(ptr, free, what) {
      if (ptr == null) throw new RecuoError(900, 'panic', `recuo: could not make ${what}`);
      this._ptr = ptr;
      this._free = free;
      registry.register(this, { free, ptr }, this);
    }
    get ptr() {
      if (this._ptr == null) throw new Error('recuo: this object was closed');
      return this._ptr;
    }
    close() {
      if (this._ptr != null) {
        registry.unregister(this);
        this._free(this._ptr);
        this._ptr = null;
      }
    }
  }
  const made = (call, free, what) => {
    const out = [null];
    check(call(out));
    return new Handle(out[0], free, what);
  };

  const rate = (r, what = 'rate') => {
    if (typeof r === 'number') return r;
    if (typeof r === 'string') {
      const out = [0];
      const b = bytes(r);
      check(f.recuo_rate_parse(b, b.length, out), `${what} ${JSON.stringify(r)} is no rate (try "90/min")`);
      return out[0];
    }
    throw new TypeError(`${what} must be a number per second or a text such as "90/min"`);
  };

  // ---- decisions --------------------------------------------------------------------

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

  // ---- the policy: one plain value, read and written by the core -------------------

  /**
   * A policy's plain form (the snake_case object of tests/vectors/policies.json) as JSON for
   * recuo_policy_from_json. JSON has no NaN or Infinity (JSON.stringify would write null,
   * which means "none" for a deadline): such a number is refused as the core refuses a value
   * of the wrong type.
   */
  function plainJson(value) {
    const json = JSON.stringify(value, (key, v) => {
      if (typeof v === 'number' && !Number.isFinite(v)) {
        throw new RecuoError(INVALID_VALUE, 'invalid_value', `recuo: invalid_value: ${statusMessage(INVALID_VALUE)} (${key}: ${v} is no JSON number)`);
      }
      return v;
    });
    return json === undefined ? 'null' : json;
  }

  /** A new native policy from its plain form: the core reads it and checks it. */
  function policyFromValue(value) {
    const b = encoder.encode(plainJson(value));
    const out = [null];
    check(f.recuo_policy_from_json(b, b.length, out));
    return out[0];
  }

  /** The plain form of the native policy `ptr`, as the core writes it. */
  const plainValue = (ptr) => JSON.parse(text((b, n, w) => f.recuo_policy_to_json(ptr, b, n, w), 512));

  // The presets' plain forms, as the core writes them (read once).
  const presets = new Map();
  function presetValue(make) {
    if (!presets.has(make)) {
      const ptr = make();
      if (ptr == null) throw new RecuoError(900, 'panic', 'recuo: could not make a policy');
      try {
        presets.set(make, plainValue(ptr));
      } finally {
        f.recuo_policy_free(ptr);
      }
    }
    return presets.get(make);
  }

  const rules = { byName: new Map(Object.entries(RULES)) };

  /** The constructor's camelCase options as the plain form, over the preset they start from. */
  function optionsValue(o, preset) {
    const v = { ...preset };
    if (o.maxAttempts !== undefined) v.max_attempts = Number(integer(o.maxAttempts, 'maxAttempts', 0xffffffff));
    if (o.baseMs !== undefined) v.base_ms = ms(o.baseMs, 'baseMs');
    if (o.capMs !== undefined) v.cap_ms = ms(o.capMs, 'capMs');
    if (o.jitter !== undefined) {
      constant(jitters, o.jitter, 'jitter');
      v.jitter = o.jitter;
    }
    if (o.deadlineMs !== undefined) v.deadline_ms = o.deadlineMs === null ? null : ms(o.deadlineMs, 'deadlineMs');
    if (o.spreadMs !== undefined) v.spread_ms = o.spreadMs === null ? null : ms(o.spreadMs, 'spreadMs');
    if (o.useDateHeader !== undefined) v.use_date_header = Boolean(o.useDateHeader);
    if (o.quota403IsRateLimit !== undefined) v.quota_403_as_rate_limit = Boolean(o.quota403IsRateLimit);
    if (o.serverHonoursKeys !== undefined) v.server_honours_keys = Boolean(o.serverHonoursKeys);
    if (o.idempotencyHeader !== undefined) v.idempotency_header = String(o.idempotencyHeader);
    if (o.statusRetry !== undefined) {
      v.status_retry = { ...preset.status_retry };
      for (const [status, rule] of Object.entries(o.statusRetry ?? {})) {
        constant(rules, rule, 'a rule');
        v.status_retry[status] = rule;
      }
    }
    if (o.transportRetry !== undefined) {
      v.transport_retry = { ...preset.transport_retry };
      for (const [transport, rule] of Object.entries(o.transportRetry ?? {})) {
        constant(transports, transport, 'a transport');
        constant(rules, rule, 'a rule');
        v.transport_retry[transport] = rule;
      }
    }
    if (o.methodIdempotent !== undefined) {
      v.idempotent_methods = { ...preset.idempotent_methods };
      for (const [method, yes] of Object.entries(o.methodIdempotent ?? {})) v.idempotent_methods[method] = Boolean(yes);
    }
    return v;
  }

  /**
   * A retry policy: guide A's defaults unless told otherwise; `guideB: true` starts from
   * guide B's, `adapters: true` from the HTTP adapters' default (what `retry` uses). The
   * options become the policy's plain form, which the core reads and checks in one call.
   */
  class Policy extends Handle {
    constructor(options = {}) {
      const { guideB = false, adapters = false } = options;
      if (guideB && adapters) throw new TypeError('a policy starts from guide B or from the adapters\' default, not both');
      const preset = adapters ? presetValue(f.recuo_policy_new_adapters) : guideB ? presetValue(f.recuo_policy_new_guide_b) : {};
      super(policyFromValue(optionsValue(options, preset)), f.recuo_policy_free, 'a policy');
    }
    /**
     * The policy whose plain form is `value` (snake_case, as `toValue()` writes it and
     * tests/vectors/policies.json spells it); a field left out takes guide A's value.
     */
    static fromValue(value) {
      return Policy._wrap(policyFromValue(value));
    }
    /** The plain form: every field written out, the three maps listing only rule changes. */
    toValue() { return plainValue(this.ptr); }
    /** `JSON.stringify(policy)` writes the plain form. */
    toJSON() { return this.toValue(); }
    get maxAttempts() { return f.recuo_policy_max_attempts(this.ptr); }
    get baseMs() { return Number(f.recuo_policy_base_ms(this.ptr)); }
    get capMs() { return Number(f.recuo_policy_cap_ms(this.ptr)); }
    get jitter() { return jitters.byCode.get(f.recuo_policy_jitter(this.ptr)); }
    get deadlineMs() { const out = [0]; return f.recuo_policy_deadline_ms(this.ptr, out) ? Number(out[0]) : null; }
    get spreadMs() { const out = [0]; return f.recuo_policy_spread_ms(this.ptr, out) ? Number(out[0]) : null; }
    get useDateHeader() { return f.recuo_policy_use_date_header(this.ptr); }
    get serverHonoursKeys() { return f.recuo_policy_server_honours_keys(this.ptr); }
    get idempotencyHeader() { return text((b, n, w) => f.recuo_policy_idempotency_header(this.ptr, b, n, w), 64); }
    methodIdempotent(method) { const b = bytes(method); return f.recuo_policy_method_idempotent(this.ptr, b, b.length); }
  }
  // A Handle constructed without `new` (Policy._wrap) needs Handle's fields set by hand.
  Policy._wrap = (ptr) => {
    const p = Object.create(Policy.prototype);
    p._ptr = ptr;
    p._free = f.recuo_policy_free;
    registry.register(p, { free: f.recuo_policy_free, ptr }, p);
    return p;
  };
  let defaultPolicy;
  const theDefaultPolicy = () => (defaultPolicy ??= new Policy());
  let adaptersPolicy;
  const theAdaptersPolicy = () => (adaptersPolicy ??= new Policy({ adapters: true }));
  // A library that restarts after a trap (the WebAssembly module) drops every handle it made:
  // the policies kept here are made again when next asked for.
  native.onRestart?.(() => {
    defaultPolicy = undefined;
    adaptersPolicy = undefined;
    guideAPolicy = null;
  });

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
    let h = headers;
    let o = outcome;
    if (isResponse(outcome)) {
      o = outcome.status;
      h = headers ?? outcome.headers;
    }
    const m = bytes(method);
    const list = cHeaders(h);
    const out = {};
    const c = outcomeOf(o);
    check(f.recuo_classify((policy ?? theDefaultPolicy()).ptr, c, m, m.length, Boolean(idempotencyKey), list, list.length, Math.trunc(nowMs), out));
    const seen = c.kind === OUTCOME.status ? { status: o, headers: h } : c.kind === OUTCOME.transport ? { transport: o } : null;
    return verdictFrom(out, seen);
  }

  // ---- the rules of one HTTP request ------------------------------------------------

  const sendKeysCode = (sendKeys) => (sendKeys == null ? -1 : sendKeys ? 1 : 0);
  const planFrom = (out) => ({ key: keysToSend.byCode.get(out.key), idempotent: out.idempotent });

  /** What the last attempt came to — `{ status }`, `{ transport }`, `{ late: true }`, or null / `{}` for none — as the C struct. */
  function cLast(last) {
    if (last == null || typeof last !== 'object') {
      if (last == null) return { kind: lastKinds.byName.get('nothing'), status: 0, transport: 0 };
      throw new TypeError('a last attempt is { status }, { transport }, { late: true } or null');
    }
    if (last.status != null) {
      const status = last.status;
      if (!Number.isInteger(status) || status < 0 || status > 65535) throw new RangeError(`a status must be an integer 0–65535, not ${status}`);
      return { kind: lastKinds.byName.get('status'), status, transport: 0 };
    }
    if (last.transport != null) {
      return { kind: lastKinds.byName.get('transport'), status: 0, transport: constant(transports, last.transport, 'a transport failure') };
    }
    if (last.late) return { kind: lastKinds.byName.get('late'), status: 0, transport: 0 };
    return { kind: lastKinds.byName.get('nothing'), status: 0, transport: 0 };
  }

  /**
   * The plan of one request: which idempotency key its attempts carry (`'none'`, `'caller'`:
   * the caller's own, sent as it is; `'recuo'`: one key made per request, the same on every
   * attempt) and whether it counts as idempotent — the core's rules, one place for every
   * language.
   */
  function requestPlan(method, { callersKey = false, sendKeys = null, policy } = {}) {
    const m = bytes(method);
    const out = {};
    check(f.recuo_plan_request((policy ?? theAdaptersPolicy()).ptr, m, m.length, Boolean(callersKey), sendKeysCode(sendKeys), out));
    return planFrom(out);
  }

  /**
   * How an operation that ended for `reason` (null: it succeeded) reaches a caller of `style`
   * (`'client'`: the client's contract, `retry`; `'guide'`: guide A's, `buscarComRetry`), its
   * last attempt having come to `last`: `'response'`, `'error'` or `'give_up'`.
   */
  function endingFor(style, reason, last) {
    const out = [0];
    check(f.recuo_ending_for(constant(styles, style, 'style'), reason == null ? 0 : constant(reasons, reason, 'reason'), cLast(last), out));
    return endings.byCode.get(out[0]);
  }

  /** The give-up's one message, the same in every language. `retryInMs`: how long until a retry would be allowed, when known. */
  function giveUpMessage(reason, attempts, last, retryInMs = null) {
    const r = constant(reasons, reason, 'reason');
    const n = integer(attempts, 'attempts', 0xffffffff);
    const l = cLast(last);
    const has = retryInMs != null;
    const wait = has ? ms(retryInMs, 'retryInMs') : 0;
    return text((b, len, w) => f.recuo_give_up_message(r, n, l, has, wait, b, len, w));
  }

  // ---- the operation machine ---------------------------------------------------------

  // A step comes back in one scratch buffer, read field by field (every call is synchronous,
  // so one buffer serves them all): koffi decoding the struct into a new object cost ~3 µs a
  // step, several times the machine's own work.
  const stepBuffer = new Uint8Array(koffi.sizeof('recuo_step'));
  const stepAt = Object.fromEntries(['kind', 'attempt', 'delay_ms', 'has_until', 'until_ms', 'has_timeout', 'timeout_ms',
    'reason', 'has_retry_at', 'retry_at_ms'].map((field) => [field, koffi.offsetof('recuo_step', field)]));
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

  /** Counts starts, retries, 429s, 503s and results, shared by any number of operations. */
  class StatsRecorder extends Handle {
    constructor() {
      super(f.recuo_stats_recorder_new(), f.recuo_stats_recorder_free, 'a stats recorder');
    }
    snapshot() {
      const s = {};
      check(f.recuo_stats_recorder_snapshot(this.ptr, s));
      return {
        initial: Number(s.initial), retries: Number(s.retries), successes: Number(s.successes), failures: Number(s.failures),
        notStarted: Number(s.not_started), throttled: Number(s.throttled), unavailable: Number(s.unavailable),
        maxInFlight: Number(s.max_in_flight), minSpacingNs: s.has_spacing ? Number(s.min_spacing_ns) : null,
        meanSpacingNs: s.has_spacing ? s.mean_spacing_ns : null,
      };
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
    /** `pollGate` on one of koffi's worker threads (a gate that asks a Redis server). */
    _pollGateLater(nowMs) {
      const out = new Uint8Array(stepBuffer.length);
      return new Promise((resolve, reject) => {
        f.recuo_attempts_poll_gate.async(this.ptr, nowMs, this._waitOut, out, (err, rc) => {
          if (err) reject(err);
          else {
            try {
              resolve(this._polled(rc, out));
            } catch (e) {
              reject(e);
            }
          }
        });
      });
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
    /** The verdict on a failure; `seen` (or the verdict's own, from `classify`) is what its classifier saw. */
    judged(nowMs, verdict, seen = null) {
      const v = predicateVerdict(verdict);
      const saw = seen ?? (verdict != null && typeof verdict === 'object' ? verdict[SEEN] ?? null : null);
      if (saw == null) return this._step((o) => f.recuo_attempts_judged(this.ptr, integer(nowMs, 'nowMs'), v, o));
      const a = cSeen(saw);
      return this._step((o) => f.recuo_attempts_judged_seen(this.ptr, integer(nowMs, 'nowMs'), v, a.outcome, a.headers, a.count, o));
    }
    /** What came back: a status (with the response's headers), a `Response`, or a transport kind. */
    responded(nowMs, outcome, headers) {
      let o = outcome;
      let h = headers;
      if (isResponse(outcome)) {
        o = outcome.status;
        h = headers ?? outcome.headers;
      }
      const list = cHeaders(h);
      return this._step((out) => f.recuo_attempts_responded(this.ptr, integer(nowMs, 'nowMs'), outcomeOf(o), list, list.length, out));
    }
    slept(nowMs) { return this._step((o) => f.recuo_attempts_slept(this.ptr, integer(nowMs, 'nowMs'), o)); }
    cancel() { check(f.recuo_attempts_cancel(this.ptr)); }
    stopQueue(reason) { check(f.recuo_attempts_stop_queue(this.ptr, constant(reasons, reason, 'reason'))); }
    /** The next record `{ level, line }` (a redacted JSON line), or null. */
    pollRecord() {
      for (let cap = 1024; ; cap *= 4) {
        const buf = new Uint8Array(cap);
        const level = [0];
        const written = [0];
        const rc = f.recuo_attempts_poll_record(this.ptr, level, buf, cap, written);
        if (rc === BUFFER_TOO_SMALL) continue;
        check(rc);
        if (level[0] === 0) return null;
        return { level: levels.byCode.get(level[0]), line: utf8(buf.subarray(0, Number(written[0]))) };
      }
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
      for (let cap = 1024; ; cap *= 4) {
        const buf = new Uint8Array(cap);
        const level = [0];
        const written = [0];
        const rc = f.recuo_batch_queue_poll_record(this.ptr, level, buf, cap, written);
        if (rc === BUFFER_TOO_SMALL) continue;
        check(rc);
        if (level[0] === 0) return null;
        return { level: levels.byCode.get(level[0]), line: utf8(buf.subarray(0, Number(written[0]))) };
      }
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
    stop(reason) { check(f.recuo_batch_queue_stop(this.ptr, constant(reasons, reason, 'reason'))); }
    get stopped() { return reasonName(f.recuo_batch_queue_stopped(this.ptr)); }
  }

  // ---- waiting, without ever blocking the event loop ----------------------------------

  const now = () => Number(f.recuo_monotonic_ms());
  /** A wait of `ns` nanoseconds in whole milliseconds, rounded up (the core's one rounding). */
  const waitMsFromNs = (ns) => Number(f.recuo_wait_ms_from_ns(typeof ns === 'bigint' ? ns : integer(ns, 'ns')));

  /** Resolves true after `delay` ms, or false at once when `signal` aborts. */
  function wait(delay, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(false);
      let timer;
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const arm = (left) => {
        timer = setTimeout(() => {
          if (left > LONGEST_TIMER_MS) return arm(left - LONGEST_TIMER_MS);
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        }, Math.min(left, LONGEST_TIMER_MS));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      arm(Math.max(0, delay));
    });
  }

  const abortReason = (signal) => signal.reason ?? Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });

  /**
   * A regulator: request starts at a rate with a burst (GCRA). In this process, or
   * shared through a file with every process that opens it (Node, Python, PHP, C).
   */
  class Regulator extends Handle {
    constructor(perSecond, { burst = 1, adaptive = false, _ptr } = {}) {
      if (_ptr !== undefined) {
        super(_ptr, f.recuo_regulator_free, 'a regulator');
        return;
      }
      const out = [null];
      check(f.recuo_regulator_new(rate(perSecond), integer(burst, 'burst', 0xffffffff), out));
      super(out[0], f.recuo_regulator_free, 'a regulator');
      if (adaptive) this.setAdaptive(true);
    }
    /**
     * The regulator kept in the file at `path` (created if missing): one allowance for every
     * process that opens it. `adaptive` is recorded with the rate and burst when the file is
     * set up, and every process that opens it must agree.
     */
    static shared(path, perSecond, { burst = 1, adaptive = false } = {}) {
      const p = pathBytes(path);
      const out = [null];
      const detail = new Uint8Array(512);
      const rc = f.recuo_regulator_new_shared_with(p, p.length, rate(perSecond), integer(burst, 'burst', 0xffffffff), Boolean(adaptive), out, detail, detail.length);
      const nul = detail.indexOf(0);
      check(rc, utf8(detail.subarray(0, nul < 0 ? detail.length : nul)));
      return new Regulator(undefined, { _ptr: out[0] });
    }
    /** Takes a start now if one is allowed: 0, or the whole milliseconds to wait, rounded up (nothing taken). */
    tryAcquire({ cost = 1 } = {}) {
      const w = [0];
      const rc = f.recuo_regulator_try_acquire(this.ptr, integer(cost, 'cost', 0xffffffff), w);
      if (rc === WOULD_WAIT) return waitMsFromNs(w[0]);
      check(rc);
      return 0;
    }
    /** As `tryAcquire`, at your instant in nanoseconds (fake clocks): 0 or the wait in ns. */
    tryAcquireAt(nowNs, { cost = 1 } = {}) {
      const w = [0];
      const rc = f.recuo_regulator_try_acquire_at(this.ptr, integer(nowNs, 'nowNs'), integer(cost, 'cost', 0xffffffff), w);
      if (rc === WOULD_WAIT) return Number(w[0]);
      check(rc);
      return 0;
    }
    /**
     * Waits (timers, never blocking) for a start: resolves true once taken, false when
     * `timeoutMs` would pass first (nothing taken); rejects when `signal` aborts.
     */
    async acquire({ cost = 1, signal, timeoutMs } = {}) {
      const until = timeoutMs == null ? null : now() + ms(timeoutMs, 'timeoutMs');
      const ok = await this._acquireUntil(cost, until, signal);
      if (signal?.aborted) throw abortReason(signal);
      return ok;
    }
    /**
     * Reserves the next slot if it comes by `until` (recuo's monotonic ms; null: whenever),
     * then waits for it with a timer — first come, first served, as the blocking acquires of
     * other processes. False when it would come too late (nothing reserved) or `signal`
     * aborted the wait (the slot is spent unused: fewer starts, never more).
     */
    async _acquireUntil(cost, until, signal) {
      if (signal?.aborted) return false;
      const max = until === null ? 2n ** 64n - 1n : BigInt(Math.max(0, Math.floor((until - now()) * 1e6)));
      const w = [0];
      const rc = await this._reserve(integer(cost, 'cost', 0xffffffff), max, w);
      if (rc === WOULD_WAIT) return false;
      check(rc);
      const delay = waitMsFromNs(w[0]);
      return delay <= 0 || (await wait(delay, signal));
    }
    /** One reservation (a Redis regulator asks its server from a worker thread). */
    _reserve(cost, maxNs, waitOut) { return f.recuo_regulator_reserve(this.ptr, cost, maxNs, waitOut); }
    /** This process's regulator adapts or not; a shared one's setting is its state's (another one is refused). */
    setAdaptive(yes) { check(f.recuo_regulator_set_adaptive(this.ptr, Boolean(yes))); }
    /** A 429 was seen: an adaptive regulator halves its rate (for every holder of a shared one). */
    onThrottled() { check(f.recuo_regulator_on_throttled(this.ptr)); }
    /** A start succeeded: an adaptive regulator gives back 1/16 of its configured rate. */
    onSuccess() { check(f.recuo_regulator_on_success(this.ptr)); }
    get ratePerSecond() { return f.recuo_regulator_rate_per_s(this.ptr); }
    get burst() { return f.recuo_regulator_burst(this.ptr); }
  }

  /** A place in flight of a ConcurrencyLimit: give it back with `release()`. */
  class Permit {
    constructor(ptr, limit) {
      this._ptr = ptr;
      this._limit = limit;
    }
    release() {
      if (this._ptr != null) {
        f.recuo_permit_release(this._ptr);
        this._ptr = null;
        this._limit._wake();
      }
    }
    /**
     * Extends a Redis limit's lease from now: false when it had expired (the place is not
     * taken back) or the permit was released; a local permit has no lease (true).
     */
    renew() {
      if (this._ptr == null) return false;
      const renewed = [false];
      check(f.recuo_permit_renew(this._ptr, renewed));
      return renewed[0];
    }
  }

  /** At most `limit` requests in flight. */
  class ConcurrencyLimit extends Handle {
    constructor(limit, { _ptr } = {}) {
      const out = [_ptr];
      if (_ptr === undefined) check(f.recuo_concurrency_limit_new(integer(limit, 'limit', 0xffffffff), out));
      super(out[0], f.recuo_concurrency_limit_free, 'a concurrency limit');
      this._waiters = new Set();
    }
    /**
     * The limit kept in the file at `path` (created if missing): at most `limit` in flight for
     * every process of this machine that opens it. A place whose holder dies (`kill -9`
     * included) comes back at once: the kernel releases its lock.
     */
    static shared(path, limit) {
      const p = pathBytes(path);
      const out = [null];
      const detail = new Uint8Array(512);
      const rc = f.recuo_concurrency_limit_new_shared(p, p.length, integer(limit, 'limit', 0xffffffff), out, detail, detail.length);
      const nul = detail.indexOf(0);
      check(rc, utf8(detail.subarray(0, nul < 0 ? detail.length : nul)));
      const made = new ConcurrencyLimit(undefined, { _ptr: out[0] });
      made._poll = 10; // another process's place is seen within 10 ms
      return made;
    }
    tryAcquire() {
      const out = [null];
      const rc = f.recuo_concurrency_limit_try_acquire(this.ptr, out);
      if (rc === WOULD_WAIT) return null;
      check(rc);
      return new Permit(out[0], this);
    }
    /** Waits for a place: a Permit, or null when `timeoutMs` passes first; rejects when `signal` aborts. */
    async acquire({ signal, timeoutMs } = {}) {
      const until = timeoutMs == null ? null : now() + ms(timeoutMs, 'timeoutMs');
      const permit = await this._acquireUntil(until, signal);
      if (signal?.aborted) {
        permit?.release();
        throw abortReason(signal);
      }
      return permit;
    }
    async _acquireUntil(until, signal) {
      for (;;) {
        if (signal?.aborted) return null;
        const permit = this.tryAcquire();
        if (permit) return permit;
        const poll = this._poll ?? 50;
        const left = until === null ? poll : Math.min(poll, until - now());
        if (left <= 0) return null;
        await this._nap(left, signal);
      }
    }
    /** Waits `ms` at most: woken by a release in this process, or by `signal`. */
    _nap(ms, signal) {
      return new Promise((resolve) => {
        const done = () => { clearTimeout(t); this._waiters.delete(done); resolve(); };
        const t = setTimeout(done, ms);
        this._waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    _wake() { for (const w of [...this._waiters]) { w(); break; } }
    get limit() { return f.recuo_concurrency_limit_limit(this.ptr); }
    get inFlight() { return f.recuo_concurrency_limit_in_flight(this.ptr); }
    get maxInFlight() { return f.recuo_concurrency_limit_max_in_flight(this.ptr); }
  }

  /** Retries at most a ratio of recent requests plus a floor. */
  class RetryBudget extends Handle {
    constructor({ ratio, floorPerS, windowS, _ptr } = {}) {
      const out = [_ptr];
      if (_ptr !== undefined) {
        // made by RetryBudget.redis
      } else if (ratio === undefined && floorPerS === undefined && windowS === undefined) {
        check(f.recuo_retry_budget_new_default(out));
      } else {
        check(f.recuo_retry_budget_new(ratio ?? 0.1, floorPerS ?? 1, integer(windowS ?? 10, 'windowS', 0xffffffff), out));
      }
      super(out[0], f.recuo_retry_budget_free, 'a retry budget');
    }
    /** Counts a first attempt (a gate does it for you). */
    recordRequest() { check(f.recuo_retry_budget_record_request(this.ptr)); }
    /** Takes one retry if the budget allows it: true, or false with nothing taken. */
    tryWithdraw() {
      const rc = f.recuo_retry_budget_try_withdraw(this.ptr);
      if (rc === BUDGET_EXHAUSTED) return false;
      check(rc);
      return true;
    }
    /** The first attempts and the retries counted in the window: `{ requests, retries }`. */
    counts() {
      const requests = [0];
      const retries = [0];
      check(f.recuo_retry_budget_counts(this.ptr, requests, retries));
      return { requests: Number(requests[0]), retries: Number(retries[0]) };
    }
  }

  /**
   * What every attempt passes, first or retry: a place in flight, then a start slot; the
   * operation machine counts the budget and tells an adaptive regulator.
   */
  class Gate extends Handle {
    constructor({ regulator, limit, budget } = {}) {
      oneOf(regulator, Regulator, 'regulator');
      oneOf(limit, ConcurrencyLimit, 'limit');
      oneOf(budget, RetryBudget, 'budget');
      super(f.recuo_gate_new(), f.recuo_gate_free, 'a gate');
      if (regulator) check(f.recuo_gate_set_regulator(this.ptr, regulator.ptr));
      if (limit) check(f.recuo_gate_set_limit(this.ptr, limit.ptr));
      if (budget) check(f.recuo_gate_set_budget(this.ptr, budget.ptr));
      this.regulator = regulator ?? null;
      this.limit = limit ?? null;
      this.budget = budget ?? null;
    }
    /** Whether a look at this gate may ask a Redis server (the loops then look from a worker thread). */
    get _remote() {
      return (this.__remote ??= f.recuo_gate_is_remote(this.ptr));
    }
  }

  // ---- the loops ---------------------------------------------------------------------

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
    const flush = () => {
      if (!onRecord) return;
      for (let r = op.pollRecord(); r; r = op.pollRecord()) onRecord(r.level, r.line);
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
    for (;;) {
      flush();
      switch (step.kind) {
        case 'enter':
          step = await passGate(op, gate, signal);
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
        case 'classify':
          step = op.judged(now(), await judge(error));
          break;
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
  async function passGate(op, gate, signal) {
    const remote = gate != null && gate._remote;
    for (;;) {
      if (signal?.aborted) op.cancel();
      const polled = remote ? await op._pollGateLater(now()) : op.pollGate(now());
      if (polled.kind !== 'wait') return polled;
      await wait(polled.delayMs, signal);
    }
  }

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
  function poolFor(maxAttempts) {
    const enclosing = context.getStore()?.pool ?? null;
    const { pool, nested, owned } = AttemptPool.choose(enclosing, maxAttempts);
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
    if (gate == null && !onRecord && !signal?.aborted && FIRST_ALONE) return retryFast(fn, options, policy);
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
      seed, gate, pool, nested, request: request ?? { method: 'GET', url: '' }, records: onRecord ? 'debug' : undefined,
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
    if (options === undefined && typeof tarefa === 'function' && FIRST_ALONE) return comRetryFast(tarefa);
    return comRetryMachine(tarefa, options ?? {});
  }

  /**
   * `comRetry(tarefa)` with guide A's defaults: the first attempt pays only for itself (one
   * context for the loops nested in it and `currentAttempt()`, one clock read); the machine
   * starts only when it fails, from that attempt (issue 18).
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
    new Operation(comRetryPolicy(COM_RETRY_ATTEMPTS, GUIDE_A.baseMs, GUIDE_A.maxMs), { pool, nested, classifyLastFailure: false });

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
        op = new Operation(policy, { seed, pool: from.pool, nested: from.nested, classifyLastFailure: false });
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
    if (typeof fetchFn !== 'function') throw new TypeError('buscarComRetry needs a global fetch (Node ≥ 18)');
    checkSignal(signal);
    const method = String(init.method ?? 'GET').toUpperCase();
    const policy = new Policy({
      maxAttempts: tentativas, baseMs, capMs: maxMs, deadlineMs: prazoMs, useDateHeader: true, serverHonoursKeys,
    });
    const header = policy.idempotencyHeader;
    const headers = new Headers(init.headers ?? {});
    const { pool, nested, context: inner } = poolFor(policy.maxAttempts);
    const op = new Operation(policy, {
      seed, gate, pool, nested, request: { method, url: String(url) }, records: onRecord ? 'debug' : undefined,
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

  // ---- limits, records ---------------------------------------------------------------

  /** What a batch of `requests` takes at `target` within `allowance` (rates per second, or "90/min"). */
  function plan(requests, allowance, target, latencyS, retryFraction = 0) {
    const args = [integer(requests, 'requests'), rate(allowance, 'allowance'), rate(target, 'target'), Number(latencyS), Number(retryFraction)];
    const out = {};
    check(f.recuo_plan(...args, out));
    const warnings = [];
    for (let i = 0; i < Number(out.warning_count); i++) {
      warnings.push(text((b, n, w) => f.recuo_plan_warning(...args, i, b, n, w)));
    }
    return { intervalMs: Number(out.interval_ms), durationS: out.duration_s, retries: out.retries, inFlight: out.in_flight, warnings };
  }

  /** A rate as recuo writes it ("90/min"). */
  function formatRate(perSecond) {
    return text((b, n, w) => f.recuo_rate_format(Number(perSecond), b, n, w), 64);
  }

  /** A URL with its userinfo, secrets and personal data removed: `{ url, malformed }`. */
  function redactUrlDetailed(url) {
    const u = bytes(url);
    const cap = 3 * u.length + 11;
    const buf = new Uint8Array(cap);
    const written = [0];
    const malformed = [false];
    check(f.recuo_redact_url(u, u.length, buf, cap, written, malformed));
    return { url: utf8(buf.subarray(0, Number(written[0]))), malformed: malformed[0] };
  }
  const redactUrl = (url) => redactUrlDetailed(url).url;

  /** Headers as `[name, value]` pairs with sensitive values replaced by `[redacted]`. */
  function redactHeaders(headers) {
    return headerPairs(headers).map(([name, value]) => {
      const n = bytes(name);
      const v = bytes(value);
      const cap = 3 * v.length + 11;
      const buf = new Uint8Array(cap);
      const written = [0];
      check(f.recuo_redact_header_value(n, n.length, v, v.length, buf, cap, written));
      return [name, utf8(buf.subarray(0, Number(written[0])))];
    });
  }

  /** Whether a header or parameter name holds a secret. */
  function isSensitiveName(name) {
    const n = bytes(name);
    return f.recuo_is_sensitive_name(n, n.length);
  }

  /** Who answered: `{ origin, confidence, evidence }` from a response's headers. */
  function whoAnswered(headers, { expectedContentType } = {}) {
    const list = cHeaders(isResponse(headers) ? headers.headers : headers);
    const e = expectedContentType == null ? new Uint8Array(0) : bytes(expectedContentType);
    const out = {};
    check(f.recuo_who_answered(list, list.length, e, e.length, out));
    const evidence = [];
    for (let i = 0; i < Number(out.evidence_count); i++) {
      evidence.push(text((b, n, w) => f.recuo_who_answered_evidence(list, list.length, e, e.length, i, b, n, w)));
    }
    return { origin: origins.byCode.get(out.origin), confidence: confidences.byCode.get(out.confidence), evidence };
  }

  /** One attempt record (a redacted JSON line) built from values you give, for a loop with no machine. */
  function attemptRecord({ startUnixMs = Date.now(), elapsedMs = 0, method = 'GET', url = '', outcome, headers, verdict, decision }) {
    const m = bytes(method);
    const u = bytes(url);
    const list = cHeaders(headers);
    const d = {
      kind: constant(decisions, decision.kind, 'decision'), delay_ms: decision.delayMs ?? 0, next_attempt: decision.nextAttempt ?? 0,
      reason: decision.reason == null ? 0 : constant(reasons, decision.reason, 'reason'),
      has_retry_at: decision.retryAtMs != null, retry_at_ms: decision.retryAtMs ?? 0,
    };
    return text((b, n, w) => f.recuo_record_attempt_json(Math.trunc(startUnixMs), elapsedMs, m, m.length, u, u.length,
      outcomeOf(outcome), list, list.length, cVerdict(verdict), d, b, n, w), 1024);
  }

  installRedis({ f, check, bytes, integer, rate, now, Regulator, ConcurrencyLimit, Permit, RetryBudget });

  return {
    version: native.version,
    libraryPath: native.path,
    RecuoError,
    GiveUpError,
    Policy,
    Operation,
    BatchQueue,
    StatsRecorder,
    AttemptPool,
    Regulator,
    ConcurrencyLimit,
    Permit,
    RetryBudget,
    Gate,
    parseRetryAfter,
    retryDelayMs,
    backoffWindowMs,
    classify,
    retry,
    comRetry,
    buscarComRetry,
    currentAttempt,
    transportKind,
    requestPlan,
    endingFor,
    giveUpMessage,
    plan,
    formatRate,
    redactUrl,
    redactUrlDetailed,
    redactHeaders,
    isSensitiveName,
    whoAnswered,
    attemptRecord,
    monotonicMs: now,
    waitMsFromNs,
    monotonicNs: () => Number(f.recuo_monotonic_ns()),
  };
}
