/**
 * A decoded x86_64 instruction: the table entry it matched plus every
 * operand field pre-decoded, and the executor bound at decode time, so the
 * run loop only calls `insn.exec(cpu, insn)`.
 */
import type { X86Cpu } from './cpu';
import type { OpDef } from './table';

export type ExecFn = (cpu: X86Cpu, i: Insn) => void;

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

  constructor(def: OpDef, exec: ExecFn, bytes: Uint8Array) {
    this.def = def;
    this.exec = exec;
    this.bytes = bytes;
  }
}
