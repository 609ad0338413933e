// The guides' functions in a page, against `recuo serve --script test/portable/script.json`
// run three times, with each `--cors` mode: `globalThis.RECUO_SERVERS` = { full, originOnly,
// none, prefix } (their URLs, and the first segment of this run's paths). What guide B says of a browser: a wait the server exposes is honoured
// (an HTTP-date measured against the exposed Date), a hidden one is unknown (the backoff
// window applies), and a 429 with no CORS at all is a failed fetch, retried when the request
// is idempotent (those two only where `RECUO_SERVERS.browser` says a browser runs them; a
// Worker sees every header). No test sleeps: the waits are recorded, not taken.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as recuo from '../../index.js';

const servers = () => globalThis.RECUO_SERVERS ?? {};
/** The paths of this run (each bundle's run has its own: the script counts per path). */
const path = (name) => `/${servers().prefix ?? 'page'}/${name}`;
/** Skips a test of what a browser does (CORS) outside one (`RECUO_SERVERS.browser`). */
const inBrowser = (t) => {
  if (!servers().browser) t.skip('a browser\'s CORS rules: not in this runtime');
  return servers().browser === true;
};
const noSleep = async () => {};

/** buscarComRetry on `url` with seed 7: its answer's status and the delays it decided. */
async function buscar(url, options = {}) {
  const delays = [];
  const onRecord = (_level, line) => {
    const r = JSON.parse(line);
    if (r.type === 'attempt' && r.delay_ms != null) delays.push(r.delay_ms);
  };
  const response = await recuo.buscarComRetry(url, { seed: 7, sleep: noSleep, onRecord, ...options });
  return { status: response.status, delays };
}

test('guide A in a page: buscarComRetry honours an exposed HTTP-date Retry-After, measured against the exposed Date', async () => {
  const got = await buscar(`${servers().full}${path('dated')}`);
  assert.equal(got.status, 200);
  assert.equal(got.delays.length, 1);
  // Against the page's clock the date is long past (no wait); against the server's Date, 3 s.
  assert.ok(got.delays[0] >= 3000 && got.delays[0] < 9000, String(got.delays));
});

test('guide A in a page: a Retry-After the server does not expose is unknown: the backoff window applies', async (t) => {
  if (!inBrowser(t)) return;
  const hidden = await buscar(`${servers().originOnly}${path('dated')}`);
  const none = await buscar(`${servers().full}${path('plain')}`);
  assert.equal(hidden.status, 200);
  assert.deepEqual(hidden.delays, none.delays, 'the same seeded draw as with no Retry-After');
  assert.ok(hidden.delays[0] < 3000, String(hidden.delays));
});

test('retry over fetch in a page: an exposed Retry-After in seconds is the wait', async () => {
  const delays = [];
  const response = await recuo.retry((attempt) => fetch(`${servers().full}${path('seconds')}`, { headers: attempt.headers }), {
    seed: 7,
    sleep: noSleep,
    onRetry: (_attempt, _failure, delayMs) => delays.push(delayMs),
  });
  assert.equal(response.status, 200);
  assert.equal(delays.length, 1);
  assert.ok(delays[0] >= 2000 && delays[0] < 10000, String(delays));
});

test('a 429 with no CORS reaches the page as a failed fetch: retried for a GET, re-raised at the end', async (t) => {
  if (!inBrowser(t)) return;
  const url = `${servers().none}${path('blocked')}`;
  const error = await recuo.buscarComRetry(url, { tentativas: 2, baseMs: 1, maxMs: 1, sleep: noSleep }).then(
    () => null,
    (e) => e,
  );
  assert.ok(error instanceof TypeError, String(error));
  assert.equal(recuo.transportKind(error), 'other');
  // The server's log (read by the test in Node) shows the two requests.
});

test("guide A's comRetry in a page: retries a task that fails, then answers its value", async () => {
  let calls = 0;
  const value = await recuo.comRetry(
    async () => {
      calls += 1;
      if (calls < 3) throw new Error('not yet');
      return 'ok';
    },
    { tentativas: 5, baseMs: 1, maxMs: 2 },
  );
  assert.deepEqual([value, calls], ['ok', 3]);
});
