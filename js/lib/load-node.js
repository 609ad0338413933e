// Node: librecuo through koffi (the copy bundled in the package, RECUO_LIB, or the system's),
// or recuo.wasm with RECUO_WASM=1 — until Redis runs through the user's own client there.

import { openLibrary } from './native.js';
import { loadWasm } from './load-file.js';

/** The library Node's `import 'recuo'` runs on. */
export function load() {
  return process.env.RECUO_WASM === '1' ? loadWasm() : openLibrary();
}
