// The portable tests, for a bundle that runs them in a browser page or a Worker: the vector
// files (the package's own test files, with node:test, node:assert, node:fs, node:url and
// ./helpers.js answered by this folder's shims; http.json's requests against the scripted
// server the driver started, `RECUO_SERVERS.http`) and the guides against `recuo serve --cors`.

import '../vectors.test.js';
import '../http_vectors.test.js';
import './guides.js';

export { runAll } from './test.js';
