// What the browser and workerd tests share: the package installed from its `npm pack`
// tarball into a project of their own, the portable tests bundled against it, and
// `recuo serve --script` with each `--cors` mode.

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { serve } from '../helpers.js';

const run = promisify(execFile);
export const PACKAGE = fileURLToPath(new URL('../../', import.meta.url));
export const PORTABLE = fileURLToPath(new URL('../portable/', import.meta.url));
export const SCRIPT = join(PORTABLE, 'script.json');

/** The node:* modules the portable tests import, answered by the shims of test/portable. */
const SHIMS = {
  'node:test': join(PORTABLE, 'test.js'),
  'node:assert/strict': join(PORTABLE, 'assert.js'),
  'node:fs': join(PORTABLE, 'fs.js'),
  'node:url': join(PORTABLE, 'url.js'),
};
/** The tests' helpers (which spawn servers): the shim that names the driver's server instead. */
const HELPERS = /^\.\/helpers\.js$/;
/** How the test files import the package (`../index.js`): the installed package instead. */
const PACKAGE_IMPORT = /^(\.\.\/)+index\.js$/;
/** How the test files import `recuo/otel` (`../../otel.js`): the installed package's. */
const OTEL_IMPORT = /^(\.\.\/)+otel\.js$/;

/** A new project folder with the package installed from its tarball: `{ dir, installed }`. */
export async function installedProject(name) {
  const dir = mkdtempSync(join(tmpdir(), `recuo-${name}-`));
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: PACKAGE });
  const tarball = join(dir, stdout.trim().split('\n').at(-1));
  const installed = join(dir, 'node_modules', 'recuo');
  mkdirSync(installed, { recursive: true });
  // The package needs nothing installed beside it in these runtimes: its files are enough.
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  return { dir, installed };
}

/**
 * An esbuild plugin: the shims, and the installed package for the tests' `../index.js`; with
 * `wasmModules`, a `.wasm` import left to the runtime as the module `./<name>`, as wrangler
 * leaves it for workerd.
 */
function portablePlugin(installed, wasmModules) {
  return {
    name: 'recuo-portable-tests',
    setup(build) {
      if (wasmModules) build.onResolve({ filter: /\.wasm$/ }, (a) => ({ path: `./${a.path.split('/').at(-1)}`, external: true }));
      build.onResolve({ filter: /^node:(test|assert\/strict|fs|url)$/ }, (a) => ({ path: SHIMS[a.path] }));
      build.onResolve({ filter: HELPERS }, () => ({ path: join(PORTABLE, 'helpers.js') }));
      build.onResolve({ filter: PACKAGE_IMPORT }, (a) =>
        a.importer.startsWith(join(PACKAGE, 'test')) ? { path: join(installed, 'index.js') } : undefined,
      );
      build.onResolve({ filter: OTEL_IMPORT }, (a) =>
        a.importer.startsWith(join(PACKAGE, 'test')) ? { path: join(installed, 'otel.js') } : undefined,
      );
      // The installed package's otel.js imports the API the tests installed (a peer dependency).
      build.onResolve({ filter: /^@opentelemetry\/api$/ }, (a) =>
        a.importer.startsWith(installed) ? build.resolve(a.path, { kind: a.kind, resolveDir: join(PACKAGE, 'test') }) : undefined,
      );
    },
  };
}

/** The portable tests (or `entry`, which imports them) bundled by esbuild for `platform`. */
export async function esbuildBundle({ installed, outfile, entry = join(PORTABLE, 'run.js'), platform = 'browser', conditions = [], external = [], wasmModules = false, define = {} }) {
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform,
    conditions,
    external,
    define,
    outfile,
    logLevel: 'silent',
    plugins: [portablePlugin(installed, wasmModules)],
  });
}

/** The portable tests bundled by Vite into `dir/dist` as a page: index.html and its assets. */
export async function viteBundle({ installed, dir, head }) {
  const vite = await import('vite');
  writeFileSync(join(dir, 'index.html'), `<!doctype html><html><head>${head}<script type="module" src="./main.js"></script></head><body></body></html>`);
  const runJs = relative(dir, join(PORTABLE, 'run-browser.js'));
  writeFileSync(join(dir, 'main.js'), `import { runAll } from './${runJs}';\nrunAll().then((r) => { window.__results = r; });\n`);
  await vite.build({
    root: dir,
    logLevel: 'silent',
    configFile: false,
    base: './',
    build: { outDir: join(dir, 'dist'), minify: false, target: 'es2022', emptyOutDir: true },
    resolve: {
      alias: [
        ...Object.entries(SHIMS).map(([find, replacement]) => ({ find: new RegExp(`^${find.replace('/', '\\/')}$`), replacement })),
        { find: PACKAGE_IMPORT, replacement: join(installed, 'index.js') },
        { find: OTEL_IMPORT, replacement: join(installed, 'otel.js') },
        { find: /^@opentelemetry\/api$/, replacement: join(PACKAGE, 'node_modules', '@opentelemetry', 'api') },
        { find: HELPERS, replacement: join(PORTABLE, 'helpers.js') },
      ],
    },
  });
  return join(dir, 'dist');
}

/** tests/vectors/http.json, the scripted requests of every adapter. */
const HTTP_VECTORS = fileURLToPath(new URL('../../../tests/vectors/http.json', import.meta.url));

/**
 * `recuo serve --script` with each `--cors` mode — `{ full, originOnly, none }` — and one
 * playing http.json (exposing everything) per name in `runs`: `{ http: { name: url } }`.
 */
export async function corsServers(runs = []) {
  const started = await Promise.all([
    ...['full', 'origin-only', 'none'].map((mode) => serve('--script', SCRIPT, '--cors', mode)),
    ...runs.map(() => serve('--script', HTTP_VECTORS, '--cors', 'full')),
  ]);
  const [full, originOnly, none, ...http] = started.map((s) => s.url);
  return {
    full, originOnly, none,
    http: Object.fromEntries(runs.map((name, i) => [name, http[i]])),
    stop: () => Promise.all(started.map((s) => s.stop())),
  };
}

/** What the scripted server at `url` saw on `path`. */
export async function logOf(url, path) {
  return (await fetch(`${url}/__script/log${path}`)).json();
}
