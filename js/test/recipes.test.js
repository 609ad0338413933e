// docs/recipes.md, run as written: its JavaScript is taken from the page verbatim (only the
// API's address, https://api.example.com, is replaced by a local server's) and run in Node as
// an installed package is — beside a node_modules/recuo of its own — against `recuo serve`:
// scripted to answer 500, then 429 with `Retry-After: 1`, then 201, logging each request's
// Idempotency-Key; or, for guide B's four workers, the simulated API and a Redis server.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { ROOT, haveServe, serve, stats } from './helpers.js';
import { haveRedis, redisServer } from './redis_server.js';

const run = promisify(execFile);
const DOC = join(ROOT, 'docs', 'recipes.md');
const PLACEHOLDER = 'https://api.example.com';
const PAYMENT = 'A payment, retried safely';
const WORKERS = '600 calls from four workers against 120 a minute';
const SCRIPT = {
  requests: [
    { id: 'payments', script: [{ status: 500 }, { status: 429, headers: { 'Retry-After': '1' } }, { status: 201 }] },
  ],
};

/** The text of docs/recipes.md under `## title`, up to the next `## ` heading. */
function section(title) {
  const text = readFileSync(DOC, 'utf8');
  const head = `\n## ${title}\n`;
  assert.ok(text.includes(head), `docs/recipes.md has no section ${title}`);
  return text.split(head)[1].split('\n## ')[0];
}

/** The one `language` block of `text` containing `containing`: `{ code, printed }`, printed being the `text` block right after it. */
function only(text, language, containing) {
  const re = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`\\n(?:\\s*^\`\`\`text\\n([\\s\\S]*?)^\`\`\`\\n)?`, 'gm');
  const found = [...text.matchAll(re)].filter((m) => m[1].includes(containing));
  assert.equal(found.length, 1, `${found.length} ${language} blocks with ${containing}`);
  return { code: found[0][1], printed: found[0][2] ?? null };
}

/** A folder where `import ... from 'recuo'` finds js/, as an installed package would be found. */
function project() {
  const folder = mkdtempSync(join(tmpdir(), 'recuo-recipes-'));
  mkdirSync(join(folder, 'node_modules'));
  symlinkSync(join(ROOT, 'js'), join(folder, 'node_modules', 'recuo'), 'dir');
  folders.push(folder);
  return folder;
}

const folders = [];
const skip = !haveServe && 'target/debug/recuo is not built (make build-cli)';
let scripted;

before(async () => {
  if (skip) return;
  const folder = project();
  writeFileSync(join(folder, 'script.json'), JSON.stringify(SCRIPT));
  scripted = await serve('--port', '0', '--script', join(folder, 'script.json'));
});

after(async () => {
  await scripted?.stop();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function scriptLog(path) {
  return (await fetch(`${scripted.url}/__script/log/${path}`)).json();
}

test('the payment recipe sends the order\'s key on every attempt and waits out Retry-After', { skip }, async () => {
  const { code } = only(section(PAYMENT), 'js', 'export async function payOrder');
  assert.equal(code.split(PLACEHOLDER).length, 2);
  const folder = project();
  writeFileSync(join(folder, 'payment.mjs'), code.replace(PLACEHOLDER, `${scripted.url}/js`));
  writeFileSync(join(folder, 'main.mjs'), [
    "import { payOrder } from './payment.mjs';",
    'const started = Date.now();',
    'const answer = await payOrder({ id: 42, amount: 1990 });',
    'console.log(JSON.stringify({ answer, tookMs: Date.now() - started }));',
  ].join('\n'));
  const { stdout } = await run('node', ['main.mjs'], { cwd: folder, timeout: 30_000 });
  const { answer, tookMs } = JSON.parse(stdout);
  assert.deepEqual(answer, { request: 2, status: 201 });
  // 500 (retried: the key is the caller's), 429 (its Retry-After: 1 waited out), 201.
  assert.deepEqual(await scriptLog('js/payments'), Array(3).fill({ method: 'POST', key: 'pedido-42' }));
  assert.ok(tookMs >= 1000 && tookMs < 6000, `${tookMs} ms`);
});

test('without the order\'s key, the 500 is not retried', { skip }, async () => {
  const { code, printed } = only(section(PAYMENT), 'js', 'No key of yours');
  assert.ok(printed);
  const folder = project();
  writeFileSync(join(folder, 'trap.mjs'), code.replace(PLACEHOLDER, `${scripted.url}/trap`));
  const { stdout } = await run('node', ['trap.mjs'], { cwd: folder, timeout: 30_000 });
  assert.equal(stdout, printed);
  const [seen, ...more] = await scriptLog('trap/payments');
  assert.equal(more.length, 0);
  assert.equal(seen.method, 'POST');
  assert.match(seen.key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

const noRedis = !(await haveRedis()) && 'redis-server is not installed (make deps)';

test('the Node workers launch as the page says, sharing one Redis', { skip: skip || noRedis }, async () => {
  // The page's worker (the file tests/guide_b runs) started by the page's launch lines through
  // a `node` that records its arguments, then runs the worker with one id of its share.
  const text = section(WORKERS);
  const { code: worker } = only(text, 'js', "from 'recuo'");
  const { code: launch } = only(text, 'sh', 'node worker.mjs');
  assert.equal(launch.split(PLACEHOLDER).length, 2);
  const folder = project();
  writeFileSync(join(folder, 'worker.mjs'), worker);
  mkdirSync(join(folder, 'bin'));
  // Node itself, whichever runtime runs this test (Deno's and Bun's execPath are their own).
  const node = (await run('bash', ['-c', 'command -v node'])).stdout.trim();
  const record = `${node} -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- "$@" >> "$LAUNCHES"`;
  writeFileSync(join(folder, 'bin', 'node'), `#!/bin/bash\n${record}\nexec ${node} "\${@:1:7}" "\${@:8:1}"\n`);
  chmodSync(join(folder, 'bin', 'node'), 0o755);
  const api = await serve('--port', '0', '--allowance', '100000/min', '--burst', '1000', '--latency', '1ms', '--fail-rate', '0');
  const redis = await redisServer();
  try {
    const env = { ...process.env, PATH: `${join(folder, 'bin')}:${process.env.PATH}`, LAUNCHES: join(folder, 'launches'), REDIS_URL: redis.url };
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', launch.replace(PLACEHOLDER, api.url)], { cwd: folder, env, timeout: 60_000 });
    const args = readFileSync(join(folder, 'launches'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(args.length, 4);
    for (const a of args) assert.deepEqual(a.slice(0, 7), ['worker.mjs', api.url, '90/min', '600', '0', redis.url, 'steady']);
    assert.deepEqual(args.flatMap((a) => a.slice(7).map(Number)).sort((x, y) => x - y), [...Array(600).keys()]);
    const printed = stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(printed.length, 4);
    assert.deepEqual(printed.map((s) => [s.successes, s.failures]), Array(4).fill([1, 0]));
    assert.equal((await stats(api.url)).requests, 4);
  } finally {
    await api.stop();
    await redis.stop();
  }
});
