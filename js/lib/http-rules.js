// The rules of one HTTP request, the core's for every language: which idempotency key its
// attempts carry and whether it counts as idempotent (its plan), how its end reaches a caller
// (its ending), and the give-up's one message.
// Guide A is “Como repetir requisições com backoff exponencial (retry)”
// (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff); guide B is
// “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.

/** The rules over one loaded library (`ctx`: lib/convert.js's helpers, lib/policy.js's policies). */
export function installHttpRules(ctx) {
  const { f, check, bytes, text, integer, ms, constant, keysToSend, lastKinds, transports, styles, reasons,
    endings, theAdaptersPolicy } = ctx;

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

  return { sendKeysCode, planFrom, cLast, requestPlan, endingFor, giveUpMessage };
}
