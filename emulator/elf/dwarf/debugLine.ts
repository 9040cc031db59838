/**
 * DWARF .debug_line (versions 2-5, 32- and 64-bit DWARF): unit headers and
 * the line-number state machine (standard, extended and special opcodes).
 */
import { posix } from 'node:path';
import { ImageError, LineRow, LineTable } from '../types';
import { ByteReader } from '../reader';
import { FormContext, readForm } from './forms';
import { ElfLineTable } from './lineTable';

const DW_LNS = {
  copy: 1, advance_pc: 2, advance_line: 3, set_file: 4, set_column: 5, negate_stmt: 6,
  set_basic_block: 7, const_add_pc: 8, fixed_advance_pc: 9, set_prologue_end: 10,
  set_epilogue_begin: 11, set_isa: 12,
} as const;
const DW_LNE = { end_sequence: 1, set_address: 2, define_file: 3, set_discriminator: 4 } as const;
const DW_LNCT = { path: 1, directory_index: 2, timestamp: 3, size: 4, MD5: 5 } as const;

export interface DebugLineSections {
  line: Uint8Array;
  str?: Uint8Array;
  lineStr?: Uint8Array;
}

export interface DebugLineOptions {
  little: boolean;
  /** names the image in errors */
  file: string;
  /** DW_AT_comp_dir by .debug_line offset (DW_AT_stmt_list), for DWARF < 5 relative paths */
  compDirs?: { get(offset: number): string | undefined };
  /** address size for DWARF < 5 units (whose header does not say): 4 for ELF32, 8 for ELF64 */
  addressSize?: number;
}

/** One line-table unit's header, as read. */
export interface LineUnitHeader {
  offset: number;
  version: number;
  /** 4 or 8 */
  offsetSize: number;
  addressSize: number;
  minInstLength: number;
  maxOpsPerInst: number;
  defaultIsStmt: boolean;
  lineBase: number;
  lineRange: number;
  opcodeBase: number;
  includeDirs: string[];
  /** resolved paths, indexed as the line program indexes them (v5: from 0; v2-4: from 1, [0] unused) */
  files: string[];
}

/** Row plus the extra state llvm-dwarfdump shows (discriminator, flags). */
export interface FullLineRow extends LineRow {
  /** file index as the line program recorded it */
  fileIndex: number;
  discriminator: number;
  isa: number;
  basicBlock: boolean;
  prologueEnd: boolean;
  epilogueBegin: boolean;
  /** .debug_line offset of the unit */
  unit: number;
}

export interface ParsedDebugLine {
  units: LineUnitHeader[];
  rows: FullLineRow[];
}

/** Parse every unit of .debug_line into a LineTable. Errors are ImageError naming the offset. */
export function parseDebugLine(sections: DebugLineSections, opts: DebugLineOptions): LineTable {
  const parsed = parseDebugLineUnits(sections, opts);
  return new ElfLineTable(parsed.rows, parsed.units);
}

export function parseDebugLineUnits(sections: DebugLineSections, opts: DebugLineOptions): ParsedDebugLine {
  const r = new ByteReader(sections.line, opts.little);
  const units: LineUnitHeader[] = [];
  const rows: FullLineRow[] = [];
  while (r.pos < r.length) {
    const start = r.pos;
    try {
      parseUnit(r, sections, opts, units, rows);
    } catch (e) {
      if (e instanceof ImageError) throw e;
      const msg = e instanceof Error ? e.message : String(e);
      throw new ImageError(opts.file, `malformed .debug_line unit at offset 0x${start.toString(16)}: ${msg}`);
    }
  }
  return { units, rows };
}

/** joined paths: a vmlinux's thousands of units name the same few thousand headers (bounded; cleared when full) */
const joined = new Map<string, string>();

function joinPath(dir: string, name: string): string {
  const key = dir + '\0' + name;
  let p = joined.get(key);
  if (p === undefined) {
    p = name.startsWith('/') || dir === '' ? posix.normalize(name) : posix.normalize(posix.join(dir, name));
    if (joined.size >= 100_000) joined.clear();
    joined.set(key, p);
  }
  return p;
}

/**
 * One line-table unit at a .debug_line offset: its header, and its rows
 * appended to `rows` when given (without, the line program is not run).
 * Returns the offset of the next unit. Errors are ImageError naming the offset.
 */
export function readLineUnit(sections: DebugLineSections, opts: DebugLineOptions, offset: number,
  rows?: FullLineRow[]): { header: LineUnitHeader; next: number } {
  const r = new ByteReader(sections.line, opts.little, offset);
  const units: LineUnitHeader[] = [];
  try {
    parseUnit(r, sections, opts, units, rows);
  } catch (e) {
    if (e instanceof ImageError) throw e;
    const msg = e instanceof Error ? e.message : String(e);
    throw new ImageError(opts.file, `malformed .debug_line unit at offset 0x${offset.toString(16)}: ${msg}`);
  }
  return { header: units[0], next: r.pos };
}

function parseUnit(r: ByteReader, sections: DebugLineSections, opts: DebugLineOptions,
  units: LineUnitHeader[], rows: FullLineRow[] | undefined): void {
  const offset = r.pos;
  const { length: unitLength, offsetSize } = r.initialLength();
  if (offsetSize === 4 && unitLength >= 0xfffffff0n) {
    throw new RangeError(`reserved unit length 0x${unitLength.toString(16)}`);
  }
  const end = BigInt(r.pos) + unitLength;
  if (end > BigInt(r.length)) throw new RangeError(`unit length 0x${unitLength.toString(16)} runs past the end of the section`);
  const unitEnd = Number(end);
  const version = r.u16();
  if (version < 2 || version > 5) throw new RangeError(`unsupported version ${version} (2-5 supported)`);
  let addressSize = 0;
  if (version >= 5) {
    addressSize = r.u8();
    const segSel = r.u8();
    if (segSel !== 0) throw new RangeError(`segment selector size ${segSel} not supported`);
    if (addressSize !== 4 && addressSize !== 8) throw new RangeError(`address size ${addressSize} not supported`);
  }
  const headerLength = r.uint(offsetSize);
  const programStart = r.pos + Number(headerLength);
  if (programStart > unitEnd) throw new RangeError(`header length 0x${headerLength.toString(16)} runs past the unit`);
  const minInstLength = r.u8();
  const maxOpsPerInst = version >= 4 ? r.u8() : 1;
  if (maxOpsPerInst === 0) throw new RangeError('maximum_operations_per_instruction is 0');
  const defaultIsStmt = r.u8() !== 0;
  const lineBase = r.i8();
  const lineRange = r.u8();
  if (lineRange === 0) throw new RangeError('line_range is 0');
  const opcodeBase = r.u8();
  const stdLengths: number[] = [];
  for (let i = 1; i < opcodeBase; i++) stdLengths.push(r.u8());

  const ctx: FormContext = { offsetSize, addressSize: addressSize || 8, version, str: sections.str, lineStr: sections.lineStr };
  const includeDirs: string[] = [];
  const files: string[] = [];
  const compDir = version < 5 ? opts.compDirs?.get(offset) ?? '' : '';
  let v4Dirs: string[] = [];
  if (version >= 5) {
    const dirEntries = readEntryTable(r, ctx);
    for (const e of dirEntries) includeDirs.push(e.path);
    const comp = includeDirs[0] ?? '';
    const dirPath = (i: number): string => {
      const d = includeDirs[i];
      if (d === undefined) throw new RangeError(`file names a directory index ${i} beyond the ${includeDirs.length} directories`);
      return i === 0 ? d : joinPath(comp, d);
    };
    for (const e of readEntryTable(r, ctx)) files.push(joinPath(dirPath(e.dirIndex), e.path));
  } else {
    for (;;) {
      const d = r.cstr();
      if (d === '') break;
      includeDirs.push(d);
    }
    v4Dirs = includeDirs.map((d) => joinPath(compDir, d));
    files.push(''); // file numbers start at 1
    for (;;) {
      const name = r.cstr();
      if (name === '') break;
      const dir = r.uleb();
      r.uleb(); r.uleb(); // mtime, length
      files.push(joinPath(v4DirPath(v4Dirs, compDir, dir), name));
    }
  }
  const header: LineUnitHeader = {
    offset, version, offsetSize, addressSize: addressSize || opts.addressSize || 8, minInstLength, maxOpsPerInst, defaultIsStmt,
    lineBase, lineRange, opcodeBase, includeDirs, files,
  };
  units.push(header);
  r.pos = programStart;
  if (rows) runProgram(r, unitEnd, header, stdLengths, rows, v4Dirs, compDir);
  r.pos = unitEnd;
}

function v4DirPath(dirs: string[], compDir: string, index: number): string {
  if (index === 0) return compDir;
  const d = dirs[index - 1];
  if (d === undefined) throw new RangeError(`file names a directory index ${index} beyond the ${dirs.length} directories`);
  return d;
}

interface Entry { path: string; dirIndex: number }

/** DWARF 5 directory/file entry table: formats then entries. */
function readEntryTable(r: ByteReader, ctx: FormContext): Entry[] {
  const formatCount = r.u8();
  const formats: Array<[number, number]> = [];
  for (let i = 0; i < formatCount; i++) formats.push([r.uleb(), r.uleb()]);
  const count = r.uleb();
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const e: Entry = { path: '', dirIndex: 0 };
    for (const [content, form] of formats) {
      const v = readForm(r, form, ctx);
      if (content === DW_LNCT.path) {
        if (v.kind !== 'string') throw new RangeError(`DW_LNCT_path with form 0x${form.toString(16)} (not a string form)`);
        e.path = v.value;
      } else if (content === DW_LNCT.directory_index) {
        if (v.kind !== 'uint') throw new RangeError(`DW_LNCT_directory_index with form 0x${form.toString(16)}`);
        e.dirIndex = Number(v.value);
      }
      // timestamp, size, MD5 and vendor content types are read and ignored
    }
    out.push(e);
  }
  return out;
}

function runProgram(r: ByteReader, end: number, h: LineUnitHeader, stdLengths: number[],
  rows: FullLineRow[], v4Dirs: string[], compDir: string): void {
  const addrBits = BigInt(h.addressSize * 8);
  const minInst = BigInt(h.minInstLength);
  const maxOps = BigInt(h.maxOpsPerInst);
  let address = 0n, opIndex = 0n, file = 1, line = 1, column = 0, isStmt = h.defaultIsStmt;
  let basicBlock = false, prologueEnd = false, epilogueBegin = false, isa = 0, discriminator = 0;
  const reset = (): void => {
    address = 0n; opIndex = 0n; file = 1; line = 1; column = 0; isStmt = h.defaultIsStmt;
    basicBlock = false; prologueEnd = false; epilogueBegin = false; isa = 0; discriminator = 0;
  };
  const fileName = (i: number): string => {
    const f = h.files[i];
    return f === undefined || (h.version < 5 && i === 0) ? `<file ${i}>` : f;
  };
  const emit = (endSequence: boolean): void => {
    rows.push({
      address, file: fileName(file), line, column, isStmt, endSequence, fileIndex: file,
      discriminator, isa, basicBlock, prologueEnd, epilogueBegin, unit: h.offset,
    });
  };
  const advance = (opAdvance: bigint): void => {
    if (maxOps === 1n) {
      address = BigInt.asUintN(Number(addrBits), address + minInst * opAdvance);
    } else {
      const t = opIndex + opAdvance;
      address = BigInt.asUintN(Number(addrBits), address + minInst * (t / maxOps));
      opIndex = t % maxOps;
    }
  };
  while (r.pos < end) {
    const op = r.u8();
    if (op >= h.opcodeBase) {
      const adjusted = op - h.opcodeBase;
      advance(BigInt(Math.floor(adjusted / h.lineRange)));
      line += h.lineBase + (adjusted % h.lineRange);
      emit(false);
      basicBlock = prologueEnd = epilogueBegin = false;
      discriminator = 0;
      continue;
    }
    switch (op) {
      case 0: {
        const len = r.uleb();
        if (len === 0) continue;
        const next = r.pos + len;
        if (next > end) throw new RangeError(`extended opcode at 0x${(r.pos - 1).toString(16)} runs past the unit`);
        const sub = r.u8();
        switch (sub) {
          case DW_LNE.end_sequence:
            emit(true);
            reset();
            break;
          case DW_LNE.set_address:
            address = r.uint(len - 1);
            opIndex = 0n;
            break;
          case DW_LNE.define_file: {
            const name = r.cstr();
            const dir = r.uleb();
            h.files.push(joinPath(v4DirPath(v4Dirs, compDir, dir), name));
            break;
          }
          case DW_LNE.set_discriminator:
            discriminator = r.uleb();
            break;
          default:
            break; // unknown extended opcodes are skipped by length
        }
        r.pos = next;
        break;
      }
      case DW_LNS.copy:
        emit(false);
        discriminator = 0;
        basicBlock = prologueEnd = epilogueBegin = false;
        break;
      case DW_LNS.advance_pc: advance(r.ulebBig()); break;
      case DW_LNS.advance_line: line += r.sleb(); break;
      case DW_LNS.set_file: file = r.uleb(); break;
      case DW_LNS.set_column: column = r.uleb(); break;
      case DW_LNS.negate_stmt: isStmt = !isStmt; break;
      case DW_LNS.set_basic_block: basicBlock = true; break;
      case DW_LNS.const_add_pc: advance(BigInt(Math.floor((255 - h.opcodeBase) / h.lineRange))); break;
      case DW_LNS.fixed_advance_pc:
        address = BigInt.asUintN(Number(addrBits), address + BigInt(r.u16()));
        opIndex = 0n;
        break;
      case DW_LNS.set_prologue_end: prologueEnd = true; break;
      case DW_LNS.set_epilogue_begin: epilogueBegin = true; break;
      case DW_LNS.set_isa: isa = r.uleb(); break;
      default:
        // unknown standard opcode: skip its ULEB operands
        for (let i = 0; i < stdLengths[op - 1]; i++) r.uleb();
    }
  }
}
