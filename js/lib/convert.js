// Conversion between JS values and the C ABI of recuo's core: the core's names for its enum constants,
// its status codes as exceptions (`check`), text and bytes, numbers checked before they cross,
// header collections and outcomes as the C structs, and `Handle`, which owns a native handle.
// No decision is made here: every one comes from the core.

import { BUFFER_TOO_SMALL, OK, RecuoError } from './errors.js';

// The outcome kinds, as recuo.h numbers them (the other constants' names come from the library itself).
export const OUTCOME = { success: 1, status: 2, transport: 3 };

export const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
/** UTF-8 bytes as text. */
export const utf8 = (b) => decoder.decode(b);

/** The conversion helpers over one loaded library (`ctx.f`, its functions). */
export function installConvert(ctx) {
  const { f } = ctx;

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
  // What an attempt came to, and what the core made of it.
  const causes = names(f.recuo_cause_name);
  const verdicts = names(f.recuo_verdict_kind_name);
  const waits = names(f.recuo_wait_kind_name);
  const kinds = names(f.recuo_retry_after_kind_name);
  const transports = names(f.recuo_transport_name);
  const lastKinds = names(f.recuo_last_kind_name);
  // The operation machine: its steps, its records, how it ends.
  const steps = names(f.recuo_step_kind_name);
  const decisions = names(f.recuo_decision_kind_name);
  const levels = names(f.recuo_level_name);
  const reasons = names(f.recuo_give_up_reason_name);
  const styles = names(f.recuo_style_name);
  const endings = names(f.recuo_ending_name);
  // The rest of the policy, the batch queue, the request's plan, who answered.
  const jitters = names(f.recuo_jitter_name);
  const nextKinds = names(f.recuo_batch_next_kind_name);
  const batchKinds = names(f.recuo_batch_result_kind_name);
  const keysToSend = names(f.recuo_key_to_send_name);
  const origins = names(f.recuo_origin_name, 4);
  const confidences = names(f.recuo_confidence_name);
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

  /** An outcome and its headers as a C call takes them: a `Response` as its status and (unless `headers` is given) its headers. */
  const statusAndHeaders = (outcome, headers) =>
    (isResponse(outcome) ? [outcome.status, headers ?? outcome.headers] : [outcome, headers]);

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

  return { causes, verdicts, waits, transports, reasons, steps, decisions, levels, jitters, kinds, nextKinds,
    batchKinds, origins, confidences, keysToSend, styles, endings, lastKinds, RULES, constant, reasonName,
    statusMessage, check, bytes, text, integer, ms, oneOf, headerPairs, cHeaders, isResponse,
    statusAndHeaders, outcomeOf, registry, Handle, made, rate };
}
