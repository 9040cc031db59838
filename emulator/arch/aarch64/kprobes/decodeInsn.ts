/**
 * arm64 decode-insn (Linux arch/arm64/kernel/probes/decode-insn.c): the
 * verdict on a probed instruction word, shared by kprobes and uprobes —
 * rejected when stepping it out of line would not come back or would break
 * an atomic sequence (exception generation, eret, exclusive loads/stores,
 * writes to DAIF); simulated when it is pc-relative (simulateInsn.ts);
 * otherwise stepped in a slot.
 */
import type { DecodedInsn } from '../../types';
import type { KprobesArchContext, ProbeInsnDecision } from '../../../kprobes/archHooks';

/** brk #0x006: the step breakpoint after a slot's instruction (KPROBES_BRK_SS_IMM) */
export const BRK_SS = 0xd42000c0;

/** an instruction word's little-endian bytes, and back */
export const word = (w: number): Uint8Array => Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24);
export const readWord = (b: Uint8Array): number => (b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)) >>> 0;

/** The instruction classes simulateInsn.ts executes, by encoding (ARM ARM C4.1). */
export type Sim = 'b' | 'bl' | 'bcond' | 'cbz' | 'tbz' | 'br' | 'adr' | 'ldrLit';

export function simClass(w: number): Sim | undefined {
  if (((w & 0x7c000000) >>> 0) === 0x14000000) return (w & 0x80000000) !== 0 ? 'bl' : 'b';
  if (((w & 0xff000010) >>> 0) === 0x54000000) return 'bcond';
  if (((w & 0x7e000000) >>> 0) === 0x34000000) return 'cbz';
  if (((w & 0x7e000000) >>> 0) === 0x36000000) return 'tbz';
  // br, blr, ret (and their pointer-authenticating forms are not emitted here)
  if (((w & 0xff9ffc1f) >>> 0) === 0xd61f0000 || ((w & 0xfffffc1f) >>> 0) === 0xd65f0000) return 'br';
  if (((w & 0x1f000000) >>> 0) === 0x10000000) return 'adr';
  if (((w & 0x3f000000) >>> 0) === 0x18000000) return 'ldrLit';
  return undefined;
}

/** exclusive load/store (ldxr, stxr, ldaxr, stlxr, ldxp, stxp...): stepping one breaks the monitor */
const isExclusive = (w: number): boolean => ((w & 0x3f000000) >>> 0) === 0x08000000 && (w & 0x00800000) === 0;
/** exception generation (svc, hvc, smc, brk, hlt, dcps) */
const isException = (w: number): boolean => ((w & 0xff000000) >>> 0) === 0xd4000000;
/** eret, drps */
const isEret = (w: number): boolean => w === 0xd69f03e0 || w === 0xd6bf03e0;
/** msr to DAIF (daifset/daifclr immediates, and msr daif, xN) */
const isDaifWrite = (w: number): boolean => ((w & 0xfffff0df) >>> 0) === 0xd50340df || ((w & 0xffffffe0) >>> 0) === 0xd51b4220;

/** arm_probe_decode_insn: the verdict on an instruction word (kprobes and uprobes) */
export function probeDecision(w: number): ProbeInsnDecision {
  if (isException(w) || isEret(w) || isExclusive(w) || isDaifWrite(w)) return 'reject';
  return simClass(w) ? 'simulate' : 'slot';
}

/** arm_kprobe_decode_insn (the kprobes hook): an instruction that is not 4 bytes is refused */
export function decodeProbeInsn(_ctx: KprobesArchContext, _addr: bigint, insn: DecodedInsn | null): ProbeInsnDecision {
  if (!insn || insn.length !== 4) return 'reject';
  return probeDecision(readWord(insn.bytes));
}
