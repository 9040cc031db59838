/**
 * A machine's whole state as lines, for comparing two machines: every object
 * reachable from the Machine walked in a fixed order (own keys, array
 * elements, map and set entries in insertion order), the same things the
 * time-travel snapshots capture (base/marks.ts): host-owned, immutable
 * and derived objects are named, not walked; functions are leaves; typed
 * arrays are hashed. Two machines that made the same run give the same
 * lines; the first line that differs says where they part (its path).
 */
import { derivedReset, isHostOwned, isImmutable } from '../../emulator/base/marks';

export interface StateLines { paths: string[]; values: string[]; /** the typed arrays by line (to say where two differ) */ views: Map<number, ArrayBufferView> }

function leaf(o: object): string | undefined {
  if (typeof o === 'function') return 'function';
  if (isHostOwned(o)) return 'host';
  if (isImmutable(o)) return 'immutable';
  if (derivedReset(o)) return 'derived';
  if (o instanceof WeakMap || o instanceof WeakSet || o instanceof Promise || o instanceof ArrayBuffer) return o.constructor.name;
  if (typeof WeakRef !== 'undefined' && o instanceof WeakRef) return 'WeakRef';
  if (o instanceof WebAssembly.Memory || o instanceof WebAssembly.Module || o instanceof WebAssembly.Instance) return 'wasm';
  return undefined;
}

/** an array element never set (a hole: filter and forEach skip it, an undefined they do not) */
const HOLE = Symbol('hole');

/** FNV-1a over the bytes of a view (4 bytes at a time where aligned) */
function hashView(v: ArrayBufferView): string {
  let h = 0x811c9dc5;
  const n = v.byteLength;
  const words = (v.byteOffset & 3) === 0 ? n >> 2 : 0;
  if (words) {
    const w = new Int32Array(v.buffer, v.byteOffset, words);
    for (let i = 0; i < words; i++) h = Math.imul(h ^ w[i], 0x01000193);
  }
  const b = new Uint8Array(v.buffer, v.byteOffset, n);
  for (let i = words << 2; i < n; i++) h = Math.imul(h ^ b[i], 0x01000193);
  return `${v.constructor.name}[${n}]#${(h >>> 0).toString(16)}`;
}

function primitive(v: unknown): string {
  switch (typeof v) {
    case 'bigint': return `${v}n`;
    case 'string': return JSON.stringify(v);
    case 'number': return Object.is(v, -0) ? '-0' : String(v);
    default: return String(v);
  }
}

/**
 * The state lines of everything reachable from `root`; a path `skip` accepts
 * is a line '-' (not walked). `skip` also gets the object holding the value
 * (undefined for the root) for fields that are state only in some states.
 * `stateOf` gives the part of a typed array that is state (a register file
 * with scratch slots), the whole array by default.
 */
export function stateLines(
  root: object,
  skip: (path: string, owner?: object) => boolean = () => false,
  stateOf: (path: string, view: ArrayBufferView) => ArrayBufferView = (_, v) => v,
): StateLines {
  const paths: string[] = [];
  const values: string[] = [];
  const views = new Map<number, ArrayBufferView>();
  const ids = new Map<object, number>();
  const stack: [unknown, string, object?][] = [[root, 'machine']];
  while (stack.length) {
    const [v, path, owner] = stack.pop()!;
    if (skip(path, owner)) { paths.push(path); values.push('-'); continue; }
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) { paths.push(path); values.push(primitive(v)); continue; }
    const o = v as object;
    const seen = ids.get(o);
    if (seen !== undefined) { paths.push(path); values.push(`@${seen}`); continue; }
    ids.set(o, ids.size);
    const l = leaf(o);
    paths.push(path);
    if (l !== undefined) { values.push(l); continue; }
    if (ArrayBuffer.isView(o)) { const part = stateOf(path, o); views.set(values.length, part); values.push(hashView(part)); continue; }
    const children: [unknown, string, object][] = [];
    if (Array.isArray(o)) {
      values.push(`Array(${o.length})`);
      for (let i = 0; i < o.length; i++) children.push([i in o ? o[i] : HOLE, `${path}[${i}]`, o]);
    } else if (o instanceof Map) {
      values.push(`Map(${o.size})`);
      let i = 0;
      for (const [k, x] of o) { children.push([k, `${path}.key${i}`, o], [x, `${path}.get(${typeof k === 'object' ? i : primitive(k)})`, o]); i++; }
    } else if (o instanceof Set) {
      values.push(`Set(${o.size})`);
      let i = 0;
      for (const x of o) children.push([x, `${path}.item${i++}`, o]);
    } else {
      values.push(o.constructor?.name ?? 'Object');
      for (const key of Reflect.ownKeys(o)) {
        const d = Object.getOwnPropertyDescriptor(o, key);
        children.push([d && 'value' in d ? d.value : undefined, `${path}.${String(key)}`, o]);
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return { paths, values, views };
}

/** The first differences (up to `max`) between two machines' state lines ("path: a | b"), or undefined when they are the same. */
export function firstDifference(a: StateLines, b: StateLines, max = 4): string | undefined {
  const n = Math.min(a.values.length, b.values.length);
  const out: string[] = [];
  for (let i = 0; i < n && out.length < max; i++) {
    if (a.values[i] !== b.values[i] || a.paths[i] !== b.paths[i]) {
      out.push(`${a.paths[i]}: ${a.values[i]} | ${b.paths[i]}: ${b.values[i]}${bytesDiffer(a.views.get(i), b.views.get(i))}`);
      if (a.paths[i] !== b.paths[i]) break; // the walks parted: what follows is not comparable
    }
  }
  if (out.length === 0 && a.values.length !== b.values.length) out.push(`${a.values.length} lines | ${b.values.length} lines (${a.paths[n] ?? b.paths[n]})`);
  return out.length ? out.join('\n') : undefined;
}

/** " (from byte N: a... | b...)" where two typed arrays' bytes first differ */
function bytesDiffer(a: ArrayBufferView | undefined, b: ArrayBufferView | undefined): string {
  if (!a || !b) return '';
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength), y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  const n = Math.min(x.length, y.length);
  let i = 0;
  while (i < n && x[i] === y[i]) i++;
  const hex = (v: Uint8Array): string => Buffer.from(v.subarray(i, i + 12)).toString('hex');
  return ` (from byte ${i}: ${hex(x)} | ${hex(y)})`;
}
