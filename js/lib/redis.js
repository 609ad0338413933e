// The limits on Redis for Node: `Regulator.redis`, `ConcurrencyLimit.redis` and
// `RetryBudget.redis`, over librecuo's `recuo_*_new_redis` (recuo-redis). Conversion only:
// the rules are the server's scripts and the core's. Every process on every machine that
// uses the same server and key shares one allowance, one limit, one budget.
//
// The constructors connect at once (a blocking call, at most 5 s: the deadline of every call
// to the server). A wait — `acquire()`, a gate's — asks the server on one of koffi's worker
// threads and waits with timers, so the event loop is never held by a wait; `tryAcquire()`,
// an adaptive regulator's `onThrottled()` and `onSuccess()` (the latter only while the rate is
// cut), `renew()`, `release()` and the budget's counting are one round trip on the calling
// thread.

import { utf8 } from './convert.js';
import { installHostRedis } from './host-redis.js';

const WOULD_WAIT = 210;
/** How long a wait for a place pauses between two questions to the server, at first and at most. */
const FIRST_PAUSE_MS = 5;
const LONGEST_PAUSE_MS = 50;

/** Adds `redis` to the classes of one API (lib/api.js) built over one loaded library. */
export function installRedis(ctx) {
  const { f, check, bytes, integer, rate, now, Regulator, ConcurrencyLimit, Permit, RetryBudget } = ctx;
  // With a client of yours instead of a URL (node-redis or ioredis), in every runtime: the
  // calls go through it, and the constructors resolve once the key's settings are checked.
  const hosts = installHostRedis(ctx);
  /** A C call on one of koffi's worker threads: its status, when it returns. */
  const later = (fn, ...args) =>
    new Promise((resolve, reject) => fn.async(...args, (err, rc) => (err ? reject(err) : resolve(rc))));

  /** Calls `open(url, urlLen, key, keyLen, out, detail, detailLen)`: the handle, or a RecuoError with the detail. */
  function opened(url, key, open) {
    const u = bytes(url);
    const k = bytes(key);
    const out = [null];
    const detail = new Uint8Array(512);
    const rc = open(u, u.length, k, k.length, out, detail, detail.length);
    const nul = detail.indexOf(0);
    check(rc, utf8(detail.subarray(0, nul < 0 ? detail.length : nul)));
    return out[0];
  }

  /** A regulator on a Redis server: its reservations are asked from a worker thread. */
  class RedisRegulator extends Regulator {
    _reserve(cost, maxNs, waitOut) { return later(f.recuo_regulator_reserve, this.ptr, cost, maxNs, waitOut); }
  }

  /** A concurrency limit on a Redis server: a wait asks the server every 5–50 ms. */
  class RedisConcurrencyLimit extends ConcurrencyLimit {
    async _acquireUntil(until, signal) {
      for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(LONGEST_PAUSE_MS, 2 * pause)) {
        if (signal?.aborted) return null;
        const out = [null];
        const rc = await later(f.recuo_concurrency_limit_try_acquire, this.ptr, out);
        if (rc !== WOULD_WAIT) {
          check(rc);
          return new Permit(out[0], this);
        }
        const left = until === null ? pause : Math.min(pause, until - now());
        if (left <= 0) return null;
        await this._nap(left, signal);
      }
    }
  }

  /**
   * The regulator kept on the Redis server at `url` under `key`: one allowance for every
   * process on every machine that uses them, timed by the server's clock. With `adaptive`, the
   * interval in force lives on the server: a 429 reported by any holder halves the rate for
   * all of them. A RecuoError `shared_mismatch` for a key set up with another rate, burst or
   * adaptive setting, `io` for a server out of reach — then, and from `tryAcquire` and the
   * waits later: never a start without the server's word.
   */
  Regulator.redis = function redis(url, key, perSecond, { burst = 1, adaptive = false } = {}) {
    if (hosts.isClient(url)) return hosts.regulatorOn(url, key, perSecond, { burst, adaptive });
    const b = integer(burst, 'burst', 0xffffffff);
    const r = rate(perSecond);
    const a = Boolean(adaptive);
    const ptr = opened(url, key, (u, ul, k, kl, out, d, dl) => f.recuo_regulator_new_redis_with(u, ul, k, kl, r, b, a, out, d, dl));
    return new RedisRegulator(undefined, { _ptr: ptr });
  };

  /**
   * At most `limit` requests in flight for every process on every machine that uses the Redis
   * server at `url` and `key`, each place a lease of `leaseMs` (1 ms to 1 day): a holder that
   * dies frees its place when its lease ends; `permit.renew()` extends it. A RecuoError
   * `zero_limit`, `invalid_lease`, `shared_mismatch` (a key set up otherwise) or `io` (a
   * server out of reach — then, and from the acquires later: no place without the server's
   * word).
   */
  ConcurrencyLimit.redis = function redis(url, key, limit, leaseMs) {
    if (hosts.isClient(url)) return hosts.limitOn(url, key, limit, leaseMs);
    const l = integer(limit, 'limit', 0xffffffff);
    const lease = integer(leaseMs, 'leaseMs');
    const ptr = opened(url, key, (u, ul, k, kl, out, d, dl) => f.recuo_concurrency_limit_new_redis(u, ul, k, kl, l, lease, out, d, dl));
    return new RedisConcurrencyLimit(undefined, { _ptr: ptr });
  };

  /**
   * The retry budget kept on the Redis server at `url` under `key`, shared by the fleet: the
   * local budget's rule and settings (the same defaults). A RecuoError `invalid_budget`,
   * `shared_mismatch` or `io`. It fails closed: no retry while the server is out of reach.
   */
  RetryBudget.redis = function redis(url, key, { ratio = 0.1, floorPerS = 1, windowS = 10 } = {}) {
    if (hosts.isClient(url)) return hosts.budgetOn(url, key, { ratio, floorPerS, windowS });
    const w = integer(windowS, 'windowS', 0xffffffff);
    const ptr = opened(url, key, (u, ul, k, kl, out, d, dl) =>
      f.recuo_retry_budget_new_redis(u, ul, k, kl, Number(ratio), Number(floorPerS), w, out, d, dl));
    return new RetryBudget({ _ptr: ptr });
  };
}
