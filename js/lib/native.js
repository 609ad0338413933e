// The C ABI of librecuo as koffi declares it: the library found, its version checked, and
// every function the package calls declared once. Nothing here decides anything.

import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { OPAQUE, PROTOTYPES, STRUCTS } from './abi.js';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);

/** The package's version: librecuo's `recuo_version()` must say the same. */
export const PACKAGE_VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;

/** The library's file name on this platform, as `make js` bundles it. */
const BUNDLED_NAME = process.platform === 'darwin' ? 'librecuo.dylib' : 'librecuo.so';
/** The system's library after `make install` (its SONAME). */
const SYSTEM_NAMES =
  process.platform === 'darwin'
    ? ['librecuo.0.1.dylib', '/usr/local/lib/librecuo.0.1.dylib']
    : ['librecuo.so.0.1', '/usr/local/lib/librecuo.so.0.1', '/usr/lib/librecuo.so.0.1'];

/** Thrown at import (or by `openRecuo`) when no usable librecuo can be loaded. */
export class LibraryError extends Error {
  constructor(message, tried) {
    super(message);
    this.name = 'LibraryError';
    this.tried = tried;
  }
}

/**
 * Where to look, in order: an explicit path (or `RECUO_LIB`), the copy bundled in the
 * package, the system's `librecuo.so.0.1`. An explicit path is the only candidate when given:
 * a wrong one is an error, never a silent fall-back to another library.
 */
export function candidates(path) {
  const explicit = path ?? (process.env.RECUO_LIB || undefined);
  if (explicit !== undefined) {
    return [{ path: String(explicit), from: path !== undefined ? 'the path option' : 'RECUO_LIB' }];
  }
  return [
    { path: join(root, 'native', BUNDLED_NAME), from: 'the package', file: true },
    ...SYSTEM_NAMES.map((p) => ({ path: p, from: 'the system', file: p.startsWith('/') })),
  ];
}

let koffi;
function loadKoffi() {
  if (koffi === undefined) {
    try {
      koffi = require('koffi');
    } catch (e) {
      throw new LibraryError(`recuo: koffi could not be loaded (${e.message}); run npm install`, []);
    }
  }
  return koffi;
}

let typesDeclared = false;
function declareTypes(k) {
  if (typesDeclared) return;
  typesDeclared = true;
  for (const name of OPAQUE) k.opaque(name);
  for (const [name, fields] of Object.entries(STRUCTS)) k.struct(name, fields);
}

function declare(k, lib) {
  const fns = {};
  for (const proto of PROTOTYPES) {
    const name = /(recuo_[a-z0-9_]+)\(/.exec(proto)[1];
    fns[name] = lib.func(proto);
  }
  return fns;
}

/**
 * Loads librecuo from the first candidate that opens, checks `recuo_version()` against the
 * package's version and declares its functions. Throws one `LibraryError` naming every place
 * tried when none will do.
 */
export function openLibrary(path) {
  const k = loadKoffi();
  declareTypes(k);
  const tried = [];
  for (const c of candidates(path)) {
    if (c.file && !existsSync(c.path)) {
      tried.push(`${c.path} (${c.from}): not found`);
      continue;
    }
    let lib;
    try {
      lib = k.load(c.path);
    } catch (e) {
      tried.push(`${c.path} (${c.from}): ${e.message}`);
      continue;
    }
    let version;
    try {
      version = lib.func('const char *recuo_version(void)')();
    } catch (e) {
      tried.push(`${c.path} (${c.from}): not librecuo (${e.message})`);
      continue;
    }
    if (version !== PACKAGE_VERSION) {
      throw new LibraryError(
        `recuo: ${c.path} (${c.from}) is librecuo ${version}, but this package is recuo ${PACKAGE_VERSION}: ` +
          'build the matching library (make js) or point RECUO_LIB at it',
        [...tried, `${c.path} (${c.from}): version ${version}`],
      );
    }
    try {
      return { koffi: k, path: c.path, from: c.from, version, fn: declare(k, lib) };
    } catch (e) {
      throw new LibraryError(`recuo: ${c.path} (${c.from}) lacks a function this package needs: ${e.message}`, tried);
    }
  }
  throw new LibraryError(
    'recuo: librecuo was not found. Set RECUO_LIB to its path, run `make js` (which bundles it ' +
      'into the package) or `make install`. Tried:\n  ' + tried.join('\n  '),
    tried,
  );
}
