// The portable tests, for a bundle that runs them in a browser page or a Worker: the vector
// files (the package's own test file, with node:test, node:assert, node:fs and node:url
// answered by ./test.js, ./assert.js, ./fs.js and ./url.js) and the guides against
// `recuo serve --cors`.

import '../vectors.test.js';
import './guides.js';

export { runAll } from './test.js';
