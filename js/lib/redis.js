// `Regulator.redis`, `ConcurrencyLimit.redis` and `RetryBudget.redis`: the limits kept on a
// Redis server, shared by every process on every machine that uses the same server and key.
// Give them a client you already have (node-redis's `redis` or `ioredis`), or a URL, for
// which a node-redis client is made when the `redis` package (an optional peer dependency) is
// installed. Conversion only: the calls are recuo-redis's, run through the client by
// lib/host-redis.js.

import { installHostRedis } from './host-redis.js';

/** A connected node-redis client for `url`, from the optional `redis` package. */
async function clientFor(url) {
  let createClient;
  try {
    ({ createClient } = await import('redis'));
  } catch {
    throw new TypeError('a Redis URL needs the `redis` package (npm install redis); or pass a connected node-redis or ioredis client');
  }
  const client = createClient({ url });
  client.on('error', () => {}); // a command's failure is the limit's error, which names the server
  await client.connect();
  return client;
}

/** Adds `redis` to the limits' classes of one API (lib/api.js). */
export function installRedis(ctx) {
  const { Regulator, ConcurrencyLimit, RetryBudget } = ctx;
  const hosts = installHostRedis(ctx);
  /** The client given, or one made for the URL given (the limit's own: its `close()` closes it). */
  const clientOf = async (c) => (typeof c === 'string' ? { client: await clientFor(c), owned: true } : { client: c, owned: false });

  /**
   * The regulator under `key` on the Redis server of `client` (or of a URL): one allowance
   * for every process on every machine, timed by the server's clock; with `adaptive`, a 429
   * reported by any holder halves the rate for all of them. Resolves once the key's settings
   * are checked: a RecuoError `shared_mismatch` names both when the key was set up otherwise.
   * A limit made from a URL holds its own connection until its `close()`.
   */
  Regulator.redis = async function redis(client, key, perSecond, { burst = 1, adaptive = false } = {}) {
    return hosts.regulatorOn(await clientOf(client), key, perSecond, { burst, adaptive });
  };

  /**
   * At most `limit` requests in flight for every process that uses the Redis server and `key`,
   * each place a lease of `leaseMs` (1 ms to 1 day): a holder that dies frees its place when
   * its lease ends; `permit.renew()` extends it.
   */
  ConcurrencyLimit.redis = async function redis(client, key, limit, leaseMs) {
    return hosts.limitOn(await clientOf(client), key, limit, leaseMs);
  };

  /** The retry budget under `key` on the Redis server, shared by the fleet: the local budget's rule and settings. */
  RetryBudget.redis = async function redis(client, key, { ratio = 0.1, floorPerS = 1, windowS = 10 } = {}) {
    return hosts.budgetOn(await clientOf(client), key, { ratio, floorPerS, windowS });
  };
}
