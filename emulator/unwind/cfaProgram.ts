/**
 * DW_CFA_* call frame instructions: decoding, and running a CIE's initial
 * instructions plus an FDE's instructions into the table of unwind rows
 * (DWARF 5 section 6.4). Offsets are stored factored out (multiplied by the
 * CIE's alignment factors). DWARF expressions are decoded as opaque blocks:
 * a rule that needs one is reported by the unwinder as unsupported.
 */
import { ByteReader } from '../elf/reader';
import type { Cie, Fde } from './cfi';

export type CfaInsn =
  | { op: 'DW_CFA_nop' | 'DW_CFA_remember_state' | 'DW_CFA_restore_state' }
  | { op: 'DW_CFA_set_loc'; addr: bigint }
  /** delta in bytes (the operand multiplied by the code alignment factor) */
  | { op: 'DW_CFA_advance_loc' | 'DW_CFA_advance_loc1' | 'DW_CFA_advance_loc2' | 'DW_CFA_advance_loc4'; delta: bigint }
  | {
    op: 'DW_CFA_offset' | 'DW_CFA_offset_extended' | 'DW_CFA_offset_extended_sf' | 'DW_CFA_GNU_negative_offset_extended'
      | 'DW_CFA_val_offset' | 'DW_CFA_val_offset_sf' | 'DW_CFA_def_cfa' | 'DW_CFA_def_cfa_sf';
    reg: number; offset: bigint;
  }
  | { op: 'DW_CFA_restore' | 'DW_CFA_restore_extended' | 'DW_CFA_undefined' | 'DW_CFA_same_value' | 'DW_CFA_def_cfa_register'; reg: number }
  | { op: 'DW_CFA_register'; reg: number; reg2: number }
  | { op: 'DW_CFA_def_cfa_offset' | 'DW_CFA_def_cfa_offset_sf'; offset: bigint }
  | { op: 'DW_CFA_def_cfa_expression'; expr: Uint8Array }
  | { op: 'DW_CFA_expression' | 'DW_CFA_val_expression'; reg: number; expr: Uint8Array }
  | { op: 'DW_CFA_GNU_args_size'; size: bigint };

export type CfaRule =
  | { kind: 'regOffset'; reg: number; offset: bigint }
  | { kind: 'expression'; expr: Uint8Array };

export type RegRule =
  | { kind: 'undefined' }
  | { kind: 'sameValue' }
  /** saved at CFA+offset */
  | { kind: 'offset'; offset: bigint }
  /** the value is CFA+offset */
  | { kind: 'valOffset'; offset: bigint }
  /** saved in another register */
  | { kind: 'register'; reg: number }
  | { kind: 'expression'; expr: Uint8Array }
  | { kind: 'valExpression'; expr: Uint8Array };

export interface UnwindRow {
  /** first address the row applies to */
  loc: bigint;
  cfa: CfaRule;
  /** rules by DWARF register number; a register not listed has no rule (same value for callee-saved registers) */
  regs: Map<number, RegRule>;
}

/** A CFA program the unwinder cannot use (bad opcode, truncated operand, misuse). */
export class CfaProgramError extends Error {}

/**
 * Decode a CFA instruction stream. `addressSize` is the width of
 * DW_CFA_set_loc's operand (absolute addresses; .eh_frame producers do not
 * emit set_loc).
 */
export function decodeCfaProgram(bytes: Uint8Array, cie: Cie, little: boolean): CfaInsn[] {
  const r = new ByteReader(bytes, little);
  const out: CfaInsn[] = [];
  const daf = cie.dataAlign;
  const caf = cie.codeAlign;
  try {
    while (!r.atEnd) {
      const b = r.u8();
      const hi = b & 0xc0;
      const low = b & 0x3f;
      if (hi === 0x40) { out.push({ op: 'DW_CFA_advance_loc', delta: BigInt(low) * caf }); continue; }
      if (hi === 0x80) { out.push({ op: 'DW_CFA_offset', reg: low, offset: r.ulebBig() * daf }); continue; }
      if (hi === 0xc0) { out.push({ op: 'DW_CFA_restore', reg: low }); continue; }
      switch (b) {
        case 0x00: out.push({ op: 'DW_CFA_nop' }); break;
        case 0x01: out.push({ op: 'DW_CFA_set_loc', addr: r.uint(cie.addressSize) }); break;
        case 0x02: out.push({ op: 'DW_CFA_advance_loc1', delta: BigInt(r.u8()) * caf }); break;
        case 0x03: out.push({ op: 'DW_CFA_advance_loc2', delta: BigInt(r.u16()) * caf }); break;
        case 0x04: out.push({ op: 'DW_CFA_advance_loc4', delta: BigInt(r.u32()) * caf }); break;
        case 0x05: out.push({ op: 'DW_CFA_offset_extended', reg: r.uleb(), offset: r.ulebBig() * daf }); break;
        case 0x06: out.push({ op: 'DW_CFA_restore_extended', reg: r.uleb() }); break;
        case 0x07: out.push({ op: 'DW_CFA_undefined', reg: r.uleb() }); break;
        case 0x08: out.push({ op: 'DW_CFA_same_value', reg: r.uleb() }); break;
        case 0x09: out.push({ op: 'DW_CFA_register', reg: r.uleb(), reg2: r.uleb() }); break;
        case 0x0a: out.push({ op: 'DW_CFA_remember_state' }); break;
        case 0x0b: out.push({ op: 'DW_CFA_restore_state' }); break;
        case 0x0c: out.push({ op: 'DW_CFA_def_cfa', reg: r.uleb(), offset: r.ulebBig() }); break;
        case 0x0d: out.push({ op: 'DW_CFA_def_cfa_register', reg: r.uleb() }); break;
        case 0x0e: out.push({ op: 'DW_CFA_def_cfa_offset', offset: r.ulebBig() }); break;
        case 0x0f: out.push({ op: 'DW_CFA_def_cfa_expression', expr: r.slice(r.uleb()) }); break;
        case 0x10: { const reg = r.uleb(); out.push({ op: 'DW_CFA_expression', reg, expr: r.slice(r.uleb()) }); break; }
        case 0x11: out.push({ op: 'DW_CFA_offset_extended_sf', reg: r.uleb(), offset: r.slebBig() * daf }); break;
        case 0x12: out.push({ op: 'DW_CFA_def_cfa_sf', reg: r.uleb(), offset: r.slebBig() * daf }); break;
        case 0x13: out.push({ op: 'DW_CFA_def_cfa_offset_sf', offset: r.slebBig() * daf }); break;
        case 0x14: out.push({ op: 'DW_CFA_val_offset', reg: r.uleb(), offset: r.ulebBig() * daf }); break;
        case 0x15: out.push({ op: 'DW_CFA_val_offset_sf', reg: r.uleb(), offset: r.slebBig() * daf }); break;
        case 0x16: { const reg = r.uleb(); out.push({ op: 'DW_CFA_val_expression', reg, expr: r.slice(r.uleb()) }); break; }
        case 0x2e: out.push({ op: 'DW_CFA_GNU_args_size', size: r.ulebBig() }); break;
        case 0x2f: out.push({ op: 'DW_CFA_GNU_negative_offset_extended', reg: r.uleb(), offset: -(r.ulebBig() * daf) }); break;
        default:
          throw new CfaProgramError(`unsupported call frame instruction 0x${b.toString(16)} at byte ${r.pos - 1}`);
      }
    }
  } catch (e) {
    if (e instanceof RangeError) throw new CfaProgramError(`truncated call frame instruction: ${e.message}`);
    throw e;
  }
  return out;
}

interface State { cfa: CfaRule; regs: Map<number, RegRule> }

function copy(s: State): State {
  return { cfa: s.cfa, regs: new Map(s.regs) };
}

function run(insns: readonly CfaInsn[], st: State, initial: Map<number, RegRule> | null, cie: Cie, loc: bigint,
  emit: ((loc: bigint, s: State) => void) | null): { st: State; loc: bigint } {
  const stack: State[] = [];
  const mask = (1n << BigInt(cie.addressSize * 8)) - 1n;
  const needCie = (what: string): Map<number, RegRule> => {
    if (!initial) throw new CfaProgramError(`${what} in a CIE's initial instructions`);
    return initial;
  };
  for (const i of insns) {
    switch (i.op) {
      case 'DW_CFA_nop': case 'DW_CFA_GNU_args_size': break;
      case 'DW_CFA_set_loc':
      case 'DW_CFA_advance_loc': case 'DW_CFA_advance_loc1': case 'DW_CFA_advance_loc2': case 'DW_CFA_advance_loc4': {
        if (!emit) throw new CfaProgramError(`${i.op} in a CIE's initial instructions`);
        emit(loc, st);
        loc = i.op === 'DW_CFA_set_loc' ? i.addr : (loc + i.delta) & mask;
        break;
      }
      case 'DW_CFA_offset': case 'DW_CFA_offset_extended': case 'DW_CFA_offset_extended_sf': case 'DW_CFA_GNU_negative_offset_extended':
        st.regs.set(i.reg, { kind: 'offset', offset: i.offset }); break;
      case 'DW_CFA_val_offset': case 'DW_CFA_val_offset_sf':
        st.regs.set(i.reg, { kind: 'valOffset', offset: i.offset }); break;
      case 'DW_CFA_restore': case 'DW_CFA_restore_extended': {
        const rule = needCie(i.op).get(i.reg);
        if (rule) st.regs.set(i.reg, rule); else st.regs.delete(i.reg);
        break;
      }
      case 'DW_CFA_undefined': st.regs.set(i.reg, { kind: 'undefined' }); break;
      case 'DW_CFA_same_value': st.regs.set(i.reg, { kind: 'sameValue' }); break;
      case 'DW_CFA_register': st.regs.set(i.reg, { kind: 'register', reg: i.reg2 }); break;
      case 'DW_CFA_remember_state': stack.push(copy(st)); break;
      case 'DW_CFA_restore_state': {
        const s = stack.pop();
        if (!s) throw new CfaProgramError('DW_CFA_restore_state with nothing remembered');
        st = s;
        break;
      }
      case 'DW_CFA_def_cfa': case 'DW_CFA_def_cfa_sf':
        st.cfa = { kind: 'regOffset', reg: i.reg, offset: i.offset }; break;
      case 'DW_CFA_def_cfa_register':
        if (st.cfa.kind !== 'regOffset') throw new CfaProgramError('DW_CFA_def_cfa_register after a CFA expression');
        st.cfa = { kind: 'regOffset', reg: i.reg, offset: st.cfa.offset }; break;
      case 'DW_CFA_def_cfa_offset': case 'DW_CFA_def_cfa_offset_sf':
        if (st.cfa.kind !== 'regOffset') throw new CfaProgramError(`${i.op} after a CFA expression`);
        st.cfa = { kind: 'regOffset', reg: st.cfa.reg, offset: i.offset }; break;
      case 'DW_CFA_def_cfa_expression': st.cfa = { kind: 'expression', expr: i.expr }; break;
      case 'DW_CFA_expression': st.regs.set(i.reg, { kind: 'expression', expr: i.expr }); break;
      case 'DW_CFA_val_expression': st.regs.set(i.reg, { kind: 'valExpression', expr: i.expr }); break;
    }
  }
  return { st, loc };
}

/** The row the CIE's initial instructions set up (what DW_CFA_restore goes back to). */
export function initialRow(cie: Cie, little: boolean): { cfa: CfaRule; regs: Map<number, RegRule> } {
  return run(decodeCfaProgram(cie.initialInstructions, cie, little), { cfa: { kind: 'regOffset', reg: -1, offset: 0n }, regs: new Map() }, null, cie, 0n, null).st;
}

/** Every row of an FDE's table, ascending by location (a row per advance, then the final one). */
export function unwindRows(fde: Fde, little: boolean): UnwindRow[] {
  const init = initialRow(fde.cie, little);
  const rows: UnwindRow[] = [];
  const emit = (loc: bigint, s: State): void => { rows.push({ loc, cfa: s.cfa, regs: new Map(s.regs) }); };
  const last = run(decodeCfaProgram(fde.instructions, fde.cie, little), copy(init), init.regs, fde.cie, fde.pcBegin, emit);
  emit(last.loc, last.st);
  return rows;
}

/** The row in effect at pc (the last row whose location is <= pc). */
export function rowAt(rows: readonly UnwindRow[], pc: bigint): UnwindRow | undefined {
  let found: UnwindRow | undefined;
  for (const r of rows) {
    if (r.loc > pc) break;
    found = r;
  }
  return found;
}
