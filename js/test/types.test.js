// index.d.ts declares exactly what index.js exports.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { execFileSync } from 'node:child_process';

import * as recuo from '../index.js';

test('index.d.ts declares every export, and nothing more', () => {
  const dts = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8');
  const declared = new Set([...dts.matchAll(/^export (?:declare )?(?:const|function|class) (\w+)/gm)].map((m) => m[1]));
  declared.add('default');
  assert.deepEqual([...declared].sort(), Object.keys(recuo).sort());
  const defaults = [...dts.matchAll(/^  (\w+): typeof \w+;$/gm)].map((m) => m[1]);
  assert.deepEqual(defaults.sort(), Object.keys(recuo.default).sort());
});

test('index.d.ts and the generated values.d.ts compile, and typed usage checks', () => {
  const tsc = new URL('../node_modules/typescript/bin/tsc', import.meta.url).pathname;
  const dir = new URL('..', import.meta.url).pathname;
  // Throws, with tsc's diagnostics in the error, when a declaration does not type-check.
  execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--lib', 'es2022,dom', '--module', 'nodenext',
    '--moduleResolution', 'nodenext', 'index.d.ts', 'values.d.ts', 'otel.d.ts', 'test/typed_usage.ts'],
  { cwd: dir, stdio: 'pipe' });
});
