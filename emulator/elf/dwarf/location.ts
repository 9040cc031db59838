/**
 * DWARF location descriptions (where each variable is at a pc, for the
 * debugger): the expression stack machine as compilers use it, location lists
 * (DWARF 5 .debug_loclists, DWARF 4 .debug_loc) and range lists
 * (.debug_rnglists, .debug_ranges) by pc.
 *
 * A location is where a variable lives at a pc — memory, a register, a
 * value computed by the expression (DW_OP_stack_value, implicit_value),
 * pieces of those — or `optimizedOut` (no location, no list entry covering
 * the pc, or a DW_OP_entry_value that cannot be recovered). An expression
 * that cannot be evaluated (an unknown opcode, a register or memory that is
 * not known) is an `error` with the reason: never a wrong value.
 */
import { ByteReader } from '../reader';

export type Location =
  | { kind: 'memory'; addr: bigint }
  | { kind: 'register'; reg: number }
  | { kind: 'value'; value: bigint }
  | { kind: 'implicit'; bytes: Uint8Array }
  | { kind: 'pieces'; pieces: { loc: Location; size: number }[] }
  | { kind: 'optimizedOut' }
  | { kind: 'error'; message: string };

export interface ExprContext {
  addressSize: number;
  little: boolean;
  /** a register of the frame by DWARF number; undefined when not known */
  reg(n: number): bigint | undefined;
  /** the frame base (DW_AT_frame_base evaluated), for DW_OP_fbreg */
  frameBase?(): bigint | undefined;
  /** the canonical frame address of the frame, for DW_OP_call_frame_cfa */
  cfa?: bigint;
  /** `size` bytes of memory as an unsigned integer; undefined when not readable */
  read(addr: bigint, size: number): bigint | undefined;
  /** DW_OP_addrx / constx: an entry of .debug_addr */
  addrx?(index: bigint): bigint | undefined;
  /**
   * DW_OP_entry_value: the value the block (a register) had when the
   * function was entered, from the caller's call site; undefined when unknown
   */
  entryValue?(block: Uint8Array): bigint | undefined;
  /** DW_OP_convert / reinterpret: the base type DIE at this offset in the unit (size in bytes, signedness) */
  baseType?(unitOffset: bigint): { size: number; signed: boolean } | undefined;
}

class ExprError extends Error {}

const MASK64 = (1n << 64n) - 1n;
const MAX_STEPS = 10_000;

/** Evaluate a location expression (a block of DW_OP_* bytes). */
export function evalLocation(expr: Uint8Array, ctx: ExprContext): Location {
  try {
    return run(expr, ctx);
  } catch (e) {
    return { kind: 'error', message: e instanceof Error ? e.message : String(e) };
  }
}

function run(expr: Uint8Array, ctx: ExprContext): Location {
  if (expr.length === 0) return { kind: 'optimizedOut' };
  const r = new ByteReader(expr, ctx.little);
  const stack: bigint[] = [];
  const pieces: { loc: Location; size: number }[] = [];
  let regLoc: number | undefined;
  let stackValue = false;
  let implicit: Uint8Array | undefined;
  let unknown = false;
  const pop = (): bigint => {
    const v = stack.pop();
    if (v === undefined) throw new ExprError('the expression pops an empty stack');
    return v;
  };
  const push = (v: bigint): void => { stack.push(BigInt.asUintN(64, v)); };
  const signed = (v: bigint): bigint => BigInt.asIntN(64, v);
  const regVal = (n: number): bigint => {
    const v = ctx.reg(n);
    if (v === undefined) throw new ExprError(`register DWARF ${n} is not known in this frame`);
    return v;
  };
  const mem = (a: bigint, size: number): bigint => {
    const v = ctx.read(a, size);
    if (v === undefined) throw new ExprError(`memory at 0x${a.toString(16)} cannot be read`);
    return v;
  };
  let steps = 0;
  while (r.pos < r.length) {
    if (++steps > MAX_STEPS) throw new ExprError('the expression does not end (a loop)');
    const op = r.u8();
    if (op >= 0x30 && op <= 0x4f) { push(BigInt(op - 0x30)); continue; } // lit0..31
    if (op >= 0x50 && op <= 0x6f) { regLoc = op - 0x50; continue; } // reg0..31
    if (op >= 0x70 && op <= 0x8f) { push(regVal(op - 0x70) + r.slebBig()); continue; } // breg0..31
    switch (op) {
      case 0x03: push(r.uint(ctx.addressSize)); break; // addr
      case 0x06: push(mem(pop(), ctx.addressSize)); break; // deref
      case 0x08: push(r.uint(1)); break; case 0x09: push(BigInt(r.i8())); break;
      case 0x0a: push(r.uint(2)); break; case 0x0b: push(BigInt.asIntN(16, r.uint(2))); break;
      case 0x0c: push(r.uint(4)); break; case 0x0d: push(BigInt.asIntN(32, r.uint(4))); break;
      case 0x0e: push(r.uint(8)); break; case 0x0f: push(r.uint(8)); break;
      case 0x10: push(r.ulebBig()); break; // constu
      case 0x11: push(r.slebBig()); break; // consts
      case 0x12: push(stack[stack.length - 1] ?? pop()); break; // dup
      case 0x13: pop(); break; // drop
      case 0x14: push(stack[stack.length - 2] ?? (pop(), pop())); break; // over
      case 0x15: { const i = r.u8(); const v = stack[stack.length - 1 - i]; if (v === undefined) throw new ExprError('pick past the stack'); push(v); break; }
      case 0x16: { const a = pop(), b = pop(); push(a); push(b); break; } // swap
      case 0x17: { const a = pop(), b = pop(), c = pop(); push(a); push(c); push(b); break; } // rot
      case 0x19: { const a = signed(pop()); push(a < 0n ? -a : a); break; } // abs
      case 0x1a: { const b = pop(), a = pop(); push(a & b); break; }
      case 0x1b: { const b = signed(pop()), a = signed(pop()); if (b === 0n) throw new ExprError('division by zero'); push(a / b); break; }
      case 0x1c: { const b = pop(), a = pop(); push(a - b); break; }
      case 0x1d: { const b = pop(), a = pop(); if (b === 0n) throw new ExprError('modulo by zero'); push(a % b); break; }
      case 0x1e: { const b = pop(), a = pop(); push(a * b); break; }
      case 0x1f: push(-signed(pop())); break;
      case 0x20: push(~pop() & MASK64); break;
      case 0x21: { const b = pop(), a = pop(); push(a | b); break; }
      case 0x22: { const b = pop(), a = pop(); push(a + b); break; }
      case 0x23: push(pop() + r.ulebBig()); break; // plus_uconst
      case 0x24: { const b = pop(), a = pop(); push(b >= 64n ? 0n : a << b); break; }
      case 0x25: { const b = pop(), a = pop(); push(b >= 64n ? 0n : a >> b); break; }
      case 0x26: { const b = pop(), a = signed(pop()); push(a >> (b >= 64n ? 63n : b)); break; }
      case 0x27: { const b = pop(), a = pop(); push(a ^ b); break; }
      case 0x28: { const off = BigInt.asIntN(16, r.uint(2)); if (pop() !== 0n) r.pos += Number(off); break; } // bra
      case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e: {
        const b = signed(pop()), a = signed(pop());
        const t = op === 0x29 ? a === b : op === 0x2a ? a >= b : op === 0x2b ? a > b : op === 0x2c ? a <= b : op === 0x2d ? a < b : a !== b;
        push(t ? 1n : 0n);
        break;
      }
      case 0x2f: r.pos += Number(BigInt.asIntN(16, r.uint(2))); break; // skip
      case 0x90: regLoc = r.uleb(); break; // regx
      case 0x91: { // fbreg
        const off = r.slebBig();
        const fb = ctx.frameBase?.();
        if (fb === undefined) throw new ExprError('the frame base is not known');
        push(fb + off);
        break;
      }
      case 0x92: { const n = r.uleb(); push(regVal(n) + r.slebBig()); break; } // bregx
      case 0x93: { // piece
        const size = r.uleb();
        pieces.push({ loc: current(), size });
        stack.length = 0; regLoc = undefined; stackValue = false; implicit = undefined; unknown = false;
        break;
      }
      case 0x94: { const size = r.u8(); push(mem(pop(), size)); break; } // deref_size
      case 0x96: break; // nop
      case 0x9c: { // call_frame_cfa
        if (ctx.cfa === undefined) throw new ExprError('the CFA of this frame is not known');
        push(ctx.cfa);
        break;
      }
      case 0x9e: implicit = r.slice(r.uleb()); break; // implicit_value
      case 0x9f: stackValue = true; break; // stack_value
      case 0xa1: case 0xa2: { // addrx, constx
        const v = ctx.addrx?.(r.ulebBig());
        if (v === undefined) throw new ExprError('DW_OP_addrx: the address index cannot be read');
        push(v);
        break;
      }
      case 0xa3: case 0xf3: { // entry_value / GNU_entry_value: the value at function entry is not recorded
        const block = r.slice(r.uleb());
        const v = ctx.entryValue?.(block);
        push(v ?? 0n);
        if (v === undefined) unknown = true; // this piece (or the whole value) is optimized out; other pieces still count
        break;
      }
      case 0xa8: case 0xf7: case 0xa9: case 0xf9: { // convert / GNU_convert, reinterpret / GNU_reinterpret
        const off = r.ulebBig();
        const v = pop();
        if (off === 0n) { push(v & (ctx.addressSize >= 8 ? MASK64 : (1n << BigInt(ctx.addressSize * 8)) - 1n)); break; } // the generic type
        const t = ctx.baseType?.(off);
        if (!t) throw new ExprError(`DW_OP_convert: no base type at unit offset 0x${off.toString(16)}`);
        const bits = BigInt(t.size * 8);
        const u = BigInt.asUintN(Number(bits), v);
        push(t.signed ? BigInt.asUintN(64, BigInt.asIntN(Number(bits), u)) : u);
        break;
      }
      default:
        throw new ExprError(`DWARF expression opcode 0x${op.toString(16)} is not supported`);
    }
  }
  function current(): Location {
    if (unknown) return { kind: 'optimizedOut' };
    if (implicit) return { kind: 'implicit', bytes: implicit };
    if (regLoc !== undefined) return { kind: 'register', reg: regLoc };
    if (stack.length === 0) return { kind: 'optimizedOut' };
    const top = stack[stack.length - 1];
    return stackValue ? { kind: 'value', value: top } : { kind: 'memory', addr: top };
  }
  if (pieces.length) return { kind: 'pieces', pieces };
  return current();
}

// ---------------------------------------------------------------- lists by pc

export interface ListContext {
  little: boolean;
  addressSize: number;
  /** the unit's base address (DW_AT_low_pc of the unit, 0 when absent) */
  base: bigint;
  addrx?(index: bigint): bigint | undefined;
}

/** DW_LLE / DW_RLE *x entries: an address index through the unit's .debug_addr */
function addrIndexer(ctx: ListContext): (i: bigint) => bigint {
  return i => {
    const v = ctx.addrx?.(i);
    if (v === undefined) throw new RangeError(`address index ${i} cannot be read`);
    return v;
  };
}

/**
 * The location description in effect at pc in a DWARF 5 .debug_loclists
 * list at `offset`; undefined when no entry covers pc (optimized out there).
 */
export function loclistAt(sec: Uint8Array, offset: number, pc: bigint, ctx: ListContext, version: number): Uint8Array | undefined {
  const r = new ByteReader(sec, ctx.little, offset);
  if (version < 5) {
    // DWARF 4 .debug_loc: (begin, end) pairs relative to the base, (max, addr) selects a base, (0, 0) ends
    let base = ctx.base;
    const max = (1n << BigInt(ctx.addressSize * 8)) - 1n;
    for (let guard = 0; guard < 100_000; guard++) {
      const b = r.uint(ctx.addressSize), e = r.uint(ctx.addressSize);
      if (b === 0n && e === 0n) return undefined;
      if (b === max) { base = e; continue; }
      const len = r.u16();
      const expr = r.slice(len);
      if (pc >= base + b && pc < base + e) return expr;
    }
    return undefined;
  }
  let base = ctx.base;
  const ax = addrIndexer(ctx);
  for (let guard = 0; guard < 100_000; guard++) {
    const kind = r.u8();
    let lo: bigint, hi: bigint;
    switch (kind) {
      case 0: return undefined; // end_of_list
      case 1: base = ax(r.ulebBig()); continue; // base_addressx
      case 2: lo = ax(r.ulebBig()); hi = ax(r.ulebBig()); break; // startx_endx
      case 3: lo = ax(r.ulebBig()); hi = lo + r.ulebBig(); break; // startx_length
      case 4: lo = base + r.ulebBig(); hi = base + r.ulebBig(); break; // offset_pair
      case 5: { const e = r.slice(r.uleb()); return e; } // default_location
      case 6: base = r.uint(ctx.addressSize); continue; // base_address
      case 7: lo = r.uint(ctx.addressSize); hi = r.uint(ctx.addressSize); break; // start_end
      case 8: lo = r.uint(ctx.addressSize); hi = lo + r.ulebBig(); break; // start_length
      default: throw new RangeError(`unknown location list entry kind ${kind}`);
    }
    const expr = r.slice(r.uleb());
    if (pc >= lo && pc < hi) return expr;
  }
  return undefined;
}

/** The [lo, hi) ranges of a DWARF 5 .debug_rnglists list (or DWARF 4 .debug_ranges list) at `offset`. */
export function rangeList(sec: Uint8Array, offset: number, ctx: ListContext, version: number): [bigint, bigint][] {
  const r = new ByteReader(sec, ctx.little, offset);
  const out: [bigint, bigint][] = [];
  let base = ctx.base;
  if (version < 5) {
    const max = (1n << BigInt(ctx.addressSize * 8)) - 1n;
    for (let guard = 0; guard < 100_000; guard++) {
      const b = r.uint(ctx.addressSize), e = r.uint(ctx.addressSize);
      if (b === 0n && e === 0n) break;
      if (b === max) { base = e; continue; }
      out.push([base + b, base + e]);
    }
    return out;
  }
  const ax = addrIndexer(ctx);
  for (let guard = 0; guard < 100_000; guard++) {
    const kind = r.u8();
    switch (kind) {
      case 0: return out;
      case 1: base = ax(r.ulebBig()); break;
      case 2: { const lo = ax(r.ulebBig()); out.push([lo, ax(r.ulebBig())]); break; }
      case 3: { const lo = ax(r.ulebBig()); out.push([lo, lo + r.ulebBig()]); break; }
      case 4: { const lo = base + r.ulebBig(); out.push([lo, base + r.ulebBig()]); break; }
      case 5: base = r.uint(ctx.addressSize); break;
      case 6: { const lo = r.uint(ctx.addressSize); out.push([lo, r.uint(ctx.addressSize)]); break; }
      case 7: { const lo = r.uint(ctx.addressSize); out.push([lo, lo + r.ulebBig()]); break; }
      default: throw new RangeError(`unknown range list entry kind ${kind}`);
    }
  }
  return out;
}
