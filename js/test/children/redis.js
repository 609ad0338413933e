// A child process of redis.test.js — another machine of the fleet:
// - `budget URL KEY N`: counts N first attempts in the Redis budget (ratio 0.5, no floor);
// - `fleet URL KEY BASE CALLS`: CALLS concurrent retry() GETs of BASE/fleet through a gate
//   holding the Redis limit of 2 at KEY, and prints how many ended 200.
import { ConcurrencyLimit, Gate, Policy, RetryBudget, retry } from '../../index.js';

const [mode, url, key, ...rest] = process.argv.slice(2);
if (mode === 'budget') {
  const budget = RetryBudget.redis(url, key, { ratio: 0.5, floorPerS: 0, windowS: 10 });
  for (let i = 0; i < Number(rest[0]); i++) budget.recordRequest();
  budget.close();
  process.stdout.write('counted');
} else if (mode === 'fleet') {
  const [base, calls] = rest;
  const gate = new Gate({ limit: ConcurrencyLimit.redis(url, key, 2, 10000) });
  const policy = new Policy({ maxAttempts: 2, baseMs: 5, capMs: 20 });
  const answers = await Promise.all(
    Array.from({ length: Number(calls) }, () => retry(() => fetch(`${base}/fleet`), { policy, gate })),
  );
  process.stdout.write(String(answers.filter((a) => a.status === 200).length));
}
