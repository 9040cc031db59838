/**
 * Text forms of call frame instructions and unwind rows, in the notation of
 * llvm-dwarfdump --debug-frame ("DW_CFA_offset: RIP -8",
 * "CFA=RSP+8: RBP=[CFA-16], RIP=[CFA-8]"), register names supplied by the
 * caller (DWARF numbering is per architecture).
 */
import type { CfaInsn, CfaRule, RegRule } from './cfaProgram';

export type RegName = (dwarfReg: number) => string;

function signed(v: bigint): string {
  return v < 0n ? `${v}` : `+${v}`;
}

export function formatCfaInsn(i: CfaInsn, name: RegName): string {
  switch (i.op) {
    case 'DW_CFA_nop': case 'DW_CFA_remember_state': case 'DW_CFA_restore_state': return `${i.op}:`;
    case 'DW_CFA_set_loc': return `${i.op}: 0x${i.addr.toString(16)}`;
    case 'DW_CFA_advance_loc': case 'DW_CFA_advance_loc1': case 'DW_CFA_advance_loc2': case 'DW_CFA_advance_loc4': return `${i.op}: ${i.delta}`;
    case 'DW_CFA_def_cfa': case 'DW_CFA_def_cfa_sf': return `${i.op}: ${name(i.reg)} ${signed(i.offset)}`;
    case 'DW_CFA_offset': case 'DW_CFA_offset_extended': case 'DW_CFA_offset_extended_sf': case 'DW_CFA_GNU_negative_offset_extended':
    case 'DW_CFA_val_offset': case 'DW_CFA_val_offset_sf':
      return `${i.op}: ${name(i.reg)} ${i.offset}`;
    case 'DW_CFA_restore': case 'DW_CFA_restore_extended': case 'DW_CFA_undefined': case 'DW_CFA_same_value': case 'DW_CFA_def_cfa_register':
      return `${i.op}: ${name(i.reg)}`;
    case 'DW_CFA_register': return `${i.op}: ${name(i.reg)} ${name(i.reg2)}`;
    case 'DW_CFA_def_cfa_offset': case 'DW_CFA_def_cfa_offset_sf': return `${i.op}: ${signed(i.offset)}`;
    case 'DW_CFA_def_cfa_expression': return `${i.op}: <${i.expr.length} bytes>`;
    case 'DW_CFA_expression': case 'DW_CFA_val_expression': return `${i.op}: ${name(i.reg)} <${i.expr.length} bytes>`;
    case 'DW_CFA_GNU_args_size': return `${i.op}: ${i.size}`;
  }
}

function formatCfa(c: CfaRule, name: RegName): string {
  if (c.kind === 'expression') return 'CFA=<expression>';
  return `CFA=${name(c.reg)}${c.offset === 0n ? '' : signed(c.offset)}`;
}

function formatRule(r: RegRule, name: RegName): string {
  switch (r.kind) {
    case 'undefined': return 'undefined';
    case 'sameValue': return 'same';
    case 'offset': return `[CFA${signed(r.offset)}]`;
    case 'valOffset': return `CFA${signed(r.offset)}`;
    case 'register': return name(r.reg);
    case 'expression': return '[<expression>]';
    case 'valExpression': return '<expression>';
  }
}

/** "CFA=RSP+16: RBP=[CFA-16], RIP=[CFA-8]" (registers by DWARF number) */
export function formatRow(row: { cfa: CfaRule; regs: ReadonlyMap<number, RegRule> }, name: RegName): string {
  const regs = [...row.regs.entries()].sort((a, b) => a[0] - b[0]).map(([reg, rule]) => `${name(reg)}=${formatRule(rule, name)}`);
  return formatCfa(row.cfa, name) + (regs.length ? `: ${regs.join(', ')}` : '');
}
