/**
 * ELF loader: headers, program headers, sections, symbols and (lazily) the
 * DWARF line table.
 *
 * The structure walk is done by the `elfy` package; every numeric field is then
 * re-read from the raw bytes, because elfy reads 64-bit fields into JS numbers
 * (rounded above 2^53, e.g. 0xffffffff81000000) and reads the ELF64
 * sh_addralign/sh_entsize at the wrong offsets (46/54 instead of 48/56).
 * All bounds are checked here first, so a truncated file is reported as such
 * (naming the header, segment or section) instead of as an elfy exception.
 */
import { readFileSync } from 'node:fs';
import * as elfy from 'elfy';
import { ElfImage, ElfSection, ElfSegment, ImageError, LineTable, SymbolTable } from './types';
import { ByteReader, strAt } from './reader';
import { machineName } from './machines';
import { buildSymbolTable } from './symbols';
import { parseDebugLine } from './dwarf/debugLine';
import { readCompDirs } from './dwarf/compDirs';
import { sectionContents } from './compressed';

export const SHT_NOBITS = 8;
export const SHT_SYMTAB = 2;
export const SHT_DYNSYM = 11;
export const PT_LOAD = 1;

const EHDR_SIZE = { 32: 52, 64: 64 } as const;
const PHDR_SIZE = { 32: 32, 64: 56 } as const;
const SHDR_SIZE = { 32: 40, 64: 64 } as const;

function hex(v: bigint | number): string {
  return '0x' + v.toString(16);
}

/** Read and parse an ELF file. Errors are ImageError naming the file. */
export function loadElf(path: string): ElfImage {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const what = code === 'ENOENT' ? 'no such file'
      : code === 'EISDIR' ? 'is a directory, not an ELF file'
      : code === 'EACCES' ? 'permission denied'
      : `cannot read (${e instanceof Error ? e.message : String(e)})`;
    throw new ImageError(path, what);
  }
  return parseElf(bytes, path);
}

interface RawHeader {
  elfClass: 32 | 64;
  little: boolean;
  type: number;
  machine: number;
  entry: bigint;
  phoff: bigint;
  shoff: bigint;
  phentsize: number;
  phnum: number;
  shentsize: number;
  shnum: number;
  shstrndx: number;
}

function readHeader(bytes: Uint8Array, path: string): RawHeader {
  if (bytes.length < 4 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
    throw new ImageError(path, 'not an ELF file (bad magic)');
  }
  if (bytes.length < 16) throw new ImageError(path, `truncated: ELF identification needs 16 bytes, file has ${bytes.length}`);
  const cls = bytes[4];
  if (cls !== 1 && cls !== 2) throw new ImageError(path, `invalid ELF class ${cls} (expected 1 = ELF32 or 2 = ELF64)`);
  const data = bytes[5];
  if (data !== 1 && data !== 2) throw new ImageError(path, `invalid ELF data encoding ${data} (expected 1 = little or 2 = big endian)`);
  const elfClass = cls === 1 ? 32 : 64;
  if (bytes.length < EHDR_SIZE[elfClass]) {
    throw new ImageError(path, `truncated: ELF${elfClass} header needs ${EHDR_SIZE[elfClass]} bytes, file has ${bytes.length}`);
  }
  const r = new ByteReader(bytes, data === 1);
  const w = elfClass === 64 ? 8 : 4;
  const o = elfClass === 64 ? 0 : -12; // ELF32 header fields after e_entry are 12 bytes earlier
  const h: RawHeader = {
    elfClass,
    little: data === 1,
    type: r.u16At(16),
    machine: r.u16At(18),
    entry: r.uintAt(24, w),
    phoff: r.uintAt(32 + (elfClass === 64 ? 0 : -4), w),
    shoff: r.uintAt(40 + (elfClass === 64 ? 0 : -8), w),
    phentsize: r.u16At(54 + o),
    phnum: r.u16At(56 + o),
    shentsize: r.u16At(58 + o),
    shnum: r.u16At(60 + o),
    shstrndx: r.u16At(62 + o),
  };
  return h;
}

function checkTable(path: string, what: string, off: bigint, num: number, entsize: number, min: number, fileSize: number): void {
  if (num === 0) return;
  if (entsize < min) throw new ImageError(path, `bad ${what} entry size ${entsize} (needs at least ${min})`);
  const end = off + BigInt(num) * BigInt(entsize);
  if (end > BigInt(fileSize)) {
    throw new ImageError(path, `truncated: ${what} (${num} at offset ${hex(off)}) end at ${hex(end)}, beyond file size ${hex(fileSize)}`);
  }
}

/** Parse an ELF image held in memory. `path` names it in errors and in ElfImage.path. */
export function parseElf(bytes: Uint8Array, path: string): ElfImage {
  const h = readHeader(bytes, path);
  const r = new ByteReader(bytes, h.little);
  const is64 = h.elfClass === 64;

  // Extended section numbering: e_shnum / e_shstrndx live in section 0.
  let shnum = h.shnum;
  let shstrndx = h.shstrndx;
  if (h.shoff !== 0n && (shnum === 0 || shstrndx === 0xffff)) {
    checkTable(path, 'section headers', h.shoff, 1, h.shentsize, SHDR_SIZE[h.elfClass], bytes.length);
    const s0 = Number(h.shoff);
    if (shnum === 0) shnum = Number(r.uintAt(s0 + (is64 ? 32 : 20), is64 ? 8 : 4));
    if (shstrndx === 0xffff) shstrndx = r.u32At(s0 + (is64 ? 40 : 24));
  }
  if (h.shoff === 0n) shnum = 0;
  checkTable(path, 'program headers', h.phoff, h.phnum, h.phentsize, PHDR_SIZE[h.elfClass], bytes.length);
  checkTable(path, 'section headers', h.shoff, shnum, h.shentsize, SHDR_SIZE[h.elfClass], bytes.length);

  const segments = readSegments(r, h, path);
  const sections = readSections(r, h, shnum, shstrndx, path);

  // Structure walk by elfy; numeric fields above come from the raw bytes.
  // elfy cannot handle every valid layout (extended numbering, no
  // .shstrtab); then the raw names stand.
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let parsed: elfy.ElfyFile | undefined;
  try {
    parsed = elfy.parse(buf);
  } catch {
    parsed = undefined;
  }
  if (parsed && parsed.body.sections.length === sections.length && parsed.body.programs.length === segments.length) {
    parsed.body.sections.forEach((s, i) => { if (s.name) sections[i].name = s.name; });
  }

  const symtab = sections.find((s) => s.type === SHT_SYMTAB) ?? sections.find((s) => s.type === SHT_DYNSYM);
  let symbols: SymbolTable;
  try {
    symbols = buildSymbolTable(symtab, sections, h.elfClass, h.little);
  } catch (e) {
    if (e instanceof RangeError) throw new ImageError(path, `malformed symbol table ${symtab?.name ?? ''}: ${e.message}`);
    throw e;
  }

  const byName = new Map<string, ElfSection>();
  for (const s of sections) if (!byName.has(s.name)) byName.set(s.name, s);

  let lines: LineTable | null | undefined;
  const image: ElfImage = {
    path,
    elfClass: h.elfClass,
    endian: h.little ? 'little' : 'big',
    machine: h.machine,
    archName: machineName(h.machine, h.elfClass),
    type: h.type,
    entry: h.entry,
    segments,
    sections,
    symbols,
    get lines(): LineTable | null {
      if (lines === undefined) lines = loadLines(image, byName, h.little);
      return lines;
    },
    section(name: string): ElfSection | undefined {
      return byName.get(name);
    },
  };
  return image;
}

function readSegments(r: ByteReader, h: RawHeader, path: string): ElfSegment[] {
  const out: ElfSegment[] = [];
  const is64 = h.elfClass === 64;
  const size = BigInt(r.length);
  for (let i = 0; i < h.phnum; i++) {
    const b = Number(h.phoff) + i * h.phentsize;
    const seg = is64
      ? {
        type: r.u32At(b), flags: r.u32At(b + 4), offset: r.u64At(b + 8), vaddr: r.u64At(b + 16),
        paddr: r.u64At(b + 24), filesz: r.u64At(b + 32), memsz: r.u64At(b + 40), align: r.u64At(b + 48),
      }
      : {
        type: r.u32At(b), offset: BigInt(r.u32At(b + 4)), vaddr: BigInt(r.u32At(b + 8)), paddr: BigInt(r.u32At(b + 12)),
        filesz: BigInt(r.u32At(b + 16)), memsz: BigInt(r.u32At(b + 20)), flags: r.u32At(b + 24), align: BigInt(r.u32At(b + 28)),
      };
    if (seg.filesz > 0n && seg.offset + seg.filesz > size) {
      const kind = seg.type === PT_LOAD ? 'LOAD' : `type ${hex(seg.type)}`;
      throw new ImageError(path, `truncated: segment ${i} (${kind} at vaddr ${hex(seg.vaddr)}) file bytes ${hex(seg.offset)}..${hex(seg.offset + seg.filesz)} beyond file size ${hex(size)}`);
    }
    if (seg.type === PT_LOAD && seg.filesz > seg.memsz) {
      throw new ImageError(path, `bad segment ${i} (LOAD at vaddr ${hex(seg.vaddr)}): filesz ${hex(seg.filesz)} > memsz ${hex(seg.memsz)}`);
    }
    const data = seg.filesz > 0n ? r.bytes.subarray(Number(seg.offset), Number(seg.offset + seg.filesz)) : new Uint8Array(0);
    out.push({ ...seg, data });
  }
  return out;
}

function readSections(r: ByteReader, h: RawHeader, shnum: number, shstrndx: number, path: string): ElfSection[] {
  const out: ElfSection[] = [];
  const is64 = h.elfClass === 64;
  const size = BigInt(r.length);
  const nameOffsets: number[] = [];
  for (let i = 0; i < shnum; i++) {
    const b = Number(h.shoff) + i * h.shentsize;
    nameOffsets.push(r.u32At(b));
    const s = is64
      ? {
        type: r.u32At(b + 4), flags: r.u64At(b + 8), addr: r.u64At(b + 16), offset: r.u64At(b + 24),
        size: r.u64At(b + 32), link: r.u32At(b + 40), info: r.u32At(b + 44), addralign: r.u64At(b + 48), entsize: r.u64At(b + 56),
      }
      : {
        type: r.u32At(b + 4), flags: BigInt(r.u32At(b + 8)), addr: BigInt(r.u32At(b + 12)), offset: BigInt(r.u32At(b + 16)),
        size: BigInt(r.u32At(b + 20)), link: r.u32At(b + 24), info: r.u32At(b + 28), addralign: BigInt(r.u32At(b + 32)), entsize: BigInt(r.u32At(b + 36)),
      };
    const hasBytes = s.type !== SHT_NOBITS && s.type !== 0 && s.size > 0n;
    if (hasBytes && s.offset + s.size > size) {
      out.push({ index: i, name: '', ...s, data: new Uint8Array(0) });
      continue; // reported below, once names are known
    }
    const data = hasBytes ? r.bytes.subarray(Number(s.offset), Number(s.offset + s.size)) : new Uint8Array(0);
    out.push({ index: i, name: '', ...s, data });
  }
  const strtab = shstrndx > 0 && shstrndx < out.length ? out[shstrndx].data : new Uint8Array(0);
  for (let i = 0; i < out.length; i++) {
    const s = out[i];
    s.name = strAt(strtab, nameOffsets[i]);
    const hasBytes = s.type !== SHT_NOBITS && s.type !== 0 && s.size > 0n;
    if (hasBytes && s.offset + s.size > size) {
      throw new ImageError(path, `truncated: section [${i}] ${s.name || '(unnamed)'} bytes ${hex(s.offset)}..${hex(s.offset + s.size)} beyond file size ${hex(size)}`);
    }
  }
  return out;
}

function loadLines(image: ElfImage, byName: Map<string, ElfSection>, little: boolean): LineTable | null {
  const line = byName.get('.debug_line');
  if (!line || line.type === SHT_NOBITS) return null;
  const get = (name: string): Uint8Array | undefined => {
    const s = byName.get(name);
    return s ? sectionContents(s, image.elfClass, little, image.path) : undefined;
  };
  const debugLine = get('.debug_line') ?? new Uint8Array(0);
  const compDirs = readCompDirs({ info: get('.debug_info'), abbrev: get('.debug_abbrev'), str: get('.debug_str'), lineStr: get('.debug_line_str') }, little);
  return parseDebugLine(
    { line: debugLine, str: get('.debug_str'), lineStr: get('.debug_line_str') },
    { little, file: image.path, compDirs, addressSize: image.elfClass / 8 },
  );
}

/** Throws ImageError unless the image's architecture is one of `supported`. */
export function assertSupportedArch(image: ElfImage, supported: readonly string[]): void {
  if (!supported.includes(image.archName)) {
    throw new ImageError(image.path, `unsupported machine ${image.archName} (e_machine ${image.machine}); supported: ${supported.join(', ')}`);
  }
}

/** The symbol table, or ImageError when the image has none (stripped). */
export function requireSymbols(image: ElfImage): SymbolTable {
  if (image.symbols.count === 0) throw new ImageError(image.path, 'no symbol table (.symtab and .dynsym missing or empty: the image is stripped)');
  return image.symbols;
}

/** The line table, or ImageError when the image has no .debug_line. */
export function requireLines(image: ElfImage): LineTable {
  const lines = image.lines;
  if (!lines) throw new ImageError(image.path, 'no debug info (.debug_line missing: build with -g and do not strip)');
  return lines;
}
