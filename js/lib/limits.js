// Waiting, without ever blocking the event loop, and what an attempt waits for: a regulator
// (start slots at a rate), a concurrency limit (places in flight), a retry budget, and the gate
// that holds them. Timers and AbortSignal are the host's; every allowance is the core's.

import { BUDGET_EXHAUSTED, WOULD_WAIT } from './errors.js';

/** The longest delay a timer takes (Node fires a longer one at once). */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** The clocks, the waits and the limits over one loaded library (`ctx`: lib/convert.js's helpers). */
/** How often a wait for a place looks again when no release in this process woke it, ms. */
const POLL_MS = 50;

export function installLimits(ctx) {
  const { f, check, integer, ms, rate, oneOf, Handle } = ctx;

  const now = () => Number(f.recuo_monotonic_ms());
  /** A wait of `ns` nanoseconds in whole milliseconds, rounded up (the core's one rounding). */
  const waitMsFromNs = (ns) => Number(f.recuo_wait_ms_from_ns(typeof ns === 'bigint' ? ns : integer(ns, 'ns')));

  /** Resolves true after `delay` ms, or false at once when `signal` aborts. */
  function wait(delay, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(false);
      let timer;
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const arm = (left) => {
        timer = setTimeout(() => {
          if (left > LONGEST_TIMER_MS) return arm(left - LONGEST_TIMER_MS);
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        }, Math.min(left, LONGEST_TIMER_MS));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      arm(Math.max(0, delay));
    });
  }

  const abortReason = (signal) => signal.reason ?? Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });

  /**
   * A regulator: request starts at a rate with a burst (GCRA), in this process (across
   * processes and machines: on Redis, through your client — lib/host-redis.js).
   */
  class Regulator extends Handle {
    constructor(perSecond, { burst = 1, adaptive = false, _ptr } = {}) {
      if (_ptr !== undefined) {
        super(_ptr, f.recuo_regulator_free, 'a regulator');
        return;
      }
      const out = [null];
      check(f.recuo_regulator_new(rate(perSecond), integer(burst, 'burst', 0xffffffff), out));
      super(out[0], f.recuo_regulator_free, 'a regulator');
      if (adaptive) this.setAdaptive(true);
    }
    /** Takes a start now if one is allowed: 0, or the whole milliseconds to wait, rounded up (nothing taken). */
    tryAcquire({ cost = 1 } = {}) {
      const w = [0];
      const rc = f.recuo_regulator_try_acquire(this.ptr, integer(cost, 'cost', 0xffffffff), w);
      if (rc === WOULD_WAIT) return waitMsFromNs(w[0]);
      check(rc);
      return 0;
    }
    /** As `tryAcquire`, at your instant in nanoseconds (fake clocks): 0 or the wait in ns. */
    tryAcquireAt(nowNs, { cost = 1 } = {}) {
      const w = [0];
      const rc = f.recuo_regulator_try_acquire_at(this.ptr, integer(nowNs, 'nowNs'), integer(cost, 'cost', 0xffffffff), w);
      if (rc === WOULD_WAIT) return Number(w[0]);
      check(rc);
      return 0;
    }
    /**
     * Waits (timers, never blocking) for a start: resolves true once taken, false when
     * `timeoutMs` would pass first (nothing taken); rejects when `signal` aborts.
     */
    async acquire({ cost = 1, signal, timeoutMs } = {}) {
      const until = timeoutMs == null ? null : now() + ms(timeoutMs, 'timeoutMs');
      const ok = await this._acquireUntil(cost, until, signal);
      if (signal?.aborted) throw abortReason(signal);
      return ok;
    }
    /**
     * Reserves the next slot if it comes by `until` (recuo's monotonic ms; null: whenever),
     * then waits for it with a timer — first come, first served, as the blocking acquires of
     * other processes. False when it would come too late (nothing reserved) or `signal`
     * aborted the wait (the slot is spent unused: fewer starts, never more).
     */
    async _acquireUntil(cost, until, signal) {
      if (signal?.aborted) return false;
      const max = until === null ? 2n ** 64n - 1n : BigInt(Math.max(0, Math.floor((until - now()) * 1e6)));
      const w = [0];
      const rc = await this._reserve(integer(cost, 'cost', 0xffffffff), max, w);
      if (rc === WOULD_WAIT) return false;
      check(rc);
      const delay = waitMsFromNs(w[0]);
      return delay <= 0 || (await wait(delay, signal));
    }
    /** One reservation (a Redis regulator asks its server from a worker thread). */
    _reserve(cost, maxNs, waitOut) { return f.recuo_regulator_reserve(this.ptr, cost, maxNs, waitOut); }
    /** This process's regulator adapts or not; a shared one's setting is its state's (another one is refused). */
    setAdaptive(yes) { check(f.recuo_regulator_set_adaptive(this.ptr, Boolean(yes))); }
    /** A 429 was seen: an adaptive regulator halves its rate (for every holder of a shared one). */
    onThrottled() { check(f.recuo_regulator_on_throttled(this.ptr)); }
    /** A start succeeded: an adaptive regulator gives back 1/16 of its configured rate. */
    onSuccess() { check(f.recuo_regulator_on_success(this.ptr)); }
    get ratePerSecond() { return f.recuo_regulator_rate_per_s(this.ptr); }
    get burst() { return f.recuo_regulator_burst(this.ptr); }
  }

  /** A place in flight of a ConcurrencyLimit: give it back with `release()`. */
  class Permit {
    constructor(ptr, limit) {
      this._ptr = ptr;
      this._limit = limit;
    }
    release() {
      if (this._ptr != null) {
        f.recuo_permit_release(this._ptr);
        this._ptr = null;
        this._limit._wake();
      }
    }
    /**
     * Extends a Redis limit's lease from now: false when it had expired (the place is not
     * taken back) or the permit was released; a local permit has no lease (true).
     */
    renew() {
      if (this._ptr == null) return false;
      const renewed = [false];
      check(f.recuo_permit_renew(this._ptr, renewed));
      return renewed[0];
    }
  }

  /** At most `limit` requests in flight. */
  class ConcurrencyLimit extends Handle {
    constructor(limit, { _ptr } = {}) {
      const out = [_ptr];
      if (_ptr === undefined) check(f.recuo_concurrency_limit_new(integer(limit, 'limit', 0xffffffff), out));
      super(out[0], f.recuo_concurrency_limit_free, 'a concurrency limit');
      this._waiters = new Set();
    }
    tryAcquire() {
      const out = [null];
      const rc = f.recuo_concurrency_limit_try_acquire(this.ptr, out);
      if (rc === WOULD_WAIT) return null;
      check(rc);
      return new Permit(out[0], this);
    }
    /** Waits for a place: a Permit, or null when `timeoutMs` passes first; rejects when `signal` aborts. */
    async acquire({ signal, timeoutMs } = {}) {
      const until = timeoutMs == null ? null : now() + ms(timeoutMs, 'timeoutMs');
      const permit = await this._acquireUntil(until, signal);
      if (signal?.aborted) {
        permit?.release();
        throw abortReason(signal);
      }
      return permit;
    }
    async _acquireUntil(until, signal) {
      for (;;) {
        if (signal?.aborted) return null;
        const permit = this.tryAcquire();
        if (permit) return permit;
        // Woken at once by a release in this process; the poll bounds a wait on a limit's own state.
        const left = until === null ? POLL_MS : Math.min(POLL_MS, until - now());
        if (left <= 0) return null;
        await this._nap(left, signal);
      }
    }
    /** Waits `ms` at most: woken by a release in this process, or by `signal`. */
    _nap(ms, signal) {
      return new Promise((resolve) => {
        const done = () => { clearTimeout(t); this._waiters.delete(done); resolve(); };
        const t = setTimeout(done, ms);
        this._waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    _wake() { for (const w of [...this._waiters]) { w(); break; } }
    get limit() { return f.recuo_concurrency_limit_limit(this.ptr); }
    get inFlight() { return f.recuo_concurrency_limit_in_flight(this.ptr); }
    get maxInFlight() { return f.recuo_concurrency_limit_max_in_flight(this.ptr); }
  }

  /** Retries at most a ratio of recent requests plus a floor. */
  class RetryBudget extends Handle {
    constructor({ ratio, floorPerS, windowS, _ptr } = {}) {
      const out = [_ptr];
      if (_ptr !== undefined) {
        // made by RetryBudget.redis
      } else if (ratio === undefined && floorPerS === undefined && windowS === undefined) {
        check(f.recuo_retry_budget_new_default(out));
      } else {
        check(f.recuo_retry_budget_new(ratio ?? 0.1, floorPerS ?? 1, integer(windowS ?? 10, 'windowS', 0xffffffff), out));
      }
      super(out[0], f.recuo_retry_budget_free, 'a retry budget');
    }
    /** Counts a first attempt (a gate does it for you). */
    recordRequest() { check(f.recuo_retry_budget_record_request(this.ptr)); }
    /** Takes one retry if the budget allows it: true, or false with nothing taken. */
    tryWithdraw() {
      const rc = f.recuo_retry_budget_try_withdraw(this.ptr);
      if (rc === BUDGET_EXHAUSTED) return false;
      check(rc);
      return true;
    }
    /** The first attempts and the retries counted in the window: `{ requests, retries }`. */
    counts() {
      const requests = [0];
      const retries = [0];
      check(f.recuo_retry_budget_counts(this.ptr, requests, retries));
      return { requests: Number(requests[0]), retries: Number(retries[0]) };
    }
  }

  /**
   * What every attempt passes, first or retry: a place in flight, then a start slot; the
   * operation machine counts the budget and tells an adaptive regulator.
   */
  class Gate extends Handle {
    constructor({ regulator, limit, budget } = {}) {
      oneOf(regulator, Regulator, 'regulator');
      oneOf(limit, ConcurrencyLimit, 'limit');
      oneOf(budget, RetryBudget, 'budget');
      super(f.recuo_gate_new(), f.recuo_gate_free, 'a gate');
      if (regulator) check(f.recuo_gate_set_regulator(this.ptr, regulator.ptr));
      if (limit) check(f.recuo_gate_set_limit(this.ptr, limit.ptr));
      if (budget) check(f.recuo_gate_set_budget(this.ptr, budget.ptr));
      this.regulator = regulator ?? null;
      this.limit = limit ?? null;
      this.budget = budget ?? null;
    }
  }

  return { now, waitMsFromNs, wait, abortReason, Regulator, Permit, ConcurrencyLimit, RetryBudget, Gate };
}
