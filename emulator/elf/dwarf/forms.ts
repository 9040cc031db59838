/**
 * DWARF attribute forms (DWARF 2-5, plus the GNU extensions seen in the wild):
 * reading a value or skipping it.
 */
import { ByteReader, strAt } from '../reader';

export const DW_FORM = {
  addr: 0x01, block2: 0x03, block4: 0x04, data2: 0x05, data4: 0x06, data8: 0x07, string: 0x08,
  block: 0x09, block1: 0x0a, data1: 0x0b, flag: 0x0c, sdata: 0x0d, strp: 0x0e, udata: 0x0f,
  ref_addr: 0x10, ref1: 0x11, ref2: 0x12, ref4: 0x13, ref8: 0x14, ref_udata: 0x15, indirect: 0x16,
  sec_offset: 0x17, exprloc: 0x18, flag_present: 0x19, strx: 0x1a, addrx: 0x1b, ref_sup4: 0x1c,
  strp_sup: 0x1d, data16: 0x1e, line_strp: 0x1f, ref_sig8: 0x20, implicit_const: 0x21,
  loclistx: 0x22, rnglistx: 0x23, ref_sup8: 0x24, strx1: 0x25, strx2: 0x26, strx3: 0x27, strx4: 0x28,
  addrx1: 0x29, addrx2: 0x2a, addrx3: 0x2b, addrx4: 0x2c,
  GNU_addr_index: 0x1f01, GNU_str_index: 0x1f02, GNU_ref_alt: 0x1f20, GNU_strp_alt: 0x1f21,
} as const;

export interface FormContext {
  /** 4 (32-bit DWARF) or 8 (64-bit DWARF) */
  offsetSize: number;
  addressSize: number;
  version: number;
  str?: Uint8Array;
  lineStr?: Uint8Array;
}

export type FormValue =
  | { kind: 'uint'; value: bigint }
  | { kind: 'sint'; value: bigint }
  | { kind: 'string'; value: string }
  | { kind: 'block'; value: Uint8Array }
  /** a value this reader cannot interpret without more context (strx, addrx ...) */
  | { kind: 'other'; form: number };

function strFrom(table: Uint8Array | undefined, off: bigint, what: string): string {
  if (!table) throw new RangeError(`${what} reference but the section is missing`);
  if (off >= BigInt(table.length)) throw new RangeError(`${what} offset 0x${off.toString(16)} beyond the section (0x${table.length.toString(16)} bytes)`);
  return strAt(table, Number(off));
}

/** Read one attribute value of `form` at the reader's position. */
export function readForm(r: ByteReader, form: number, ctx: FormContext, implicitConst = 0n): FormValue {
  switch (form) {
    case DW_FORM.addr: return { kind: 'uint', value: r.uint(ctx.addressSize) };
    case DW_FORM.data1: case DW_FORM.ref1: case DW_FORM.flag: case DW_FORM.strx1: case DW_FORM.addrx1:
      return tag(form, r.uint(1));
    case DW_FORM.data2: case DW_FORM.ref2: case DW_FORM.strx2: case DW_FORM.addrx2:
      return tag(form, r.uint(2));
    case DW_FORM.strx3: case DW_FORM.addrx3:
      r.skip(3);
      return { kind: 'other', form };
    case DW_FORM.data4: case DW_FORM.ref4: case DW_FORM.ref_sup4: case DW_FORM.strx4: case DW_FORM.addrx4:
      return tag(form, r.uint(4));
    case DW_FORM.data8: case DW_FORM.ref8: case DW_FORM.ref_sig8: case DW_FORM.ref_sup8:
      return { kind: 'uint', value: r.uint(8) };
    case DW_FORM.data16: return { kind: 'block', value: r.slice(16) };
    case DW_FORM.sdata: return { kind: 'sint', value: r.slebBig() };
    case DW_FORM.udata: case DW_FORM.ref_udata: return { kind: 'uint', value: r.ulebBig() };
    case DW_FORM.strx: case DW_FORM.addrx: case DW_FORM.loclistx: case DW_FORM.rnglistx:
    case DW_FORM.GNU_addr_index: case DW_FORM.GNU_str_index:
      r.ulebBig();
      return { kind: 'other', form };
    case DW_FORM.string: return { kind: 'string', value: r.cstr() };
    case DW_FORM.strp: return { kind: 'string', value: strFrom(ctx.str, r.uint(ctx.offsetSize), '.debug_str') };
    case DW_FORM.line_strp: return { kind: 'string', value: strFrom(ctx.lineStr, r.uint(ctx.offsetSize), '.debug_line_str') };
    case DW_FORM.sec_offset: case DW_FORM.strp_sup: case DW_FORM.GNU_ref_alt: case DW_FORM.GNU_strp_alt:
      return { kind: 'uint', value: r.uint(ctx.offsetSize) };
    case DW_FORM.ref_addr: return { kind: 'uint', value: r.uint(ctx.version <= 2 ? ctx.addressSize : ctx.offsetSize) };
    case DW_FORM.block1: return { kind: 'block', value: r.slice(r.u8()) };
    case DW_FORM.block2: return { kind: 'block', value: r.slice(r.u16()) };
    case DW_FORM.block4: return { kind: 'block', value: r.slice(r.u32()) };
    case DW_FORM.block: case DW_FORM.exprloc: return { kind: 'block', value: r.slice(r.uleb()) };
    case DW_FORM.flag_present: return { kind: 'uint', value: 1n };
    case DW_FORM.implicit_const: return { kind: 'sint', value: implicitConst };
    case DW_FORM.indirect: return readForm(r, r.uleb(), ctx, implicitConst);
    default: throw new RangeError(`unknown DWARF form 0x${form.toString(16)}`);
  }
}

function tag(form: number, value: bigint): FormValue {
  const isIndex = form >= DW_FORM.strx1 && form <= DW_FORM.addrx4;
  return isIndex ? { kind: 'other', form } : { kind: 'uint', value };
}
