// Finding librecuo: a missing, foreign or mismatched library is one clear error at import,
// never a crash; openRecuo({ path }) loads the library of your choice.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import * as recuo from '../index.js';
import { openRecuo, LibraryError } from '../lib/library.js';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('../', import.meta.url));

/** Imports the package at `dir` in a new node with `env`: its exit code, signal and stderr. */
async function importIn(dir, env) {
  try {
    await run(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(join(dir, 'index.js'))})`], { env: { ...process.env, ...env } });
    return { code: 0, signal: null, stderr: '' };
  } catch (e) {
    return { code: e.code, signal: e.signal, stderr: e.stderr };
  }
}

test('the library loaded is librecuo of the package version', () => {
  const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));
  assert.equal(recuo.version, pkg.version);
  assert.ok(recuo.libraryPath.length > 0);
});

test('a missing library is one clear error at import', async () => {
  const r = await importIn(PACKAGE, { RECUO_LIB: '/nonexistent/librecuo.so' });
  assert.equal(r.signal, null, 'no crash');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /LibraryError: recuo: librecuo was not found/);
  assert.match(r.stderr, /\/nonexistent\/librecuo\.so \(RECUO_LIB\)/);
});

test('a library that is not librecuo is refused', async () => {
  const libm = ['/lib/x86_64-linux-gnu/libm.so.6', '/usr/lib/x86_64-linux-gnu/libm.so.6', '/lib/aarch64-linux-gnu/libm.so.6']
    .find((p) => existsSync(p));
  if (!libm) return;
  const r = await importIn(PACKAGE, { RECUO_LIB: libm });
  assert.equal(r.signal, null);
  assert.match(r.stderr, /not librecuo/);
});

test('a library of another version is refused at import', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-js-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(PACKAGE, 'index.js'), join(dir, 'index.js'));
  cpSync(join(PACKAGE, 'lib'), join(dir, 'lib'), { recursive: true });
  symlinkSync(join(PACKAGE, 'node_modules'), join(dir, 'node_modules'));
  const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, version: '9.9.9' }));
  const r = await importIn(dir, { RECUO_LIB: recuo.libraryPath });
  assert.equal(r.signal, null);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`is librecuo ${pkg.version.replace(/\./g, '\\.')}, but this package is recuo 9\\.9\\.9`));
});

test("the system's librecuo.so.0.1 is found when the package bundles none", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-js-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pkg = join(dir, 'pkg');
  cpSync(join(PACKAGE, 'index.js'), join(pkg, 'index.js'));
  cpSync(join(PACKAGE, 'lib'), join(pkg, 'lib'), { recursive: true });
  cpSync(join(PACKAGE, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(PACKAGE, 'node_modules'), join(pkg, 'node_modules'));
  cpSync(recuo.libraryPath, join(dir, 'librecuo.so.0.1')); // as make install names it
  const env = { ...process.env, LD_LIBRARY_PATH: dir };
  delete env.RECUO_LIB;
  const script = `const r = await import(${JSON.stringify(join(pkg, 'index.js'))}); console.log(r.libraryPath, r.retryDelayMs('12', 0))`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env });
  assert.equal(stdout.trim(), 'librecuo.so.0.1 12000');
  // Without it (and none installed by make install), the error names every place tried.
  const r = await importIn(pkg, { LD_LIBRARY_PATH: '', RECUO_LIB: '' });
  assert.equal(r.signal, null);
  if (r.code === 0) return; // this machine has a librecuo.so.0.1 installed
  assert.match(r.stderr, /native\/librecuo\.so \(the package\): not found/);
  assert.match(r.stderr, /librecuo\.so\.0\.1 \(the system\)/);
});

test('openRecuo({ path }) loads the library given, and only it', () => {
  const api = openRecuo({ path: recuo.libraryPath });
  assert.equal(api.retryDelayMs('12', 0), 12000);
  assert.throws(() => openRecuo({ path: '/nonexistent/librecuo.so' }), (e) => e instanceof LibraryError && /the path option/.test(e.message));
});
