/**
 * A minimal WebAssembly binary writer (the MVP encoding, spec section 5):
 * LEB128 numbers, a function body's instruction stream, and a module with
 * type, import, function, export and code sections. Used only by the
 * translator's back end (backend.ts); it writes what it is told and checks
 * nothing the engine's validator checks again.
 */

export const I32 = 0x7f, I64 = 0x7e;

/** Opcodes used by the back end (spec 5.4). */
export const OP = {
  unreachable: 0x00, block: 0x02, loop: 0x03, if: 0x04, else: 0x05, end: 0x0b,
  br: 0x0c, br_if: 0x0d, br_table: 0x0e, return: 0x0f, call: 0x10, call_indirect: 0x11,
  drop: 0x1a, select: 0x1b,
  local_get: 0x20, local_set: 0x21, local_tee: 0x22,
  i32_load: 0x28, i64_load: 0x29, i32_load16_u: 0x2f,
  i64_load8_s: 0x30, i64_load8_u: 0x31, i64_load16_s: 0x32, i64_load16_u: 0x33, i64_load32_s: 0x34, i64_load32_u: 0x35,
  i32_store: 0x36, i64_store: 0x37, i64_store8: 0x3c, i64_store16: 0x3d, i64_store32: 0x3e,
  i32_const: 0x41, i64_const: 0x42,
  i32_eqz: 0x45, i32_eq: 0x46, i32_ne: 0x47, i32_lt_s: 0x48, i32_lt_u: 0x49, i32_gt_u: 0x4b, i32_le_u: 0x4d, i32_ge_s: 0x4e, i32_ge_u: 0x4f,
  i64_eqz: 0x50, i64_eq: 0x51, i64_ne: 0x52, i64_lt_s: 0x53, i64_lt_u: 0x54, i64_gt_s: 0x55, i64_gt_u: 0x56,
  i64_le_s: 0x57, i64_le_u: 0x58, i64_ge_s: 0x59, i64_ge_u: 0x5a,
  i32_add: 0x6a, i32_sub: 0x6b, i32_mul: 0x6c, i32_and: 0x71, i32_or: 0x72, i32_shl: 0x74, i32_shr_u: 0x76,
  i64_clz: 0x79, i64_ctz: 0x7a, i64_popcnt: 0x7b,
  i64_add: 0x7c, i64_sub: 0x7d, i64_mul: 0x7e, i64_div_s: 0x7f, i64_div_u: 0x80, i64_rem_s: 0x81, i64_rem_u: 0x82,
  i64_and: 0x83, i64_or: 0x84, i64_xor: 0x85, i64_shl: 0x86, i64_shr_s: 0x87, i64_shr_u: 0x88, i64_rotl: 0x89, i64_rotr: 0x8a,
  i32_wrap_i64: 0xa7, i64_extend_i32_s: 0xac, i64_extend_i32_u: 0xad,
  i64_extend8_s: 0xc2, i64_extend16_s: 0xc3, i64_extend32_s: 0xc4,
} as const;

/** A growable byte buffer with the encodings the binary format uses. */
export class Bytes {
  private buf = new Uint8Array(1024);
  length = 0;
  /** room for n more bytes */
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    b.set(this.buf.subarray(0, this.length));
    this.buf = b;
  }
  byte(b: number): this {
    if (this.length === this.buf.length) this.room(1);
    this.buf[this.length++] = b;
    return this;
  }
  bytes(bs: ArrayLike<number>): this {
    this.room(bs.length);
    if (bs instanceof Uint8Array) this.buf.set(bs, this.length);
    else for (let i = 0; i < bs.length; i++) this.buf[this.length + i] = bs[i];
    this.length += bs.length;
    return this;
  }
  /** unsigned LEB128 of a non-negative safe integer */
  u32(v: number): this {
    this.room(8);
    const buf = this.buf;
    if (v < 0x80) { buf[this.length++] = v; return this; }
    do {
      let b = v % 128;
      v = Math.floor(v / 128);
      if (v !== 0) b |= 0x80;
      buf[this.length++] = b;
    } while (v !== 0);
    return this;
  }
  /** signed LEB128 of an int32 */
  s32(v: number): this {
    this.room(5);
    const buf = this.buf;
    v |= 0;
    for (;;) {
      const b = v & 0x7f;
      v >>= 7;
      if ((v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0)) { buf[this.length++] = b; return this; }
      buf[this.length++] = b | 0x80;
    }
  }
  /** signed LEB128 of a safe integer (|v| < 2^53: every address the emulator holds as a number) */
  s64n(v: number): this {
    this.room(10);
    const buf = this.buf;
    for (;;) {
      const q = Math.floor(v / 128), b = v - q * 128;
      v = q;
      if ((v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0)) { buf[this.length++] = b; return this; }
      buf[this.length++] = b | 0x80;
    }
  }
  /** signed LEB128 of a 64-bit value (any bigint: taken modulo 2^64 as signed) */
  s64(v: bigint): this {
    v = BigInt.asIntN(64, v);
    if (v >= -0x1fffffffffffffn && v <= 0x1fffffffffffffn) return this.s64n(Number(v));
    for (;;) {
      const b = Number(v & 0x7fn);
      v >>= 7n;
      if ((v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0)) { this.byte(b); return this; }
      this.byte(b | 0x80);
    }
  }
  name(s: string): this { const e = new TextEncoder().encode(s); this.u32(e.length); return this.bytes(e); }
  /** a length-prefixed copy of another buffer */
  vec(b: Bytes): this { this.u32(b.length); return this.bytes(b.view()); }
  view(): Uint8Array { return this.buf.subarray(0, this.length); }
}

export interface FuncType { params: number[]; results: number[] }

export interface ModuleSpec {
  types: FuncType[];
  /** imported functions (index 0..n-1 in the function index space), then the memory */
  importFuncs: { module: string; name: string; type: number }[];
  memory: { module: string; name: string; minPages: number; maxPages?: number };
  /** an imported table of function references (after the memory: table index 0) */
  table?: { module: string; name: string; min: number };
  /** defined functions: type index, local declarations (count, type) and the body's code (without the final end) */
  funcs: { type: number; locals: [number, number][]; body: Bytes }[];
  exports: { name: string; func: number }[];
}

function section(out: Bytes, id: number, content: Bytes): void {
  out.byte(id);
  out.vec(content);
}

/** The binary module. */
export function encodeModule(m: ModuleSpec): Uint8Array {
  const out = new Bytes();
  out.bytes([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const types = new Bytes().u32(m.types.length);
  for (const t of m.types) {
    types.byte(0x60).u32(t.params.length).bytes(t.params).u32(t.results.length).bytes(t.results);
  }
  section(out, 1, types);
  const imports = new Bytes().u32(m.importFuncs.length + 1 + (m.table ? 1 : 0));
  for (const f of m.importFuncs) imports.name(f.module).name(f.name).byte(0x00).u32(f.type);
  imports.name(m.memory.module).name(m.memory.name).byte(0x02);
  if (m.memory.maxPages !== undefined) imports.byte(0x01).u32(m.memory.minPages).u32(m.memory.maxPages);
  else imports.byte(0x00).u32(m.memory.minPages);
  if (m.table) imports.name(m.table.module).name(m.table.name).byte(0x01).byte(0x70).byte(0x00).u32(m.table.min);
  section(out, 2, imports);
  const funcs = new Bytes().u32(m.funcs.length);
  for (const f of m.funcs) funcs.u32(f.type);
  section(out, 3, funcs);
  const exps = new Bytes().u32(m.exports.length);
  for (const e of m.exports) exps.name(e.name).byte(0x00).u32(e.func);
  section(out, 7, exps);
  const code = new Bytes().u32(m.funcs.length);
  for (const f of m.funcs) {
    const body = new Bytes().u32(f.locals.length);
    for (const [n, t] of f.locals) body.u32(n).byte(t);
    body.bytes(f.body.view()).byte(OP.end);
    code.vec(body);
  }
  section(out, 10, code);
  return out.view().slice();
}
