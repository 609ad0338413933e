// recuo: careful retries on recuo's Rust core, compiled to WebAssembly (recuo.wasm). How it is
// loaded is the runtime's (package.json's `imports` conditions, `#load`): read beside the
// package in Node, Deno and Bun, imported as a module in workerd, inlined for browsers and
// bundlers.

import { load } from '#load';
import { recuoApi } from './lib/api.js';

const api = recuoApi(load());

export const {
  version,
  libraryPath,
  RecuoError,
  GiveUpError,
  Policy,
  Operation,
  BatchQueue,
  StatsRecorder,
  mergeStats,
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
  runBatch,
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
  monotonicMs,
  monotonicNs,
  waitMsFromNs,
} = api;

export default api;
