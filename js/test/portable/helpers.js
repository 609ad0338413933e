// test/helpers.js for the bundles (a page, a Worker): no process to spawn — the scripted
// server of tests/vectors/http.json is started by the test that drives the host, and its URL
// given as `RECUO_SERVERS.http`.

export const haveServe = true;
export const RECUO_BIN = '';

/** The server the driving test started: `{ url, stop() }` (stopping it is the driver's). */
export async function serve() {
  return { url: globalThis.RECUO_SERVERS.http, stop: async () => {} };
}
