// A child process of shared.test.js: takes starts from the shared regulator at PATH until
// END_NS (CLOCK_MONOTONIC), waiting with timers, and prints the instants as JSON.
import { Regulator, monotonicNs } from '../../index.js';

const [path, rate, burst, beginNs, endNs] = process.argv.slice(2);
const regulator = Regulator.shared(path, rate, { burst: Number(burst) });
while (monotonicNs() < Number(beginNs)) await new Promise((r) => setTimeout(r, 1));
const starts = [];
for (;;) {
  const left = (Number(endNs) - monotonicNs()) / 1e6;
  if (left <= 0 || !(await regulator.acquire({ timeoutMs: left }))) break;
  starts.push(monotonicNs());
}
process.stdout.write(JSON.stringify(starts));
