// What the core says of values you give, with no machine: a batch's plan within an allowance,
// a rate written out, URLs and headers redacted, who answered a response, one attempt's record.

import { utf8 } from './convert.js';

/** The records over one loaded library (`ctx`: lib/convert.js's helpers, lib/decisions.js's verdicts). */
export function installRecords(ctx) {
  const { f, check, bytes, text, integer, rate, constant, origins, confidences, decisions, reasons,
    headerPairs, cHeaders, isResponse, outcomeOf, cVerdict } = ctx;

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

  return { plan, formatRate, redactUrl, redactUrlDetailed, redactHeaders, isSensitiveName, whoAnswered,
    attemptRecord };
}
