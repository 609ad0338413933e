// docs/js.md's first examples run as the page shows them: every ```js block of "Quick start"
// and "With your HTTP client", against a node:http server on 127.0.0.1 that answers as the
// page says (a 503 with `Retry-After: 1`, then a dropped connection, then the item; a payment
// whose first answer is a 500), printing what the ```text block after it says. The dropped
// connection is a fetch TypeError with no status: the `comRetry` example must retry it too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';

const PAGE = readFileSync(new URL('../../docs/js.md', import.meta.url), 'utf8');
const PACKAGE = new URL('../index.js', import.meta.url).href;
const SECTIONS = ['Quick start', 'With your HTTP client'];

/** The text of the `## name` section (up to the next `## ` heading). */
function section(name) {
  const start = PAGE.indexOf(`\n## ${name}\n`);
  assert.ok(start >= 0, `docs/js.md has no "## ${name}" section`);
  const end = PAGE.indexOf('\n## ', start + 1);
  return PAGE.slice(start, end < 0 ? undefined : end);
}

/** Each ```js block of a section, with the ```text block that follows it (before the next ```js), if any. */
function examples(text) {
  const blocks = [...text.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], body: m[2] }));
  const found = [];
  blocks.forEach((b, i) => {
    if (b.lang !== 'js') return;
    const next = blocks[i + 1];
    found.push({ code: b.body, prints: next?.lang === 'text' ? next.body : null });
  });
  return found;
}

/**
 * The page's server: `/items/7` answers a 503 with `Retry-After: 1`, then drops the connection,
 * then answers the item; `/down` is always 503; a POST to `/payments` answers 500 first, then
 * 201 when it carries an idempotency key. Every answer closes its connection (no pooled
 * connection for a runtime to retry on its own).
 */
async function pageServer() {
  const requests = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const n = requests.filter((r) => r.method === req.method && r.url === req.url).length + 1;
      requests.push({ method: req.method, url: req.url, at: performance.now(), key: req.headers['idempotency-key'] ?? null });
      const json = (status, value, headers = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', connection: 'close', ...headers });
        res.end(JSON.stringify(value));
      };
      if (req.method === 'GET' && req.url === '/items/7') {
        if (n === 1) return json(503, { error: 'busy' }, { 'retry-after': '1' });
        if (n === 2) return req.socket.destroy();
        return json(200, { id: 7, name: 'chair' });
      }
      if (req.method === 'GET' && req.url === '/down') return json(503, { error: 'down' });
      if (req.method === 'POST' && req.url === '/payments') {
        if (n === 1 || !req.headers['idempotency-key']) return json(500, { error: 'try again' });
        return json(201, { payment: `pay_${JSON.parse(body).order}`, status: 'paid' });
      }
      json(404, { error: 'not found' });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(resolve);
    }),
  };
}

/** Runs `code` as a module importing this package, its URLs on `base`: the lines it printed. */
async function run(code, base, dir, name) {
  const source = code.replaceAll('https://api.example.com', base).replace(/from 'recuo'/g, `from '${PACKAGE}'`);
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, source);
  const printed = [];
  const log = console.log;
  console.log = (...args) => printed.push(...format(...args).split('\n'));
  try {
    await import(pathToFileURL(file).href);
  } finally {
    console.log = log;
  }
  return printed;
}

/** A printed line matches the page's: a wait (`N ms`) is random, any whole number matches it. */
function matches(line, expected) {
  const pattern = expected.split(/\d+ ms/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\d+ ms');
  return new RegExp(`^${pattern}$`).test(line);
}

const dir = mkdtempSync(join(tmpdir(), 'recuo-docs-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

for (const name of SECTIONS) {
  const found = examples(section(name));
  test(`docs/js.md's "${name}" has examples to run`, () => {
    assert.ok(found.length > 0);
  });
  found.forEach(({ code, prints }, i) => {
    const first = code.split('\n').find((l) => /\b(buscarComRetry|retry|comRetry)\(/.test(l))?.trim();
    test(`docs/js.md, "${name}" example ${i + 1} prints what the page says (${first})`, { timeout: 60000 }, async () => {
      const server = await pageServer();
      try {
        const printed = await run(code, server.base, dir, `${name.replace(/\W+/g, '-')}-${i + 1}`);
        if (prints !== null) {
          const expected = prints.trimEnd().split('\n');
          assert.equal(printed.length, expected.length, `printed:\n${printed.join('\n')}\nthe page says:\n${prints}`);
          expected.forEach((line, j) => assert.ok(matches(printed[j], line), `printed ${JSON.stringify(printed[j])}, the page says ${JSON.stringify(line)}`));
        }
        // What the page says of the server's waits and keys holds too.
        const items = server.requests.filter((r) => r.url === '/items/7');
        if (items.length >= 2) assert.ok(items[1].at - items[0].at >= 1000, 'the second attempt came before Retry-After: 1 had passed');
        const payments = server.requests.filter((r) => r.url === '/payments');
        if (payments.length) {
          assert.equal(payments.length, 2);
          assert.deepEqual(payments.map((r) => r.key), ['payment-for-order-1042', 'payment-for-order-1042']);
        }
      } finally {
        await server.close();
      }
    });
  });
}

