// `import { openRecuo } from 'recuo/library'`: the whole API over a librecuo of your choice,
// without the lookup `import 'recuo'` does.

import { openLibrary, LibraryError, candidates, PACKAGE_VERSION } from './native.js';
import { recuoApi } from './api.js';

/** The recuo API over the library at `path` (or, without one, the usual lookup). */
export function openRecuo({ path } = {}) {
  return recuoApi(openLibrary(path));
}

export { LibraryError, candidates, PACKAGE_VERSION };
