// Loads recuo.wasm from its bytes inlined in JavaScript (lib/wasm-bytes.js, made by
// `make wasm`), for browsers and bundlers: Vite and esbuild bundle it as any module, with no
// plugin and no file to serve beside the page.

import bytes from './wasm-bytes.js';
import { instantiate } from './wasm.js';

/** The bytes of a base64 text. */
function decode(base64) {
  const text = atob(base64);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** The library over the inlined recuo.wasm. */
export function load() {
  return instantiate(new WebAssembly.Module(decode(bytes)), { path: 'recuo.wasm (inlined)', from: 'the package' });
}
