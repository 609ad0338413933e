// `npm pack` makes a tarball with no native file and no install script, which installs into an
// empty folder and runs the README's JavaScript example in Node, Deno and Bun (recuo.wasm read
// beside the package), with nothing compiled on the machine; packed, it weighs at most 400 kB
// and carries the license files. RECUO_NPM_TARBALL names a tarball already made (make
// test-dist-js: make dist's) to test instead of packing one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { ROOT } from './helpers.js';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
const DENO = join(PACKAGE, 'node_modules', '@deno', 'linux-x64-glibc', 'deno');
const BUN = join(PACKAGE, 'node_modules', '@oven', 'bun-linux-x64', 'bin', 'bun');
/** What the package may weigh, packed. */
const MOST_PACKED_BYTES = 400_000;
const skip = globalThis.Deno || process.versions.bun ? 'spawns npm and Node' : false;

test("npm pack installs into an empty folder and runs the README's example in Node, Deno and Bun", { skip, timeout: 180000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recuo-pack-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let tarball = process.env.RECUO_NPM_TARBALL;
  if (!tarball) {
    const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: PACKAGE });
    tarball = join(dir, stdout.trim().split('\n').at(-1));
  }
  assert.ok(statSync(tarball).size <= MOST_PACKED_BYTES, `${statSync(tarball).size} bytes packed`);
  const { stdout: listed } = await run('tar', ['-tzf', tarball]);
  const files = listed.trim().split('\n');
  assert.ok(files.includes('package/recuo.wasm') && files.includes('package/lib/wasm-bytes.js'), 'the module, as a file and inlined');
  assert.ok(files.includes('package/LICENSE-MIT') && files.includes('package/LICENSE-APACHE'), 'the license files');
  assert.deepEqual(files.filter((f) => /\.(so|node|dylib|dll)$/.test(f)), [], 'no native file');
  const { stdout: packed } = await run('tar', ['-xzOf', tarball, 'package/package.json']);
  const manifest = JSON.parse(packed);
  assert.equal(manifest.dependencies, undefined, 'nothing installed beside it');
  assert.deepEqual(Object.keys(manifest.scripts ?? {}).filter((s) => /install/.test(s)), [], 'no install script');
  const app = join(dir, 'app');
  await run('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // Offline: the tarball needs nothing from the registry.
  // npm with a PATH that holds no cargo and no rustc (node's and npm's folders, and the
  // system's), as on a machine with no Rust.
  const npm = (await run('sh', ['-c', 'command -v npm'])).stdout.trim();
  const noRust = [...new Set([dirname(process.execPath), dirname(npm), '/usr/bin', '/bin'])].join(':');
  await assert.rejects(run('sh', ['-c', 'command -v cargo || command -v rustc'], { env: { PATH: noRust } }), 'no Rust on the PATH');
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--loglevel=error', tarball], { cwd: app, env: { ...process.env, PATH: noRust } });
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.equal(blocks.length, 1, "the README's one JavaScript example");
  writeFileSync(join(app, 'example.js'), blocks[0]);
  // A PATH without cargo or rustc: nothing is built on install or at import.
  const env = { ...process.env, PATH: '/nonexistent', NO_COLOR: '1' };
  const runtimes = [[process.execPath, ['example.js']]];
  if (existsSync(DENO)) runtimes.push([DENO, ['run', '--allow-read', '--allow-env', 'example.js']]);
  if (existsSync(BUN)) runtimes.push([BUN, ['example.js']]);
  for (const [bin, args] of runtimes) {
    const out = await run(bin, args, { cwd: app, env });
    assert.deepEqual(out.stdout.trim().split('\n'), ['12000', 'ok'], bin);
  }
});
