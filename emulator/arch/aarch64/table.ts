/**
 * The A64 encoding table: every row of every instruction class, in one
 * list (decodetree-like: word & mask === match selects the row; the row's
 * decode fills the fields and binds the executor; its fmt disassembles).
 * It feeds the interpreter's decoder, the disassembler and the kprobes
 * instruction classification.
 */
import { Row } from './insn';
import { DATA_IMM_ROWS } from './exec/dataImm';
import { DATA_REG_ROWS } from './exec/dataReg';
import { LOAD_STORE_ROWS } from './exec/loadStore';
import { ATOMIC_ROWS } from './exec/atomics';
import { BRANCH_ROWS } from './exec/branch';
import { SYSTEM_ROWS } from './exec/system';
import { FPSIMD_ROWS } from './exec/fpsimd';

/** the more specific system/branch rows first (their masks are wider) */
export const A64_TABLE: readonly Row[] = [
  ...SYSTEM_ROWS, ...BRANCH_ROWS, ...DATA_IMM_ROWS, ...DATA_REG_ROWS, ...ATOMIC_ROWS, ...FPSIMD_ROWS, ...LOAD_STORE_ROWS,
];

/** rows by the top-level op0 field (bits 25..28) for a short scan */
const BY_OP0: Row[][] = Array.from({ length: 16 }, (_, op0) => A64_TABLE.filter(r => rowFixesOp0(r, op0)));
/** whether a word with this op0 can match the row */
function rowFixesOp0(r: Row, op0: number): boolean {
  const m = (r.mask >>> 25) & 0xf;
  return (op0 & m) === ((r.match >>> 25) & m);
}

/** rows that may match the word (same op0) */
export function candidateRows(w: number): readonly Row[] {
  return BY_OP0[(w >>> 25) & 0xf];
}
