// A Cloudflare Worker that runs the portable tests (test/portable) when asked: GET
// /?servers=JSON answers their results as JSON. Bundled against the installed package as
// wrangler bundles a Worker (the `workerd` condition: recuo.wasm imported as a module).

import { runAll } from '../portable/run.js';

export default {
  async fetch(request) {
    const asked = new URL(request.url).searchParams.get('servers');
    globalThis.RECUO_SERVERS = JSON.parse(asked ?? '{}');
    return Response.json(await runAll());
  },
};
