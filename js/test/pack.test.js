// `npm pack` makes a tarball that installs into an empty folder and runs the README's
// JavaScript example — with the library bundled in the package (make js), and with RECUO_LIB.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { libraryPath } from '../index.js';
import { ROOT } from './helpers.js';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
const bundled = existsSync(join(PACKAGE, 'native', 'librecuo.so'));

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
  for (const extra of ways) {
    const out = await run(process.execPath, ['example.js'], { cwd: app, env: { ...env, ...extra } });
    assert.deepEqual(out.stdout.trim().split('\n'), ['12000', 'ok'], JSON.stringify(extra));
  }
});
