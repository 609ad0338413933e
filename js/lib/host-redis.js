// The limits on Redis through a client you already have — node-redis's `redis` or `ioredis` —
// in every runtime (recuo.wasm has no sockets of its own). The rules are the core's and
// recuo-redis's: the Lua scripts, their keys and arguments, the reading of the replies, when a
// call is needed and what its answer means. This module only runs the calls the core hands
// it (`EVALSHA`, then `EVAL` when the server answers `NOSCRIPT`), gives back the replies, and
// waits with timers.

import { utf8 } from './convert.js';
import { BUDGET_EXHAUSTED, HOST_PENDING, IO, RecuoError, WOULD_WAIT } from './errors.js';

/** Every call to the server ends within this long (ms), as the native client's do. */
const CALL_MS = 5000;
/** A look at a full limit is asked again after this long, at first and at most (ms). */
const FIRST_PAUSE_MS = 5;
const LONGEST_PAUSE_MS = 50;

/** Where a client connects, for errors: `host:port`, or what its options say. */
function serverOf(client) {
  const o = client?.options ?? {};
  if (typeof o.url === 'string') {
    try {
      const u = new URL(o.url);
      return `${u.hostname}:${u.port || 6379}`;
    } catch {
      return 'the Redis server';
    }
  }
  if (o.socket?.host || o.socket?.port) return `${o.socket.host ?? 'localhost'}:${o.socket.port ?? 6379}`;
  if (o.host || o.port) return `${o.host ?? 'localhost'}:${o.port ?? 6379}`;
  return 'the Redis server';
}

/** How to run a script on `client`: node-redis (`evalSha`) or ioredis (`evalsha`). */
function scriptRunner(client) {
  if (client != null && typeof client.evalsha === 'function' && typeof client.eval === 'function') {
    return {
      sha: (c) => client.evalsha(c.sha1, c.keys.length, ...c.keys, ...c.args),
      text: (c) => client.eval(c.script, c.keys.length, ...c.keys, ...c.args),
    };
  }
  if (client != null && typeof client.evalSha === 'function' && typeof client.eval === 'function') {
    return {
      sha: (c) => client.evalSha(c.sha1, { keys: c.keys, arguments: c.args }),
      text: (c) => client.eval(c.script, { keys: c.keys, arguments: c.args }),
    };
  }
  throw new TypeError('a Redis client must be a connected node-redis (`redis`) or ioredis client');
}

/** A reply's integers (numbers Redis answered as text count; nil is 0). */
function integers(reply) {
  if (!Array.isArray(reply)) throw new TypeError(`unexpected reply ${String(reply)}`);
  const out = new BigInt64Array(reply.length);
  reply.forEach((v, i) => {
    out[i] = v == null ? 0n : BigInt(typeof v === 'number' ? Math.trunc(v) : String(v));
  });
  return out;
}

/** Adds `Regulator.redis`, `ConcurrencyLimit.redis` and `RetryBudget.redis` over a client. */
export function installHostRedis(ctx) {
  const { f, check, bytes, integer, rate, text, now, waitMsFromNs, Handle, Regulator, ConcurrencyLimit, Permit, RetryBudget } = ctx;

  /** One limit's channel to the server: the calls the core hands over, run on `client`. */
  class Channel extends Handle {
    constructor(client, key) {
      const out = [null];
      check(f.recuo_host_channel_new(out));
      super(out[0], f.recuo_host_channel_free, 'a Redis channel');
      this._run = scriptRunner(client);
      this._server = serverOf(client);
      this._key = String(key);
      this._notices = Promise.resolve();
    }
    /**
     * Runs `call` (parsed JSON) on the server: its reply's integers. It ends within 5 s, and by
     * `untilMs` (recuo's monotonic ms: an operation's deadline) when given — a server that
     * stops answering never holds an operation past its deadline.
     */
    async _call(call, untilMs = null) {
      const within = Math.max(0, Math.min(CALL_MS, untilMs == null ? CALL_MS : untilMs - now()));
      let timer;
      const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${Math.round(within)} ms`)), within);
      });
      try {
        const run = async () => {
          try {
            return await this._run.sha(call);
          } catch (e) {
            if (!/NOSCRIPT/.test(String(e?.message))) throw e;
            return this._run.text(call);
          }
        };
        return integers(await Promise.race([run(), late]));
      } catch (e) {
        const error = new RecuoError(IO, 'io', `recuo: io: Redis at ${this._server} (key ${JSON.stringify(this._key)}): ${e?.message ?? e}`);
        error.cause = e;
        throw error;
      } finally {
        clearTimeout(timer);
      }
    }
    /** Runs the call the limit waits on (ending by `untilMs` too, when given) and answers it. */
    async serve(untilMs = null) {
      const json = text((b, len, w) => f.recuo_host_channel_pending(this.ptr, b, len, w), 4096);
      if (json === '') return;
      const reply = await this._call(JSON.parse(json), untilMs);
      check(f.recuo_host_channel_answer(this.ptr, reply, reply.length));
    }
    /** Runs every queued call, in order, after the ones queued before (errors ignored: the store's expiry settles them). */
    flush() {
      for (;;) {
        const json = text((b, len, w) => f.recuo_host_channel_take_notice(this.ptr, b, len, w), 4096);
        if (json === '') break;
        const call = JSON.parse(json);
        this._notices = this._notices.then(() => this._call(call)).catch(() => {});
      }
      return this._notices;
    }
    /** The key's settings, asked first: refused by name when the key was set up otherwise. */
    async settle() {
      await this.serve();
      const detail = new Uint8Array(512);
      const rc = f.recuo_host_channel_settled(this.ptr, detail, detail.length);
      const nul = detail.indexOf(0);
      check(rc, utf8(detail.subarray(0, nul < 0 ? detail.length : nul)));
    }
    /** `call()` (a status), its pending calls run and answered until it has its answer. */
    async ask(call) {
      for (let round = 0; ; round++) {
        const rc = call();
        await this.flush();
        if (rc !== HOST_PENDING) return rc;
        if (round > 8) throw new RecuoError(900, 'panic', 'recuo: the limit kept asking the host for calls');
        await this.serve();
      }
    }
  }

  /** A regulator on Redis through your client: every start asked of the server. */
  class HostRegulator extends Regulator {
    /** Takes a start now if one is allowed: 0, or the whole milliseconds to wait (nothing taken). */
    async tryAcquire({ cost = 1 } = {}) {
      const w = [0];
      const c = integer(cost, 'cost', 0xffffffff);
      const rc = await this._channel.ask(() => f.recuo_regulator_try_acquire(this.ptr, c, w));
      if (rc === WOULD_WAIT) return waitMsFromNs(w[0]);
      check(rc);
      return 0;
    }
    /** As `tryAcquire`, at `nowNs` on a time base every user shares (tests): 0 or the wait in ns. */
    async tryAcquireAt(nowNs, { cost = 1 } = {}) {
      const w = [0];
      const [n, c] = [integer(nowNs, 'nowNs'), integer(cost, 'cost', 0xffffffff)];
      const rc = await this._channel.ask(() => f.recuo_regulator_try_acquire_at(this.ptr, n, c, w));
      if (rc === WOULD_WAIT) return Number(w[0]);
      check(rc);
      return 0;
    }
    /** One reservation at `nowNs` on a shared time base (the vectors' tests): `{ reserved, waitNs }`. */
    async _reserveAt(nowNs, cost, maxWaitNs) {
      const w = [0];
      const rc = await this._channel.ask(() => f.recuo_regulator_reserve_at(this.ptr, nowNs, cost, maxWaitNs, w));
      if (rc !== WOULD_WAIT) check(rc);
      return { reserved: rc !== WOULD_WAIT, waitNs: Number(w[0]) };
    }
    async _reserve(cost, maxNs, waitOut) {
      return this._channel.ask(() => f.recuo_regulator_reserve(this.ptr, cost, maxNs, waitOut));
    }
    /** A 429 was seen: an adaptive key halves its rate for every holder. */
    async onThrottled() {
      check(await this._channel.ask(() => f.recuo_regulator_on_throttled(this.ptr)));
    }
    /** A start succeeded: an adaptive key gives back 1/16 of its configured rate. */
    async onSuccess() {
      check(await this._channel.ask(() => f.recuo_regulator_on_success(this.ptr)));
    }
  }

  /** A concurrency limit on Redis through your client: a wait asks the server every 5–50 ms. */
  class HostConcurrencyLimit extends ConcurrencyLimit {
    /** A place now (a Permit), or null when every place is taken. */
    async tryAcquire() {
      const out = [null];
      const rc = await this._channel.ask(() => f.recuo_concurrency_limit_try_acquire(this.ptr, out));
      if (rc === WOULD_WAIT) return null;
      check(rc);
      return new HostPermit(out[0], this);
    }
    async _acquireUntil(until, signal) {
      for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(LONGEST_PAUSE_MS, 2 * pause)) {
        if (signal?.aborted) return null;
        const permit = await this.tryAcquire();
        if (permit) return permit;
        const left = until === null ? pause : Math.min(pause, until - now());
        if (left <= 0) return null;
        await this._nap(left, signal);
      }
    }
  }

  /** A place on a Redis limit: given back (a call to the server) by `release()`. */
  class HostPermit extends Permit {
    release() {
      super.release();
      return this._limit._channel.flush();
    }
    /** Extends the lease from now: false when it had expired or the permit was released. */
    async renew() {
      if (this._ptr == null) return false;
      const renewed = [false];
      check(await this._limit._channel.ask(() => f.recuo_permit_renew(this._ptr, renewed)));
      return renewed[0];
    }
  }

  /** A retry budget on Redis through your client: counted by the server for the fleet. */
  class HostRetryBudget extends RetryBudget {
    async recordRequest() {
      check(await this._channel.ask(() => f.recuo_retry_budget_record_request(this.ptr)));
    }
    async tryWithdraw() {
      const rc = await this._channel.ask(() => f.recuo_retry_budget_try_withdraw(this.ptr));
      if (rc === BUDGET_EXHAUSTED) return false;
      check(rc);
      return true;
    }
    async counts() {
      const requests = [0];
      const retries = [0];
      check(await this._channel.ask(() => f.recuo_retry_budget_counts(this.ptr, requests, retries)));
      return { requests: Number(requests[0]), retries: Number(retries[0]) };
    }
    /**
     * The retry a decision would take, asked of the server before the machine decides. A
     * server that cannot answer leaves no answer: the budget then grants no retry (it fails
     * closed, as with the native client).
     */
    async _askWithdrawal() {
      // The requests counted so far reach the server first: the retry is judged against them.
      await this._channel.flush();
      if (f.recuo_retry_budget_try_withdraw(this.ptr) !== HOST_PENDING) return;
      await this._channel.serve().catch(() => {});
    }
  }

  /**
   * Makes the limit with `make(channel)` over `client`, its key's settings checked first. A
   * client it `owned` (made from a URL) is closed with the limit, or when the settings fail.
   */
  async function hosted({ client, owned }, key, make) {
    const channel = new Channel(client, key);
    const limit = make(channel);
    limit._channel = channel;
    const close = limit.close.bind(limit);
    limit.close = () => {
      close();
      channel.close();
      if (owned) client.quit().catch(() => {});
    };
    try {
      await channel.settle();
    } catch (e) {
      limit.close();
      throw e;
    }
    return limit;
  }

  const keyBytes = (key) => {
    if (typeof key !== 'string' || key === '') throw new TypeError('a Redis key must be a non-empty string');
    return bytes(key);
  };

  /** `Regulator.redis(client, key, perSecond, { burst, adaptive })` over `{ client, owned }`. */
  function regulatorOn(client, key, perSecond, { burst = 1, adaptive = false } = {}) {
    const k = keyBytes(key);
    const [r, b] = [rate(perSecond), integer(burst, 'burst', 0xffffffff)];
    return hosted(client, key, (ch) => {
      const out = [null];
      check(f.recuo_regulator_new_host(k, k.length, r, b, Boolean(adaptive), ch.ptr, out));
      return new HostRegulator(undefined, { _ptr: out[0] });
    });
  }

  /** `ConcurrencyLimit.redis(client, key, limit, leaseMs)` over `{ client, owned }`. */
  function limitOn(client, key, limit, leaseMs) {
    const k = keyBytes(key);
    const [l, lease] = [integer(limit, 'limit', 0xffffffff), integer(leaseMs, 'leaseMs')];
    return hosted(client, key, (ch) => {
      const out = [null];
      check(f.recuo_concurrency_limit_new_host(k, k.length, l, lease, ch.ptr, out));
      return new HostConcurrencyLimit(undefined, { _ptr: out[0] });
    });
  }

  /** `RetryBudget.redis(client, key, { ratio, floorPerS, windowS })` over `{ client, owned }`. */
  function budgetOn(client, key, { ratio = 0.1, floorPerS = 1, windowS = 10 } = {}) {
    const k = keyBytes(key);
    const w = integer(windowS, 'windowS', 0xffffffff);
    return hosted(client, key, (ch) => {
      const out = [null];
      check(f.recuo_retry_budget_new_host(k, k.length, Number(ratio), Number(floorPerS), w, ch.ptr, out));
      return new HostRetryBudget({ _ptr: out[0] });
    });
  }

  return { regulatorOn, limitOn, budgetOn };
}
