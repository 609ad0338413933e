// The part of node:assert/strict the package's test files use, for the bundles that run them
// in a browser or a Worker: the same comparisons (Object.is, deep and strict).

class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AssertionError';
  }
}

const show = (v) => {
  try {
    return typeof v === 'bigint' ? `${v}n` : JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
  } catch {
    return String(v);
  }
};

/** Fails with `message` (then `detail` too, as node:assert's diff would show it) or `detail`. */
function fail(message, detail) {
  if (message instanceof Error) throw message;
  throw new AssertionError(message == null ? detail : `${message} (${detail})`);
}

/** Whether `a` and `b` are deeply and strictly equal. */
function same(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Map || a instanceof Set) return same([...a], [...b]);
  if (ArrayBuffer.isView(a)) return same([...a], [...b]);
  if (a instanceof Date) return a.getTime() === b.getTime();
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
}

/** Whether `error` is what `expected` says (a class, a predicate, a RegExp or an object). */
function matches(error, expected) {
  if (expected === undefined) return true;
  if (expected instanceof RegExp) return expected.test(String(error?.message ?? error));
  if (typeof expected === 'function') {
    if (expected.prototype !== undefined && error instanceof expected) return true;
    if (Error.isPrototypeOf(expected) || expected === Error) return false;
    return expected(error) === true;
  }
  return Object.entries(expected).every(([k, v]) => (v instanceof RegExp ? v.test(error?.[k]) : same(error?.[k], v)));
}

function ok(value, message) {
  if (!value) fail(message, `expected a truthy value, got ${show(value)}`);
}

const assert = Object.assign(ok, {
  AssertionError,
  ok,
  equal(a, b, message) {
    if (!Object.is(a, b)) fail(message, `${show(a)} !== ${show(b)}`);
  },
  notEqual(a, b, message) {
    if (Object.is(a, b)) fail(message, `${show(a)} === ${show(b)}`);
  },
  deepEqual(a, b, message) {
    if (!same(a, b)) fail(message, `not deeply equal:\n${show(a)}\n${show(b)}`);
  },
  match(text, pattern, message) {
    if (!pattern.test(text)) fail(message, `${show(text)} does not match ${pattern}`);
  },
  throws(fn, expected, message) {
    try {
      fn();
    } catch (e) {
      if (!matches(e, expected)) fail(typeof expected === 'string' ? expected : message, `unexpected error: ${e?.name}: ${e?.message}`);
      return;
    }
    fail(typeof expected === 'string' ? expected : message, 'missing expected exception');
  },
  async rejects(promise, expected, message) {
    try {
      await (typeof promise === 'function' ? promise() : promise);
    } catch (e) {
      if (!matches(e, expected)) fail(typeof expected === 'string' ? expected : message, `unexpected rejection: ${e?.name}: ${e?.message}`);
      return;
    }
    fail(typeof expected === 'string' ? expected : message, 'missing expected rejection');
  },
});

export { AssertionError };
export default assert;
