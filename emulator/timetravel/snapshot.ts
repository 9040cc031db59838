/**
 * Snapshots of everything reachable from one root object (the Machine), put
 * back in place: restore() writes the captured property values, array
 * elements, map and set entries and typed-array bytes back into the SAME
 * objects. Closures that hold those objects (the kernel's handlers, the
 * probe handlers' compiled code, listeners) therefore see the restored state
 * without being copied; objects created after the snapshot become
 * unreachable from the root again.
 *
 * What is walked and what is not: base/marks.ts (host-owned,
 * immutable, derived). Functions, WebAssembly objects, promises and weak
 * collections are leaves (kept by reference). An ArrayBuffer reached
 * directly is a leaf too; its bytes are captured through the views that
 * reach it (the guest RAM arena is one 2 GiB buffer: only the ranges some
 * view covers are copied).
 *
 * Bytes are kept in 4 KiB chunks aligned to the buffer: a chunk equal to the
 * previous snapshot's chunk at the same place is shared, not copied (the
 * copy-on-write of pages a snapshot chain needs; `newBytes` counts what
 * this snapshot added); a chunk of zeros is one shared copy.
 *
 * Limits, stated: state held only in a closure's own variables, in a
 * module-level variable or in a WeakMap keyed by a machine object is not
 * seen — machine code keeps its state in objects (tested by the
 * back-then-forward tests, timetravel tests).
 */
import { ChangedBytes, derivedReset, isHostOwned, isImmutable, RestoreHook, restoreHook } from '../base/marks';

const CHUNK = 4096;

type Saved =
  | { k: 0; o: Record<PropertyKey, unknown>; keys: PropertyKey[]; vals: unknown[] }
  | { k: 1; o: unknown[]; vals: unknown[] }
  | { k: 2; o: Map<unknown, unknown>; vals: unknown[] }
  | { k: 3; o: Set<unknown>; vals: unknown[] };

/** captured bytes of one buffer: chunk start -> [from, to) within the chunk and the copy */
interface BufferBytes {
  buf: ArrayBufferLike;
  chunks: Map<number, { from: number; to: number; data: Uint8Array }>;
}

export interface Snapshot {
  readonly saved: readonly Saved[];
  readonly buffers: readonly BufferBytes[];
  readonly resets: readonly (() => void)[];
  readonly hooks: readonly RestoreHook[];
  /** objects captured */
  readonly objects: number;
  /** bytes of guest memory this snapshot copied (chunks not shared with the previous one) */
  readonly newBytes: number;
  /** estimate of this snapshot's own size: newBytes + the object records */
  readonly cost: number;
}

function isLeaf(o: object): boolean {
  if (typeof o === 'function') return true;
  if (o instanceof WeakMap || o instanceof WeakSet || o instanceof Promise) return true;
  if (typeof WeakRef !== 'undefined' && o instanceof WeakRef) return true;
  if (typeof FinalizationRegistry !== 'undefined' && o instanceof FinalizationRegistry) return true;
  if (o instanceof ArrayBuffer) return true;
  if (typeof SharedArrayBuffer !== 'undefined' && o instanceof SharedArrayBuffer) return true;
  if (o instanceof WebAssembly.Memory || o instanceof WebAssembly.Module || o instanceof WebAssembly.Instance) return true;
  if (o instanceof RegExp || o instanceof Date) return true;
  return false;
}

/**
 * Capture everything reachable from `root`. `previous` (the last snapshot of
 * the same root) lets unchanged byte chunks be shared.
 */
export function capture(root: object, previous?: Snapshot): Snapshot {
  const seen = new Set<object>();
  const saved: Saved[] = [];
  const resets: (() => void)[] = [];
  const hooks: RestoreHook[] = [];
  const ranges = new Map<ArrayBufferLike, number[]>();
  const stack: object[] = [root];
  let slots = 0;
  const visit = (v: unknown): void => {
    if (v !== null && (typeof v === 'object') && !seen.has(v)) stack.push(v);
  };
  while (stack.length) {
    const o = stack.pop()!;
    if (seen.has(o)) continue;
    seen.add(o);
    if (isHostOwned(o) || isImmutable(o) || isLeaf(o)) continue;
    const reset = derivedReset(o);
    if (reset) { resets.push(reset); continue; }
    const hook = restoreHook(o);
    if (hook) hooks.push(hook);
    if (ArrayBuffer.isView(o)) {
      let r = ranges.get(o.buffer);
      if (!r) ranges.set(o.buffer, r = []);
      r.push(o.byteOffset, o.byteOffset + o.byteLength);
      continue;
    }
    if (Array.isArray(o)) {
      const vals = o.slice();
      saved.push({ k: 1, o, vals });
      slots += vals.length;
      for (let i = 0; i < vals.length; i++) visit(vals[i]);
      continue;
    }
    if (o instanceof Map) {
      const vals: unknown[] = [];
      for (const [key, val] of o) { vals.push(key, val); visit(key); visit(val); }
      saved.push({ k: 2, o, vals });
      slots += vals.length;
      continue;
    }
    if (o instanceof Set) {
      const vals = [...o];
      for (const v of vals) visit(v);
      saved.push({ k: 3, o, vals });
      slots += vals.length;
      continue;
    }
    if (Object.isFrozen(o)) {
      // cannot change: nothing of its own to restore, but what it holds may
      for (const key of Reflect.ownKeys(o)) visit((o as Record<PropertyKey, unknown>)[key]);
      continue;
    }
    const rec = o as Record<PropertyKey, unknown>;
    const keys = Reflect.ownKeys(rec);
    const vals = new Array<unknown>(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const d = Object.getOwnPropertyDescriptor(rec, keys[i]);
      const v = d && 'value' in d ? d.value : undefined;
      vals[i] = v;
      visit(v);
    }
    saved.push({ k: 0, o: rec, keys, vals });
    slots += keys.length * 2;
  }
  const { buffers, newBytes } = captureBytes(ranges, previous);
  return { saved, buffers, resets, hooks, objects: saved.length, newBytes, cost: newBytes + slots * 8 + saved.length * 48 };
}

function captureBytes(ranges: Map<ArrayBufferLike, number[]>, previous?: Snapshot): { buffers: BufferBytes[]; newBytes: number } {
  const buffers: BufferBytes[] = [];
  let newBytes = 0;
  for (const [buf, flat] of ranges) {
    const before = previous?.buffers.find(b => b.buf === buf);
    // the part of each 4 KiB chunk some view covers (two views may share a chunk)
    const extent = new Map<number, [number, number]>();
    for (const [lo, hi] of mergeRanges(flat)) {
      for (let c = lo - (lo % CHUNK); c < hi; c += CHUNK) {
        const from = Math.max(lo, c) - c, to = Math.min(hi, c + CHUNK) - c;
        const e = extent.get(c);
        if (e) { e[0] = Math.min(e[0], from); e[1] = Math.max(e[1], to); } else extent.set(c, [from, to]);
      }
    }
    const chunks = new Map<number, { from: number; to: number; data: Uint8Array }>();
    const live = new Uint8Array(buf);
    for (const [c, [from, to]] of extent) {
      const old = before?.chunks.get(c);
      if (old && old.from === from && old.to === to && sameBytes(live, c + from, old.data)) {
        chunks.set(c, old);
        continue;
      }
      // a chunk of zeros (most of a big guest's RAM) shares one copy
      if (to - from === CHUNK && sameBytes(live, c + from, ZERO_CHUNK)) { chunks.set(c, { from, to, data: ZERO_CHUNK }); continue; }
      const data = live.slice(c + from, c + to);
      newBytes += data.length;
      chunks.set(c, { from, to, data });
    }
    buffers.push({ buf, chunks });
  }
  return { buffers, newBytes };
}

function mergeRanges(flat: number[]): [number, number][] {
  const rs: [number, number][] = [];
  for (let i = 0; i < flat.length; i += 2) if (flat[i + 1] > flat[i]) rs.push([flat[i], flat[i + 1]]);
  rs.sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const r of rs) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

const ZERO_CHUNK = new Uint8Array(CHUNK);
/** big compares go to the host's memcmp (Buffer.compare): a snapshot of a PC's RAM compares every chunk */
const NATIVE_COMPARE = 256;
const hostCompare: ((a: Uint8Array, b: Uint8Array) => number) | undefined =
  (globalThis as { Buffer?: { compare(a: Uint8Array, b: Uint8Array): number } }).Buffer?.compare;

/** live[at, at + copy.length) equals copy (word by word where both are 4-aligned: the common case, chunks are) */
function sameBytes(live: Uint8Array, at: number, copy: Uint8Array): boolean {
  const n = copy.length;
  if (n >= NATIVE_COMPARE && hostCompare !== undefined) return hostCompare(live.subarray(at, at + n), copy) === 0;
  let i = 0;
  if (((at + live.byteOffset) & 3) === 0 && (copy.byteOffset & 3) === 0) {
    const words = n >> 2;
    const a = wordsOf(live.buffer), b = new Int32Array(copy.buffer, copy.byteOffset, words);
    const base = (live.byteOffset + at) / 4;
    for (let w = 0; w < words; w++) if (a[base + w] !== b[w]) return false;
    i = words << 2;
  }
  for (; i < n; i++) if (live[at + i] !== copy[i]) return false;
  return true;
}

/** one Int32Array per buffer (the guest arena is 2 GiB: a view per comparison was most of a restore's time) */
const wordViews = new WeakMap<ArrayBufferLike, Int32Array>();
function wordsOf(buf: ArrayBufferLike): Int32Array {
  let w = wordViews.get(buf);
  if (w === undefined) { w = new Int32Array(buf, 0, Math.floor(buf.byteLength / 4)); wordViews.set(buf, w); }
  return w;
}

/** bytes of guest memory snapshot `b` shares with `a` (chunks it did not copy; the shared chunk of zeros is nobody's) */
export function sharedBytes(a: Snapshot, b: Snapshot): number {
  let n = 0;
  for (const bb of b.buffers) {
    const ab = a.buffers.find(x => x.buf === bb.buf);
    if (!ab) continue;
    for (const [c, ch] of bb.chunks) if (ab.chunks.get(c) === ch && ch.data !== ZERO_CHUNK) n += ch.data.length;
  }
  return n;
}

/** Put every captured object and byte back as it was when `s` was taken. */
export function restore(s: Snapshot): void {
  for (const h of s.hooks) h.before?.();
  for (const e of s.saved) {
    switch (e.k) {
      case 0: {
        const o = e.o;
        const cur = Reflect.ownKeys(o);
        let same = cur.length === e.keys.length;
        for (let i = 0; same && i < cur.length; i++) same = cur[i] === e.keys[i];
        if (!same) {
          const want = new Set(e.keys);
          for (const key of cur) if (!want.has(key)) delete o[key];
        }
        for (let i = 0; i < e.keys.length; i++) {
          const key = e.keys[i];
          if (o[key] !== e.vals[i]) {
            const d = Object.getOwnPropertyDescriptor(o, key);
            if (!d || 'value' in d) o[key] = e.vals[i];
          }
        }
        break;
      }
      case 1: {
        const a = e.o;
        const vals = e.vals;
        a.length = vals.length;
        for (let i = 0; i < vals.length; i++) {
          const v = vals[i];
          // a hole stays a hole (filter, forEach and `in` skip it; an undefined they do not)
          if (a[i] !== v || (v === undefined && (i in a) !== (i in vals))) {
            if (v === undefined && !(i in vals)) delete a[i];
            else a[i] = v;
          }
        }
        break;
      }
      case 2: {
        e.o.clear();
        for (let i = 0; i < e.vals.length; i += 2) e.o.set(e.vals[i], e.vals[i + 1]);
        break;
      }
      case 3: {
        e.o.clear();
        for (const v of e.vals) e.o.add(v);
        break;
      }
    }
  }
  const changed: ChangedBytes[] = [];
  for (const b of s.buffers) {
    const live = new Uint8Array(b.buf);
    for (const [c, ch] of b.chunks) {
      if (sameBytes(live, c + ch.from, ch.data)) continue;
      live.set(ch.data, c + ch.from);
      const last = changed[changed.length - 1];
      if (last && last.buf === b.buf && last.end === c + ch.from) last.end = c + ch.to;
      else changed.push({ buf: b.buf, start: c + ch.from, end: c + ch.to });
    }
  }
  for (const r of s.resets) r();
  for (const h of s.hooks) h.after(changed);
}
