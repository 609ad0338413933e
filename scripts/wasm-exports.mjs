// Keeps, of the functions recuo.wasm exports, only those the npm package calls (js/lib/abi.js's
// prototypes and the loader's own): the C ABI's others (the policy's setters, the C-only
// options) then have no caller, and wasm-opt removes their code. Other exports (the memory)
// stay. The functions only the tests call (abi.js's TEST_ONLY) are kept with --test alone:
// the module the package ships leaves them out. Usage: node scripts/wasm-exports.mjs
// IN.wasm OUT.wasm [--test]

import { readFileSync, writeFileSync } from 'node:fs';

import { PROTOTYPES, TEST_ONLY } from '../js/lib/abi.js';

const LOADER = ['recuo_wasm_alloc', 'recuo_wasm_free', 'recuo_wasm_init'];
const EXPORT_SECTION = 7;
const FUNCTION = 0;

const [input, output, flag] = process.argv.slice(2);
const keep = new Set([...LOADER, ...PROTOTYPES.map((p) => /(recuo_[a-z0-9_]+)\(/.exec(p)[1])]);
if (flag !== '--test') for (const name of TEST_ONLY) keep.delete(name);

/** An unsigned LEB128 at `at`: `[value, next]`. */
function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return [value, at];
    shift += 7;
  }
}

/** `n` as an unsigned LEB128. */
function encode(n) {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

const wasm = readFileSync(input);
const parts = [wasm.subarray(0, 8)];
const exported = new Set();
let kept = 0;
let dropped = 0;
for (let at = 8; at < wasm.length;) {
  const id = wasm[at];
  const [size, body] = leb(wasm, at + 1);
  const end = body + size;
  if (id !== EXPORT_SECTION) {
    parts.push(wasm.subarray(at, end));
  } else {
    const [count, first] = leb(wasm, body);
    const entries = [];
    let p = first;
    for (let i = 0; i < count; i++) {
      const [len, nameAt] = leb(wasm, p);
      const name = wasm.subarray(nameAt, nameAt + len).toString('utf8');
      const kind = wasm[nameAt + len];
      exported.add(name);
      const [, next] = leb(wasm, nameAt + len + 1);
      if (kind !== FUNCTION || keep.has(name)) {
        entries.push(wasm.subarray(p, next));
        kept++;
      } else {
        dropped++;
      }
      p = next;
    }
    const content = Buffer.concat([Buffer.from(encode(entries.length)), ...entries]);
    parts.push(Buffer.from([EXPORT_SECTION, ...encode(content.length)]), content);
  }
  at = end;
}
const missing = [...keep].filter((name) => !exported.has(name));
if (missing.length) throw new Error(`recuo.wasm does not export ${missing.join(', ')}`);
writeFileSync(output, Buffer.concat(parts));
console.log(`wasm-exports: ${kept} kept, ${dropped} functions no longer exported`);
