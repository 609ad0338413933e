// The batch runner: operations through one policy and one gate, `workers` at a time, with a
// deadline for the whole batch. Which operation starts next (its deadline clipped to what is
// left of the batch's), which are not started and why, when the queue stops and how far the
// batch has come are the core's BatchQueue's; each operation is the core's machine, driven as
// `retry` drives it. What stays here is the host's: the async workers, the timers, waking
// the waits when the queue stops, and calling back.

/** `runBatch` over one loaded library (`ctx`: what every module before this one made). */
export function installBatch(ctx) {
  const { integer, Policy, theDefaultPolicy, Gate, StatsRecorder, BatchQueue, Operation, drive, poolFor, now, wait,
    checkSignal, telemetry } = ctx;

  function checked(operations, options) {
    if (operations == null || typeof operations[Symbol.iterator] !== 'function') {
      throw new TypeError('operations must be an iterable of functions');
    }
    const ops = Array.from(operations);
    ops.forEach((op, i) => {
      if (typeof op !== 'function') throw new TypeError(`operations[${i}] must be a function`);
    });
    const { policy = theDefaultPolicy(), gate, workers = 1, deadlineMs = null, classify, onProgress, onRecord, signal } = options;
    if (!(policy instanceof Policy)) throw new TypeError('policy must be a recuo Policy');
    if (gate != null && !(gate instanceof Gate)) throw new TypeError('gate must be a recuo Gate');
    if (integer(workers, 'workers') < 1) throw new RangeError('workers must be at least 1');
    if (deadlineMs != null) integer(deadlineMs, 'deadlineMs');
    for (const [name, fn] of [['classify', classify], ['onProgress', onProgress], ['onRecord', onRecord]]) {
      if (fn != null && typeof fn !== 'function') throw new TypeError(`${name} must be a function`);
    }
    checkSignal(signal);
    void policy.ptr; // a closed policy is refused here
    return ops;
  }

  /**
   * Runs `operations` (functions of an `Attempt`), each retried as `retry` would, all through
   * one policy and one gate, `workers` at a time, within `deadlineMs` for the whole batch;
   * tells `onProgress` the batch's progress as each operation ends; resolves to
   * `{ results, stats, elapsedMs }`.
   */
  async function runBatch(operations, options = {}) {
    const ops = checked(operations, options);
    const { policy = theDefaultPolicy(), gate, workers = 1, deadlineMs = null, classify: judgeError, onProgress, onRecord,
      stopOnUnreachableWait = false, signal } = options;
    const started = now();
    const recorder = new StatsRecorder();
    const queue = new BatchQueue(policy, ops.length, started, {
      deadlineMs, stopOnUnreachableWait, statsRecorder: recorder,
      // The operations are functions: their records name no request.
      records: onRecord || telemetry.sink ? { requests: [], unixMs: Date.now() } : undefined,
    });
    const results = new Array(ops.length);
    const running = new Set();
    // Wakes the operations that wait when the queue stops (or the batch ends in an error):
    // their machines, told the queue stopped, then give up `queue_stopped`.
    const stopped = new AbortController();
    const wake = signal ? AbortSignal.any([signal, stopped.signal]) : stopped.signal;
    const sleep = (ms) => wait(ms, wake);
    let failure = null; // what a callback threw: it ends the batch and rejects
    const fail = (e) => {
      failure ??= { error: e };
      queue.stop('cancelled');
      stopped.abort();
    };
    const onAbort = () => queue.stop('cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    const judge = async (e) => (judgeError ? judgeError(e) : true);
    const sink = telemetry.sink;
    const flushQueue = () => {
      if (!onRecord && !sink) return;
      try {
        for (let r = queue.pollRecord(); r; r = queue.pollRecord()) {
          if (sink) sink(queue.recordTelemetry());
          if (onRecord) onRecord(r.level, r.line);
        }
      } catch (e) {
        fail(e);
      }
    };
    const ended = (index, end, result) => {
      results[index] = result;
      const progress = queue.ended(index, end);
      if (!onProgress || failure) return;
      try {
        onProgress(progress);
      } catch (e) {
        fail(e);
      }
    };

    async function runOne(index, opPolicy) {
      const from = poolFor(opPolicy.maxAttempts, true);
      const op = new Operation(opPolicy, {
        gate, statsRecorder: recorder, pool: from.pool, nested: from.nested, records: onRecord || telemetry.sink ? 'debug' : undefined,
      });
      op._header = opPolicy.idempotencyHeader;
      opPolicy.close();
      running.add(op);
      let value;
      let error = null;
      try {
        value = await drive(op, {
          call: ops[index], judge, signal, gate, sleep, onRecord, http: true, style: 'client', pool: from.context,
        });
      } catch (e) {
        error = e;
      }
      running.delete(op);
      const end = op.batchResult(false);
      const report = op.report();
      op.close();
      if (queue.finished(index, end.end === 'gave_up' ? end.reason : null)) {
        for (const other of running) other.stopQueue(queue.stopped);
        stopped.abort();
      }
      ended(index, end, {
        status: end.end,
        value: end.end === 'not_started' ? undefined : value,
        error: end.end === 'gave_up' ? error : null,
        reason: end.reason,
        stoppedBy: end.stoppedBy,
        attempts: report.attempts,
        report: end.end === 'gave_up' ? report : null,
      });
    }

    async function worker() {
      for (;;) {
        const next = queue.next(now());
        flushQueue();
        if (next.next === 'finished') return;
        if (next.next === 'not_started') {
          const end = { end: 'not_started', reason: next.reason, stoppedBy: next.stoppedBy };
          ended(next.index, end, {
            status: 'not_started', value: undefined, error: null, reason: next.reason, stoppedBy: next.stoppedBy, attempts: 0,
            report: null,
          });
          continue;
        }
        await runOne(next.index, next.policy);
      }
    }

    try {
      await Promise.all(Array.from({ length: Math.min(workers, ops.length) }, worker));
    } finally {
      signal?.removeEventListener('abort', onAbort);
      queue.close();
    }
    const stats = recorder.snapshot();
    recorder.close();
    if (failure) throw failure.error;
    return { results, stats, elapsedMs: now() - started };
  }

  return { runBatch };
}
