// recuo for Node: careful retries on recuo's Rust core, through its C ABI (librecuo, loaded
// with koffi). The library is found at import — RECUO_LIB, the copy bundled in the package
// (`make js`), then the system's librecuo.so.0.1 (`make install`) — and its version checked;
// `recuo/library`'s `openRecuo({ path })` loads one from a path of your choice.

import { openLibrary } from './lib/native.js';
import { loadWasm } from './lib/load.js';
import { recuoApi } from './lib/api.js';

const api = recuoApi(process.env.RECUO_WASM === '1' ? loadWasm() : openLibrary());

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
