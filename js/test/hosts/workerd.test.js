// The package in Cloudflare's workerd (the npm package @cloudflare/workerd-linux-64 holds the
// binary): a Worker bundled as wrangler bundles one, recuo.wasm imported as a module, runs the
// vector files, comRetry and buscarComRetry against `recuo serve` on 127.0.0.1 (a network
// that allows private addresses: workerd's default refuses them).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { haveServe, RECUO_BIN } from '../helpers.js';
import { corsServers, esbuildBundle, installedProject, PACKAGE } from './support.js';

const WORKERD = join(PACKAGE, 'node_modules', '@cloudflare', 'workerd-linux-64', 'bin', 'workerd');
const skip = !existsSync(WORKERD) ? `no workerd at ${WORKERD} (npm ci)` : !haveServe ? `no recuo command at ${RECUO_BIN}` : false;

/** A port free on 127.0.0.1 now. */
const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const config = (port) => `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "local", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "recuo.wasm", wasm = embed "recuo.wasm"),
  ],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = ["nodejs_als"],
  globalOutbound = "local",
);
`;

test('workerd: the vectors, comRetry and buscarComRetry in a Worker', { skip, timeout: 120000 }, async (t) => {
  const { dir, installed } = await installedProject('workerd');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await esbuildBundle({
    installed,
    entry: fileURLToPath(new URL('./worker.js', import.meta.url)),
    outfile: join(dir, 'worker.js'),
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    external: ['node:*'],
    wasmModules: true,
    // workerd's modules have no URL: the tests find their vector files by name.
    define: { 'import.meta.url': '"file:///worker.js"' },
  });
  copyFileSync(join(installed, 'recuo.wasm'), join(dir, 'recuo.wasm'));
  const port = await freePort();
  writeFileSync(join(dir, 'config.capnp'), config(port));
  const servers = await corsServers(['workerd']);
  t.after(() => servers.stop());
  const child = spawn(WORKERD, ['serve', join(dir, 'config.capnp')], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  t.after(() => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', resolve);
    child.kill('SIGTERM');
  }));
  const ask = `http://127.0.0.1:${port}/?servers=${encodeURIComponent(JSON.stringify({ full: servers.full, http: servers.http.workerd, prefix: 'workerd' }))}`;
  let results;
  for (let i = 0; i < 100 && results === undefined; i++) {
    try {
      results = await (await fetch(ask)).json();
    } catch {
      if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  assert.ok(Array.isArray(results), 'workerd answered');
  assert.deepEqual(results.filter((r) => !r.ok), [], 'the failed tests');
  assert.deepEqual(results.filter((r) => r.skipped).map((r) => r.name), [
    'guide A in a page: a Retry-After the server does not expose is unknown: the backoff window applies',
    'a 429 with no CORS reaches the page as a failed fetch: retried for a GET, re-raised at the end',
  ], 'only what a browser does is skipped');
  assert.ok(results.length >= 26, `${results.length} tests ran`);
});
