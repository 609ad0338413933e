// recuo's JavaScript surface over the C ABI of recuo's core (recuo.wasm). Everything here is conversion: JS values to
// the C structs and back, errors to exceptions, and the host's own effects (calling the
// operation, timers for the waits, AbortSignal). Every decision — the delays, the verdicts,
// when to stop, the records — comes from the core's operation machine behind the C ABI.
//
// This module only composes the API: each of lib/'s modules below holds one idea and installs
// it over the loaded library with what the modules before it made (one shared context).

import { installBatch } from './batch.js';
import { installConvert } from './convert.js';
import { installDecisions } from './decisions.js';
import { GiveUpError, RecuoError } from './errors.js';
import { installHttpRules } from './http-rules.js';
import { installLimits } from './limits.js';
import { installLoops } from './loops.js';
import { installMachine } from './machine.js';
import { installPolicy } from './policy.js';
import { installRecords } from './records.js';
import { installRedis } from './redis.js';

export { GiveUpError, RecuoError } from './errors.js';
export { utf8 } from './convert.js';

// In this order: each module takes what the ones before it made.
const MODULES = [
  installConvert, // conversion helpers: names, checks, text and bytes, C structs, Handle
  installPolicy, // the policy: one plain value, read and written by the core
  installDecisions, // decisions on one outcome: waits, backoff, verdicts
  installHttpRules, // the rules of one HTTP request
  installLimits, // waiting, without ever blocking the event loop; the limits and the gate
  installMachine, // the operation machine
  installLoops, // the loops: retry, comRetry, buscarComRetry
  installBatch, // the batch runner over the core's BatchQueue
  installRecords, // limits planned, records, redaction
];

/** Builds the whole API over one loaded module (`native`, from lib/wasm.js). */
export function recuoApi(native) {
  const f = native.fn;
  // Where each record's telemetry goes (recuo/otel's sink; null: nowhere).
  const telemetry = { sink: null };
  const ctx = { native, f, layout: native.layout, telemetry };
  for (const install of MODULES) Object.assign(ctx, install(ctx));
  installRedis(ctx);

  const api = {
    version: native.version,
    libraryPath: native.path,
    RecuoError,
    GiveUpError,
    Policy: ctx.Policy,
    Operation: ctx.Operation,
    BatchQueue: ctx.BatchQueue,
    StatsRecorder: ctx.StatsRecorder,
    mergeStats: ctx.mergeStats,
    AttemptPool: ctx.AttemptPool,
    Regulator: ctx.Regulator,
    ConcurrencyLimit: ctx.ConcurrencyLimit,
    Permit: ctx.Permit,
    RetryBudget: ctx.RetryBudget,
    Gate: ctx.Gate,
    parseRetryAfter: ctx.parseRetryAfter,
    retryDelayMs: ctx.retryDelayMs,
    backoffWindowMs: ctx.backoffWindowMs,
    classify: ctx.classify,
    retry: ctx.retry,
    comRetry: ctx.comRetry,
    buscarComRetry: ctx.buscarComRetry,
    runBatch: ctx.runBatch,
    currentAttempt: ctx.currentAttempt,
    transportKind: ctx.transportKind,
    requestPlan: ctx.requestPlan,
    endingFor: ctx.endingFor,
    giveUpMessage: ctx.giveUpMessage,
    plan: ctx.plan,
    formatRate: ctx.formatRate,
    redactUrl: ctx.redactUrl,
    redactUrlDetailed: ctx.redactUrlDetailed,
    redactHeaders: ctx.redactHeaders,
    isSensitiveName: ctx.isSensitiveName,
    whoAnswered: ctx.whoAnswered,
    attemptRecord: ctx.attemptRecord,
    monotonicMs: ctx.now,
    waitMsFromNs: ctx.waitMsFromNs,
    monotonicNs: () => Number(f.recuo_monotonic_ns()),
  };
  // For recuo/otel, not part of the API (not enumerable, not in index.d.ts): where every
  // record's telemetry goes, what a record's plain form means (the tests' build of the module
  // only), and the instruments — the core's mapping, handed over.
  Object.defineProperties(api, {
    _setTelemetry: {
      value(sink) {
        if (sink != null && typeof sink !== 'function') throw new TypeError('a telemetry sink must be a function');
        telemetry.sink = sink ?? null;
      },
    },
    _telemetryOf: {
      value(record) {
        if (typeof f.recuo_telemetry_json !== 'function') throw new TypeError('this build of recuo.wasm reads no record (the tests\' build does)');
        const b = ctx.bytes(JSON.stringify(record));
        return JSON.parse(ctx.text((buf, len, w) => f.recuo_telemetry_json(b, b.length, buf, len, w), 2048));
      },
    },
    _instruments: {
      value: () => JSON.parse(ctx.text((buf, len, w) => f.recuo_telemetry_instruments_json(buf, len, w), 2048)),
    },
  });
  return api;
}
