// recuo's comRetry beside guide A's pure-JS comRetry, as ratios in one run (issue 18).
//
//     RECUO_LIB=target/release/librecuo.so node bench/js/bench.js OUT.json [ROUNDS]
//     node bench/js/bench.js --loop success|failure NAME N
//
// The same method and JSON as bench/php/bench.php: two paths timed in the same process and
// rounds, the contenders interleaved in an order shuffled every round —
// - success: the task returns at once; a contender's extra cost is its time per call minus
//   awaiting the task directly, in the same round;
// - failure: the task fails 4 times, then succeeds, with no-op sleeps (recuo's `sleep`, the
//   guide's injected sleep); the extra cost is over the 5 calls and 4 catches made inline.
// Each extra cost is divided by the guide function's in the same round (1.0: as cheap as
// the guide's loop). OUT.json: { node, recuo, rounds, success: { baseline, baseline_ns: [..],
// extra_ns: { name: [..] } }, failure: { ... } }; progress to stderr.

import { writeFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';

import * as recuo from '../../js/index.js';

const BLOCK_NS = 20_000_000; // the length of one timed block

/** Guide A's comRetry, as the guide writes it in JavaScript (plus `sleep`, so the failure path
 * can make its waits no-ops as recuo's `sleep` does). */
async function comRetryGuide(tarefa, { tentativas = 5, baseMs = 200, maxMs = 5000, repetirSe, sleep } = {}) {
  for (let tentativa = 0; tentativa < tentativas; tentativa++) {
    try {
      return await tarefa();
    } catch (erro) {
      if (tentativa === tentativas - 1 || (repetirSe && !repetirSe(erro))) throw erro;
      const ms = randomInt(0, Math.min(maxMs, baseMs * 2 ** tentativa) + 1);
      await (sleep ? sleep(ms) : new Promise((resolve) => setTimeout(resolve, ms)));
    }
  }
  throw new Error('unreachable');
}

/** A task that fails 4 times, then succeeds, over and over. */
function flaky() {
  let calls = 0;
  return () => {
    calls++;
    if (calls % 5 !== 0) throw new Error('not yet');
    return calls;
  };
}

// Each contender is a loop over n calls, so that no wrapper of the bench's own is timed.
function contenders() {
  const ok = () => 1;
  const noSleep = async () => {};
  const [inline, guide, ours] = [flaky(), flaky(), flaky()];
  return {
    success: {
      'direct await f()': async (n) => { for (let i = 0; i < n; i++) await ok(); },
      'guide A comRetry (pure JS)': async (n) => { for (let i = 0; i < n; i++) await comRetryGuide(ok); },
      'recuo comRetry': async (n) => { for (let i = 0; i < n; i++) await recuo.comRetry(ok); },
    },
    failure: {
      'direct: 5 calls, 4 caught': async (n) => {
        for (let i = 0; i < n; i++) {
          for (let k = 0; k < 5; k++) {
            try {
              await inline();
              break;
            } catch {
              // the next call
            }
          }
        }
      },
      'guide A comRetry (pure JS)': async (n) => { for (let i = 0; i < n; i++) await comRetryGuide(guide, { sleep: noSleep }); },
      'recuo comRetry': async (n) => { for (let i = 0; i < n; i++) await recuo.comRetry(ours, { sleep: noSleep }); },
    },
  };
}

async function perCallNs(run, n) {
  globalThis.gc?.();
  const start = process.hrtime.bigint();
  await run(n);
  return Number(process.hrtime.bigint() - start) / n;
}

/** Calls per block, so that a block takes about BLOCK_NS. */
async function calibrate(run) {
  for (let n = 100; ; n *= 4) {
    const spent = (await perCallNs(run, n)) * n;
    if (spent > BLOCK_NS / 4) return Math.max(100, Math.floor((n * BLOCK_NS) / spent));
  }
}

function shuffle(list) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = randomInt(0, i + 1);
    [list[i], list[j]] = [list[j], list[i]];
  }
}

/** Per round: every contender's extra cost over the direct baseline (the first entry). */
async function measure(path, all, rounds) {
  const names = Object.keys(all);
  const [baseline, ...others] = names;
  const calls = {};
  for (const name of names) calls[name] = await calibrate(all[name]);
  const extra = Object.fromEntries(others.map((name) => [name, []]));
  const baseNs = [];
  const order = [...names];
  for (let r = 1; r <= rounds; r++) {
    shuffle(order);
    const ns = {};
    for (const name of order) ns[name] = await perCallNs(all[name], calls[name]);
    baseNs.push(ns[baseline]);
    for (const name of others) extra[name].push(ns[name] - ns[baseline]);
    process.stderr.write(`js ${path}: round ${r}/${rounds}\n`);
  }
  return { baseline, baseline_ns: baseNs, extra_ns: extra };
}

const all = contenders();
const args = process.argv.slice(2);
if (args[0] === '--loop') {
  // `--loop PATH NAME N`: only N calls of one contender, for a profiler.
  const [, path, name, n] = args;
  await all[path][name](Number(n));
} else {
  const out = args[0];
  if (!out) throw new Error('usage: bench.js OUT.json [ROUNDS]');
  const rounds = Number(args[1] ?? 20);
  const pkg = createRequire(import.meta.url)('../../js/package.json');
  const results = {
    node: process.versions.node,
    recuo: pkg.version,
    rounds,
    success: await measure('success path', all.success, rounds),
    failure: await measure('failure path', all.failure, rounds),
  };
  writeFileSync(out, JSON.stringify(results, null, 2));
}
