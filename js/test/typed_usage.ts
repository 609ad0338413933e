// Type-checked by test/types.test.js (tsc --noEmit --strict): what a TypeScript user writes
// against index.d.ts and the generated values.d.ts. Never run.

import { Policy, Gate, Regulator, ConcurrencyLimit, RetryBudget, runBatch, type BatchProgress, type GiveUpReason, type PolicyValue, type ReportValue, type RedisClientLike } from '../index.js';

const plain: PolicyValue = { max_attempts: 3, base_ms: 100, deadline_ms: null, status_retry: { '418': 'always' } };
const policy: Policy = Policy.fromValue(plain);
const back: Required<PolicyValue> = policy.toValue();
const attempts: number = back.max_attempts;
const json: string = JSON.stringify(policy);

const reason: GiveUpReason = 'attempts_exhausted';
const report: ReportValue = {
  attempts,
  reason,
  elapsed_ms: 1200,
  delays_ms: [1000],
  stopped_by: null,
  retry_at_unix_ms: null,
};

/** The limits on Redis through a client of the user's own (node-redis or ioredis). */
async function onRedis(client: RedisClientLike): Promise<number> {
  const regulator = await Regulator.redis(client, 'api', '90/min', { burst: 3 });
  const limit = await ConcurrencyLimit.redis(client, 'api', 3, 30000);
  const budget = await RetryBudget.redis(client, 'api', { ratio: 0.1 });
  const gate = new Gate({ regulator, limit, budget });
  const permit = await limit.tryAcquire();
  const renewed: boolean = (await permit?.renew()) ?? false;
  await permit?.release();
  const { retries } = await budget.counts();
  const wait: number = await regulator.tryAcquire();
  return gate.regulator === regulator && renewed ? wait + retries : 0;
}

export { json, report, onRedis };

// The batch runner and its progress.
async function batchUsage(): Promise<number> {
  const told: number[] = [];
  const report = await runBatch([async () => 1, async () => 2], {
    policy: Policy.batch(),
    workers: 2,
    deadlineMs: 600_000,
    onProgress: (p: BatchProgress) => told.push(p.done + p.notStarted),
  });
  const first: number | undefined = report.results[0].value;
  const interactive: Policy = Policy.interactive();
  return (first ?? 0) + report.stats.initial + report.elapsedMs + interactive.maxAttempts;
}
void batchUsage;
