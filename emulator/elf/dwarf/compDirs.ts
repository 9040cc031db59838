/**
 * DW_AT_comp_dir of each compilation unit, keyed by its DW_AT_stmt_list
 * (.debug_line offset). DWARF 2-4 line tables name files relative to the
 * compilation directory, which only .debug_info records.
 *
 * Only the first DIE of each unit (the CU DIE) is read. Failures are not
 * fatal: a unit whose CU DIE cannot be read keeps relative paths.
 */
import { ByteReader } from '../reader';
import { DW_FORM, FormContext, readForm } from './forms';

const DW_AT_stmt_list = 0x10;
const DW_AT_comp_dir = 0x1b;

export interface CompDirSections {
  info?: Uint8Array;
  abbrev?: Uint8Array;
  str?: Uint8Array;
  lineStr?: Uint8Array;
}

interface AbbrevAttr { at: number; form: number; implicit: bigint }

function readAbbrev(abbrev: Uint8Array, little: boolean, offset: number, code: number): AbbrevAttr[] | undefined {
  const r = new ByteReader(abbrev, little, offset);
  for (;;) {
    const c = r.uleb();
    if (c === 0) return undefined;
    r.uleb(); // tag
    r.u8(); // has children
    const attrs: AbbrevAttr[] = [];
    for (;;) {
      const at = r.uleb();
      const form = r.uleb();
      if (at === 0 && form === 0) break;
      const implicit = form === DW_FORM.implicit_const ? r.slebBig() : 0n;
      attrs.push({ at, form, implicit });
    }
    if (c === code) return attrs;
  }
}

export function readCompDirs(s: CompDirSections, little: boolean): Map<number, string> {
  const out = new Map<number, string>();
  if (!s.info || !s.abbrev) return out;
  const r = new ByteReader(s.info, little);
  while (r.pos < r.length) {
    let next = r.length;
    try {
      const { length: len, offsetSize } = r.initialLength();
      next = r.pos + Number(len);
      const version = r.u16();
      let addressSize: number;
      let abbrevOff: bigint;
      if (version >= 5) {
        const unitType = r.u8();
        addressSize = r.u8();
        abbrevOff = r.uint(offsetSize);
        if (unitType === 2 || unitType === 6) r.skip(8 + offsetSize); // type units: signature + type offset
        else if (unitType === 4 || unitType === 5) r.skip(8); // skeleton / split: dwo id
      } else {
        abbrevOff = r.uint(offsetSize);
        addressSize = r.u8();
      }
      const code = r.uleb();
      const attrs = code === 0 ? undefined : readAbbrev(s.abbrev, little, Number(abbrevOff), code);
      if (attrs) {
        const ctx: FormContext = { offsetSize, addressSize, version, str: s.str, lineStr: s.lineStr };
        let stmt: bigint | undefined;
        let dir: string | undefined;
        for (const a of attrs) {
          const v = readForm(r, a.form, ctx, a.implicit);
          if (a.at === DW_AT_stmt_list && v.kind === 'uint') stmt = v.value;
          if (a.at === DW_AT_comp_dir && v.kind === 'string') dir = v.value;
        }
        if (stmt !== undefined && dir !== undefined) out.set(Number(stmt), dir);
      }
    } catch {
      break; // malformed .debug_info: keep what was found
    }
    r.pos = next;
  }
  return out;
}
