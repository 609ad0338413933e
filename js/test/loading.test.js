// How each runtime loads the package (package.json's `imports` conditions, `#load` and
// `#context`), tried from Node: `require('recuo')` from CommonJS, and the form a browser or a
// bundler gets (the module inlined, no node:* import).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
const skip = globalThis.Deno || process.versions.bun ? 'spawns Node' : false;

/** A project with the package linked into its node_modules. */
function project(t) {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-loading-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(PACKAGE, join(dir, 'node_modules', 'recuo'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  return dir;
}

test("require('recuo') from CommonJS on Node 20 (the ES module has no top-level await)", { skip }, async (t) => {
  const dir = project(t);
  writeFileSync(join(dir, 'app.cjs'), [
    "const { retryDelayMs, comRetry } = require('recuo');",
    "comRetry(async () => 'ok').then((v) => console.log(retryDelayMs('12', 1), v));",
  ].join('\n'));
  const { stdout, stderr } = await run(process.execPath, ['app.cjs'], { cwd: dir });
  assert.equal(stdout.trim(), '12000 ok');
  assert.equal(stderr, '', 'no warning');
});

test('the browser condition: the module inlined, the attempt known in its synchronous start', { skip }, async (t) => {
  const dir = project(t);
  writeFileSync(join(dir, 'app.mjs'), [
    "import { libraryPath, comRetry, currentAttempt, retryDelayMs } from 'recuo';",
    'const seen = await comRetry(async () => currentAttempt()?.number ?? null);',
    "console.log(libraryPath, retryDelayMs('12\\u00000', 0, 0, { seed: 7 }) !== 12000, seen);",
  ].join('\n'));
  const { stdout } = await run(process.execPath, ['--conditions=browser', 'app.mjs'], { cwd: dir });
  assert.equal(stdout.trim(), 'recuo.wasm (inlined) true 0', 'the first attempt, number 0');
});
