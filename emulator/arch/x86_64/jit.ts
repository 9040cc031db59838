/**
 * The x86_64 front end of the block translator (emulator/jit): decoded
 * instructions to IR. The hot integer instructions are emitted natively:
 *
 *   mov (88 89 8a 8b c6 c7 b0+r b8+r), lea, movzx, movsx, movsxd,
 *   add or and sub xor cmp test (every form), inc dec neg not,
 *   imul G,E[,imm], shl/sal shr sar rol ror by 1 or imm8, shld/shrd by
 *   imm8 (32/64-bit), cmovcc, setcc,
 *   push r / imm, pop r, leave, cbw/cwde/cdqe, cwd/cdq/cqo, xchg r,r,
 *   nop / endbr64 / hints, jmp rel, jcc rel, call rel, and the indirect
 *   transfers ret (c3, c2 imm16), jmp r/m64 (ff /4), call r/m64 (ff /2);
 *
 * everything else (and any lock, fs/gs or 67-prefixed form) returns false
 * and runs through the interpreter's executor as a helper.
 *
 * Lazy flags. The interpreter's record (flags.ts) lives in the scratch as
 * i64 words (layout S_* below): KIND = fOp | fSz << 8 | fCin << 16, then
 * R, D, S (each the lo/hi halves the executors store, as one 64-bit value)
 * and fBits (read only here: native code never writes an eager record).
 * A native flag producer stores the same values the executor would; a
 * consumer (jcc setcc cmovcc inc dec) whose producer was emitted earlier in
 * the block computes the condition from the producer's temps; otherwise it
 * evaluates the scratch record for the kinds whose flags are cheap
 * (eager, add, sub, logic, inc, dec and, for ZF SF PF, every non-rotate)
 * and leaves translated code before the instruction for the others
 * (exitIf: the interpreter runs it).
 * A record's stores are dropped again when the next producer overwrites
 * them with nothing in between that can leave the block (a memory access,
 * a scratch read, an exitIf, a helper): loops keep only the last record.
 *
 * Memory accesses are plain ld/st: one the TLB cannot serve (not mapped,
 * not canonical, crossing a page) leaves before the instruction and the
 * interpreter runs it. Indirect transfers (ret, jmp/call r/m) leave through
 * exitIf before their first write when the target is not canonical (the
 * interpreter raises #GP there, with rsp unchanged), and push leaves when
 * rsp itself is not canonical (the interpreter's #GP).
 */
import type { FrontEnd, IrBuilder, IrOp, Temp } from '../../jit/ir';
import type { NativeEntrySave, X86Cpu } from './cpu';
import { Insn, NO_REG } from './insn';
import type { VAddr } from '../../memory/address';
import type { NativeEntryRoute } from '../../cpu/interp';
import { STOP_BREAKPOINT } from '../../cpu/faults';
import * as alu from './exec/alu';
import * as mov from './exec/mov';
import * as sh from './exec/shift';
import * as md from './exec/muldiv';
import * as ctl from './exec/control';
import * as sys from './exec/system';
import {
  F_EAGER, F_ROL, F_ROR, F_ADD, F_ADC, F_SUB, F_SBB, F_LOGIC, F_INC, F_DEC, F_SHL, F_SHR, F_SAR, F_SHLD, F_SHRD, F_IMUL, CF, PF, ZF, SF, OF,
} from './flags';

type B = IrBuilder<Insn>;
type Size = 1 | 2 | 4 | 8;

// scratch layout (byte offsets of i64 words)
const S_KIND = 0, S_R = 8, S_D = 16, S_S = 24, S_BITS = 32;
/** the record a rotate replaced (the p* fields), same layout */
const P_KIND = 40, P_R = 48, P_D = 56, P_S = 64, P_BITS = 72;
const SCRATCH_BYTES = 80;

/** a flags record produced earlier in the block: its parts as temps (masked to the size, as the executors store them) */
interface Rec {
  op: number; size: Size;
  r: Temp; d: Temp; s: Temp;
  /** inc / dec: the CF kept */
  cin: Temp | null;
  /** shifts: the (non-zero) count */
  count: number;
}

const RSP = 4, RBP = 5;

/** the value of an immediate as the executors use it (masked below 64 bits, sign-extended at 64) */
function immValue(i: Insn): bigint {
  return i.size === 8 ? (BigInt(i.immHi) << 32n) | BigInt(i.imm >>> 0) : BigInt(i.imm >>> 0);
}

/** Emission of one block's instructions; state carried from one instruction to the next. */
class BlockEmitter {
  /** the flags producer emitted last in this block (null: the scratch record, set before the block or by a helper) */
  rec: Rec | null = null;
  /** the scratch stores of that record (of its f and p parts), removable while nothing since could leave the block */
  private pendingF: IrOp[] = [];
  private pendingP: IrOp[] = [];
  constructor(readonly b: B) {}

  // ---------------------------------------------------------------- primitives
  c(v: bigint | number): Temp { return this.b.const(v); }
  bin(op: Parameters<B['bin']>[0], a: Temp, b: Temp): Temp { return this.b.bin(op, a, b); }
  un(op: Parameters<B['un']>[0], a: Temp): Temp { return this.b.un(op, a); }
  /** v masked to size (zero-extended) */
  mask(size: Size, v: Temp): Temp { return size === 8 ? v : this.un(size === 1 ? 'zext8' : size === 2 ? 'zext16' : 'zext32', v); }
  /** v (masked to size) sign-extended to 64 bits */
  sx(size: Size, v: Temp): Temp { return size === 8 ? v : this.un(size === 1 ? 'sext8' : size === 2 ? 'sext16' : 'sext32', v); }
  not01(v: Temp): Temp { return this.bin('xor', v, this.c(1)); }
  /** sign bit at size of v, as 0/1 */
  sign(size: Size, v: Temp): Temp { return this.bin('and', this.bin('shru', v, this.c(size * 8 - 1)), this.c(1)); }

  /** anything that can leave the block: the last record's stores must stay */
  private exitPoint(): void { this.pendingF = []; this.pendingP = []; }
  ld(a: Temp, size: Size): Temp { this.exitPoint(); return this.b.ld(a, size); }
  st(a: Temp, v: Temp, size: Size): void { this.exitPoint(); this.b.st(a, v, size); }
  stm(a: Temp, vs: readonly Temp[]): void { this.exitPoint(); this.b.stm(a, vs); }
  sget(off: number): Temp { this.exitPoint(); return this.b.sget(off); }
  /** leave translated code before this instruction when bad is non-zero (only before the instruction's writes) */
  guard(bad: Temp): void { this.exitPoint(); this.b.exitIf(bad); }
  /** 1 when the 64-bit value v is not a 48-bit canonical address (the interpreter's #GP: high 32 bits outside -0x8000..0x7fff) */
  nonCanonical(v: Temp): Temp { return this.bin('geu', this.bin('add', v, this.c(1n << 47n)), this.c(1n << 48n)); }

  /** register r at size, masked (8-bit 16..19: ah ch dh bh) */
  rd(size: Size, r: number): Temp {
    if (size === 1 && r >= 16) return this.un('zext8', this.bin('shru', this.b.get(r - 16), this.c(8)));
    return this.mask(size, this.b.get(r));
  }
  /** write register r at size: 32-bit zero-extends, 8/16-bit merge */
  wr(size: Size, r: number, v: Temp): void {
    switch (size) {
      case 8: this.b.set(r, v); return;
      case 4: this.b.set(r, this.un('zext32', v)); return;
      case 2: this.b.set(r, this.bin('or', this.bin('and', this.b.get(r), this.c(~0xffffn)), this.un('zext16', v))); return;
      default:
        if (r < 16) this.b.set(r, this.bin('or', this.bin('and', this.b.get(r), this.c(~0xffn)), this.un('zext8', v)));
        else this.b.set(r - 16, this.bin('or', this.bin('and', this.b.get(r - 16), this.c(~0xff00n)), this.bin('shl', this.un('zext8', v), this.c(8))));
    }
  }
  /** effective address of the memory operand (no segment, 64-bit address size: checked by the caller) */
  ea(i: Insn): Temp {
    if (i.ripRel) return this.c(i.disp);
    let a: Temp | null = null;
    if (i.base !== NO_REG) a = this.b.get(i.base);
    if (i.index !== NO_REG) {
      let x = this.b.get(i.index);
      if (i.scale !== 0) x = this.bin('shl', x, this.c(i.scale));
      a = a === null ? x : this.bin('add', a, x);
    }
    if (a === null) return this.c(i.disp);
    return i.disp === 0 ? a : this.bin('add', a, this.c(i.disp));
  }

  // ---------------------------------------------------------------- flags
  /** Store a record in the scratch (dropping the previous record's stores when nothing could leave since) and remember it. */
  record(rec: Rec): void {
    const b = this.b;
    this.drop(this.pendingF);
    // a rotate record keeps the record it replaced (p*); any other makes it dead
    const rotate = rec.op === F_ROL || rec.op === F_ROR;
    const at = b.ops.length;
    if (rotate) this.saveReplaced();
    else this.drop(this.pendingP);
    const atF = b.ops.length;
    b.sset(S_KIND, this.kind(rec));
    b.sset(S_R, rec.r);
    // logic and rotate results read neither D nor S
    if (rec.op !== F_LOGIC && !rotate) { b.sset(S_D, rec.d); b.sset(S_S, rec.s); }
    if (!rotate || at !== atF) this.pendingP = b.ops.slice(at, atF);
    this.pendingF = b.ops.slice(atF);
    this.rec = rec;
  }

  private drop(ops: IrOp[]): void {
    for (const op of ops) {
      const k = this.b.ops.lastIndexOf(op);
      if (k >= 0) this.b.ops.splice(k, 1);
    }
    ops.length = 0;
  }

  private kind(rec: Rec): Temp {
    const k = this.c(rec.op | rec.size << 8);
    return rec.cin === null ? k : this.bin('or', k, this.bin('shl', rec.cin, this.c(16)));
  }

  /** a rotate replaces the current record: it becomes the p* record unless it is itself a rotate's */
  private saveReplaced(): void {
    const r = this.rec, b = this.b;
    if (r !== null) {
      if (r.op === F_ROL || r.op === F_ROR) return;
      b.sset(P_KIND, this.kind(r)); b.sset(P_R, r.r);
      if (r.op !== F_LOGIC) { b.sset(P_D, r.d); b.sset(P_S, r.s); }
      return;
    }
    const K = this.sget(S_KIND);
    const isRot = this.bin('ltu', this.bin('sub', this.bin('and', K, this.c(0xff)), this.c(F_ROL)), this.c(2));
    const keep = (p: number, f: number) => b.sset(p, b.sel(isRot, b.sget(p), f === S_KIND ? K : b.sget(f)));
    keep(P_KIND, S_KIND); keep(P_R, S_R); keep(P_D, S_D); keep(P_S, S_S); keep(P_BITS, S_BITS);
  }

  /** condition cc (jcc / setcc / cmovcc encoding) as 0/1; may emit a guard (exitIf, before the instruction's writes) */
  cond(cc: number): Temp {
    const r = this.rec;
    if (r !== null) {
      const fast = this.condFast(r, cc);
      if (fast !== null) return fast;
    }
    // after a rotate SF ZF PF are the replaced record's: read from the scratch
    const rotated = r !== null && (r.op === F_ROL || r.op === F_ROR) && cc >> 1 >= 2;
    const f = r !== null && !rotated ? this.known(r) : this.fromScratch(cc);
    let v: Temp;
    switch (cc >> 1) {
      case 0: v = f.of(); break;
      case 1: v = f.cf(); break;
      case 2: v = f.zf(); break;
      case 3: v = this.bin('or', f.cf(), f.zf()); break;
      case 4: v = f.sf(); break;
      case 5: v = f.pf(); break;
      case 6: v = this.bin('xor', f.sf(), f.of()); break;
      default: v = this.bin('or', f.zf(), this.bin('xor', f.sf(), f.of())); break;
    }
    return cc & 1 ? this.not01(v) : v;
  }

  /** compares and logic results: one operation */
  private condFast(r: Rec, cc: number): Temp | null {
    const neg = (cc & 1) !== 0;
    if (r.op === F_SUB) {
      switch (cc >> 1) {
        case 1: return this.bin(neg ? 'geu' : 'ltu', r.d, r.s);
        case 2: return neg ? this.bin('ne', r.r, this.c(0)) : this.un('eqz', r.r);
        case 3: return this.bin(neg ? 'gtu' : 'leu', r.d, r.s);
        case 6: return this.bin(neg ? 'ges' : 'lts', this.sx(r.size, r.d), this.sx(r.size, r.s));
        case 7: return this.bin(neg ? 'gts' : 'les', this.sx(r.size, r.d), this.sx(r.size, r.s));
      }
      return null;
    }
    if (r.op === F_LOGIC) {
      switch (cc >> 1) {
        case 0: case 1: return this.c(neg ? 1 : 0); // OF = CF = 0
        case 2: case 3: return neg ? this.bin('ne', r.r, this.c(0)) : this.un('eqz', r.r);
        case 4: case 6: return this.bin(neg ? 'ges' : 'lts', this.sx(r.size, r.r), this.c(0));
        case 7: return this.bin(neg ? 'gts' : 'les', this.sx(r.size, r.r), this.c(0));
      }
      return null;
    }
    return null;
  }

  private parity(r: Temp): Temp {
    return this.un('eqz', this.bin('and', this.un('popcnt', this.un('zext8', r)), this.c(1)));
  }

  /** the flags of a record emitted in this block */
  known(r: Rec): Flags {
    const sxR = () => this.sx(r.size, r.r), sxD = () => this.sx(r.size, r.d), sxS = () => this.sx(r.size, r.s);
    const bits = r.size * 8;
    const ovf = (): Temp => {
      // imul: the signed product does not fit the destination
      if (r.size === 8) return this.bin('ne', this.bin('mulhs', r.d, r.s), this.bin('shrs', r.r, this.c(63)));
      return this.bin('ne', this.bin('mul', sxD(), sxS()), sxR());
    };
    const sf = (): Temp => this.sign(r.size, r.r);
    const cf = (): Temp => {
      switch (r.op) {
        case F_ADD: return this.bin('ltu', r.r, r.d);
        case F_SUB: return this.bin('ltu', r.d, r.s);
        case F_INC: case F_DEC: return r.cin as Temp;
        case F_SHL: case F_SHLD: return r.count <= bits ? this.bin('and', this.bin('shru', r.d, this.c(bits - r.count)), this.c(1)) : this.c(0);
        case F_SHR: case F_SAR: case F_SHRD: return this.bin('and', this.bin('shru', r.d, this.c(r.count - 1)), this.c(1));
        case F_IMUL: return ovf();
        case F_ROL: return this.bin('and', r.r, this.c(1));
        case F_ROR: return sf();
        default: return this.c(0); // logic
      }
    };
    return {
      cf,
      zf: () => this.un('eqz', r.r),
      sf,
      pf: () => this.parity(r.r),
      of: (): Temp => {
        switch (r.op) {
          case F_ADD: case F_INC: { const x = sxR(); return this.bin('lts', this.bin('and', this.bin('xor', sxD(), x), this.bin('xor', sxS(), x)), this.c(0)); }
          case F_SUB: case F_DEC: { const x = sxD(); return this.bin('lts', this.bin('and', this.bin('xor', x, sxS()), this.bin('xor', x, sxR())), this.c(0)); }
          case F_SHL: return this.bin('xor', sf(), cf());
          case F_SHR: return this.sign(r.size, r.d);
          case F_SHLD: case F_SHRD: return this.bin('xor', sf(), this.sign(r.size, r.d));
          case F_IMUL: return ovf();
          case F_ROL: return this.bin('xor', sf(), cf());
          case F_ROR: return this.bin('xor', sf(), this.sign(r.size, this.bin('shl', r.r, this.c(1))));
          default: return this.c(0); // logic, sar
        }
      },
    };
  }

  /**
   * The flags cc reads, from the scratch record. Kinds other than those
   * computed here leave translated code before the instruction (guard).
   */
  fromScratch(cc: number): Flags {
    const K = this.sget(S_KIND);
    const op = this.bin('and', K, this.c(0xff));
    const shift = this.bin('sub', this.c(64), this.bin('shl', this.bin('and', this.bin('shru', K, this.c(8)), this.c(0xff)), this.c(3)));
    const sx = (v: Temp) => this.bin('shrs', this.bin('shl', v, shift), shift);
    const R = this.b.sget(S_R);
    const once = (off: number) => { let t: Temp | null = null; return () => (t ??= this.b.sget(off)); };
    const D = once(S_D), S = once(S_S), bits = once(S_BITS);
    const isOp = (k: number) => this.bin('eq', op, this.c(k));
    const inSet = (...ks: number[]) => this.bin('and', this.bin('shru', this.c(ks.reduce((m, k) => m | 1 << k, 0)), op), this.c(1));
    const eager = (flag: number) => this.bin('ne', this.bin('and', bits(), this.c(flag)), this.c(0));
    // the kinds each flag is computed for here; ZF SF PF: every kind but the rotates (theirs come from the saved record)
    const cfOk = [F_EAGER, F_ADD, F_SUB, F_LOGIC, F_INC, F_DEC];
    const ofOk = [F_EAGER, F_ADD, F_ADC, F_SUB, F_SBB, F_LOGIC, F_INC, F_DEC, F_SAR];
    const szpOk = [F_EAGER, ...range(F_ADD, F_IMUL)];
    const k = cc >> 1;
    const ok: Temp[] = [];
    if (k === 1 || k === 3) ok.push(inSet(...cfOk));
    if (k === 0 || k >= 6) ok.push(inSet(...ofOk));
    if (k >= 2) ok.push(inSet(...szpOk));
    this.guard(this.un('eqz', ok.reduce((a, t) => this.bin('and', a, t))));
    const notEager = (v: Temp, flag: number) => this.b.sel(isOp(F_EAGER), eager(flag), v);
    return {
      cf: () => notEager(
        this.b.sel(isOp(F_ADD), this.bin('ltu', R, D()),
          this.b.sel(isOp(F_SUB), this.bin('ltu', D(), S()),
            this.b.sel(inSet(F_INC, F_DEC), this.bin('shru', K, this.c(16)), this.c(0)))), CF),
      zf: () => notEager(this.un('eqz', R), ZF),
      sf: () => notEager(this.bin('lts', sx(R), this.c(0)), SF),
      pf: () => notEager(this.parity(R), PF),
      of: () => {
        const r = sx(R), d = sx(D()), s = sx(S());
        const add = this.bin('lts', this.bin('and', this.bin('xor', d, r), this.bin('xor', s, r)), this.c(0));
        const sub = this.bin('lts', this.bin('and', this.bin('xor', d, s), this.bin('xor', d, r)), this.c(0));
        return notEager(this.b.sel(inSet(F_ADD, F_ADC, F_INC), add, this.b.sel(inSet(F_SUB, F_SBB, F_DEC), sub, this.c(0))), OF);
      },
    };
  }
}

/** lazily built flag values (0/1 temps) */
interface Flags { cf(): Temp; zf(): Temp; sf(): Temp; pf(): Temp; of(): Temp }

function range(a: number, b: number): number[] { const r: number[] = []; for (let k = a; k <= b; k++) r.push(k); return r; }

// ---------------------------------------------------------------- instructions
type Handler = (e: BlockEmitter, i: Insn) => boolean;

/** the value of the E operand at size (loaded first: before any write) */
function readE(e: BlockEmitter, i: Insn, size: Size): Temp {
  return i.rm !== NO_REG ? e.rd(size, i.rm) : e.ld(e.ea(i), size);
}

/** d op s for the ALU operations (add or and sub xor cmp test), masked to size; adc/sbb are not here */
function aluOp(e: BlockEmitter, op: number, size: Size, d: Temp, s: Temp): Temp {
  switch (op) {
    case alu.ALU_ADD: return e.mask(size, e.bin('add', d, s));
    case alu.ALU_SUB: case alu.ALU_CMP: return e.mask(size, e.bin('sub', d, s));
    case alu.ALU_OR: return e.bin('or', d, s);
    case alu.ALU_XOR: return e.bin('xor', d, s);
    default: return e.bin('and', d, s);
  }
}
const ALU_KIND = [F_ADD, F_LOGIC, F_ADC, F_SBB, F_LOGIC, F_SUB, F_LOGIC, F_SUB, F_LOGIC];

/** E op= src (src: G or imm) or G op= E */
function aluForm(e: BlockEmitter, i: Insn, src: 'G' | 'I' | 'E'): boolean {
  const op = i.cc, size = i.size as Size;
  if (op === alu.ALU_ADC || op === alu.ALU_SBB) return false;
  const writes = op !== alu.ALU_CMP && op !== alu.ALU_TEST;
  let d: Temp, s: Temp;
  if (src === 'E') {
    s = readE(e, i, size);
    d = e.rd(size, i.reg);
    const r = aluOp(e, op, size, d, s);
    if (writes) e.wr(size, i.reg, r);
    e.record({ op: ALU_KIND[op], size, r, d, s, cin: null, count: 0 });
    return true;
  }
  s = src === 'G' ? e.rd(size, i.reg) : e.c(immValue(i));
  if (i.rm !== NO_REG) {
    d = e.rd(size, i.rm);
    const r = aluOp(e, op, size, d, s);
    if (writes) e.wr(size, i.rm, r);
    e.record({ op: ALU_KIND[op], size, r, d, s, cin: null, count: 0 });
    return true;
  }
  const a = e.ea(i);
  d = e.ld(a, size);
  const r = aluOp(e, op, size, d, s);
  if (writes) e.st(a, r, size);
  e.record({ op: ALU_KIND[op], size, r, d, s, cin: null, count: 0 });
  return true;
}

/** read-modify-write of E: f gives the new value from the old one (loads and stores before any register write) */
function modifyE(e: BlockEmitter, i: Insn, f: (old: Temp) => Temp): Temp {
  const size = i.size as Size;
  if (i.rm !== NO_REG) {
    const old = e.rd(size, i.rm);
    const v = f(old);
    e.wr(size, i.rm, v);
    return old;
  }
  const a = e.ea(i);
  const old = e.ld(a, size);
  e.st(a, f(old), size);
  return old;
}

function incDec(e: BlockEmitter, i: Insn, dec: boolean): boolean {
  const size = i.size as Size;
  // CF is kept: the current one (a guard may leave before the instruction when it is not cheap to know)
  const cin = e.cond(2);
  let r = 0;
  const d = modifyE(e, i, old => (r = e.mask(size, e.bin(dec ? 'sub' : 'add', old, e.c(1)))));
  e.record({ op: dec ? F_DEC : F_INC, size, r, d, s: e.c(1), cin, count: 0 });
  return true;
}

function shift(e: BlockEmitter, i: Insn): boolean {
  const op = i.cc, size = i.size as Size;
  if (op === sh.SH_RCL || op === sh.SH_RCR) return false;
  if (i.imm2 !== sh.COUNT_1 && i.imm2 !== sh.COUNT_IMM) return false;
  const count = (i.imm2 === sh.COUNT_1 ? 1 : i.imm & 0xff) & (size === 8 ? 0x3f : 0x1f);
  if (count === 0) {
    // no flag changes; the operand is still read, a 32-bit register destination still zero-extended
    const v = readE(e, i, size);
    if (i.rm !== NO_REG && size === 4) e.wr(4, i.rm, v);
    return true;
  }
  let r = 0;
  if (op === sh.SH_ROL || op === sh.SH_ROR) {
    // rotate left by k (ror by n: rol by bits - n); CF OF from the result, the other flags kept (the p* record)
    const bits = size * 8, k = op === sh.SH_ROL ? count % bits : (bits - count % bits) % bits;
    modifyE(e, i, old => (r = size === 8 ? e.bin('rotl', old, e.c(k)) : k === 0 ? old
      : e.bin('or', e.mask(size, e.bin('shl', old, e.c(k))), e.bin('shru', old, e.c(bits - k)))));
    e.record({ op: op === sh.SH_ROL ? F_ROL : F_ROR, size, r, d: r, s: r, cin: null, count });
    return true;
  }
  const n = e.c(count);
  const kind = op === sh.SH_SAR ? F_SAR : op === sh.SH_SHR ? F_SHR : F_SHL;
  let d = modifyE(e, i, old => (r = kind === F_SHL ? e.mask(size, e.bin('shl', old, n))
    : kind === F_SHR ? e.bin('shru', old, n) : e.mask(size, e.bin('shrs', e.sx(size, old), n))));
  // sar below 64 bits records the operand sign-extended to 32 bits (as the executor does)
  if (kind === F_SAR && size !== 8) d = e.un('zext32', e.sx(size, d));
  e.record({ op: kind, size, r, d, s: n, cin: null, count });
  return true;
}

/** shld / shrd E, G, imm8 at 32/64 bits */
function shiftDouble(e: BlockEmitter, i: Insn): boolean {
  const size = i.size as Size, left = i.cc === 0;
  if (size === 2 || i.imm2 === sh.COUNT_CL) return false;
  const bits = size * 8, count = i.imm & (bits - 1);
  if (count === 0) {
    const v = readE(e, i, size);
    if (i.rm !== NO_REG && size === 4) e.wr(4, i.rm, v);
    return true;
  }
  const g = e.rd(size, i.reg);
  let r = 0;
  const d = modifyE(e, i, old => (r = left
    ? e.bin('or', e.mask(size, e.bin('shl', old, e.c(count))), e.bin('shru', g, e.c(bits - count)))
    : e.bin('or', e.bin('shru', old, e.c(count)), e.mask(size, e.bin('shl', g, e.c(bits - count))))));
  e.record({ op: left ? F_SHLD : F_SHRD, size, r, d, s: e.c(count), cin: null, count });
  return true;
}

function imul(e: BlockEmitter, i: Insn): boolean {
  const size = i.size as Size;
  if (size === 1) return false;
  const d = readE(e, i, size);
  const s = i.cc === 1 ? e.c(immValue(i)) : e.rd(size, i.reg);
  const r = e.mask(size, e.bin('mul', d, s));
  e.wr(size, i.reg, r);
  e.record({ op: F_IMUL, size, r, d, s, cin: null, count: 0 });
  return true;
}

/**
 * push a 64-bit value: rsp not canonical is the interpreter's #GP (regAddr)
 * even where rsp - 8 is (rsp in 2^47 .. 2^47 + 7): leave before the store
 */
function push(e: BlockEmitter, v: Temp): void {
  const rsp = e.b.get(RSP);
  e.guard(e.nonCanonical(rsp));
  const sp = e.bin('sub', rsp, e.c(8));
  e.st(sp, v, 8);
  e.b.set(RSP, sp);
}

/**
 * ret / ret imm16 (ctl.ret: the operand size is always 64 bits, the imm
 * is 0 for c3): the target from [rsp], #GP (rsp unchanged) when it is not
 * canonical, then rsp += 8 + imm
 */
function ret(e: BlockEmitter, i: Insn): boolean {
  const sp = e.b.get(RSP);
  const t = e.ld(sp, 8);
  e.guard(e.nonCanonical(t));
  e.b.set(RSP, e.bin('add', sp, e.c(8 + (i.imm & 0xffff))));
  e.b.jind(t);
  return true;
}

/** jmp r/m64 / call r/m64 (ctl.jmpE / callE): the target read first, #GP when not canonical, then (call) the push */
function jmpCallE(e: BlockEmitter, i: Insn, call: boolean): boolean {
  const t = readE(e, i, 8);
  e.guard(e.nonCanonical(t));
  if (call) push(e, e.c(i.next));
  e.b.jind(t);
  return true;
}

const HANDLERS = new Map<Function, Handler>([
  [alu.aluEG, (e, i) => aluForm(e, i, 'G')],
  [alu.aluGE, (e, i) => aluForm(e, i, 'E')],
  [alu.aluEI, (e, i) => aluForm(e, i, 'I')],
  [alu.notE, (e, i) => { modifyE(e, i, v => e.mask(i.size as Size, e.bin('xor', v, e.c(-1)))); return true; }],
  [alu.negE, (e, i) => {
    const size = i.size as Size;
    let r = 0;
    const s = modifyE(e, i, v => (r = e.mask(size, e.bin('sub', e.c(0), v))));
    e.record({ op: F_SUB, size, r, d: e.c(0), s, cin: null, count: 0 });
    return true;
  }],
  [alu.incE, (e, i) => incDec(e, i, false)],
  [alu.decE, (e, i) => incDec(e, i, true)],
  [sh.shiftGroup, shift],
  [sh.shxd, shiftDouble],
  [md.imul2, imul],
  [mov.movEG, (e, i) => {
    const size = i.size as Size;
    const v = e.rd(size, i.reg);
    if (i.rm !== NO_REG) e.wr(size, i.rm, v); else e.st(e.ea(i), v, size);
    return true;
  }],
  [mov.movGE, (e, i) => { const size = i.size as Size; e.wr(size, i.reg, readE(e, i, size)); return true; }],
  [mov.movEI, (e, i) => {
    const size = i.size as Size, v = e.c(immValue(i));
    if (i.rm !== NO_REG) e.wr(size, i.rm, v); else e.st(e.ea(i), v, size);
    return true;
  }],
  [mov.lea, (e, i) => { if (!i.hasMem) return false; e.wr(i.size as Size, i.reg, e.ea(i)); return true; }],
  [mov.movzx, (e, i) => { e.wr(i.size as Size, i.reg, readE(e, i, i.cc as Size)); return true; }],
  [mov.movsx, (e, i) => { e.wr(i.size as Size, i.reg, e.sx(i.cc as Size, readE(e, i, i.cc as Size))); return true; }],
  [mov.cmovcc, (e, i) => {
    const size = i.size as Size;
    const v = readE(e, i, size);
    const c = e.cond(i.cc);
    const r = e.b.sel(c, v, e.rd(size, i.reg));
    e.wr(size, i.reg, r); // 32-bit: zero-extended either way
    return true;
  }],
  [mov.setcc, (e, i) => {
    const c = e.cond(i.cc);
    if (i.rm !== NO_REG) e.wr(1, i.rm, c); else e.st(e.ea(i), c, 1);
    return true;
  }],
  [mov.pushR64, (e, i) => { push(e, e.b.get(i.rm)); return true; }],
  [mov.pushI, (e, i) => { if (i.size !== 8) return false; push(e, e.c(immValue(i))); return true; }],
  [mov.popR64, (e, i) => {
    const sp = e.b.get(RSP);
    const v = e.ld(sp, 8);
    e.b.set(RSP, e.bin('add', sp, e.c(8)));
    e.b.set(i.rm, v);
    return true;
  }],
  [mov.leave, (e) => {
    const bp = e.b.get(RBP);
    const v = e.ld(bp, 8);
    e.b.set(RSP, e.bin('add', bp, e.c(8)));
    e.b.set(RBP, v);
    return true;
  }],
  [mov.cbwFamily, (e, i) => {
    // cbw / cwde / cdqe: al / ax / eax sign-extended into ax / eax / rax
    const half = (i.size / 2) as Size;
    e.wr(i.size as Size, 0, e.sx(half, e.rd(half, 0)));
    return true;
  }],
  [mov.cwdFamily, (e, i) => {
    // cwd / cdq / cqo: the sign of ax / eax / rax into dx / edx / rdx
    const size = i.size as Size;
    e.wr(size, 2, e.bin('shrs', e.sx(size, e.rd(size, 0)), e.c(63)));
    return true;
  }],
  [mov.xchg, (e, i) => {
    if (i.rm === NO_REG) return false;
    const size = i.size as Size;
    const g = e.rd(size, i.reg), x = e.rd(size, i.rm);
    e.wr(size, i.rm, g);
    e.wr(size, i.reg, x);
    return true;
  }],
  [sys.nop, () => true],
  [ctl.jmpRel, (e, i) => { e.b.jmp(i.target); return true; }],
  [ctl.jcc, (e, i) => { e.b.br(e.cond(i.cc), i.target, i.next); return true; }],
  [ctl.callRel, (e, i) => { push(e, e.c(i.next)); e.b.jmp(i.target); return true; }],
  [ctl.ret, ret],
  [ctl.jmpE, (e, i) => jmpCallE(e, i, false)],
  [ctl.callE, (e, i) => jmpCallE(e, i, true)],
]);

/**
 * int3 at a native entry its owner handles (it answers
 * InterpCpu.nativeEntryAt with the frame's kind and the handlers' ip, and
 * handed in the save's layout with its inline breakpoint:
 * X86Cpu.nativeSave): the template's register save is written here, as the
 * owner's native entry would write it (the same slots and values, the
 * flags slot excepted: the owner writes that one, X86Cpu.frameSaved), and
 * the int3 then runs as a helper that knows it. The stores go through the TLB like any push: one the TLB
 * cannot serve (the stack not plain writable RAM, watched, observed, not
 * canonical) leaves before the int3 and the interpreter runs it whole (its
 * own save, or the template). One multi-store (IrBuilder.stm): all the
 * slots, or none when the frame is not in one page the TLB serves. After
 * an optprobe's handlers the CPU is on the buffer's copied instructions,
 * where the block goes on; after the booster's, on the real return
 * address (a jump the dispatcher follows).
 */
function nativeEntry(e: BlockEmitter, i: Insn, route: NativeEntryRoute<X86Cpu>, S: NativeEntrySave): void {
  const b = e.b, opt = route.kind === 'optprobe';
  const sp0 = b.get(RSP);
  e.guard(e.nonCanonical(sp0)); // the owner's entry declines a non-canonical rsp (the template's push raises #GP)
  const bytes = S.frameBytes[route.kind];
  const frame = e.bin('sub', sp0, e.c(bytes));
  // slot by slot from the frame's bottom (every slot is 8 bytes); the flags slot is stored as 0 here, the owner's value replaces it
  const vs: Temp[] = [];
  for (let s = 0; s < 15; s++) vs.push(b.get(S.gprs[s]));
  const at: Record<number, Temp> = {
    [S.origAx]: e.c(-1), [S.ip]: e.c(route.ip), [S.cs]: e.c(S.kernelCs), [S.flags]: e.c(0),
    // optprobe: push $__KERNEL_DS, then push %rsp; kretprobe: push %rsp
    [S.sp]: opt ? e.bin('sub', sp0, e.c(8)) : sp0, [S.ss]: e.c(S.kernelDs),
  };
  for (let off = 15 * 8; off < bytes; off += 8) vs.push(at[off]);
  e.stm(frame, vs);
  if (opt) {
    const resume = i.addr + S.optResume;
    b.helper(savedFrameInt3(i, route), resume);
    b.jmp(resume);
  } else {
    b.helper(savedFrameInt3(i, route));
    b.fall(); // declined: the template, from the entry on
  }
}

/** the int3 as a helper that tells the engine the frame is saved, and takes the entry's route to its handler */
function savedFrameInt3(i: Insn, route: NativeEntryRoute<X86Cpu>): Insn {
  const run = Object.create(i) as SavedFrameInt3;
  Object.defineProperty(run, 'exec', { value: int3FrameSaved });
  Object.defineProperty(run, 'route', { value: route });
  return run;
}
type SavedFrameInt3 = Insn & { exec: Insn['exec']; route: NativeEntryRoute<X86Cpu> };
/** sys.int3, with the inline breakpoint handler's lookup of the entry done at translation (route.hit) while that handler is the CPU's */
function int3FrameSaved(cpu: X86Cpu, i: Insn): void {
  cpu.frameSaved = true;
  try {
    const hook = cpu.inlineBreakpoint, route = (i as SavedFrameInt3).route;
    if (hook !== null && !cpu.tf && (hook === route.handler ? route.hit(cpu) : hook(cpu, i.addr))) return;
    cpu.stop(STOP_BREAKPOINT);
  } finally {
    cpu.frameSaved = false;
  }
}

/** The x86_64 front end. */
class X86FrontEnd implements FrontEnd<X86Cpu, Insn> {
  readonly slots = 16;
  readonly scratchBytes = SCRATCH_BYTES;
  private em: BlockEmitter | null = null;
  private words: Int32Array | null = null;
  private wordsOf: DataView | null = null;

  emit(b: B, i: Insn, cpu: X86Cpu): boolean {
    if (this.em === null || this.em.b !== b) this.em = new BlockEmitter(b);
    const e = this.em;
    if (i.def.exec === sys.int3 && cpu.nativeEntryAt !== null && cpu.nativeSave !== null && !cpu.userMode) {
      const route = cpu.nativeEntryAt(i.addr);
      if (route !== null) {
        nativeEntry(e, i, route, cpu.nativeSave);
        this.em = new BlockEmitter(b); // after a helper, the flags are the scratch record's
        return true;
      }
    }
    const h = HANDLERS.get(i.def.exec);
    // lock, fs/gs segment bases, 32-bit addressing: the interpreter
    const plain = !i.lock && i.seg === 0 && (!i.hasMem || i.asize === 8);
    if (h !== undefined && plain && h(e, i)) return true;
    // a helper: the flags are the scratch record's from now on, and it may leave the block
    this.em = new BlockEmitter(b);
    return false;
  }

  endsBlock(i: Insn): boolean { return i.def.flow !== 'none'; }

  /** the arena as int32 words (made again only for another DataView) */
  private view(scratch: DataView): Int32Array {
    // the same DataView every time (the translator's, over the arena, which never grows): compare it, not the buffers (a slow accessor)
    if (this.words === null || this.wordsOf !== scratch) { this.words = new Int32Array(scratch.buffer); this.wordsOf = scratch; }
    return this.words;
  }

  syncIn(cpu: X86Cpu, scratch: DataView, off: number): void {
    const w = this.view(scratch), k = (scratch.byteOffset + off) >> 2;
    w[k] = cpu.fOp | cpu.fSz << 8 | cpu.fCin << 16; w[k + 1] = 0;
    w[k + 2] = cpu.fRl; w[k + 3] = cpu.fRh;
    w[k + 4] = cpu.fDl; w[k + 5] = cpu.fDh;
    w[k + 6] = cpu.fSl; w[k + 7] = cpu.fSh;
    w[k + 8] = cpu.fBits; w[k + 9] = 0;
    w[k + 10] = cpu.pOp | cpu.pSz << 8 | cpu.pCin << 16; w[k + 11] = 0;
    w[k + 12] = cpu.pRl; w[k + 13] = cpu.pRh;
    w[k + 14] = cpu.pDl; w[k + 15] = cpu.pDh;
    w[k + 16] = cpu.pSl; w[k + 17] = cpu.pSh;
    w[k + 18] = cpu.pBits; w[k + 19] = 0;
  }

  syncOut(cpu: X86Cpu, scratch: DataView, off: number): void {
    const w = this.view(scratch), k = (scratch.byteOffset + off) >> 2;
    const kind = w[k];
    cpu.fOp = kind & 0xff; cpu.fSz = (kind >> 8) & 0xff; cpu.fCin = kind >>> 16;
    cpu.fRl = w[k + 2]; cpu.fRh = w[k + 3];
    cpu.fDl = w[k + 4]; cpu.fDh = w[k + 5];
    cpu.fSl = w[k + 6]; cpu.fSh = w[k + 7];
    const pk = w[k + 10];
    cpu.pOp = pk & 0xff; cpu.pSz = (pk >> 8) & 0xff; cpu.pCin = pk >>> 16;
    cpu.pRl = w[k + 12]; cpu.pRh = w[k + 13];
    cpu.pDl = w[k + 14]; cpu.pDh = w[k + 15];
    cpu.pSl = w[k + 16]; cpu.pSh = w[k + 17];
    cpu.pBits = w[k + 18];
  }
}

export const x86FrontEnd: FrontEnd<X86Cpu, Insn> = new X86FrontEnd();
