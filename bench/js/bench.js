// recuo's comRetry (and retry) beside guide A's pure-JS comRetry, and beside the retry
// libraries of npm on the same tasks (p-retry, exponential-backoff, cockatiel, pinned in
// js/package.json), as ratios in one run (issues 18, 27).
//
//     node bench/js/bench.js OUT.json [ROUNDS]   (after make wasm)
//     node bench/js/bench.js --loop success|failure NAME N
//
// The same method and JSON as bench/php/bench.php: two paths timed in the same process and
// rounds, the contenders interleaved in an order shuffled every round —
// - success: the task returns at once; a contender's extra cost is its time per call minus
//   awaiting the task directly, in the same round;
// - failure: the task fails 4 times, then succeeds, with no-op sleeps (recuo's `sleep`, the
//   guide's injected sleep); the extra cost is over the 5 calls and 4 catches made inline.
//   p-retry runs with zero timeouts (it then skips the timer); exponential-backoff and
//   cockatiel wait a zero delay with setTimeout (about 1 ms each in Node) and take no sleep
//   of the caller's, so they are timed on the success path only.
// Each extra cost is divided by the guide function's in the same round (1.0: as cheap as
// the guide's loop). OUT.json: { node, recuo, rounds, success: { baseline, baseline_ns: [..],
// extra_ns: { name: [..] } }, failure: { ... } }; progress, and each contender's median
// ratio with its min–max, to stderr.
//
// What makes a JS timing steady, and what an earlier version of this script missed (it gave
// recuo's comRetry 2.3–4.3× on one run, 1.6× in a hand-made loop): every contender runs for a
// while before anything is timed — V8 optimises a function only after many calls, and the
// first `AsyncLocalStorage.run()` (recuo's context for nested loops) turns on Node's promise
// hooks for the whole process, which makes every `await` dearer, the baseline's and the
// guide's too. Unwarmed, the first rounds gave recuo 3–17 µs a call, and ten rounds' median
// kept some of them. Then the calls per block are calibrated. No collection is forced between
// blocks: after a full collection (`gc()`), an `await als.run(store, f)` with a new store
// each call costs 1–2 µs more a call for thousands of calls (without recuo: a bare loop of
// `als.run({}, f)` does the same), which would time the collector, not the loop. The floor is
// that bare `await als.run({ pool: null }, f)`: what a context for nested loops costs, a new
// one per call, before recuo does a thing of its own.

import { AsyncLocalStorage } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';

import * as recuo from '../../js/index.js';

// The retry libraries of npm, from js/node_modules (js/package.json's devDependencies).
const fromJs = createRequire(new URL('../../js/package.json', import.meta.url));
const { default: pRetry } = await import(fromJs.resolve('p-retry'));
const { backOff } = await import(fromJs.resolve('exponential-backoff'));
const cockatiel = await import(fromJs.resolve('cockatiel'));

const BLOCK_NS = 20_000_000; // the length of one timed block
const WARM_NS = 300_000_000; // how long each contender runs before any timing

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
  const [inline, guide, ours, oursRetry, theirs] = [flaky(), flaky(), flaky(), flaky(), flaky()];
  const als = new AsyncLocalStorage();
  // Each library as its docs show it, with five attempts; cockatiel's policy is made once.
  const pRetryOptions = { retries: 4, minTimeout: 0, maxTimeout: 0, randomize: false };
  const cockatielPolicy = cockatiel.retry(cockatiel.handleAll, { maxAttempts: 4, backoff: new cockatiel.ExponentialBackoff() });
  return {
    success: {
      'direct await f()': async (n) => { for (let i = 0; i < n; i++) await ok(); },
      'guide A comRetry (pure JS)': async (n) => { for (let i = 0; i < n; i++) await comRetryGuide(ok); },
      'recuo comRetry': async (n) => { for (let i = 0; i < n; i++) await recuo.comRetry(ok); },
      'recuo retry(f)': async (n) => { for (let i = 0; i < n; i++) await recuo.retry(ok); },
      'floor: await als.run({}, f)': async (n) => { for (let i = 0; i < n; i++) await als.run({ pool: null }, ok); },
      'p-retry': async (n) => { for (let i = 0; i < n; i++) await pRetry(ok, pRetryOptions); },
      'exponential-backoff': async (n) => { for (let i = 0; i < n; i++) await backOff(ok, { numOfAttempts: 5 }); },
      'cockatiel': async (n) => { for (let i = 0; i < n; i++) await cockatielPolicy.execute(ok); },
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
      'recuo retry(f)': async (n) => { for (let i = 0; i < n; i++) await recuo.retry(oursRetry, { sleep: noSleep }); },
      'p-retry': async (n) => { for (let i = 0; i < n; i++) await pRetry(theirs, pRetryOptions); },
    },
  };
}

async function perCallNs(run, n) {
  const start = process.hrtime.bigint();
  await run(n);
  return Number(process.hrtime.bigint() - start) / n;
}

/** Runs a contender for about WARM_NS, so that V8 has optimised it before it is timed. */
async function warm(run) {
  const until = process.hrtime.bigint() + BigInt(WARM_NS);
  for (let n = 100; process.hrtime.bigint() < until; n = Math.min(n * 2, 100_000)) await run(n);
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

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Per round: every contender's extra cost over the direct baseline (the first entry). */
async function measure(path, all, rounds) {
  const names = Object.keys(all);
  const [baseline, ...others] = names;
  // Every contender first: the promise hooks on, every function optimised.
  for (const name of names) await warm(all[name]);
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
  const guide = others.find((name) => name.startsWith('guide'));
  process.stderr.write(`js ${path}: ${baseline} ${median(baseNs).toFixed(1)} ns per call\n`);
  for (const name of others) {
    const ratios = extra[name].map((e, r) => e / extra[guide][r]);
    process.stderr.write(`  ${name}: +${median(extra[name]).toFixed(1)} ns, ${median(ratios).toFixed(2)}× guide A's `
      + `(${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})\n`);
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
