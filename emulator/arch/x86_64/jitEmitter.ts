/**
 * The x86_64 front end's block emitter (jit.ts): operand access (registers
 * at every size, effective addresses, loads and stores that may leave the
 * block) and the lazy flags.
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
 */
import type { IrBuilder, IrOp, Temp } from '../../jit/ir';
import { Insn, NO_REG } from './insn';
import { F_EAGER, F_ROL, F_ROR, F_ADD, F_ADC, F_SUB, F_SBB, F_LOGIC, F_INC, F_DEC, F_SHL, F_SHR, F_SAR, F_SHLD, F_SHRD, F_IMUL, CF, PF, AF, ZF, SF, OF, ARITH_MASK } from './flags';

export type B = IrBuilder<Insn>;
export type Size = 1 | 2 | 4 | 8;

// scratch layout (byte offsets of i64 words)
const S_KIND = 0, S_R = 8, S_D = 16, S_S = 24, S_BITS = 32;
/** the record a rotate replaced (the p* fields), same layout */
const P_KIND = 40, P_R = 48, P_D = 56, P_S = 64, P_BITS = 72;
/** the FS and GS segment bases (copied in by syncIn; translated code never changes them: WRMSR, SWAPGS, arch_prctl leave it) */
export const S_FS_BASE = 80, S_GS_BASE = 88;
/** bytes of the scratch the flags record and the segment bases live in (FrontEnd.scratchBytes) */
export const SCRATCH_BYTES = 96;

/** a flags record produced earlier in the block: its parts as temps (masked to the size, as the executors store them) */
interface Rec {
  op: number; size: Size;
  r: Temp; d: Temp; s: Temp;
  /** inc / dec: the CF kept */
  cin: Temp | null;
  /** shifts: the (non-zero) count */
  count: number;
}

export const RSP = 4, RBP = 5;

/** the value of an immediate as the executors use it (masked below 64 bits, sign-extended at 64) */
export function immValue(i: Insn): bigint {
  return i.size === 8 ? (BigInt(i.immHi) << 32n) | BigInt(i.imm >>> 0) : BigInt(i.imm >>> 0);
}

/** Emission of one block's instructions; state carried from one instruction to the next. */
export class BlockEmitter {
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
  /** effective address of the memory operand with its FS / GS base (64-bit address size: checked by the caller) */
  ea(i: Insn): Temp {
    const a = this.offset(i);
    return i.seg === 0 ? a : this.bin('add', a, this.b.sget(i.seg === 1 ? S_FS_BASE : S_GS_BASE));
  }
  /** the memory operand's offset, without a segment base (lea) */
  offset(i: Insn): Temp {
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

/**
 * A native entry's flags slot as translated code stores it (jit.ts
 * nativeEntry): the arithmetic flags when its high word is 0, else this
 * high word (the record's kind is not one arithFlagsOrNot computes: the
 * owner evaluates the flags itself, kprobes/nativeFrame.ts nativeEnter).
 */
export const FLAGS_NOT_EVALUATED_HI = 1;

/**
 * The arithmetic flags (CF PF AF ZF SF OF, as pushfq stores them) of the
 * scratch record, for a native entry's flags slot: computed here for the
 * kinds code before a probe or a function's return leaves (eager, add,
 * sub, logic, inc, dec, shr, sar; the same values as LazyFlags.arithFlags), else
 * FLAGS_NOT_EVALUATED_HI in the high word. Never leaves the block.
 */
export function arithFlagsOrNot(e: BlockEmitter): Temp {
  const b = e.b, c = (v: number | bigint): Temp => e.c(v);
  const K = e.sget(S_KIND);
  const op = e.bin('and', K, c(0xff));
  const shift = e.bin('sub', c(64), e.bin('shl', e.bin('and', e.bin('shru', K, c(8)), c(0xff)), c(3)));
  const sx = (v: Temp): Temp => e.bin('shrs', e.bin('shl', v, shift), shift);
  const R = b.sget(S_R), D = b.sget(S_D), S = b.sget(S_S);
  const isOp = (k: number): Temp => e.bin('eq', op, c(k));
  const inSet = (...ks: number[]): Temp => e.bin('and', e.bin('shru', c(ks.reduce((m, k) => m | 1 << k, 0)), op), c(1));
  const bit = (v: Temp, flag: number): Temp => e.bin('shl', v, c(31 - Math.clz32(flag)));
  // shr / sar: S is the count (1..63), D the operand as the executors record it (flags.ts shrCf: bit count - 1)
  const cf = b.sel(isOp(F_ADD), e.bin('ltu', R, D),
    b.sel(isOp(F_SUB), e.bin('ltu', D, S),
      b.sel(inSet(F_INC, F_DEC), e.bin('shru', K, c(16)),
        b.sel(inSet(F_SHR, F_SAR), e.bin('and', e.bin('shru', D, e.bin('sub', S, c(1))), c(1)), c(0)))));
  const r = sx(R), d = sx(D), s = sx(S);
  const add = e.bin('lts', e.bin('and', e.bin('xor', d, r), e.bin('xor', s, r)), c(0));
  const sub = e.bin('lts', e.bin('and', e.bin('xor', d, s), e.bin('xor', d, r)), c(0));
  // shr: the operand's top bit; logic, sar: 0
  const of = b.sel(inSet(F_ADD, F_INC), add, b.sel(inSet(F_SUB, F_DEC), sub, b.sel(isOp(F_SHR), e.bin('lts', d, c(0)), c(0))));
  // logic and shifts clear AF
  const af = b.sel(inSet(F_ADD, F_SUB, F_INC, F_DEC), e.bin('ne', e.bin('and', e.bin('xor', e.bin('xor', D, S), R), c(0x10)), c(0)), c(0));
  const zf = e.un('eqz', R), sf = e.bin('lts', r, c(0));
  const pf = e.un('eqz', e.bin('and', e.un('popcnt', e.un('zext8', R)), c(1)));
  const lazy = [bit(cf, CF), bit(pf, PF), bit(af, AF), bit(zf, ZF), bit(sf, SF), bit(of, OF)].reduce((x, y) => e.bin('or', x, y));
  const v = b.sel(isOp(F_EAGER), e.bin('and', b.sget(S_BITS), c(ARITH_MASK)), lazy);
  return b.sel(inSet(F_EAGER, F_ADD, F_SUB, F_LOGIC, F_INC, F_DEC, F_SHR, F_SAR), v, c(BigInt(FLAGS_NOT_EVALUATED_HI) << 32n));
}

/** lazily built flag values (0/1 temps) */
interface Flags { cf(): Temp; zf(): Temp; sf(): Temp; pf(): Temp; of(): Temp }

function range(a: number, b: number): number[] { const r: number[] = []; for (let k = a; k <= b; k++) r.push(k); return r; }
