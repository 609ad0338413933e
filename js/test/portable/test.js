// node:test's `test`, for the bundles that run the package's test files where node:test is
// not (a browser page, a Worker): each test is kept, then run by `runAll`.

const tests = [];

/** Registers a test, as node:test's `test(name, [options], fn)`. */
export function test(name, options, fn) {
  if (typeof options === 'function') [fn, options] = [options, {}];
  tests.push({ name, fn, skip: options?.skip ?? false });
}

/** Runs every test registered, one after another: `[{ name, ok, skipped?, error? }]`. */
export async function runAll() {
  const results = [];
  for (const t of tests) {
    if (t.skip) {
      results.push({ name: t.name, ok: true, skipped: String(t.skip) });
      continue;
    }
    globalThis.RECUO_PROGRESS?.(`start: ${t.name}`);
    const after = [];
    let skipped = null;
    try {
      await t.fn({ after: (f) => after.push(f), skip: (why = 'skipped') => { skipped = String(why); }, diagnostic: () => {} });
      results.push(skipped === null ? { name: t.name, ok: true } : { name: t.name, ok: true, skipped });
      globalThis.RECUO_PROGRESS?.(`ok: ${t.name}`);
    } catch (e) {
      globalThis.RECUO_PROGRESS?.(`failed: ${t.name}: ${e?.message}`);
      results.push({ name: t.name, ok: false, error: `${e?.name}: ${e?.message}\n${e?.stack ?? ''}` });
    } finally {
      for (const f of after) await f();
    }
  }
  return results;
}
