// recuo's C ABI compiled to WebAssembly (recuo.wasm, built by `make wasm`), called the way
// lib/api.js calls a native library: every function of lib/abi.js with its arguments
// converted to the module's memory and back — text and buffers copied in, `_Out_` values
// read out into the caller's arrays, objects or buffers. Nothing here decides anything.
//
// The layout is wasm32's C layout: pointers and size_t are 4 bytes, 64-bit values are
// aligned to 8, a struct is as aligned as its most aligned field.

import { OPAQUE, PROTOTYPES, STRUCTS, TEST_ONLY } from './abi.js';
import { utf8 } from './convert.js';
import { RecuoError } from './errors.js';

/** Size (and alignment) and the module's value type of each scalar C type. */
const SCALARS = {
  bool: { size: 1, wasm: 'i32' },
  char: { size: 1, wasm: 'i32' },
  uint8_t: { size: 1, wasm: 'i32' },
  uint16_t: { size: 2, wasm: 'i32' },
  uint32_t: { size: 4, wasm: 'i32' },
  int32_t: { size: 4, wasm: 'i32' },
  size_t: { size: 4, wasm: 'i32' },
  uint64_t: { size: 8, wasm: 'i64' },
  int64_t: { size: 8, wasm: 'i64' },
  double: { size: 8, wasm: 'f64' },
};
const POINTER = 4;
const OPAQUE_NAMES = new Set(OPAQUE);

/** Thrown when the module cannot be loaded or a prototype cannot be called. */
export class WasmLoadError extends Error {
  constructor(message) {
    super(message);
    this.name = 'WasmLoadError';
  }
}

/** `type` parsed: `{ base, depth, out, isConst }` (`_Out_ const uint8_t *` → uint8_t, 1). */
function parseType(text) {
  let t = text.trim();
  const out = t.startsWith('_Out_ ');
  if (out) t = t.slice(6).trim();
  const isConst = t.startsWith('const ');
  if (isConst) t = t.slice(6).trim();
  const depth = (t.match(/\*/g) || []).length;
  const base = t.replace(/\*/g, '').trim();
  return { base, depth, out, isConst };
}

/** Each struct's fields with their offsets, and its size and alignment. */
function layouts() {
  const all = {};
  for (const [name, fields] of Object.entries(STRUCTS)) {
    let at = 0;
    let align = 1;
    const list = [];
    for (const [field, ctype] of Object.entries(fields)) {
      const type = parseType(ctype);
      const size = type.depth > 0 ? POINTER : SCALARS[type.base]?.size;
      if (size === undefined) throw new WasmLoadError(`recuo: ${name}.${field} has a type the loader does not know: ${ctype}`);
      at = Math.ceil(at / size) * size;
      list.push({ field, type, at, size });
      at += size;
      align = Math.max(align, size);
    }
    all[name] = { fields: list, size: Math.ceil(at / align) * align, align };
  }
  return all;
}

const LAYOUTS = layouts();
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** A 64-bit value as a number when it is one exactly, else a BigInt. */
const fromBig = (v) => (v <= MAX_SAFE && v >= -MAX_SAFE ? Number(v) : v);
const toBig = (v, signed) => {
  const b = typeof v === 'bigint' ? v : BigInt(Math.trunc(Number(v)));
  return signed ? BigInt.asIntN(64, b) : BigInt.asUintN(64, b);
};
const encoder = new TextEncoder();

/** The scratch memory a call's arguments live in: 64 KiB reused, larger needs allocated. */
const ARENA = 64 * 1024;
/** The C ABI's status for a panic inside recuo (a bug), which a trap of the module is. */
const PANIC = 900;

/** A handle the module made: its address, in the instance that made it. */
class Pointer {
  constructor(address, instance) {
    this.address = address;
    this.instance = instance;
  }
}

/**
 * Instantiates `module` (a `WebAssembly.Module`) and answers the library as lib/api.js takes
 * it: `{ layout, fn, version, path, from }`, where `layout` answers `sizeof` and `offsetof` of
 * the structs as laid out here.
 */
export function instantiate(module, { path = 'recuo.wasm', from = 'the package' } = {}) {
  let memory;
  let x;
  let arena;
  let top;
  let extra = [];
  /** Which instance is live: a trap replaces it, and handles of an older one are refused. */
  let generation = 0;
  const host = {
    monotonic_ns: () => performance.now() * 1e6,
    unix_ms: () => Date.now(),
    random_fill: (ptr, len) => {
      for (let at = 0; at < len; at += 65536) {
        globalThis.crypto.getRandomValues(new Uint8Array(memory.buffer, ptr + at, Math.min(65536, len - at)));
      }
    },
  };
  let buffer = null;
  let u8;
  let view;
  const fresh = () => {
    if (buffer !== memory.buffer) {
      buffer = memory.buffer;
      u8 = new Uint8Array(buffer);
      view = new DataView(buffer);
    }
  };

  /** A fresh instance of the module: its own memory, the host's clocks given. */
  const start = () => {
    x = new WebAssembly.Instance(module, { recuo_host: host }).exports;
    memory = x.memory;
    buffer = null;
    x.recuo_wasm_init();
    arena = x.recuo_wasm_alloc(ARENA);
    if (arena === 0) throw new WasmLoadError('recuo: the module has no memory for its arguments');
    top = arena;
    extra = [];
    generation++;
  };
  start();
  /** What to forget when a trap replaces the instance (handles kept by the caller). */
  const restartHooks = [];
  /** A trap: recuo panicked (a bug). The instance is dropped with everything it held. */
  const trapped = (name, e) => {
    start();
    for (const hook of restartHooks) hook();
    return new RecuoError(
      PANIC,
      'panic',
      `recuo: panic: ${name} trapped in the WebAssembly module (${e.message}), a bug in recuo: please report it. ` +
        'A fresh instance serves the next calls; objects made before are gone.',
    );
  };
  const handle = (address) => (address === 0 ? null : new Pointer(address, generation));
  /** A handle's address in the live instance; NULL for one a trap took (`frees` ignores it). */
  const address = (v, frees) => {
    if (v == null) return 0;
    if (v instanceof Pointer && v.instance === generation) return v.address;
    if (frees) return 0;
    throw new RecuoError(PANIC, 'panic', 'recuo: panic: this object was made before the module trapped and restarted: make it again');
  };
  /** `size` bytes of scratch aligned to 8, for the call under way. */
  const scratch = (size) => {
    const start = Math.ceil(top / 8) * 8;
    if (start + size <= arena + ARENA) {
      top = start + size;
      return start;
    }
    const ptr = x.recuo_wasm_alloc(size);
    if (ptr === 0) throw new RangeError(`recuo: the module has no room for ${size} bytes`);
    extra.push([ptr, size]);
    return ptr;
  };
  /**
   * Gives back the scratch taken since `mark` (`top` and the count of larger blocks then): a
   * call made while converting another's arguments (a `toString` that calls recuo) leaves the
   * outer call's scratch alone. Nothing to give back in an instance a trap replaced.
   */
  const release = (markTop, markExtra, markGeneration) => {
    if (markGeneration !== generation) return;
    top = markTop;
    while (extra.length > markExtra) {
      const [ptr, size] = extra.pop();
      x.recuo_wasm_free(ptr, size);
    }
  };

  const bytesOf = (v) => (typeof v === 'string' ? encoder.encode(v) : v instanceof Uint8Array ? v : encoder.encode(String(v)));
  /** Copies bytes (and a NUL when `terminated`) into scratch; NULL for null. */
  const copyIn = (v, terminated) => {
    if (v == null) return 0;
    const b = bytesOf(v);
    const ptr = scratch(b.length + (terminated ? 1 : 0));
    fresh();
    u8.set(b, ptr);
    if (terminated) u8[ptr + b.length] = 0;
    return ptr;
  };

  /** A typed array or buffer as memory the call reads: its bytes copied into scratch. */
  const rawIn = (v) => {
    const b = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    const ptr = scratch(b.length);
    fresh();
    u8.set(b, ptr);
    return ptr;
  };
  /** The bytes the call wrote at `ptr` copied back into the typed array or buffer `arg`. */
  const rawOut = (arg, ptr) => {
    if (ArrayBuffer.isView(arg)) new Uint8Array(arg.buffer, arg.byteOffset, arg.byteLength).set(u8.subarray(ptr, ptr + arg.byteLength));
  };

  const writeScalar = (at, base, v) => {
    switch (base) {
      case 'bool': u8[at] = v ? 1 : 0; break;
      case 'char': case 'uint8_t': u8[at] = Number(v) & 0xff; break;
      case 'uint16_t': view.setUint16(at, Number(v), true); break;
      case 'uint32_t': case 'size_t': view.setUint32(at, Number(v) >>> 0, true); break;
      case 'int32_t': view.setInt32(at, Number(v) | 0, true); break;
      case 'uint64_t': view.setBigUint64(at, toBig(v, false), true); break;
      case 'int64_t': view.setBigInt64(at, toBig(v, true), true); break;
      case 'double': view.setFloat64(at, Number(v), true); break;
      default: throw new WasmLoadError(`recuo: no way to write a ${base}`);
    }
  };
  const readScalar = (at, base) => {
    switch (base) {
      case 'bool': return u8[at] !== 0;
      case 'char': case 'uint8_t': return u8[at];
      case 'uint16_t': return view.getUint16(at, true);
      case 'uint32_t': case 'size_t': return view.getUint32(at, true);
      case 'int32_t': return view.getInt32(at, true);
      case 'uint64_t': return fromBig(view.getBigUint64(at, true));
      case 'int64_t': return fromBig(view.getBigInt64(at, true));
      case 'double': return view.getFloat64(at, true);
      default: throw new WasmLoadError(`recuo: no way to read a ${base}`);
    }
  };

  /** Writes `obj` as a `name` struct at `at` (its byte fields copied to scratch). */
  const writeStruct = (name, at, obj) => {
    for (const { field, type, at: off } of LAYOUTS[name].fields) {
      const v = obj[field];
      if (type.depth > 0) {
        const ptr = OPAQUE_NAMES.has(type.base) ? address(v, false) : copyIn(v, false);
        fresh();
        view.setUint32(at + off, ptr, true);
      } else {
        writeScalar(at + off, type.base, v ?? 0);
      }
    }
  };
  /** Reads a `name` struct at `at` into `obj`'s fields. */
  const readStruct = (name, at, obj) => {
    for (const { field, type, at: off } of LAYOUTS[name].fields) {
      if (type.depth > 0) {
        obj[field] = handle(view.getUint32(at + off, true));
      } else {
        obj[field] = readScalar(at + off, type.base);
      }
    }
  };

  const cString = (ptr) => {
    if (ptr === 0) return null;
    fresh();
    let end = ptr;
    while (u8[end] !== 0) end++;
    return utf8(u8.subarray(ptr, end));
  };

  /** One argument's conversion: `before(arg)` answers the module's value; `after(arg, value)` reads back. */
  function param(text, frees) {
    const type = parseType(text.trim().replace(/\w+$/, ''));
    const { base, depth, out } = type;
    if (depth === 0) {
      const wasm = SCALARS[base]?.wasm;
      if (wasm === undefined) throw new WasmLoadError(`recuo: no way to pass a ${base}`);
      // A scalar takes no scratch memory and reads nothing back: `plain`.
      if (wasm === 'i64') return { before: (v) => toBig(v, base === 'int64_t'), plain: true };
      if (wasm === 'f64') return { before: (v) => Number(v), plain: true };
      if (base === 'bool') return { before: (v) => (v ? 1 : 0), plain: true };
      return { before: (v) => Number(v) | 0, plain: true };
    }
    if (OPAQUE_NAMES.has(base) && depth === 1) return { before: (v) => address(v, frees) };
    if (OPAQUE_NAMES.has(base) && depth === 2 && out) {
      return {
        before: () => {
          const ptr = scratch(POINTER);
          fresh();
          view.setUint32(ptr, 0, true);
          return ptr;
        },
        after: (arg, ptr) => {
          if (Array.isArray(arg)) arg[0] = handle(view.getUint32(ptr, true));
        },
      };
    }
    if (base === 'uint8_t' || base === 'char') {
      if (!out) return { before: (v) => (ArrayBuffer.isView(v) ? rawIn(v) : copyIn(v, base === 'char')) };
      return { before: (v) => (v == null ? 0 : rawIn(v)), after: rawOut };
    }
    if (SCALARS[base] !== undefined && depth === 1) {
      const size = SCALARS[base].size;
      return {
        before: (v) => {
          if (v == null) return 0;
          if (ArrayBuffer.isView(v)) return rawIn(v);
          const ptr = scratch(size);
          fresh();
          writeScalar(ptr, base, Array.isArray(v) ? (v[0] ?? 0) : v);
          return ptr;
        },
        after: out
          ? (arg, ptr) => {
              if (Array.isArray(arg)) arg[0] = readScalar(ptr, base);
              else rawOut(arg, ptr);
            }
          : undefined,
      };
    }
    const layout = LAYOUTS[base];
    if (layout !== undefined && depth === 1) {
      return {
        before: (v) => {
          if (v == null) return 0;
          if (ArrayBuffer.isView(v)) return rawIn(v);
          if (out) return scratch(layout.size);
          const list = Array.isArray(v) ? v : [v];
          const ptr = scratch(layout.size * Math.max(1, list.length));
          for (let i = 0; i < list.length; i++) {
            fresh();
            writeStruct(base, ptr + i * layout.size, list[i]);
          }
          return ptr;
        },
        after: out
          ? (arg, ptr) => {
              if (ArrayBuffer.isView(arg)) rawOut(arg, ptr);
              else if (arg != null) readStruct(base, ptr, arg);
            }
          : undefined,
      };
    }
    throw new WasmLoadError(`recuo: no way to pass ${text}`);
  }

  /** The result's conversion. */
  function result(text) {
    const { base, depth } = parseType(text);
    if (base === 'void' && depth === 0) return () => undefined;
    if (depth > 0 && base === 'char') return (v) => cString(v);
    if (depth > 0) return handle;
    if (base === 'bool') return (v) => v !== 0;
    if (base === 'uint32_t' || base === 'size_t') return (v) => v >>> 0;
    if (base === 'uint64_t') return (v) => fromBig(BigInt.asUintN(64, v));
    if (base === 'int64_t') return (v) => fromBig(v);
    return (v) => v;
  }

  /** A prototype as a JavaScript function over the module's export. */
  function declare(proto) {
    const m = /^(.*?)\b(recuo_[a-z0-9_]+)\((.*)\)$/.exec(proto);
    if (m === null) throw new WasmLoadError(`recuo: cannot read the prototype ${proto}`);
    const [, ret, name, list] = m;
    if (typeof x[name] !== 'function') throw new WasmLoadError(`recuo: the module lacks ${name}`);
    // Giving back something a trap already took is nothing to do.
    const frees = /_(free|release)$/.test(name);
    const params = list.trim() === 'void' ? [] : list.split(',').map((p) => param(p, frees));
    const convert = result(ret);
    const n = params.length;
    const invoke = (values) => {
      try {
        return x[name](...values);
      } catch (e) {
        throw e instanceof WebAssembly.RuntimeError ? trapped(name, e) : e;
      }
    };
    // The calls of scalars alone (the clocks, the names, the conversions) touch no scratch.
    if (params.every((p) => p.plain)) {
      const [b0, b1] = params.map((p) => p.before);
      const plain =
        n === 0 ? () => convert(invoke([]))
        : n === 1 ? (a) => convert(invoke([b0(a)]))
        : n === 2 ? (a, b) => convert(invoke([b0(a), b1(b)]))
        : (...args) => convert(invoke(params.map((p, i) => p.before(args[i]))));
      plain.async = asyncOf(plain);
      return plain;
    }
    const call = (...args) => {
      const values = new Array(n);
      const markTop = top;
      const markExtra = extra.length;
      const markGeneration = generation;
      try {
        for (let i = 0; i < n; i++) values[i] = params[i].before(args[i]);
        const raw = invoke(values);
        fresh();
        for (let i = 0; i < n; i++) {
          const after = params[i].after;
          if (after !== undefined) after(args[i], values[i]);
        }
        return convert(raw);
      } finally {
        release(markTop, markExtra, markGeneration);
      }
    };
    call.async = asyncOf(call);
    return call;
  }

  /** A call that waits on another thread in the native library; here it runs at once. */
  const asyncOf = (call) => (...args) => {
    const done = args.pop();
    let rc;
    try {
      rc = call(...args);
    } catch (e) {
      queueMicrotask(() => done(e));
      return;
    }
    queueMicrotask(() => done(null, rc));
  };

  const fn = {};
  for (const proto of PROTOTYPES) {
    const name = /(recuo_[a-z0-9_]+)\(/.exec(proto)[1];
    if (TEST_ONLY.includes(name) && typeof x[name] !== 'function') continue; // the tests' build only
    fn[name] = declare(proto);
  }
  const layout = {
    sizeof: (name) => LAYOUTS[name].size,
    offsetof: (name, field) => LAYOUTS[name].fields.find((f) => f.field === field).at,
  };
  return {
    layout,
    fn,
    version: fn.recuo_version(),
    path,
    from,
    /** Calls `hook` whenever a trap replaces the instance (handles kept elsewhere are gone). */
    onRestart: (hook) => restartHooks.push(hook),
  };
}
