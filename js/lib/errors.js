// What recuo throws, and the status codes of the C ABI that lib/'s modules answer by
// name: a status the core answered becomes a RecuoError; a give-up its result cannot say, a
// GiveUpError.
// Guide A is “Como repetir requisições com backoff exponencial (retry)”
// (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff); guide B is
// “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.

export const OK = 0;
export const BUFFER_TOO_SMALL = 2;
export const INVALID_VALUE = 109;
export const WOULD_WAIT = 210;
export const BUDGET_EXHAUSTED = 213;
/** A limit on Redis through the caller's client waits on a call the host runs first. */
export const HOST_PENDING = 215;
export const IO = 300;

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
