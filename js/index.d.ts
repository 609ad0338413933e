// Type declarations of the npm package `recuo` (ESM). Every decision is recuo's Rust core's
// (compiled to WebAssembly, recuo.wasm); see docs/js.md.
//
// Two guides written in Portuguese are named below. Guide A is
// “Como repetir requisições com backoff exponencial (retry)”
// (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff), whose `comRetry` and
// `buscarComRetry` keep their names and parameters here. Guide B is
// “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”, whose `retryDelayMs`
// does too. Everything else is English (docs/names.md pairs the names).

// The plain forms of the values the core declares once (generated: `make faces`).
import type { BatchProgress, GiveUpReason, PolicyValue, RetryAfterKind } from './values.js';
export type {
  BatchProgress, BatchProgressValue, Confidence, GiveUpReason, Origin, PlanValue, PolicyValue, ReportValue, RetryAfterKind, RetryAfterValue, StatsValue,
  WhoAnsweredValue,
} from './values.js';

/** The version of recuo's core the package runs. */
export const version: string;
/** Where recuo.wasm was loaded from (a path, or how it was inlined or imported). */
export const libraryPath: string;

/** An error the core answered: a configuration it refused, a bad argument. */
export class RecuoError extends Error {
  /** The stable C status code (docs/c.md), e.g. 101. */
  readonly code: number;
  /** Its name, e.g. `"zero_attempts"`. */
  readonly status: string;
}


/** What happened to one operation. */
export interface Report {
  attempts: number;
  /** Why it gave up; null after a success. */
  reason: GiveUpReason | null;
  elapsedMs: number;
  delaysMs: number[];
  /** For `wait_exceeds_deadline` with a finite wait: how long until the server accepts a retry. */
  retryAfterMs: number | null;
  /** For `queue_stopped`: the reason that stopped the queue. */
  stoppedBy: GiveUpReason | null;
  /**
   * For `wait_exceeds_deadline` with a finite wait: the instant (milliseconds since the epoch,
   * as `Date.now()`) from which the server accepts a retry; else null.
   */
  retryAt: number | null;
}

/**
 * recuo gave up in a way the operation's own result cannot say: a server wait past the
 * deadline (with the last response), an attempt the deadline cut, or no attempt made — and,
 * from `buscarComRetry`, a last 429 or 5xx, as guide A's function throws. Its message is the
 * same in every language, e.g. `recuo gave up after 3 attempts (attempts_exhausted): HTTP 503`
 * or `recuo gave up after 1 attempt (wait_exceeds_deadline): HTTP 429; a retry is allowed in 3600 s`.
 */
export class GiveUpError extends Error {
  readonly reason: GiveUpReason | null;
  /** Milliseconds since the epoch from which a retry would be allowed, or null. */
  readonly retryAt: number | null;
  readonly retryAfterMs: number | null;
  /** The last response, or null. From `retry` its body is released; from `buscarComRetry` it was read in the attempt and is readable. */
  readonly response: Response | null;
  /** The last response's status, or null. */
  readonly status: number | null;
  readonly report: Report | null;
  /** True from `buscarComRetry` (guide A's `erro.temporario`), false otherwise. */
  readonly temporario: boolean;
}

/** Which idempotency key a request's attempts carry: none, the caller's own (sent as it is), or recuo's (one per request, the same on every attempt). */
export type KeyToSend = 'none' | 'caller' | 'recuo';
/** `'client'`: the client's contract (`retry`: the last response is returned); `'guide'`: guide A's (`buscarComRetry`: a last 429 or 5xx is thrown). */
export type Style = 'client' | 'guide';
/** How an operation's end reaches its caller: the last response, the last error rethrown, or a GiveUpError. */
export type Ending = 'response' | 'error' | 'give_up';
/** What the last attempt came to: a response's status, a transport failure, an attempt the deadline cut (`late`), or none made (null or `{}`). */
export type LastAttempt = { status: number } | { transport: Transport } | { late: true } | Record<string, never> | null;

export type Jitter = 'full' | 'equal' | 'decorrelated' | 'none';
export type Rule = 'never' | 'if_idempotent' | 'always';
export type Transport = 'connect' | 'tls' | 'timeout' | 'reset' | 'other';
export type Cause =
  | 'success' | 'rate_limited' | 'unavailable' | 'server_error' | 'connect' | 'timeout' | 'reset'
  | 'other' | 'not_idempotent' | 'permanent' | 'tls';
/** Response headers in any form: fetch `Headers`, a `Map`, `[name, value]` pairs or an object. */
export type HeadersLike = Headers | Map<string, string> | Iterable<[string, string]> | Record<string, string | string[]>;
/** A rate: a number per second, or text such as `"90/min"`, `"2/s"`, `"5000/h"`. */
export type RateLike = number | string;

export interface PolicyOptions {
  /** Start from guide B (1 s, 8 s, a 30 s deadline) instead of guide A (5, 200 ms, 5 s). */
  guideB?: boolean;
  /**
   * Start from the HTTP adapters' default (`retry`'s): guide B's figures (5 attempts, 1 s to
   * 8 s, a 30 s deadline), with a response's `Date` taken as now for its server waits.
   */
  adapters?: boolean;
  maxAttempts?: number;
  baseMs?: number;
  capMs?: number;
  jitter?: Jitter;
  /** null: no deadline. */
  deadlineMs?: number | null;
  /** null: the default spread, min(window, 1 s). */
  spreadMs?: number | null;
  useDateHeader?: boolean;
  quota403IsRateLimit?: boolean;
  idempotencyHeader?: string;
  statusRetry?: Record<number, Rule>;
  transportRetry?: Partial<Record<Transport, Rule>>;
  methodIdempotent?: Record<string, boolean>;
  /**
   * The server honours idempotency keys (default false): a request that carries recuo's own
   * key then counts as idempotent whatever its method, so a POST whose outcome is unknown (a
   * timeout, a dropped connection, a 500) may be retried. Without it only the method, or a
   * key of your own, makes a request idempotent.
   */
  serverHonoursKeys?: boolean;
}

/** A retry policy. Free it early with `close()`, or leave it to the garbage collector. */
export class Policy {
  constructor(options?: PolicyOptions);
  /**
   * The policy whose plain form is `value`, read and checked by the core. Throws a
   * `RecuoError` whose `status` names the core's error: `invalid_value` (an unknown field, a
   * value of the wrong type, a negative or fractional number, NaN or Infinity),
   * `unknown_name`, `zero_attempts`, `cap_below_base`, `invalid_header_name`,
   * `status_out_of_range` (a status outside 400–599).
   */
  static fromValue(value: PolicyValue): Policy;
  /** Guide A's policy: 5 attempts, 200 ms to 5 s of full jitter, no deadline. */
  static guideA(): Policy;
  /** Guide B's policy: 5 attempts, 1 s to 8 s of full jitter, a 30 s deadline. */
  static guideB(): Policy;
  /** The HTTP adapters' default (what `retry` uses): guide B's, an HTTP-date wait measured from the response's `Date`. */
  static adapters(): Policy;
  /**
   * For one request a person waits on: the adapters' policy, whose 30 s deadline gives up at
   * once on a server wait that would not fit, saying when a retry would be allowed.
   */
  static interactive(): Policy;
  /**
   * For the requests of a batch: the adapters' policy with no deadline of its own, so that the
   * batch's deadline is the one that counts (`runBatch` gives each request what is left of
   * it). Outside a batch, give it a deadline.
   */
  static batch(): Policy;
  /** The plain form: every field written out; the three maps list only what differs from the default. */
  toValue(): Required<PolicyValue>;
  /** `JSON.stringify(policy)` writes the plain form. */
  toJSON(): Required<PolicyValue>;
  readonly maxAttempts: number;
  readonly baseMs: number;
  readonly capMs: number;
  readonly jitter: Jitter;
  readonly deadlineMs: number | null;
  readonly spreadMs: number | null;
  readonly useDateHeader: boolean;
  readonly serverHonoursKeys: boolean;
  readonly idempotencyHeader: string;
  methodIdempotent(method: string): boolean;
  close(): void;
}

/**
 * What an outcome is worth. Write one by hand for a task with no HTTP meaning; a `retry` or a
 * `give_up` names any `reason` but `'success'` (refused otherwise, as in every language).
 */
export interface Verdict {
  verdict: 'success' | 'retry' | 'give_up';
  reason?: Cause;
  /** The server's finite wait, ms. */
  waitMs?: number | null;
  waitUnbounded?: boolean;
}

export interface ClassifyOptions {
  method?: string;
  headers?: HeadersLike;
  idempotencyKey?: boolean;
  nowMs?: number;
  policy?: Policy;
}

/**
 * Classifies a status, a fetch `Response`, a transport kind or `'success'`; anything else
 * (`undefined`, an error) is a TypeError. For an error `fetch` threw, which has no status,
 * classify its kind: `classify(transportKind(error))`.
 */
export function classify(outcome: number | Response | Transport | 'success', options?: ClassifyOptions): Required<Verdict>;

/** A `Retry-After` value. `waitMs` is `Infinity` for an unbounded wait, null for an invalid value. */
export function parseRetryAfter(value: string | null | undefined, nowMs?: number): { kind: RetryAfterKind; waitMs: number | null };

/** Guide B's `retryDelayMs`: the server's wait, else full jitter from min(8000, 1000·2^attempt); `Infinity` for an unbounded wait. */
export function retryDelayMs(retryAfter: string | null | undefined, attempt: number, nowMs?: number, options?: { seed?: number }): number;

/** The backoff window, min(cap, base · 2^n). */
export function backoffWindowMs(baseMs: number, capMs: number, n: number): number;

/** The attempt being made, given to the operation (and `currentAttempt()`). */
export interface Attempt {
  /** From 0. */
  readonly number: number;
  /** What is left of the deadline, ms; null without one. */
  readonly timeoutMs: number | null;
  /**
   * Aborts when the loop's `signal` does, or when the time the deadline leaves this attempt
   * (`timeoutMs`) runs out, with a `TimeoutError`: pass it to `fetch`, and a server that
   * trickles cannot outlive the deadline. Without a deadline, the loop's own `signal`.
   */
  readonly signal: AbortSignal | undefined;
  /** The operation's idempotency key: one UUID v4, the same on every attempt. */
  readonly idempotencyKey: string;
  /** The header to send it in (`Idempotency-Key` by default). */
  readonly idempotencyHeader: string;
  /** The headers recuo adds to this attempt as the request's plan says: `{ [idempotencyHeader]: idempotencyKey }`, or `{}`. */
  readonly headers: Record<string, string>;
}

export type Level = 'debug' | 'info' | 'warning';

export interface RetryOptions {
  policy?: Policy;
  gate?: Gate;
  /** Aborting it cancels a wait at once; the loop rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Judges a thrown error: a boolean or a Verdict. Default: a fetch network failure by its kind, every other error retried. */
  classify?: (error: unknown) => boolean | Verdict | Promise<boolean | Verdict>;
  /** Called before each wait: the attempt that failed (from 0), its `Response` or its error, and the wait in ms. */
  onRetry?: (attempt: number, failure: unknown, delayMs: number) => unknown;
  onGiveUp?: (report: Report) => unknown;
  /** Receives the machine's records: redacted JSON lines. */
  onRecord?: (level: Level, line: string) => void;
  /**
   * The request `fn` sends: its method (classification), its URL (the records, redacted),
   * `ownKey` (it carries your own idempotency key), `sendKeys` (whether recuo adds its own —
   * in `attempt.headers`; default: for methods that are not idempotent), `replayable`
   * (false for a body that cannot be sent twice: one attempt).
   */
  request?: { method?: string; url?: string; ownKey?: boolean; sendKeys?: boolean | null; replayable?: boolean };
  seed?: number;
  /** Instead of the timer (tests). */
  sleep?: (ms: number, signal?: AbortSignal) => unknown;
}

/**
 * Runs `fn` under a policy (default: the HTTP adapters', `new Policy({ adapters: true })`) on
 * the core's operation machine. A returned fetch `Response` is classified with the request's
 * method: a success or a permanent answer is returned, attempts exhausted return the last
 * response, a wait past the deadline throws a GiveUpError. A thrown error is rethrown
 * unchanged when the loop gives up. Read the body inside `fn` for a body cut short to count
 * as the attempt's failure.
 */
export function retry<T>(fn: (attempt: Attempt) => T | Promise<T>, options?: RetryOptions): Promise<T>;

export interface ComRetryOptions {
  /** Attempts in all, the first included (default 5). */
  tentativas?: number;
  /** The first backoff window, ms (default 200). */
  baseMs?: number;
  /** The largest backoff window, ms (default 5000). */
  maxMs?: number;
  /**
   * Whether an error is worth another attempt: a boolean or a `classify` verdict (a give-up
   * stops, a server wait is honoured). Default: every error retried. The last attempt's error
   * is not judged.
   */
  repetirSe?: (erro: any) => boolean | Verdict | Promise<boolean | Verdict>;
  seed?: number;
  sleep?: (ms: number, signal?: AbortSignal) => unknown;
  signal?: AbortSignal;
}

/**
 * Guide A's `comRetry`: calls `tarefa()` until it succeeds, `repetirSe` refuses its error or
 * the attempts are spent, waiting full jitter from [0, min(maxMs, baseMs · 2^i)] between
 * attempts; answers the task's value, or rethrows its last error — the same object.
 */
export function comRetry<T>(tarefa: () => T | Promise<T>, opcoes?: ComRetryOptions): Promise<T>;

export interface BuscarOpcoes extends RequestInit {
  /** Attempts in all, the first included (default 5). */
  tentativas?: number;
  /** The first backoff window, ms (default 200). */
  baseMs?: number;
  /** The largest backoff window, ms (default 5000). */
  maxMs?: number;
  /** The whole fetch's deadline, waits included (default 30 000 ms, guide B's); null for none. */
  prazoMs?: number | null;
  /** Each attempt's timeout (default 10 000 ms), clipped to what is left of the deadline. */
  timeoutMs?: number | null;
  gate?: Gate;
  seed?: number;
  sleep?: (ms: number, signal?: AbortSignal) => unknown;
  onRecord?: (level: Level, line: string) => void;
  /** The server honours idempotency keys: a POST with recuo's key may be retried after a 500 or a timeout. */
  serverHonoursKeys?: boolean;
  /** Whether recuo adds its own idempotency key (default: to methods that are not idempotent). */
  sendKeys?: boolean | null;
  /** Instead of the global fetch. */
  fetch?: typeof fetch;
}

/**
 * Guide A's `buscarComRetry` over fetch. Each attempt reads the whole body (a body cut short
 * is a failed attempt); the response answered has it in memory. Answers a success or another
 * 4xx; after the last attempt on a 429 or 5xx — or when the server's wait does not fit the
 * deadline — throws a GiveUpError with `temporario: true`, `status`, `response`, `reason`,
 * `retryAt` and `report`; a network failure is rethrown when the last attempt failed so.
 */
export function buscarComRetry(url: string | URL, opcoes?: BuscarOpcoes): Promise<Response>;

/** How one operation of `runBatch` ended. */
export interface BatchOutcome<T> {
  /** `'succeeded'`, `'gave_up'` or `'not_started'`, as the core's queue counts it. */
  status: 'succeeded' | 'gave_up' | 'not_started';
  /** What the operation resolved to (for a give-up whose last answer was a Response: that Response). */
  value: T | undefined;
  /** For a give-up: what the last attempt threw (the very object), or a GiveUpError; else null. */
  error: unknown;
  /** Why it gave up or was not started; null on success. */
  reason: GiveUpReason | null;
  /** For `queue_stopped`: the reason that stopped the queue. */
  stoppedBy: GiveUpReason | null;
  /** Attempts made. */
  attempts: number;
  /** For a give-up: the operation's report. */
  report: Report | null;
}

export interface RunBatchOptions {
  /** Each operation's policy (default: guide A's); use `Policy.batch()` for requests inside a batch. */
  policy?: Policy;
  /** Every attempt of every operation passes it. */
  gate?: Gate;
  /** How many operations run at once (default 1). */
  workers?: number;
  /** A limit on the whole batch, ms: what has not started by then is not started, and nothing waits past it. */
  deadlineMs?: number | null;
  /** Whether an error is worth another attempt (default: every error is); a Response is judged by its status. */
  classify?: (error: unknown) => boolean | Verdict | Promise<boolean | Verdict>;
  /** Told the batch's progress as each operation ends, started or not: one call per operation, in order. */
  onProgress?: (progress: BatchProgress) => void;
  /** Receives every record, redacted: `(level, jsonLine)`. */
  onRecord?: (level: Level, line: string) => void;
  /** An operation that gives up `wait_exceeds_deadline` stops the queue: the rest are not started (`queue_stopped`). */
  stopOnUnreachableWait?: boolean;
  /** Stops the batch: what has not started is not started (`cancelled`); the batch still resolves. */
  signal?: AbortSignal;
}

/**
 * Runs `operations` through one policy and one gate, `workers` at a time, within `deadlineMs`
 * for the whole batch, each retried as `retry` would, on the core's batch queue. Rejects only
 * for bad arguments or an error thrown by a callback; otherwise resolves with every
 * operation's outcome, in order, the batch's stats and its time.
 */
export function runBatch<T>(
  operations: Iterable<(attempt: Attempt) => T | Promise<T>>,
  options?: RunBatchOptions,
): Promise<{ results: BatchOutcome<T>[]; stats: Stats; elapsedMs: number }>;

/** The plan of one request: the key its attempts carry and whether it counts as idempotent (default policy: the adapters'). */
export function requestPlan(method: string, options?: { callersKey?: boolean; sendKeys?: boolean | null; policy?: Policy }): { key: KeyToSend; idempotent: boolean };

/** How an operation that ended for `reason` (null: it succeeded) reaches a caller of `style`, its last attempt having come to `last`. */
export function endingFor(style: Style, reason: GiveUpReason | null, last: LastAttempt): Ending;

/** The give-up's one message. `retryInMs`: how long until a retry would be allowed, when known (shown in whole seconds, rounded up). */
export function giveUpMessage(reason: GiveUpReason, attempts: number, last: LastAttempt, retryInMs?: number | null): string;

/** The attempt being made in this async context, or null. */
export function currentAttempt(): Attempt | null;

/** The transport kind of an error fetch threw, or null. */
export function transportKind(error: unknown): Transport | null;

/** What an attempt received, for its record: a `Response`, a status with its headers, a transport failure, or null. */
export type Seen = Response | { status: number; headers?: HeadersLike | null } | { transport: Transport } | null;

/** One look at the gate that said "not yet": wait `delayMs`, then look again. */
export interface GateWait {
  kind: 'wait';
  delayMs: number;
}

/** How one operation of a batch ended. */
export interface BatchResult {
  end: 'succeeded' | 'gave_up' | 'not_started';
  reason: GiveUpReason | null;
  /** For `queue_stopped`: the reason that stopped the queue. */
  stoppedBy: GiveUpReason | null;
}

export interface Step {
  kind: 'enter' | 'call' | 'classify' | 'sleep' | 'done' | 'gave_up';
  attempt: number;
  untilMs?: number | null;
  timeoutMs?: number | null;
  delayMs?: number;
  reason?: GiveUpReason | null;
  retryAtMs?: number | null;
}

/** What was decided after an attempt, as its record (`attemptRecord`) tells it. */
export interface Decision {
  kind: 'done' | 'retry' | 'give_up';
  delayMs: number;
  nextAttempt: number;
  reason: GiveUpReason | null;
  retryAtMs: number | null;
}

export interface OperationOptions {
  seed?: number;
  gate?: Gate;
  pool?: AttemptPool;
  nested?: boolean;
  statsRecorder?: StatsRecorder;
  request?: { method?: string; url?: string };
  records?: Level | 'none';
  classifyLastFailure?: boolean;
  ownKey?: boolean;
  /** Plans the request (its method from `request`) and sends it as planned; the plan is then `operation.plan`. */
  plan?: { callersKey?: boolean; sendKeys?: boolean | null };
  /** False for a body that cannot be sent twice: one attempt, no retry decided, no budget spent. */
  replayable?: boolean;
}

/** The core's operation machine, step by step (the C step API, `recuo_attempts_*`). */
export class Operation {
  constructor(policy?: Policy, options?: OperationOptions);
  /**
   * Whether a first attempt that succeeds needs the machine with this gate, stats and records
   * (of `records` and above): when it does not, a loop may make that first attempt before
   * making any machine, and start one with `startAfterFirst` only when it fails. Ask once per
   * policy and gate.
   */
  static successNeedsMachine(options?: { gate?: Gate | null; stats?: boolean; records?: Level | 'none' | null }): boolean;
  start(nowMs: number, unixMs?: number): Step;
  /**
   * Starts the machine of an operation whose first attempt was already made — begun at
   * `nowMs` (`unixMs` on the wall clock) — before the machine existed: answers that attempt's
   * `call` step; tell its outcome next. Give it the pool of `AttemptPool.choose(…, { afterFirst: true })`.
   */
  startAfterFirst(nowMs: number, unixMs?: number): Step;
  /**
   * For a loop that must not block: one look at the gate of an `enter` step — a place in
   * flight first, then a start slot, within the deadline. Answers `{ kind: 'wait', delayMs }`
   * (wait that long, then look again) or the next step: the attempt's `call`, or `gave_up`
   * (`wait_exceeds_deadline` when the place or the slot would come too late, `cancelled`
   * after `cancel()`). The operation holds the place until the attempt ends.
   */
  pollGate(nowMs: number): GateWait | Step;
  /** `pollGate` with the regulator asked at `regulatorNowNs` on a clock of your own (tests). */
  pollGateAt(nowMs: number, regulatorNowNs: number | bigint): GateWait | Step;
  entered(nowMs: number, passed: boolean): Step;
  succeeded(nowMs: number): Step;
  /**
   * The attempt failed. Its record shows what the attempt said it received (`seen`), else
   * what the verdict's classifier saw, else what its error carried (`errorSeen`).
   */
  failed(nowMs: number, seen?: Seen, errorSeen?: Seen): Step;
  /** The verdict on a failure; `seen`: what the classifier saw (a verdict from `classify` carries its own). */
  judged(nowMs: number, verdict: boolean | Verdict, seen?: Seen): Step;
  responded(nowMs: number, outcome: number | Response | Transport | 'success', headers?: HeadersLike): Step;
  slept(nowMs: number): Step;
  cancel(): void;
  stopQueue(reason: GiveUpReason): void;
  pollRecord(): { level: Level; line: string } | null;
  readonly idempotencyKey: string;
  /** The request's plan, when one was asked for. */
  readonly plan: { key: KeyToSend; idempotent: boolean } | null;
  /** How the operation's end reaches a caller of `style`, its last attempt having come to `last` (`'response'` while it runs). */
  ending(style: Style, last: LastAttempt): Ending;
  /** The give-up's message at `nowMs` on the machine's clock; '' unless it gave up. */
  giveUpMessage(nowMs: number, last: LastAttempt): string;
  report(): Report;
  /** How the operation ended for its batch: a give-up with no attempt made is `not_started`, unless its gate could not be used (`gateFailed`). */
  batchResult(gateFailed?: boolean): BatchResult;
  close(): void;
}

/** The core's batch queue. */
export class BatchQueue {
  /**
   * `records`: the queue makes the record of every operation it does not start (`pollRecord`),
   * naming it by its request (`requests[index]`, the URL redacted), timed from `unixMs`
   * (the wall clock at `nowMs`; default now).
   */
  constructor(policy: Policy, length: number, nowMs: number, options?: {
    deadlineMs?: number | null;
    stopOnUnreachableWait?: boolean;
    statsRecorder?: StatsRecorder;
    records?: { requests: { method?: string; url?: string }[]; unixMs?: number };
  });
  /** The next record the queue made, or null. */
  pollRecord(): { level: Level; line: string } | null;
  next(nowMs: number):
    | { next: 'start'; index: number; deadlineMs: number | null; policy: Policy }
    | { next: 'not_started'; index: number; reason: GiveUpReason | null; stoppedBy: GiveUpReason | null }
    | { next: 'finished' };
  finished(index: number, reason: GiveUpReason | null): boolean;
  /**
   * Operation `index` ended as `end` (as `Operation.batchResult()` answers it, or a
   * `not_started` from `next()`): the batch's progress. Tell the queue of every end once.
   */
  ended(index: number, end: BatchResult): BatchProgress;
  stop(reason: GiveUpReason): void;
  readonly stopped: GiveUpReason | null;
  close(): void;
}

export interface Stats {
  initial: number;
  retries: number;
  successes: number;
  failures: number;
  notStarted: number;
  throttled: number;
  unavailable: number;
  maxInFlight: number;
  minSpacingNs: number | null;
  meanSpacingNs: number | null;
  /** The first start, ns on recuo's monotonic clock (`monotonicNs()`); null with none. */
  firstStartNs: number | null;
  /** The last start; null with none. */
  lastStartNs: number | null;
}

/**
 * Two recorders' stats added up, as the core merges them: counts add up; the shortest spacing
 * of either and the span of both; `maxInFlight` adds up (an upper bound when both ran at
 * once). Stats read back from JSON (another process's) merge the same way.
 */
export function mergeStats(a: Stats, b: Stats): Stats;

export class StatsRecorder {
  constructor();
  snapshot(): Stats;
  close(): void;
}

export class AttemptPool {
  constructor(attempts: number);
  /**
   * The pool of a loop that starts with `enclosing` as its context's pool (null: none): the
   * enclosing pool joined (`nested`), or a pool of `maxAttempts` of its own (`owned`: keep it
   * as the context's pool for the loops nested in this one, until it ends). An operation of a
   * batch (`batchOperation`) owns its pool; `afterFirst`: its first attempt was made before
   * its machine, and is counted as drawn.
   */
  static choose(enclosing: AttemptPool | null, maxAttempts: number, options?: { batchOperation?: boolean; afterFirst?: boolean }): { pool: AttemptPool; nested: boolean; owned: boolean };
  readonly remaining: number;
  close(): void;
}

/**
 * A connected Redis client of yours, which the limits on Redis run recuo's scripts through:
 * node-redis (`redis`: `evalSha` and `eval`) or `ioredis` (`evalsha` and `eval`).
 */
export type RedisClientLike =
  | {
      evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
      eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
    }
  | {
      evalsha(sha1: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
      eval(script: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
    };

/**
 * A regulator on Redis through your client (`await Regulator.redis(client, …)`): each start
 * asked of the server, so its own methods return promises. A failed command rejects with a
 * RecuoError `io` naming the server and the key, its `cause` the client's error.
 */
export interface RedisRegulator extends Omit<Regulator, 'tryAcquire' | 'tryAcquireAt' | 'onThrottled' | 'onSuccess'> {
  /** 0 when a start was taken now, else the whole milliseconds to wait (nothing taken). */
  tryAcquire(options?: { cost?: number }): Promise<number>;
  /** As tryAcquire at your instant (ns) on a time base every user shares: 0, or the wait in ns. */
  tryAcquireAt(nowNs: number | bigint, options?: { cost?: number }): Promise<number>;
  /** A 429 was seen: an adaptive key halves its rate for every holder. */
  onThrottled(): Promise<void>;
  /** A start succeeded: an adaptive key gives back 1/16 of its configured rate. */
  onSuccess(): Promise<void>;
}

/** A place on a Redis limit through your client: given back and renewed on the server. */
export interface RedisPermit {
  /** Gives the place back; twice is harmless. */
  release(): Promise<void>;
  /** Extends the lease from now: false when it had expired or the permit was released. */
  renew(): Promise<boolean>;
}

/** A concurrency limit on Redis through your client (`await ConcurrencyLimit.redis(client, …)`). */
export interface RedisConcurrencyLimit extends Omit<ConcurrencyLimit, 'tryAcquire' | 'acquire'> {
  /** A place now, or null when every place is taken. */
  tryAcquire(): Promise<RedisPermit | null>;
  /** Waits for a place (asking every 5–50 ms): null when `timeoutMs` passes first. */
  acquire(options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<RedisPermit | null>;
}

/** A retry budget on Redis through your client (`await RetryBudget.redis(client, …)`). */
export interface RedisRetryBudget extends Omit<RetryBudget, 'recordRequest' | 'tryWithdraw' | 'counts'> {
  recordRequest(): Promise<void>;
  tryWithdraw(): Promise<boolean>;
  counts(): Promise<{ requests: number; retries: number }>;
}

/** Request starts at a rate with a burst (GCRA): in this process, or on Redis for a fleet (`Regulator.redis`). */
export class Regulator {
  /** `adaptive`: a 429 (`onThrottled`) halves the rate, down to 1/64; each success gives back 1/16 of it. */
  constructor(perSecond: RateLike, options?: { burst?: number; adaptive?: boolean });
  /**
   * The regulator under `key` on the Redis server your `client` (node-redis or ioredis) is
   * connected to — or of a URL, with the optional `redis` package installed — shared by every
   * process on every machine that uses them, timed by the server's clock. Resolves once the
   * key's settings are checked (a RecuoError `shared_mismatch` names both when the key was
   * set up otherwise).
   */
  static redis(client: RedisClientLike | string, key: string, perSecond: RateLike, options?: { burst?: number; adaptive?: boolean }): Promise<RedisRegulator>;
  /** 0 when a start was taken now, else the whole milliseconds to wait, rounded up (nothing taken). */
  tryAcquire(options?: { cost?: number }): number;
  /** As tryAcquire at your instant (ns): 0, or the wait in ns. */
  tryAcquireAt(nowNs: number | bigint, options?: { cost?: number }): number;
  /** Reserves the next start and waits for it with a timer: true, or false when `timeoutMs` would pass first. */
  acquire(options?: { cost?: number; signal?: AbortSignal; timeoutMs?: number }): Promise<boolean>;
  /**
   * Switches this process's regulator to adaptive or not (a Redis key's setting is made when
   * it is set up, with `Regulator.redis`).
   */
  setAdaptive(yes: boolean): void;
  /** A 429 was seen: an adaptive regulator halves its rate. */
  onThrottled(): void;
  /** A start succeeded: an adaptive regulator gives back 1/16 of its configured rate, up to it. */
  onSuccess(): void;
  readonly ratePerSecond: number;
  readonly burst: number;
  close(): void;
}

export class Permit {
  /** Gives the place back; twice is harmless. */
  release(): void;
  /** A local permit has no lease: true until released (a Redis permit's renews its lease). */
  renew(): boolean;
}

/** At most `limit` requests in flight. */
export class ConcurrencyLimit {
  constructor(limit: number);
  /**
   * At most `limit` requests in flight for every process on every machine that uses the Redis
   * server of `client` (or a URL) and `key`, each place a lease of `leaseMs` (1 ms to 1 day):
   * a holder that dies frees its place when its lease ends.
   */
  static redis(client: RedisClientLike | string, key: string, limit: number, leaseMs: number): Promise<RedisConcurrencyLimit>;
  /** A place now, or null when all are taken (a Redis limit: one round trip). */
  tryAcquire(): Permit | null;
  /** Waits for a place (a Redis limit asks every 5–50 ms, off the event loop): null when `timeoutMs` passes first. */
  acquire(options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<Permit | null>;
  readonly limit: number;
  /** Places held now (a Redis limit: this handle's). */
  readonly inFlight: number;
  /** The most places ever held at once (a Redis limit: this handle's). */
  readonly maxInFlight: number;
  close(): void;
}

/** Retries at most `ratio` of recent requests plus `floorPerS` (default 10% + 1/s over 10 s). */
export class RetryBudget {
  constructor(options?: { ratio?: number; floorPerS?: number; windowS?: number });
  /**
   * The budget under `key` on the Redis server of `client` (or a URL), shared by every process
   * of the fleet: the local budget's rule, settings and defaults. Fails closed: while the
   * server is out of reach a gate allows no retry.
   */
  static redis(client: RedisClientLike | string, key: string, options?: { ratio?: number; floorPerS?: number; windowS?: number }): Promise<RedisRetryBudget>;
  /** Counts a first attempt (a gate does it for you). */
  recordRequest(): void;
  /** Takes one retry if the budget allows it: true, or false with nothing taken. */
  tryWithdraw(): boolean;
  /** The first attempts and retries counted in the window. */
  counts(): { requests: number; retries: number };
  close(): void;
}

/** What every attempt passes: a place in flight, then a start slot; the budget for retries. */
export class Gate {
  constructor(parts?: {
    regulator?: Regulator | RedisRegulator;
    limit?: ConcurrencyLimit | RedisConcurrencyLimit;
    budget?: RetryBudget | RedisRetryBudget;
  });
  readonly regulator: Regulator | RedisRegulator | null;
  readonly limit: ConcurrencyLimit | RedisConcurrencyLimit | null;
  readonly budget: RetryBudget | RedisRetryBudget | null;
  close(): void;
}

export interface Plan {
  intervalMs: number;
  durationS: number;
  retries: number;
  inFlight: number;
  warnings: string[];
}

/** What a batch takes. Throws a RecuoError `target_above_allowance` when the server would throttle it. */
export function plan(requests: number, allowance: RateLike, target: RateLike, latencyS: number, retryFraction?: number): Plan;
export function formatRate(perSecond: number): string;

/** A URL without userinfo, secrets or personal data. */
export function redactUrl(url: string): string;
export function redactUrlDetailed(url: string): { url: string; malformed: boolean };
/** Headers as `[name, value]` pairs, sensitive values `[redacted]`. */
export function redactHeaders(headers: HeadersLike): [string, string][];
export function isSensitiveName(name: string): boolean;

/** Who answered: the API, a proxy or a CDN, with the evidence. */
export function whoAnswered(headers: HeadersLike | Response, options?: { expectedContentType?: string }): {
  origin: 'api' | 'proxy' | 'cdn' | 'unknown';
  confidence: 'low' | 'medium' | 'high';
  evidence: string[];
};

/** One attempt record (a redacted JSON line) from values you give. */
export function attemptRecord(record: {
  startUnixMs?: number;
  elapsedMs?: number;
  method?: string;
  url?: string;
  outcome: number | Transport | 'success';
  headers?: HeadersLike;
  verdict: Verdict;
  decision: { kind: Decision['kind']; delayMs?: number; nextAttempt?: number; reason?: GiveUpReason | null; retryAtMs?: number | null };
}): string;

/** recuo's monotonic clock (CLOCK_MONOTONIC), ms and ns: the machine's and the regulator's instants. */
export function monotonicMs(): number;
export function monotonicNs(): number;
/** A wait of `ns` nanoseconds in whole milliseconds, rounded up (recuo's one rounding of waits). */
export function waitMsFromNs(ns: number | bigint): number;

declare const recuo: {
  version: typeof version;
  libraryPath: typeof libraryPath;
  RecuoError: typeof RecuoError;
  GiveUpError: typeof GiveUpError;
  Policy: typeof Policy;
  Operation: typeof Operation;
  BatchQueue: typeof BatchQueue;
  StatsRecorder: typeof StatsRecorder;
  mergeStats: typeof mergeStats;
  AttemptPool: typeof AttemptPool;
  Regulator: typeof Regulator;
  ConcurrencyLimit: typeof ConcurrencyLimit;
  Permit: typeof Permit;
  RetryBudget: typeof RetryBudget;
  Gate: typeof Gate;
  parseRetryAfter: typeof parseRetryAfter;
  retryDelayMs: typeof retryDelayMs;
  backoffWindowMs: typeof backoffWindowMs;
  classify: typeof classify;
  retry: typeof retry;
  comRetry: typeof comRetry;
  buscarComRetry: typeof buscarComRetry;
  runBatch: typeof runBatch;
  currentAttempt: typeof currentAttempt;
  transportKind: typeof transportKind;
  requestPlan: typeof requestPlan;
  endingFor: typeof endingFor;
  giveUpMessage: typeof giveUpMessage;
  plan: typeof plan;
  formatRate: typeof formatRate;
  redactUrl: typeof redactUrl;
  redactUrlDetailed: typeof redactUrlDetailed;
  redactHeaders: typeof redactHeaders;
  isSensitiveName: typeof isSensitiveName;
  whoAnswered: typeof whoAnswered;
  attemptRecord: typeof attemptRecord;
  monotonicMs: typeof monotonicMs;
  monotonicNs: typeof monotonicNs;
  waitMsFromNs: typeof waitMsFromNs;
};
export default recuo;
