/**
 * The DWARF vocabulary the .debug_info reader (info.ts) and the scope, type
 * and value readers share: DW_TAG / DW_AT / DW_ATE codes, the DIE and unit
 * shapes, and an attribute's raw value as read from its form (indexes and
 * unit-relative references kept for DebugInfo.attr() to resolve).
 */
import type { ByteReader } from '../reader';
import { DW_FORM, type FormContext, readForm } from './forms';

/** DW_TAG names (DWARF 5 table, the ones compilers emit for C) */
export const DW_TAG: Readonly<Record<number, string>> = {
  0x01: 'array_type', 0x02: 'class_type', 0x03: 'entry_point', 0x04: 'enumeration_type', 0x05: 'formal_parameter',
  0x08: 'imported_declaration', 0x0a: 'label', 0x0b: 'lexical_block', 0x0d: 'member', 0x0f: 'pointer_type',
  0x10: 'reference_type', 0x11: 'compile_unit', 0x12: 'string_type', 0x13: 'structure_type', 0x15: 'subroutine_type',
  0x16: 'typedef', 0x17: 'union_type', 0x18: 'unspecified_parameters', 0x19: 'variant', 0x1a: 'common_block',
  0x1b: 'common_inclusion', 0x1c: 'inheritance', 0x1d: 'inlined_subroutine', 0x1e: 'module', 0x1f: 'ptr_to_member_type',
  0x20: 'set_type', 0x21: 'subrange_type', 0x22: 'with_stmt', 0x23: 'access_declaration', 0x24: 'base_type',
  0x25: 'catch_block', 0x26: 'const_type', 0x27: 'constant', 0x28: 'enumerator', 0x29: 'file_type', 0x2a: 'friend',
  0x2e: 'subprogram', 0x34: 'variable', 0x35: 'volatile_type', 0x37: 'restrict_type', 0x3b: 'unspecified_type',
  0x3c: 'partial_unit', 0x3d: 'imported_unit', 0x41: 'type_unit', 0x42: 'rvalue_reference_type', 0x43: 'template_alias',
  0x44: 'coarray_type', 0x45: 'generic_subrange', 0x46: 'dynamic_type', 0x47: 'atomic_type', 0x48: 'call_site',
  0x49: 'call_site_parameter', 0x4a: 'skeleton_unit', 0x4b: 'immutable_type',
  0x4109: 'GNU_call_site', 0x410a: 'GNU_call_site_parameter',
};

/** DW_TAG codes the scope, type and value readers test for */
export const TAG = {
  formal_parameter: 0x05, lexical_block: 0x0b, pointer_type: 0x0f, structure_type: 0x13, typedef: 0x16, union_type: 0x17,
  inlined_subroutine: 0x1d, base_type: 0x24, const_type: 0x26, enumerator: 0x28, enumeration_type: 0x04, array_type: 0x01,
  subprogram: 0x2e, variable: 0x34, volatile_type: 0x35, subroutine_type: 0x15, restrict_type: 0x37, subrange_type: 0x21,
  atomic_type: 0x47,
} as const;

/** DW_ATE base type encodings */
export const DW_ATE = { boolean: 0x02, float: 0x04, signed: 0x05, signed_char: 0x06, unsigned: 0x07, unsigned_char: 0x08 } as const;

/** DW_AT codes the debugger reads */
export const DW_AT = {
  sibling: 0x01, location: 0x02, name: 0x03, byte_size: 0x0b, stmt_list: 0x10, low_pc: 0x11, high_pc: 0x12,
  language: 0x13, comp_dir: 0x1b, const_value: 0x1c, inline: 0x20, producer: 0x25, prototyped: 0x27,
  lower_bound: 0x22, count: 0x37, upper_bound: 0x2f, abstract_origin: 0x31, bit_size: 0x0d, bit_offset: 0x0c,
  data_member_location: 0x38, decl_file: 0x3a, decl_line: 0x3b, declaration: 0x3c, encoding: 0x3e, external: 0x3f,
  frame_base: 0x40, specification: 0x47, type: 0x49, ranges: 0x55, data_bit_offset: 0x6b, call_file: 0x58,
  call_line: 0x59, call_column: 0x57, entry_pc: 0x52, str_offsets_base: 0x72, addr_base: 0x73, rnglists_base: 0x74, loclists_base: 0x8c,
  linkage_name: 0x6e,
} as const;

/** An attribute value as read: resolved lazily by DebugInfo.attr() */
export type RawValue =
  | { kind: 'uint'; value: bigint }
  /** DW_FORM_addr: an address (DW_AT_high_pc of this class is absolute, of a constant class an offset) */
  | { kind: 'addr'; value: bigint }
  | { kind: 'sint'; value: bigint }
  | { kind: 'string'; value: string }
  | { kind: 'block'; value: Uint8Array }
  | { kind: 'strx'; index: bigint }
  | { kind: 'addrx'; index: bigint }
  | { kind: 'ref'; offset: number }
  | { kind: 'loclistx'; index: bigint }
  | { kind: 'rnglistx'; index: bigint }
  | { kind: 'secOffset'; value: bigint };

/** A resolved attribute value. */
export type AttrValue =
  | { kind: 'uint'; value: bigint }
  | { kind: 'addr'; value: bigint }
  | { kind: 'sint'; value: bigint }
  | { kind: 'string'; value: string }
  | { kind: 'block'; value: Uint8Array }
  /** a .debug_info offset (any unit) */
  | { kind: 'ref'; offset: number }
  /** an offset into .debug_loclists / .debug_rnglists / .debug_loc / .debug_ranges (bases applied) */
  | { kind: 'secOffset'; value: bigint };

export interface Die {
  /** .debug_info offset */
  readonly offset: number;
  readonly tag: number;
  readonly attrs: ReadonlyMap<number, RawValue>;
  readonly parent: Die | null;
  readonly children: Die[];
  readonly unit: Unit;
}

export interface Unit {
  /** .debug_info offset of the unit header */
  readonly offset: number;
  /** offset of the next unit */
  readonly end: number;
  readonly version: number;
  /** DW_UT_* (DWARF 5), 1 (compile) before 5 */
  readonly unitType: number;
  readonly offsetSize: 4 | 8;
  readonly addressSize: number;
  readonly abbrevOffset: number;
  /** offset of the first DIE */
  readonly dieOffset: number;
  /** why the unit cannot be read (its DIEs are then empty) */
  error?: string;
}

/** a 3-byte unsigned (strx3 / addrx3) */
function u24(r: ByteReader): bigint {
  const b = [r.u8(), r.u8(), r.u8()];
  return BigInt(r.little ? b[0] | (b[1] << 8) | (b[2] << 16) : (b[0] << 16) | (b[1] << 8) | b[2]);
}

const REF_FORMS: ReadonlySet<number> = new Set([DW_FORM.ref1, DW_FORM.ref2, DW_FORM.ref4, DW_FORM.ref8, DW_FORM.ref_udata]);

/** One attribute value, keeping what readForm cannot interpret without the unit (indexes, unit-relative references). */
export function readRaw(r: ByteReader, form: number, ctx: FormContext, implicit: bigint, unitOffset: number): RawValue {
  switch (form) {
    case DW_FORM.addr: return { kind: 'addr', value: r.uint(ctx.addressSize) };
    case DW_FORM.strx: case DW_FORM.GNU_str_index: return { kind: 'strx', index: r.ulebBig() };
    case DW_FORM.strx1: return { kind: 'strx', index: r.uint(1) };
    case DW_FORM.strx2: return { kind: 'strx', index: r.uint(2) };
    case DW_FORM.strx3: return { kind: 'strx', index: u24(r) };
    case DW_FORM.strx4: return { kind: 'strx', index: r.uint(4) };
    case DW_FORM.addrx: case DW_FORM.GNU_addr_index: return { kind: 'addrx', index: r.ulebBig() };
    case DW_FORM.addrx1: return { kind: 'addrx', index: r.uint(1) };
    case DW_FORM.addrx2: return { kind: 'addrx', index: r.uint(2) };
    case DW_FORM.addrx3: return { kind: 'addrx', index: u24(r) };
    case DW_FORM.addrx4: return { kind: 'addrx', index: r.uint(4) };
    case DW_FORM.loclistx: return { kind: 'loclistx', index: r.ulebBig() };
    case DW_FORM.rnglistx: return { kind: 'rnglistx', index: r.ulebBig() };
    case DW_FORM.sec_offset: return { kind: 'secOffset', value: r.uint(ctx.offsetSize) };
    case DW_FORM.ref_addr: return { kind: 'ref', offset: Number(r.uint(ctx.version <= 2 ? ctx.addressSize : ctx.offsetSize)) };
  }
  const v = readForm(r, form, ctx, implicit);
  if (REF_FORMS.has(form) && v.kind === 'uint') return { kind: 'ref', offset: unitOffset + Number(v.value) };
  if (v.kind === 'other') throw new RangeError(`form 0x${form.toString(16)} cannot be read here`);
  return v;
}
