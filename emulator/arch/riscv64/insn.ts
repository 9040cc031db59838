/**
 * A decoded riscv64 instruction as the decode cache holds it: the fields
 * every format uses (rd, rs1, rs2, imm, csr), the encoding row it matched
 * (mnemonic, executor, flow class) and, for a compressed instruction, the
 * 32-bit instruction it expands to (`word`) next to its own 16 bits (`raw`).
 */
import type { VAddr } from '../../memory/address';
import type { RunnableInsn } from '../../cpu/interp';
import type { RvCpu } from './cpu';
import type { DecodedInsn } from '../types';

/** Operand layout of a row (selects immediate extraction and disassembly). */
export type RvFormat =
  | 'R' | 'I' | 'Ishift' | 'Ishiftw' | 'S' | 'B' | 'U' | 'J' | 'load' | 'jalr'
  | 'csr' | 'csri' | 'amo' | 'lr' | 'none' | 'fence'
  // F/D: f-register load/store; ops with a rounding mode (fR: 2 sources, fR4: fused, fR1: 1 source);
  // without one (fRn: sign injection, min/max); f -> x (fcmp: 2 sources; f2x: 1, with rm when fcvt);
  // x -> f (x2f); fcvt.d.s / fcvt.d.w[u] print no rounding mode (exact)
  | 'fload' | 'fstore' | 'fR' | 'fR4' | 'fR1' | 'fRn' | 'fcmp' | 'f2x' | 'x2f';

export type RvExec = (cpu: RvCpu, i: RvInsn) => void;

/** One row of the encoding table (decodetree-like: mask/match -> format + executor). */
export interface RvRow {
  readonly name: string;
  readonly mask: number;
  readonly match: number;
  readonly fmt: RvFormat;
  readonly exec: RvExec;
  /** control-flow class for kprobes and stepping; computed from fields when 'auto' */
  readonly flow?: DecodedInsn['flow'];
}

export interface RvInsn extends RunnableInsn<RvCpu> {
  readonly addr: VAddr;
  readonly len: 2 | 4;
  readonly next: VAddr;
  /** the 32-bit instruction (a compressed one expanded) */
  readonly word: number;
  /** the bytes as fetched (16 bits for a compressed instruction) */
  readonly raw: number;
  readonly row: RvRow;
  /** destination register; x0 is mapped to the scratch slot 32 so writes need no test */
  readonly rd: number;
  readonly rs1: number;
  readonly rs2: number;
  /** sign-extended immediate (int32), shift amount, or CSR-immediate */
  readonly imm: number;
  /** CSR number for Zicsr */
  readonly csr: number;
  exec(cpu: RvCpu, insn: RvInsn): void;
}

/** Scratch register index that absorbs writes to x0. */
export const X0_SINK = 32;
