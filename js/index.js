// recuo: careful retries on recuo's Rust core. Which build of the core runs, and how it is
// loaded, is the runtime's (package.json's `imports` conditions, `#load`): recuo.wasm read
// beside the package in Deno and Bun, imported as a module in workerd, inlined for browsers and
// bundlers; in Node, librecuo through koffi (RECUO_LIB, the copy bundled by `make js`, then the
// system's), or recuo.wasm with RECUO_WASM=1.

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
  monotonicMs,
  monotonicNs,
  waitMsFromNs,
} = api;

export default api;
