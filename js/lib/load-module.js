// Loads recuo.wasm as a module import, for runtimes that refuse to compile bytes at run time
// (Cloudflare's workerd, and bundlers for Workers such as wrangler): the runtime compiles it
// when the Worker is deployed.

import module from '../recuo.wasm';
import { instantiate } from './wasm.js';

/** The library over the imported recuo.wasm. */
export function load() {
  return instantiate(module, { path: 'recuo.wasm (module)', from: 'the package' });
}
