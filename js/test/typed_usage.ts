// Type-checked by test/types.test.js (tsc --noEmit --strict): what a TypeScript user writes
// against index.d.ts and the generated values.d.ts. Never run.

import { Policy, type GiveUpReason, type PolicyValue, type ReportValue } from '../index.js';

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

export { json, report };
