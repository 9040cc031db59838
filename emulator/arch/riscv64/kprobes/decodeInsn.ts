/**
 * RISC-V decode-insn (Linux arch/riscv/kernel/probes/decode-insn.c): the
 * verdict on a probed instruction, examined in its 32-bit form (a
 * compressed one expanded), shared by kprobes and uprobes — rejected when
 * it is a system instruction (ecall, ebreak, sret, wfi, csr*) or a fence;
 * simulated when it is pc-relative or a jump (jal, jalr, auipc,
 * beq..bgeu, and so c.j, c.jr, c.jalr, c.beqz, c.bnez; rv64 has no c.jal,
 * its encoding is c.addiw, stepped in a slot): simulateInsn.ts; otherwise
 * stepped in a slot.
 */
import type { DecodedInsn } from '../../types';
import type { KprobesArchContext, ProbeInsnDecision } from '../../../kprobes/archHooks';
import { expandRvc } from '../rvc';

/** The 32-bit form of the instruction at the start of `b` (a compressed one expanded), and its length. */
export function expanded(b: Uint8Array): { w: number; len: 2 | 4 } | undefined {
  if (b.length < 2) return undefined;
  const lo = b[0] | (b[1] << 8);
  if ((lo & 3) !== 3) {
    const w = expandRvc(lo);
    return w === null ? undefined : { w: w >>> 0, len: 2 };
  }
  if (b.length < 4) return undefined;
  return { w: (lo | (b[2] << 16) | (b[3] << 24)) >>> 0, len: 4 };
}

/** The instruction classes simulateInsn.ts executes, by their 32-bit form's opcode. */
export type Sim = 'jal' | 'jalr' | 'auipc' | 'branch';

export function simClass(w: number): Sim | undefined {
  switch (w & 0x7f) {
    case 0x6f: return 'jal';
    case 0x67: return (w >>> 12) & 7 ? undefined : 'jalr';
    case 0x17: return 'auipc';
    case 0x63: return ((w >>> 12) & 7) === 2 || ((w >>> 12) & 7) === 3 ? undefined : 'branch';
    default: return undefined;
  }
}

/** system (ecall, ebreak, sret, wfi, csr*) and fences: not stepped out of line */
const rejected = (w: number): boolean => (w & 0x7f) === 0x73 || (w & 0x7f) === 0x0f;

/** decode-insn.c's verdict on an instruction's 32-bit form (kprobes and uprobes) */
export function probeDecision(w: number): ProbeInsnDecision {
  if (rejected(w)) return 'reject';
  return simClass(w) ? 'simulate' : 'slot';
}

/** riscv_probe_decode_insn (the kprobes hook): an instruction that does not decode is refused */
export function decodeProbeInsn(_ctx: KprobesArchContext, _addr: bigint, insn: DecodedInsn | null): ProbeInsnDecision {
  const e = insn ? expanded(insn.bytes) : undefined;
  if (!e) return 'reject';
  return probeDecision(e.w);
}
