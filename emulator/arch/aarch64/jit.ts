/**
 * The aarch64 front end of the block translator (emulator/jit): the hot
 * integer instructions as IR, everything else (system registers, traps,
 * exclusives and atomics, FP/SIMD, rev/rbit/cls)
 * through the interpreter's executor as a helper. The executors in exec/
 * are the specification: 32-bit operations zero the upper half, the
 * zero-register sink slot (ZR_WRITE) receives what the executor writes
 * there, register fields are the decoder's slots (regs.ts).
 *
 * NZCV: the CPU keeps it as four 0/1 numbers (nf, zf, cf, vf); translated
 * code keeps them as four i64 0/1 words of its scratch, copied in at entry
 * and after a helper, out before a helper and at exit. Within a block the
 * flags last written or read are reused from their temporaries until a
 * helper runs.
 *
 * Memory: plain ld/st; the back end leaves before the instruction when an
 * access crosses a page or the TLB cannot serve it. An access whose base
 * register is not a canonical address leaves through exitIf (the
 * interpreter's addrOf faults on such a base even when base + offset is
 * canonical). A store pair whose bytes cross a page leaves before its first
 * store (the interpreter then does both, or faults exactly as it does), so
 * the translated code never stops between the two stores.
 *
 * Indirect branches (br, blr, ret) end their block with jind; a target that
 * is not a 48-bit canonical address leaves through exitIf before blr's link
 * write (the interpreter's addrOf faults at the branch, x30 unchanged). A
 * misaligned target is taken as it is: the interpreter faults when it
 * fetches there, after the branch retired, as it does alone.
 */
import type { FrontEnd, IrBuilder, Temp } from '../../jit/ir';
import type { A64Cpu } from './cpu';
import type { A64Insn } from './insn';
import { NSLOTS, ZR_READ, ZR_WRITE } from './regs';
import { wZ } from './fmt';
import { ST, LDZ, LDS32, LDS64, PRFM } from './exec/loadStore';

type B = IrBuilder<A64Insn>;

/** scratch words (i64, 0 or 1) of N, Z, C, V */
const FLAG_OFF = [0, 8, 16, 24] as const;
const N = 0, Z = 1, C = 2, V = 3;

/** a value v is a 48-bit canonical address when v + CANON_BIAS < CANON_SPAN (unsigned) */
const CANON_BIAS = 2n ** 47n, CANON_SPAN = 2n ** 48n;

/** The flags' temporaries of the block being built (valid until a helper runs). */
class FlagTemps {
  owner: B | null = null;
  readonly t: number[] = [-1, -1, -1, -1];
  reset(b: B | null): void { this.owner = b; this.t.fill(-1); }
}
const flags = new FlagTemps();

function getFlag(b: B, k: number): Temp {
  let t = flags.t[k];
  if (t < 0) { t = b.sget(FLAG_OFF[k]); flags.t[k] = t; }
  return t;
}
function setFlags(b: B, f: readonly Temp[]): void {
  for (let k = 0; k < 4; k++) { b.sset(FLAG_OFF[k], f[k]); flags.t[k] = f[k]; }
}

// ---------------------------------------------------------------- operands
function reg(b: B, slot: number): Temp { return slot === ZR_READ ? b.const(0) : b.get(slot); }
function zext32(b: B, v: Temp): Temp { return b.un('zext32', v); }
/** write an sf-wide result (a 32-bit one is zero-extended here unless `clean`) */
function setReg(b: B, slot: number, v: Temp, sf: number, clean = false): void { b.set(slot, sf || clean ? v : zext32(b, v)); }
function shr(b: B, v: Temp, n: number): Temp { return b.bin('shru', v, b.const(n)); }
function shl(b: B, v: Temp, n: number): Temp { return b.bin('shl', v, b.const(n)); }
function not(b: B, v: Temp): Temp { return b.bin('xor', v, b.const(-1)); }

/** 32-bit rotate right of the low word of v by amt (a temp); the low 32 bits of the result are meaningful */
function rotr32(b: B, v: Temp, amt: Temp): Temp {
  const x = zext32(b, v);
  return b.bin('shru', b.bin('or', x, shl(b, x, 32)), amt);
}

/** ShiftReg at width sf by a constant (the upper half of a 32-bit result is not meaningful) */
function shifted(b: B, v: Temp, type: number, amt: number, sf: number): Temp {
  if (amt === 0) return v;
  const a = b.const(amt);
  if (sf) return b.bin((['shl', 'shru', 'shrs', 'rotr'] as const)[type], v, a);
  switch (type) {
    case 0: return b.bin('shl', v, a);
    case 1: return b.bin('shru', zext32(b, v), a);
    case 2: return b.bin('shrs', b.un('sext32', v), a);
    default: return rotr32(b, v, a);
  }
}

/** ExtendReg: type 0..7 = uxtb uxth uxtw uxtx sxtb sxth sxtw sxtx, then lsl sh */
function extended(b: B, v: Temp, type: number, sh: number): Temp {
  const op = (['zext8', 'zext16', 'zext32', null, 'sext8', 'sext16', 'sext32', null] as const)[type];
  const e = op === null ? v : b.un(op, v);
  return sh === 0 ? e : shl(b, e, sh);
}

/**
 * AddWithCarry at width sf: a + y (+ cin), or a - y when sub (cin null:
 * carry in 1; else a + ~y + cin). Returns the sf-wide result (upper half
 * zero at 32 bits) and, when wanted, N Z C V. 32-bit operands are moved
 * to the top of the word so that the 64-bit flags are the 32-bit ones.
 */
function addc(b: B, a: Temp, y: Temp, sub: boolean, cin: Temp | null, sf: number, wantFlags: boolean): { r: Temp; f: Temp[] | null } {
  if (!wantFlags) {
    let r: Temp;
    if (cin === null) r = b.bin(sub ? 'sub' : 'add', a, y);
    else r = b.add(b.add(a, sub ? not(b, y) : y), cin);
    return { r: sf ? r : zext32(b, r), f: null };
  }
  const A = sf ? a : shl(b, a, 32);
  let r: Temp, c: Temp, v: Temp;
  if (cin === null) {
    const Y = sf ? y : shl(b, y, 32);
    r = b.bin(sub ? 'sub' : 'add', A, Y);
    if (sub) { c = b.bin('geu', A, Y); v = shr(b, b.and(b.bin('xor', A, Y), b.bin('xor', A, r)), 63); }
    else { c = b.bin('ltu', r, A); v = shr(b, b.and(b.bin('xor', A, r), b.bin('xor', Y, r)), 63); }
  } else {
    const yy = sub ? not(b, y) : y;
    const Y = sf ? yy : shl(b, yy, 32);
    r = b.add(b.add(A, Y), sf ? cin : shl(b, cin, 32));
    // carry out of bit 63: both operands' top bits, or either of them and no top bit in the sum
    c = shr(b, b.bin('or', b.and(A, Y), b.and(b.bin('or', A, Y), not(b, r))), 63);
    v = shr(b, b.and(b.bin('xor', A, r), b.bin('xor', Y, r)), 63);
  }
  const f = [shr(b, r, 63), b.un('eqz', r), c, v];
  return { r: sf ? r : shr(b, r, 32), f };
}

/** N and Z of an sf-wide result (upper half zero at 32 bits), C = V = 0 (logical operations) */
function logicFlags(b: B, r: Temp, sf: number): void {
  const zero = b.const(0);
  setFlags(b, [shr(b, r, sf ? 63 : 31), b.un('eqz', r), zero, zero]);
}

/** ConditionHolds(cond) as a temp (nonzero: holds) and whether it must be read inverted; null for al/nv */
function condition(b: B, cond: number): { t: Temp; inv: boolean } | null {
  let t: Temp;
  switch (cond >> 1) {
    case 0: t = getFlag(b, Z); break;
    case 1: t = getFlag(b, C); break;
    case 2: t = getFlag(b, N); break;
    case 3: t = getFlag(b, V); break;
    case 4: t = b.bin('gtu', getFlag(b, C), getFlag(b, Z)); break; // C && !Z
    case 5: t = b.bin('eq', getFlag(b, N), getFlag(b, V)); break;
    case 6: t = b.un('eqz', b.bin('or', b.bin('xor', getFlag(b, N), getFlag(b, V)), getFlag(b, Z))); break;
    default: return null;
  }
  return { t, inv: (cond & 1) === 1 };
}
/** the value of `yes` when cond holds, else `no` */
function pick(b: B, cond: number, yes: Temp, no: Temp): Temp {
  const c = condition(b, cond);
  if (c === null) return yes;
  return c.inv ? b.sel(c.t, no, yes) : b.sel(c.t, yes, no);
}

// ---------------------------------------------------------------- memory
/** leave before the instruction when v is not a 48-bit canonical address (addrOf would fault on it) */
function exitUnlessCanonical(b: B, v: Temp): void {
  b.exitIf(b.bin('geu', b.addi(v, CANON_BIAS), b.const(CANON_SPAN)));
}

/** one load or store of i (op, size, d / m) at a, then the base write-back */
function access(b: B, i: A64Insn, a: Temp, wb: Temp | null): void {
  if (i.op === ST) b.st(a, reg(b, i.m), i.size as 1 | 2 | 4 | 8);
  else {
    const v = b.ld(a, i.size as 1 | 2 | 4 | 8, i.op !== LDZ);
    b.set(i.d, i.op === LDS32 ? zext32(b, v) : v);
  }
  if (wb !== null) b.set(i.n, wb);
}

/** immediate forms: mode 0 offset, 1 post-index, 3 pre-index */
function ldstImm(b: B, i: A64Insn, mode: number): boolean {
  if (i.op === PRFM) return true;
  const base = reg(b, i.n);
  const off = i.imm === 0 ? base : b.addi(base, i.imm);
  const addr = mode === 1 ? base : off;
  // with no offset the access itself is at the base (a non-canonical one misses the TLB)
  if (addr !== base) exitUnlessCanonical(b, base);
  access(b, i, addr, mode === 0 ? null : off);
  return true;
}

function ldstPair(b: B, i: A64Insn): boolean {
  const s = i.size as 4 | 8;
  const base = reg(b, i.n);
  const off = i.imm === 0 ? base : b.addi(base, i.imm);
  const a = i.imm2 === 1 ? base : off;
  if (a !== base) exitUnlessCanonical(b, base);
  const a2 = b.addi(a, s);
  if (i.op === ST) {
    // both stores or neither: a pair across a page leaves before the first (a load pair needs no check: its loads write nothing)
    b.exitIf(b.bin('gtu', b.andi(a, 0xfff), b.const(4096 - 2 * s)));
    const v1 = reg(b, i.m), v2 = reg(b, i.a);
    b.st(a, v1, s); b.st(a2, v2, s);
  } else {
    const signed = i.op === LDS64;
    const v1 = b.ld(a, s, signed), v2 = b.ld(a2, s, signed);
    b.set(i.d, v1); b.set(wZ(i.ra), v2);
  }
  if (i.imm2 === 1 || i.imm2 === 3) b.set(i.n, off);
  return true;
}

// ---------------------------------------------------------------- data processing
function addSubImm(b: B, i: A64Insn): boolean {
  const { r, f } = addc(b, reg(b, i.n), b.const(i.imm), i.op === 1, null, i.sf, i.op2 === 1);
  setReg(b, i.d, r, i.sf, true);
  if (f !== null) setFlags(b, f);
  return true;
}

/** add/sub with a second operand already shifted or extended; S in imm3 */
function addSubWith(b: B, i: A64Insn, y: Temp): boolean {
  const { r, f } = addc(b, reg(b, i.n), y, i.op === 1, null, i.sf, i.imm3 === 1);
  setReg(b, i.d, r, i.sf, true);
  if (f !== null) setFlags(b, f);
  return true;
}

function logical(b: B, i: A64Insn, kind: number, y: Temp, setsFlags: boolean): boolean {
  const x = reg(b, i.n);
  const r0 = b.bin((['and', 'or', 'xor', 'and'] as const)[kind], x, y);
  const r = i.sf ? r0 : zext32(b, r0);
  b.set(i.d, r);
  if (setsFlags) logicFlags(b, r, i.sf);
  return true;
}

function moveWide(b: B, i: A64Insn): boolean {
  if (i.op !== 3) { b.set(i.d, b.const(i.big)); return true; }
  const keep = b.andi(reg(b, i.n), ~(0xffffn << BigInt(i.imm2)));
  setReg(b, i.d, b.bin('or', keep, b.const(BigInt(i.imm3) << BigInt(i.imm2))), i.sf);
  return true;
}

/** sbfm / bfm / ubfm: imm2 = immr (R), imm3 = imms (S), op 0 sbfm, 1 bfm, 2 ubfm; k0..k3 = wmask, tmask */
function bitfield(b: B, i: A64Insn): boolean {
  const r = i.imm2, s = i.imm3, width = i.sf ? 64 : 32;
  const src = reg(b, i.n);
  if (i.op !== 1) {
    const arith = i.op === 0 ? 'shrs' : 'shru';
    // bits S..0 at the top, then down: to bit 0 (S >= R: the field R..S) or to bit width - R (S < R)
    const top = shl(b, src, 63 - s);
    const v = s >= r ? b.bin(arith, top, b.const(63 - s + r)) : shl(b, b.bin(arith, top, b.const(63 - s)), width - r);
    setReg(b, i.d, v, i.sf, i.op === 2 && s >= r);
    return true;
  }
  // bfm: (dst & ~wmask | ROR(src, R) & wmask) within tmask, dst outside it
  const wmask = BigInt(i.k0 >>> 0) | (BigInt(i.k1 >>> 0) << 32n), tmask = BigInt(i.k2 >>> 0) | (BigInt(i.k3 >>> 0) << 32n);
  const dst = reg(b, i.a);
  const rot = i.sf ? b.bin('rotr', src, b.const(r)) : rotr32(b, src, b.const(r));
  const bot = b.bin('or', b.andi(dst, ~wmask), b.andi(rot, wmask));
  const v = b.bin('or', b.andi(dst, ~tmask), b.andi(bot, tmask));
  setReg(b, i.d, v, i.sf);
  return true;
}

function extr(b: B, i: A64Insn): boolean {
  const lsb = i.imm2, m = reg(b, i.m);
  if (lsb === 0) { setReg(b, i.d, m, i.sf); return true; }
  const n = reg(b, i.n);
  const lo = i.sf ? shr(b, m, lsb) : shr(b, zext32(b, m), lsb);
  setReg(b, i.d, b.bin('or', lo, shl(b, n, (i.sf ? 64 : 32) - lsb)), i.sf);
  return true;
}

function condCompare(b: B, i: A64Insn): boolean {
  const y = i.op2 ? b.const(i.imm) : reg(b, i.m);
  const { r, f } = addc(b, reg(b, i.n), y, i.op === 1, null, i.sf, true);
  const fl = f as Temp[];
  const c = condition(b, i.cond);
  if (c === null) { b.set(ZR_WRITE, r); setFlags(b, fl); return true; }
  const choose = (yes: Temp, no: Temp): Temp => c.inv ? b.sel(c.t, no, yes) : b.sel(c.t, yes, no);
  // the executor writes the sink only when it compares
  b.set(ZR_WRITE, choose(r, b.get(ZR_WRITE)));
  setFlags(b, fl.map((t, k) => choose(t, b.const((i.imm2 >> (3 - k)) & 1))));
  return true;
}

/** csel csinc csinv csneg (op) */
function condSelect(b: B, i: A64Insn): boolean {
  const m = reg(b, i.m);
  const alt = [m, b.addi(m, 1), not(b, m), b.bin('sub', b.const(0), m)][i.op];
  setReg(b, i.d, pick(b, i.cond, reg(b, i.n), alt), i.sf);
  return true;
}

function dataProc2(b: B, i: A64Insn): boolean {
  const n = reg(b, i.n), m = reg(b, i.m);
  if (i.op === 2 || i.op === 3) {
    const signed = i.op === 3;
    if (i.sf) { b.set(i.d, b.bin(signed ? 'divs' : 'divu', n, m)); return true; }
    const ext = (v: Temp): Temp => b.un(signed ? 'sext32' : 'zext32', v);
    setReg(b, i.d, b.bin(signed ? 'divs' : 'divu', ext(n), ext(m)), 0);
    return true;
  }
  // lslv lsrv asrv rorv (op2)
  if (i.sf) { b.set(i.d, b.bin((['shl', 'shru', 'shrs', 'rotr'] as const)[i.op2], n, m)); return true; }
  const amt = b.andi(m, 31);
  const v = [b.bin('shl', n, amt), b.bin('shru', zext32(b, n), amt), b.bin('shrs', b.un('sext32', n), amt), rotr32(b, n, amt)][i.op2];
  setReg(b, i.d, v, 0);
  return true;
}

/** madd msub smaddl smsubl smulh umaddl umsubl umulh (op = op31*2 + o0) */
function dataProc3(b: B, i: A64Insn): boolean {
  const n = reg(b, i.n), m = reg(b, i.m);
  if (i.op === 4 || i.op === 12) { b.set(i.d, b.bin(i.op === 4 ? 'mulhs' : 'mulhu', n, m)); return true; }
  const ext = i.op === 2 || i.op === 3 ? 'sext32' : i.op >= 10 ? 'zext32' : null;
  const p = ext === null ? b.bin('mul', n, m) : b.bin('mul', b.un(ext, n), b.un(ext, m));
  const a = reg(b, i.a);
  setReg(b, i.d, (i.op & 1) === 1 ? b.bin('sub', a, p) : b.add(a, p), i.sf);
  return true;
}

// ---------------------------------------------------------------- branches
/** br, blr, ret: the target read first (blr x30 jumps to the old x30), then the link, then the jump */
function indirect(b: B, i: A64Insn, link: boolean): boolean {
  const t = reg(b, i.n);
  exitUnlessCanonical(b, t);
  if (link) b.set(30, b.const(i.next));
  b.jind(t);
  return true;
}

function condBranch(b: B, i: A64Insn): boolean {
  const c = condition(b, i.cond);
  if (c === null) b.jmp(i.target);
  else if (c.inv) b.br(c.t, i.next, i.target);
  else b.br(c.t, i.target, i.next);
  return true;
}

function emitInsn(b: B, i: A64Insn): boolean {
  switch (i.row?.name) {
    case 'add/sub (immediate)': return addSubImm(b, i);
    case 'logical (immediate)': return logical(b, i, i.op, b.const(i.big), i.op === 3);
    case 'move wide (immediate)': return moveWide(b, i);
    case 'bitfield': return bitfield(b, i);
    case 'extr': return extr(b, i);
    case 'adr/adrp': b.set(i.d, b.const(i.target)); return true;
    case 'logical (shifted register)': {
      // op = opc*2 + N: and bic orr orn eor eon ands bics
      let y = shifted(b, reg(b, i.m), i.op2, i.imm2, i.sf);
      if (i.op & 1) y = not(b, y);
      return logical(b, i, i.op >> 1, y, i.op >= 6);
    }
    case 'add/sub (shifted register)': return addSubWith(b, i, shifted(b, reg(b, i.m), i.op2, i.imm2, i.sf));
    case 'add/sub (extended register)': return addSubWith(b, i, extended(b, reg(b, i.m), i.op2, i.imm2));
    case 'adc/sbc': {
      const { r, f } = addc(b, reg(b, i.n), reg(b, i.m), i.op === 1, getFlag(b, C), i.sf, i.imm3 === 1);
      setReg(b, i.d, r, i.sf, true);
      if (f !== null) setFlags(b, f);
      return true;
    }
    case 'conditional compare': return condCompare(b, i);
    case 'conditional select': return condSelect(b, i);
    case 'data processing (2 source)': return dataProc2(b, i);
    case 'data processing (1 source)': {
      if (i.op !== 4) return false; // rbit rev16 rev32 rev cls: helper
      const n = reg(b, i.n);
      b.set(i.d, i.sf ? b.un('clz', n) : b.addi(b.un('clz', zext32(b, n)), -32));
      return true;
    }
    case 'data processing (3 source)': return dataProc3(b, i);
    case 'load/store (unsigned offset)': return ldstImm(b, i, 0);
    case 'load/store (unscaled, pre/post-index, unprivileged)': return ldstImm(b, i, i.imm2 === 1 || i.imm2 === 3 ? i.imm2 : 0);
    case 'load/store (register offset)': {
      if (i.op === PRFM) return true;
      const base = reg(b, i.n);
      exitUnlessCanonical(b, base);
      access(b, i, b.add(base, extended(b, reg(b, i.a), i.op2, i.imm2)), null);
      return true;
    }
    case 'load register (literal)': {
      if (i.op === PRFM) return true;
      access(b, i, b.const(i.target), null);
      return true;
    }
    case 'load/store pair': return ldstPair(b, i);
    case 'b/bl':
      if (i.op) b.set(30, b.const(i.next));
      b.jmp(i.target);
      return true;
    case 'b.cond': return condBranch(b, i);
    case 'br': case 'ret': return indirect(b, i, false);
    case 'blr': return indirect(b, i, true);
    case 'cbz/cbnz': {
      const v = i.sf ? reg(b, i.n) : zext32(b, reg(b, i.n));
      if (i.op) b.br(v, i.target, i.next); else b.br(v, i.next, i.target);
      return true;
    }
    case 'tbz/tbnz': {
      const bit = b.andi(reg(b, i.n), 1n << BigInt(i.imm));
      if (i.op) b.br(bit, i.target, i.next); else b.br(bit, i.next, i.target);
      return true;
    }
    case 'hint': return i.imm !== 3; // wfi (may halt): helper; nop, yield, pac/bti hints: nothing
    default: return false;
  }
}

export const aarch64FrontEnd: FrontEnd<A64Cpu, A64Insn> = {
  slots: NSLOTS,
  scratchBytes: 32,
  emit(b, insn) {
    if (flags.owner !== b) flags.reset(b);
    const done = emitInsn(b, insn);
    if (!done) flags.reset(b); // the helper may change NZCV
    return done;
  },
  endsBlock: insn => insn.row === null || insn.row.flow !== undefined || insn.row.name === 'b/bl',
  syncIn(cpu, v, off) {
    // the high words too: the scratch is not known to start zeroed
    v.setInt32(off, cpu.nf, true); v.setInt32(off + 4, 0, true);
    v.setInt32(off + 8, cpu.zf, true); v.setInt32(off + 12, 0, true);
    v.setInt32(off + 16, cpu.cf, true); v.setInt32(off + 20, 0, true);
    v.setInt32(off + 24, cpu.vf, true); v.setInt32(off + 28, 0, true);
  },
  syncOut(cpu, v, off) {
    cpu.nf = v.getInt32(off, true); cpu.zf = v.getInt32(off + 8, true);
    cpu.cf = v.getInt32(off + 16, true); cpu.vf = v.getInt32(off + 24, true);
  },
};
