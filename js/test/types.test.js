// index.d.ts declares exactly what index.js exports.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import * as recuo from '../index.js';

test('index.d.ts declares every export, and nothing more', () => {
  const dts = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8');
  const declared = new Set([...dts.matchAll(/^export (?:declare )?(?:const|function|class) (\w+)/gm)].map((m) => m[1]));
  declared.add('default');
  assert.deepEqual([...declared].sort(), Object.keys(recuo).sort());
  const defaults = [...dts.matchAll(/^  (\w+): typeof \w+;$/gm)].map((m) => m[1]);
  assert.deepEqual(defaults.sort(), Object.keys(recuo.default).sort());
});
