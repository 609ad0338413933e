// One worker of guide B's job, in Node: its share of the reads as one runBatch through the
// limits every worker shares (keys on the Redis server at REDIS_URL): one rate RATE (such as
// 90/min), at most 3 requests in flight, one retry budget. With fetch, within DEADLINE_S
// seconds for the whole share, starting at START_NS (CLOCK_MONOTONIC ns: process.hrtime's
// clock, the same in every process; 0: at once). ADAPTIVE is "adaptive" (the rate slows down
// after a 429) or "steady". Prints its stats (as the core's plain form) as one JSON line, for
// the parent to add up.
//
//     node worker.mjs BASE_URL RATE DEADLINE_S START_NS REDIS_URL ADAPTIVE ID...

import { ConcurrencyLimit, Gate, Policy, Regulator, RetryBudget, runBatch } from 'recuo';

const [base, rate, deadline, start, redisUrl, adaptive, ...ids] = process.argv.slice(2);
const regulator = await Regulator.redis(redisUrl, 'guide-b:regulator', rate, { adaptive: adaptive === 'adaptive' });
const limit = await ConcurrencyLimit.redis(redisUrl, 'guide-b:limit', 3, 30_000);
const budget = await RetryBudget.redis(redisUrl, 'guide-b:budget');
const gate = new Gate({ regulator, limit, budget });

// fetch answers a 429 or 503 as a Response: runBatch judges it by its status and Retry-After.
// The body is read at once, so that the connection goes back to the pool.
const operations = ids.map((id) => async (attempt) => {
  const response = await fetch(`${base}/items/${id}`, { signal: attempt.signal });
  await response.arrayBuffer();
  return response;
});
// Node loads fetch's HTTP machinery on its first call (about 70 ms): a first read that paid
// for it would hold its place in flight that much longer, and the next start would miss its slot.
await (await fetch('data:,')).arrayBuffer();
while (process.hrtime.bigint() < BigInt(start)) await new Promise((resolve) => setTimeout(resolve, 1));
const report = await runBatch(operations, { policy: Policy.batch(), gate, workers: 3, deadlineMs: Number(deadline) * 1000 });
const s = report.stats;
const stats = {
  initial: s.initial, retries: s.retries, successes: s.successes, failures: s.failures, not_started: s.notStarted,
  throttled: s.throttled, unavailable: s.unavailable, min_spacing_ns: s.minSpacingNs, first_start_ns: s.firstStartNs,
  last_start_ns: s.lastStartNs, max_in_flight: s.maxInFlight,
};
console.log(JSON.stringify(stats));
for (const shared of [regulator, limit, budget]) await shared.close?.();
