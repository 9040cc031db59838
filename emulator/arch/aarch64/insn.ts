/**
 * A decoded A64 instruction: the table row it matched, its operand fields
 * pre-decoded (registers already mapped to SP / zero-register slots, see
 * regs.ts) and the executor bound at decode time, so the run loop only
 * calls `insn.exec(cpu, insn)`. Every instruction has the same object shape.
 */
import type { A64Cpu } from './cpu';

export type ExecFn = (cpu: A64Cpu, i: A64Insn) => void;

/** One row of the encoding table (decodetree-like): word & mask === match. */
export interface Row {
  readonly name: string;
  readonly mask: number;
  readonly match: number;
  /** Fill the fields and pick exec; false when this encoding is unallocated. */
  readonly decode: (w: number, i: A64Insn) => boolean;
  /** Disassembly (llvm-objdump's mnemonic and operands). */
  readonly fmt: (i: A64Insn) => readonly [string, string];
  /** control-flow class for kprobes and the debugger (default 'none') */
  readonly flow?: 'jump' | 'condJump' | 'call' | 'ret' | 'indirectJump' | 'indirectCall' | 'trap' | 'halt';
  /** pc-relative (adr, adrp, literal loads, relative branches) */
  readonly pcRel?: boolean;
}

export class A64Insn {
  exec: ExecFn = () => { /* set by decode */ };
  row: Row | null = null;
  /** VAddr of the instruction */
  addr = 0;
  readonly len = 4;
  next = 0;
  /** the translator's tiering count and block (cpu/decodeCache.ts CachedInsn) */
  hot = 0;
  jit: object | null = null;
  word = 0;
  /** 1: 64-bit operation (sf), 0: 32-bit */
  sf = 0;
  /** destination slot (write context), first source, second source, third source / second destination */
  d = 0;
  n = 0;
  m = 0;
  a = 0;
  /** raw register numbers as encoded (0..31), for the disassembler */
  rd = 0;
  rn = 0;
  rm = 0;
  ra = 0;
  /** immediates: imm low 32 bits (int32), immHi high 32 bits (int32) */
  imm = 0;
  immHi = 0;
  /** second / third small immediates (shift amounts, lsb/width, nzcv, scale...) */
  imm2 = 0;
  imm3 = 0;
  /** sub-operation selector (shift type, extend type, opcode, condition...) */
  op = 0;
  op2 = 0;
  cond = 0;
  /** access size in bytes for loads/stores */
  size = 0;
  /** VAddr target of a pc-relative instruction */
  target = 0;
  /** 64-bit masks of bitfield instructions (wmask, tmask) and logical immediates */
  big = 0n;
  big2 = 0n;
  /** 32-bit constants of bitfield masks (wmask lo/hi, tmask lo/hi) */
  k0 = 0;
  k1 = 0;
  k2 = 0;
  k3 = 0;
}
