/**
 * Guest RAM in one WebAssembly memory (the translator's requirement: code it
 * generates reaches guest bytes with a load, not a JS call per access).
 *
 * One arena per process: a WebAssembly.Memory reserved once at its full
 * size and never grown (growing a non-shared memory detaches its
 * ArrayBuffer, which would leave every Uint8Array over it empty). The
 * operating system backs only the pages that are touched, so the
 * reservation costs address space, not memory. Every page frame the
 * emulator allocates (anonymous memory, a file's pages, CPU register
 * files) is a view of this memory when there is room, an ordinary
 * Uint8Array otherwise: such bytes still work everywhere, the translator
 * just reaches them through its slow path (see emulator/jit/tlb.ts).
 *
 * Allocation is first-fit over a sorted free list with coalescing, in
 * 16-byte units (4 KiB for page frames). A range is given back when the
 * view that owns it is garbage-collected (FinalizationRegistry on the
 * allocated view). Subarrays of an allocated view must not outlive it;
 * Region keeps its Backing (and so the owning view) alive.
 *
 * Size: KPROBE_GUEST_RAM_MB (default 2048, at most 4096: wasm32).
 */

const WASM_PAGE = 65536;
const UNIT = 16;

function arenaBytes(): number {
  const env = typeof process !== 'undefined' ? process.env.KPROBE_GUEST_RAM_MB : undefined;
  const mb = env !== undefined && /^\d+$/.test(env) ? Math.min(4095, Math.max(16, Number(env))) : 2048;
  return mb * 1024 * 1024;
}

/**
 * Bytes [0, RESERVED) of the arena: the translator's per-process tables
 * (emulator/jit: a chain table per translator, guestTableBytes), kept out
 * of the page frames' range so that a process whose earlier machines still
 * hold the rest (their frames are given back only when collected) can
 * still make a translator.
 */
export const ARENA_RESERVED = 1 << 20;

class Arena {
  readonly memory: WebAssembly.Memory | null;
  readonly buffer: ArrayBuffer | null;
  /** free ranges [start, end), sorted, non-adjacent */
  private free: number[] = [];
  /** free ranges of the reserved head [4096, ARENA_RESERVED), as `free` */
  private tableFree: number[] = [];
  private readonly registry = new FinalizationRegistry<[number, number]>(([off, size]) => this.release(off, size));
  /** bytes currently allocated (for the bench's memory figures) */
  used = 0;
  constructor() {
    let mem: WebAssembly.Memory | null = null;
    const size = arenaBytes();
    try {
      const pages = size / WASM_PAGE;
      mem = new WebAssembly.Memory({ initial: pages, maximum: pages });
    } catch {
      mem = null; // no room for the reservation: every allocation falls back to ordinary arrays
    }
    this.memory = mem;
    this.buffer = mem ? mem.buffer : null;
    if (mem) {
      this.free = [ARENA_RESERVED, mem.buffer.byteLength];
      this.tableFree = [4096, ARENA_RESERVED];
    }
  }

  /** offset of a zeroed range of `size` bytes aligned to `align` (in the reserved head for `table`), or -1 */
  alloc(size: number, align: number, table = false): number {
    const f = table ? this.tableFree : this.free;
    for (let i = 0; i < f.length; i += 2) {
      const start = Math.ceil(f[i] / align) * align;
      if (start + size > f[i + 1]) continue;
      const end = f[i + 1];
      const repl: number[] = [];
      if (start > f[i]) repl.push(f[i], start);
      if (start + size < end) repl.push(start + size, end);
      f.splice(i, 2, ...repl);
      this.used += size;
      return start;
    }
    return -1;
  }

  release(off: number, size: number): void {
    // zero what was written; pages never written stay untouched on the host
    zeroWrittenPages(new Uint8Array(this.buffer as ArrayBuffer, off, size));
    this.used -= size;
    const f = off < ARENA_RESERVED ? this.tableFree : this.free;
    let i = 0;
    while (i < f.length && f[i] < off) i += 2;
    f.splice(i, 0, off, off + size);
    // coalesce with the neighbours
    if (i + 2 < f.length && f[i + 1] === f[i + 2]) f.splice(i + 1, 2);
    if (i >= 2 && f[i - 1] === f[i]) f.splice(i - 1, 2);
  }

  track(view: object, off: number, size: number): void {
    this.registry.register(view, [off, size]);
  }
}

let arena: Arena | null = null;
function theArena(): Arena {
  if (arena === null) arena = new Arena();
  return arena;
}

/** The arena's WebAssembly.Memory (null when it could not be reserved). */
export function guestMemory(): WebAssembly.Memory | null { return theArena().memory; }

/** The arena's buffer (null when there is none). */
export function guestBuffer(): ArrayBuffer | null { return theArena().buffer; }

/** Bytes of the arena in use (page frames, register files). */
export function guestRamUsed(): number { return theArena().used; }

/**
 * `size` zeroed bytes for guest memory: a view of the arena (page-aligned
 * when size is a multiple of 4 KiB) or, when the arena is full, an ordinary
 * array. Callers keep the returned view for as long as the bytes are used.
 */
export function guestBytes(size: number): Uint8Array {
  const a = theArena();
  if (a.buffer === null || size <= 0) return new Uint8Array(size);
  const rounded = Math.ceil(size / UNIT) * UNIT;
  const off = a.alloc(rounded, size % 4096 === 0 ? 4096 : UNIT);
  if (off < 0) return new Uint8Array(size);
  const view = new Uint8Array(a.buffer, off, size);
  a.track(view, off, rounded);
  return view;
}

/**
 * `size` zeroed bytes for one of the translator's per-process tables: from
 * the arena's reserved head while it has room (so a full arena does not
 * stop a translator from being made), else as guestBytes.
 */
export function guestTableBytes(size: number): Uint8Array {
  const a = theArena();
  if (a.buffer === null || size <= 0) return guestBytes(size);
  const rounded = Math.ceil(size / UNIT) * UNIT;
  const off = a.alloc(rounded, UNIT, true);
  if (off < 0) return guestBytes(size);
  const view = new Uint8Array(a.buffer, off, size);
  a.track(view, off, rounded);
  return view;
}

/** Copy `src` into guest memory (see guestBytes), `size` bytes long (default: its length). */
export function guestCopy(src: Uint8Array | readonly number[], size = src.length): Uint8Array {
  const b = guestBytes(size);
  b.set(src.length > size ? Array.prototype.slice.call(src, 0, size) : src);
  return b;
}

/** An Int32Array of `n` zeroed words in the arena (register files), or an ordinary one. */
export function guestWords(n: number): Int32Array {
  const bytes = guestBytes(n * 4);
  const w = new Int32Array(bytes.buffer, bytes.byteOffset, n);
  // the words own the range through `bytes`: keep it reachable from them
  guestOwners.set(w, bytes);
  return w;
}
const guestOwners = new WeakMap<object, Uint8Array>();

/**
 * A CPU's general registers as (lo, hi) int32 halves, both in the arena
 * when there is room (lo at some offset, hi right after it): the layout
 * translated code reads (emulator/jit).
 */
export function guestRegisterFile(n: number): { lo: Int32Array; hi: Int32Array } {
  const w = guestWords(2 * n);
  const lo = w.subarray(0, n), hi = w.subarray(n, 2 * n);
  guestOwners.set(lo, guestOwners.get(w) as Uint8Array);
  guestOwners.set(hi, guestOwners.get(w) as Uint8Array);
  return { lo, hi };
}

/** Byte offset of `v` in the arena, or -1 when it is not a view of the arena. */
export function arenaOffset(v: ArrayBufferView): number {
  const a = theArena();
  return a.buffer !== null && v.buffer === a.buffer ? v.byteOffset : -1;
}

const SCAN = 65536;
const ZERO_SCAN = new Uint8Array(SCAN);
const ZERO_PAGE = ZERO_SCAN.subarray(0, 4096);
const isZero = (b: Uint8Array): boolean => Buffer.compare(b, b.length === SCAN ? ZERO_SCAN : ZERO_PAGE.subarray(0, b.length)) === 0;

/** Zero the pages of `b` that are not all zero already (see copyWrittenPages). */
function zeroWrittenPages(b: Uint8Array): void {
  for (let o = 0; o < b.length; o += SCAN) {
    const end = Math.min(b.length, o + SCAN);
    if (end - o === SCAN && isZero(b.subarray(o, end))) continue;
    for (let p = o; p < end; p += 4096) {
      const page = b.subarray(p, Math.min(end, p + 4096));
      if (!isZero(page)) page.fill(0);
    }
  }
}

/**
 * Copy `src` into the zero-filled `dst` (same length) from byte `from` on,
 * page by page, leaving out the pages that are all zero: a page the program
 * never wrote stays untouched on the host in both (what copy-on-write of
 * the zero page gives Linux's fork). Reading an untouched page maps the
 * host's zero page, not memory. Returns the bytes copied.
 */
export function copyWrittenPages(dst: Uint8Array, src: Uint8Array, from = 0): number {
  if (dst.length !== src.length) throw new RangeError(`copyWrittenPages: ${dst.length} bytes into ${src.length}`);
  let copied = 0;
  for (let o = from; o < src.length; o += SCAN) {
    const end = Math.min(src.length, o + SCAN);
    if (end - o === SCAN && isZero(src.subarray(o, end))) continue;
    for (let p = o; p < end; p += 4096) {
      const page = src.subarray(p, Math.min(end, p + 4096));
      if (isZero(page)) continue;
      dst.set(page, p);
      copied += page.length;
    }
  }
  return copied;
}
