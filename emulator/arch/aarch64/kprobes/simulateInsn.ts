/**
 * arm64 simulate-insn (Linux arch/arm64/kernel/probes/simulate-insn.c):
 * the pc-relative instructions decode-insn picks (b, bl, b.cond, cbz/cbnz,
 * tbz/tbnz, br, blr, ret, adr, adrp, ldr/ldrsw literal) executed on
 * pt_regs instead of in a slot, where their pc would be the slot's
 * (kprobes and uprobes).
 */
import { mustVAddr } from '../../../memory/address';
import type { PtRegs } from '../../../kprobes/ptRegs';
import { simClass } from './decodeInsn';

const sext = (v: number, bits: number): bigint => BigInt.asIntN(bits, BigInt(v));

/** Register n of an instruction field: 31 is the zero register here (never sp). */
function xreg(regs: PtRegs, n: number): bigint {
  return n === 31 ? 0n : regs.get(`x${n}`);
}
function setX(regs: PtRegs, n: number, v: bigint): void {
  if (n !== 31) regs.set(`x${n}`, BigInt.asUintN(64, v));
}

/** ConditionHolds(cond) on pstate's NZCV */
function conditionHolds(cond: number, pstate: bigint): boolean {
  const n = (pstate >> 31n) & 1n, z = (pstate >> 30n) & 1n, c = (pstate >> 29n) & 1n, v = (pstate >> 28n) & 1n;
  let r: boolean;
  switch (cond >> 1) {
    case 0: r = z === 1n; break;
    case 1: r = c === 1n; break;
    case 2: r = n === 1n; break;
    case 3: r = v === 1n; break;
    case 4: r = c === 1n && z === 0n; break;
    case 5: r = n === v; break;
    case 6: r = n === v && z === 0n; break;
    default: return true; // AL, NV
  }
  return (cond & 1) !== 0 ? !r : r;
}

/** simulate-insn.c: execute the pc-relative instruction `w` at `pc` on pt_regs (kprobes and uprobes). */
export function simulateInsn(w: number, pc: bigint, regs: PtRegs): void {
  const next = pc + 4n;
  const to = (v: bigint): void => { regs.ip = BigInt.asUintN(64, v); };
  switch (simClass(w)) {
    case 'b': to(pc + sext(w & 0x3ffffff, 26) * 4n); return;
    case 'bl': setX(regs, 30, next); to(pc + sext(w & 0x3ffffff, 26) * 4n); return;
    case 'bcond': to(conditionHolds(w & 0xf, regs.flags) ? pc + sext((w >>> 5) & 0x7ffff, 19) * 4n : next); return;
    case 'cbz': {
      const sf = (w >>> 31) !== 0;
      const v = sf ? xreg(regs, w & 31) : xreg(regs, w & 31) & 0xffffffffn;
      const taken = ((w >>> 24) & 1) === 0 ? v === 0n : v !== 0n;
      to(taken ? pc + sext((w >>> 5) & 0x7ffff, 19) * 4n : next);
      return;
    }
    case 'tbz': {
      const bit = BigInt(((w >>> 31) << 5) | ((w >>> 19) & 31));
      const set = ((xreg(regs, w & 31) >> bit) & 1n) === 1n;
      const taken = ((w >>> 24) & 1) === 0 ? !set : set;
      to(taken ? pc + sext((w >>> 5) & 0x3fff, 14) * 4n : next);
      return;
    }
    case 'br': {
      const target = xreg(regs, (w >>> 5) & 31);
      if (((w >>> 21) & 3) === 1) setX(regs, 30, next); // blr
      to(target);
      return;
    }
    case 'adr': {
      const imm = sext((((w >>> 5) & 0x7ffff) << 2) | ((w >>> 29) & 3), 21);
      const v = (w >>> 31) !== 0 ? (pc & ~0xfffn) + (imm << 12n) : pc + imm;
      setX(regs, w & 31, v);
      to(next);
      return;
    }
    case 'ldrLit': {
      const at = mustVAddr(BigInt.asUintN(64, pc + sext((w >>> 5) & 0x7ffff, 19) * 4n));
      const mem = regs.cpu.mem;
      const opc = w >>> 30;
      if (opc === 0) setX(regs, w & 31, BigInt(mem.read32(at) >>> 0));
      else if (opc === 1) setX(regs, w & 31, mem.read64(at));
      else if (opc === 2) setX(regs, w & 31, BigInt(mem.read32(at) | 0));
      // opc 3: prfm literal, a hint
      to(next);
      return;
    }
    default:
      throw new Error(`arm64 probes: no simulation for 0x${w.toString(16)} at 0x${pc.toString(16)}`);
  }
}
