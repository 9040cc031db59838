/**
 * A decoded x86_64 instruction: the table entry it matched plus every
 * operand field pre-decoded, and the executor bound at decode time, so the
 * run loop only calls `insn.exec(cpu, insn)`. The table entry's type
 * (OpDef) is declared here rather than in table.ts: table.ts imports the
 * executors, and the executors import this file, never the table.
 */
import type { DecodedInsn } from '../types';
import type { X86Cpu } from './cpu';

export type ExecFn = (cpu: X86Cpu, i: Insn) => void;

export type Flow = DecodedInsn['flow'];

export interface Operand {
  /** E G M I J Z X Y or R (fixed register: name in `fixed`) or 1 */
  k: string;
  /** size letter ('' when none) */
  s: string;
  fixed?: string;
}

export interface OpDef {
  code: string;
  /** mnemonic; for +cc opcodes the stem ('j', 'set', 'cmov') */
  mnem: string;
  ops: Operand[];
  exec: ExecFn;
  /** executor sub-operation, copied into Insn.cc (except +cc opcodes) */
  sub: number;
  flow: Flow;
  /** default operand size 64 (push, pop...) */
  d64: boolean;
  /** operand size forced to 64 (near branches) */
  f64: boolean;
  /** mnemonics by operand size 2/4/8 (cbw/cwde/cdqe...) */
  sized?: [string, string, string];
  /** mnemonic when the ModRM operand is a register (movlps / movhlps share 0f 12) */
  regMnem?: string;
  /** string instruction (rep prefixes printed, sizes suffixed) */
  str: boolean;
  /** source operand size in bytes for movzx/movsx (copied into Insn.cc) */
  srcSize?: number;
  /** optional specialised executor for a decoded instance */
  fast?: (i: Insn) => ExecFn | undefined;
  /**
   * accepts a LOCK prefix (with a memory destination; SDM vol. 2 "LOCK"):
   * any other LOCK use is #UD
   */
  lockable: boolean;
  /** x87 / SSE class for CR0.EM/TS/MP and CR4.OSFXSR on a system-mode CPU (exec/fpuGate.ts); set by the table */
  fpu?: FpuClass;
}

/** exec/fpuGate.ts: x87, fwait, fxsave/fxrstor, SSE */
export type FpuClass = 'x87' | 'wait' | 'fxsr' | 'sse';

/** base/index register value meaning "none" */
export const NO_REG = -1;

/** Segment override */
export const SEG_NONE = 0;
export const SEG_FS = 1;
export const SEG_GS = 2;

/** Repeat prefix */
export const REP_NONE = 0;
export const REP_F3 = 1;
export const REP_F2 = 2;

/**
 * Byte offsets (into Insn.bytes) and lengths of an instruction's fields, as
 * the decoder met them (Linux's struct insn: prefixes, rex_prefix,
 * vex_prefix, opcode, modrm, sib, displacement, immediate). An absent field
 * has offset -1 and length 0.
 */
export interface InsnLayout {
  /** legacy prefix bytes and REX, in order, before the opcode (or the VEX prefix) */
  readonly prefixLen: number;
  /** the REX byte in effect (-1: none; a REX followed by a legacy prefix is ignored by the CPU) */
  readonly rexOff: number;
  /** the VEX prefix (c4: 3 bytes, c5: 2 bytes) */
  readonly vexOff: number;
  readonly vexLen: number;
  /** opcode bytes, escapes included (0f xx: 2 bytes; 0f 38 xx / 0f 3a xx: 3); VEX: the one byte after the prefix */
  readonly opcodeOff: number;
  readonly opcodeLen: number;
  readonly modrmOff: number;
  readonly sibOff: number;
  /** displacement of the memory operand (1 or 4 bytes) */
  readonly dispOff: number;
  readonly dispLen: number;
  /** immediates, relative branch displacements included (enter's Iw,Ib: both, 3 bytes) */
  readonly immOff: number;
  readonly immLen: number;
  /** the displacement is RIP-relative (ModRM mod=00 rm=101) */
  readonly ripRel: boolean;
}

/** layout of an Insn built outside the decoder (no fields recorded) */
export const NO_LAYOUT: InsnLayout = {
  prefixLen: 0, rexOff: -1, vexOff: -1, vexLen: 0, opcodeOff: -1, opcodeLen: 0, modrmOff: -1, sibOff: -1,
  dispOff: -1, dispLen: 0, immOff: -1, immLen: 0, ripRel: false,
};

export class Insn {
  exec: ExecFn;
  /** VAddr of first byte */
  addr = 0;
  len = 0;
  /** VAddr of the next instruction */
  next = 0;
  def: OpDef;
  /** operand size in bytes (1, 2, 4, 8) */
  size = 4;
  /** address size in bytes (4 with 67 prefix, else 8) */
  asize = 8;
  /** ModRM.reg (+REX.R) or opcode-embedded register; 8-bit: 16..19 = ah ch dh bh */
  reg = 0;
  /** register operand of ModRM.rm (+REX.B) when mod == 3, else NO_REG */
  rm = NO_REG;
  /** the instruction has a memory operand */
  hasMem = false;
  base = NO_REG;
  index = NO_REG;
  /** log2 of the SIB scale */
  scale = 0;
  /** displacement (sign-extended int32); for RIP-relative: absolute VAddr of the operand */
  disp = 0;
  seg = SEG_NONE;
  /** the memory operand is RIP-relative */
  ripRel = false;
  /** immediate, low 32 bits (int32) — sign/zero extended as the operand kind says */
  imm = 0;
  /** immediate high 32 bits (int32) */
  immHi = 0;
  /** second immediate (enter's Ib) */
  imm2 = 0;
  /** condition code (jcc/setcc/cmovcc), ModRM.reg group index for group opcodes */
  cc = 0;
  /** absolute target of a relative branch (VAddr) */
  target = 0;
  /** VEX.vvvv register (VEX-encoded instructions) */
  vreg = 0;
  rep = REP_NONE;
  lock = false;
  /** REX prefix present (changes 8-bit register naming) */
  rex = false;
  /** raw bytes (kept for the disassembler) */
  bytes: Uint8Array;
  /** raw prefixes seen (for the disassembler) */
  prefixes: number[] = [];
  /** where each field lies in `bytes` (the kernel's insn_get_* offsets) */
  layout: InsnLayout = NO_LAYOUT;
  /** the translator's tiering count and block (cpu/decodeCache.ts CachedInsn) */
  hot = 0;
  jit: object | null = null;

  constructor(def: OpDef, exec: ExecFn, bytes: Uint8Array) {
    this.def = def;
    this.exec = exec;
    this.bytes = bytes;
  }
}
