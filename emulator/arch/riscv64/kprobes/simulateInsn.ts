/**
 * RISC-V simulate-insn (Linux arch/riscv/kernel/probes/simulate-insn.c):
 * the pc-relative instructions and jumps decode-insn picks, executed on
 * pt_regs instead of in a slot, where their pc would be the slot's
 * (kprobes and uprobes).
 */
import type { PtRegs } from '../../../kprobes/ptRegs';
import { simClass } from './decodeInsn';

const sext = (v: number, bits: number): bigint => BigInt.asIntN(bits, BigInt(v));

const ABI = ['zero', 'ra', 'sp', 'gp', 'tp', 't0', 't1', 't2', 's0', 's1', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7',
  's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9', 's10', 's11', 't3', 't4', 't5', 't6'];
const xget = (regs: PtRegs, n: number): bigint => (n === 0 ? 0n : regs.get(ABI[n]));
const xset = (regs: PtRegs, n: number, v: bigint): void => { if (n !== 0) regs.set(ABI[n], BigInt.asUintN(64, v)); };

/**
 * simulate-insn.c: execute a pc-relative instruction or jump (its 32-bit
 * form `w`, `len` bytes long at `pc`) on pt_regs (kprobes and uprobes).
 */
export function simulateInsn(w: number, pc: bigint, len: number, regs: PtRegs): void {
  const next = pc + BigInt(len);
  const rd = (w >>> 7) & 31, rs1 = (w >>> 15) & 31, rs2 = (w >>> 20) & 31;
  const to = (v: bigint): void => { regs.ip = BigInt.asUintN(64, v); };
  switch (simClass(w)) {
    case 'jal': {
      const imm = ((w >>> 31) << 20) | (((w >>> 12) & 0xff) << 12) | (((w >>> 20) & 1) << 11) | (((w >>> 21) & 0x3ff) << 1);
      xset(regs, rd, next);
      to(pc + sext(imm, 21));
      return;
    }
    case 'jalr': {
      const target = (xget(regs, rs1) + sext(w >>> 20, 12)) & ~1n;
      xset(regs, rd, next);
      to(target);
      return;
    }
    case 'auipc':
      xset(regs, rd, pc + sext(w & 0xfffff000, 32));
      to(next);
      return;
    case 'branch': {
      const x = xget(regs, rs1), y = xget(regs, rs2);
      const sx = BigInt.asIntN(64, x), sy = BigInt.asIntN(64, y);
      const f3 = (w >>> 12) & 7;
      const taken = f3 === 0 ? x === y : f3 === 1 ? x !== y : f3 === 4 ? sx < sy : f3 === 5 ? sx >= sy : f3 === 6 ? x < y : x >= y;
      const imm = ((w >>> 31) << 12) | (((w >>> 7) & 1) << 11) | (((w >>> 25) & 0x3f) << 5) | (((w >>> 8) & 0xf) << 1);
      to(taken ? pc + sext(imm, 13) : next);
      return;
    }
    default:
      throw new Error(`riscv probes: no simulation for 0x${w.toString(16)} at 0x${pc.toString(16)}`);
  }
}
