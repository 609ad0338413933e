// Every vector file the portable tests read, inlined by the bundler.

import retry_after from '../../../tests/vectors/retry_after.json';
import backoff from '../../../tests/vectors/backoff.json';
import seeded from '../../../tests/vectors/seeded.json';
import classify from '../../../tests/vectors/classify.json';
import scenarios from '../../../tests/vectors/scenarios.json';
import loops from '../../../tests/vectors/loops.json';
import redaction from '../../../tests/vectors/redaction.json';
import origin from '../../../tests/vectors/origin.json';
import http from '../../../tests/vectors/http.json';

/** The vector files by name. */
export const VECTORS = {
  'retry_after.json': retry_after,
  'backoff.json': backoff,
  'seeded.json': seeded,
  'classify.json': classify,
  'scenarios.json': scenarios,
  'loops.json': loops,
  'redaction.json': redaction,
  'origin.json': origin,
  'http.json': http,
};
