// The policy: one plain value, read and written by the core. `Policy` turns its options into
// that value (snake_case, as every language spells it) and the core reads and
// checks it in one call; the presets' values are the core's, read once.
// Guide A is “Como repetir requisições com backoff exponencial (retry)”
// (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff); guide B is
// “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.

import { encoder } from './convert.js';
import { INVALID_VALUE, RecuoError } from './errors.js';

/** `Policy` and the policies the API keeps, over one loaded library (`ctx`: lib/convert.js's helpers). */
export function installPolicy(ctx) {
  const { native, f, Handle, registry, check, text, integer, ms, constant, jitters, transports, bytes,
    statusMessage, RULES } = ctx;

  /**
   * A policy's plain form (the snake_case object every language reads) as JSON for
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
  /** A pointer a preset's constructor made (NULL only if recuo panicked). */
  function made(ptr) {
    if (ptr == null) throw new RecuoError(900, 'panic', 'recuo: could not make a policy');
    return ptr;
  }

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
      if (guideB && adapters) throw new TypeError('a policy takes one preset: guideB or adapters, not both');
      const preset = adapters ? presetValue(f.recuo_policy_new_adapters) : guideB ? presetValue(f.recuo_policy_new_guide_b) : {};
      super(policyFromValue(optionsValue(options, preset)), f.recuo_policy_free, 'a policy');
    }
    /**
     * The policy whose plain form is `value` (snake_case, as `toValue()` writes it and
     * every language spells it); a field left out takes its default value.
     */
    static fromValue(value) {
      return Policy._wrap(policyFromValue(value));
    }
    /** Guide A's policy: 5 attempts, 200 ms to 5 s of full jitter, no deadline. */
    static guideA() { return new Policy(); }
    /** Guide B's policy: 5 attempts, 1 s to 8 s of full jitter, a 30 s deadline. */
    static guideB() { return Policy._wrap(made(f.recuo_policy_new_guide_b())); }
    /** The HTTP adapters' default (what `retry` uses): guide B's, an HTTP-date wait measured from the response's `Date`. */
    static adapters() { return Policy._wrap(made(f.recuo_policy_new_adapters())); }
    /**
     * For one request a person waits on: the adapters' policy, whose 30 s deadline gives up
     * at once on a server wait that would not fit, saying when a retry would be allowed.
     */
    static interactive() { return Policy._wrap(made(f.recuo_policy_new_interactive())); }
    /**
     * For the requests of a batch: the adapters' policy with no deadline of its own, so that
     * the batch's deadline is the one that counts (`runBatch` gives each request what is left
     * of it) and a per-minute limiter's `Retry-After: 60` is waited. Outside a batch, give it
     * a deadline.
     */
    static batch() { return Policy._wrap(made(f.recuo_policy_new_batch())); }
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
  });

  return { Policy, theDefaultPolicy, theAdaptersPolicy };
}
