// The package in headless Chromium, as a page gets it from two bundlers (esbuild and Vite),
// each with no plugin for recuo: the vector files and the guides against `recuo serve --cors`
// in its three modes (test/portable). Debian's chromium, driven by puppeteer-core.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';

import { haveServe, RECUO_BIN } from '../helpers.js';
import { corsServers, esbuildBundle, installedProject, logOf, PORTABLE, viteBundle } from './support.js';

const CHROMIUM = process.env.RECUO_CHROMIUM || '/usr/bin/chromium';
const skip = !existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM} (apt-get install chromium)` : !haveServe ? `no recuo command at ${RECUO_BIN}` : false;

/** Sets the servers for the page's tests from its URL's fragment. */
const HEAD = '<script>globalThis.RECUO_SERVERS = JSON.parse(decodeURIComponent(location.hash.slice(1))); globalThis.RECUO_PROGRESS = (m) => console.log(Math.round(performance.now()), m);</script>';
const TYPES = { '.html': 'text/html', '.js': 'text/javascript' };

/** Serves `root` on 127.0.0.1 (the page's origin, another than the API's). */
async function staticServer(root) {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = join(root, path.endsWith('/') ? `${path}index.html` : path);
    if (!file.startsWith(root) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => {
      server.close(r);
      server.closeAllConnections();
    }),
  };
}

test('headless Chromium: the vectors and the guides, through an esbuild bundle and a Vite bundle', { skip, timeout: 240000 }, async (t) => {
  const { dir, installed } = await installedProject('browser');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const site = join(dir, 'site');
  mkdirSync(join(site, 'esbuild'), { recursive: true });
  await esbuildBundle({ installed, outfile: join(site, 'esbuild', 'bundle.js'), entry: join(PORTABLE, 'run-browser.js') });
  writeFileSync(join(site, 'esbuild', 'index.html'),
    `<!doctype html><html><head>${HEAD}<script type="module">import { runAll } from './bundle.js'; runAll().then((r) => { window.__results = r; });</script></head><body></body></html>`);
  const viteDir = join(dir, 'vite');
  mkdirSync(viteDir);
  const viteDist = await viteBundle({ installed, dir: viteDir, head: HEAD });
  const built = readFileSync(join(viteDist, 'index.html'), 'utf8');
  assert.ok(!built.includes('wasm-bytes') && !/\.wasm["']/.test(built), 'the module is inlined, no file beside the page');
  cpSync(viteDist, join(site, 'vite'), { recursive: true });

  const servers = await corsServers(['esbuild', 'vite']);
  t.after(() => servers.stop());
  const page = await staticServer(site);
  t.after(() => page.close());
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  t.after(() => browser.close());

  for (const bundler of ['esbuild', 'vite']) {
    const tab = await browser.newPage();
    const errors = [];
    tab.on('pageerror', (e) => errors.push(String(e)));
    const said = [];
    tab.on('console', (m) => said.push(m.text()));
    // What the page said (each test's start and end), shown when RECUO_DEBUG is set.
    t.after(() => {
      if (process.env.RECUO_DEBUG) console.log(said.join('\n'));
    });
    const config = { full: servers.full, originOnly: servers.originOnly, none: servers.none, http: servers.http[bundler], prefix: bundler, browser: true };
    await tab.goto(`${page.url}/${bundler}/#${encodeURIComponent(JSON.stringify(config))}`);
    try {
      await tab.waitForFunction('window.__results', { timeout: Number(process.env.RECUO_PAGE_TIMEOUT ?? 120000) });
    } catch (e) {
      throw new Error(`${bundler}: the page did not finish (${e.message}); it said: ${[...errors, ...said.slice(-5)].join(' | ')}`);
    }
    const results = await tab.evaluate(() => window.__results);
    assert.deepEqual(errors, [], `${bundler}: the page's errors`);
    const failed = results.filter((r) => !r.ok);
    assert.deepEqual(failed, [], `${bundler}: the failed tests`);
    const skipped = results.filter((r) => r.skipped);
    assert.deepEqual(skipped, [], `${bundler}: nothing skipped`);
    assert.ok(results.length >= 26, `${bundler}: ${results.length} tests ran`);
    assert.ok(results.some((r) => r.name.startsWith('recuo/otel:') && r.ok), `${bundler}: recuo/otel ran in the page`);
    // The 429s with no CORS: the page saw failed fetches; the server saw both GETs.
    const log = await logOf(servers.none, `/${bundler}/blocked`);
    assert.deepEqual(log.map((e) => e.method), ['GET', 'GET'], bundler);
    await tab.close();
  }
});
