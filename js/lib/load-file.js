// Loads recuo.wasm from beside the package, for the runtimes that read files (Node, Deno,
// Bun): compiled once per process, instantiated once per import.

import { readFileSync } from 'node:fs';

import { instantiate } from './wasm.js';

const url = new URL('../recuo.wasm', import.meta.url);

/** The library over the package's recuo.wasm. */
export function loadWasm() {
  const module = new WebAssembly.Module(readFileSync(url));
  return instantiate(module, { path: url.pathname, from: 'the package' });
}

export const load = loadWasm;
