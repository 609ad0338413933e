// `npm pack` makes a tarball that installs into an empty folder and runs the README's
// JavaScript example — in Node with the library bundled in the package (make js), with
// RECUO_LIB and over recuo.wasm; in Deno and Bun (recuo.wasm, no native code loaded).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { libraryPath } from '../index.js';
import { ROOT } from './helpers.js';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
const bundled = existsSync(join(PACKAGE, 'native', 'librecuo.so'));
const DENO = join(PACKAGE, 'node_modules', '@deno', 'linux-x64-glibc', 'deno');
const BUN = join(PACKAGE, 'node_modules', '@oven', 'bun-linux-x64', 'bin', 'bun');
/** What the package may weigh packed, native library aside (it goes with koffi). */
const MOST_PACKED_BYTES = 400_000;

test("npm pack installs into an empty folder and runs the README's example", { timeout: 180000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-pack-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: PACKAGE });
  const tarball = join(dir, stdout.trim().split('\n').at(-1));
  assert.ok(existsSync(tarball), tarball);
  const app = join(dir, 'app');
  await run('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { cwd: app });
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.equal(blocks.length, 1, "the README's one JavaScript example");
  writeFileSync(join(app, 'example.js'), blocks[0]);
  const env = { ...process.env };
  delete env.RECUO_LIB;
  const ways = [{ RECUO_LIB: libraryPath }];
  if (bundled) ways.push({});
  if (existsSync(join(PACKAGE, 'recuo.wasm'))) ways.push({ RECUO_WASM: '1' });
  for (const extra of ways) {
    const out = await run(process.execPath, ['example.js'], { cwd: app, env: { ...env, ...extra } });
    assert.deepEqual(out.stdout.trim().split('\n'), ['12000', 'ok'], JSON.stringify(extra));
  }
  // Deno and Bun load recuo.wasm beside the installed package (their own conditions).
  const runtimes = [[DENO, ['run', '--allow-read', '--allow-env', 'example.js']], [BUN, ['example.js']]];
  for (const [bin, args] of runtimes.filter(([bin]) => existsSync(bin))) {
    const out = await run(bin, args, { cwd: app, env: { ...env, NO_COLOR: '1' } });
    assert.deepEqual(out.stdout.trim().split('\n'), ['12000', 'ok'], bin);
  }
});

test('the packed tarball, native library aside, weighs at most 400 kB', { timeout: 60000 }, async () => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--silent'], { cwd: PACKAGE });
  const [{ files }] = JSON.parse(stdout);
  const kept = files.map((f) => f.path).filter((p) => !p.startsWith('native/'));
  assert.ok(kept.includes('recuo.wasm') && kept.includes('lib/wasm-bytes.js'), 'the module, as a file and inlined');
  const dir = mkdtempSync(join(tmpdir(), 'recuo-size-'));
  try {
    const tarball = join(dir, 'package.tgz');
    await run('tar', ['-czf', tarball, ...kept], { cwd: PACKAGE });
    const size = statSync(tarball).size;
    assert.ok(size <= MOST_PACKED_BYTES, `${size} bytes packed`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
