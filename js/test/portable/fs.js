// node:fs's `readFileSync`, for the bundles: the vector files come inlined by the bundler,
// found by their names.

import { VECTORS } from './vectors.js';

export function readFileSync(path) {
  let name = String(path).split('/').at(-1);
  // Vite turns `new URL('…/http.json', import.meta.url)` into an asset named with a hash.
  if (!Object.hasOwn(VECTORS, name)) name = name.replace(/-[\w-]{8}\.json$/, '.json');
  if (!Object.hasOwn(VECTORS, name)) throw new Error(`no vector file ${name} in the bundle`);
  return JSON.stringify(VECTORS[name]);
}

export function existsSync() {
  return false;
}
