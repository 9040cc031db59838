/**
 * ELF loader: headers, program headers, sections, symbols and (lazily) the
 * DWARF line table.
 *
 * The structure walk is elfy's (lib/elfy/parser.js, driven step by step in
 * parseElf): ELF header fields, the program- and section-header tables, each
 * entry's fields, the counts, section names (resolveBody/resolveStr) and the
 * data slices. What elfy gets wrong is re-read from the raw bytes or
 * wrapped, field by field:
 *  1. Every 64-bit field of an ELF64 file (e_entry, e_phoff, e_shoff; p_offset,
 *     p_vaddr, p_paddr, p_filesz, p_memsz, p_align; sh_flags, sh_addr,
 *     sh_offset, sh_size) is read by elfy into a JS number, rounded to 53
 *     significant bits (0xffffffff81000123 reads as 0xffffffff81000000):
 *     re-read as bigint. The ELF32 forms are 32-bit and exact in elfy, and taken from it.
 *  2. ELF64 sh_addralign / sh_entsize are read at offsets 46 / 54 instead of
 *     48 / 56: re-read.
 *  3. e_type, e_machine, p_type and sh_type become names from elfy's tables;
 *     values missing there are lost (undefined) for e_type, e_machine
 *     (EM_RISCV 243 among them) and p_type (PT_GNU_PROPERTY,
 *     PT_RISCV_ATTRIBUTES, ...): names are turned back into numbers
 *     (elfyWalk.codeOf) and a lost value is re-read.
 *  4. p_flags / sh_flags become objects of flag names (mapFlags, 32-bit
 *     shifts): turned back into the mask (elfyWalk.flagsOf); for ELF64
 *     sh_flags bits above 31 are dropped, so that field is re-read (item 1).
 *  5. Extended section numbering (e_shnum 0 / e_shstrndx 0xffff, the real
 *     values in section 0) is not known to elfy: the header it returned is
 *     corrected before its section walk.
 *  6. resolveBody asserts that e_shstrndx names a SHT_STRTAB section and
 *     throws for an image with no sections or no section-name table: then
 *     names are resolved with elfy's resolveStr from whatever e_shstrndx
 *     names, or left empty.
 *  7. Data slices are Buffer.slice, which clamps silently: a truncated table,
 *     segment or section is found here first and reported naming it; table
 *     entry sizes too small for the fields (elfy would read past the entry
 *     or, for size 0, walk no entries) are rejected likewise.
 *  8. SHT_NOBITS sections get file bytes from elfy (sh_size bytes at
 *     sh_offset); they occupy none, so their data is empty here.
 */
import { readFileSync } from 'node:fs';
import { readElfSparse } from './sparseRead';
import { ElfImage, ElfSection, ElfSegment, ImageError, LineTable, SymbolTable } from './types';
import { ByteReader } from './reader';
import { machineName } from './machines';
import { buildSymbolTable } from './symbols';
import { parseDebugLine } from './dwarf/debugLine';
import { readCompDirs } from './dwarf/compDirs';
import { LazyLineTable } from './dwarf/lazyLines';
import { debugInfoOf } from './dwarf/info';
import { DW_AT } from './dwarf/dies';
import { sectionContents } from './compressed';
import { checkAddresses } from './addressChecks';
import { codeOf, ElfyBody, elfyConstants, ElfyHeader, ElfyParser, flagsOf, newElfyParser } from './elfyWalk';

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
    const sparse = readElfSparse(path);
    if (sparse) return parseElf(sparse.bytes, path, sparse.skipped);
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

/** The ELF header: elfy's, with the fields it gets wrong re-read. */
interface Header {
  elfClass: 32 | 64;
  little: boolean;
  type: number;
  machine: number;
  entry: bigint;
  phoff: bigint;
  shoff: bigint;
  /** elfy's header, counts corrected for extended numbering (its body walk reads them) */
  elfy: ElfyHeader;
}

/** e_ident checks (what elfy's execute() checks, with messages naming what is wrong). */
function checkIdent(bytes: Uint8Array, path: string): void {
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
}

function readHeader(p: ElfyParser, buf: Buffer, r: ByteReader, path: string): Header {
  const eh = p.parseHeader(buf);
  const elfClass = eh.class === '64' ? 64 : 32;
  const is64 = elfClass === 64;
  const h: Header = {
    elfClass,
    little: eh.endian === 'lsb',
    type: codeOf(elfyConstants.type, eh.type) ?? r.u16At(16),
    machine: codeOf(elfyConstants.machine, eh.machine) ?? r.u16At(18),
    entry: is64 ? r.u64At(24) : BigInt(eh.entry),
    phoff: is64 ? r.u64At(32) : BigInt(eh.phoff),
    shoff: is64 ? r.u64At(40) : BigInt(eh.shoff),
    elfy: eh,
  };
  // Extended section numbering: e_shnum / e_shstrndx live in section 0.
  if (h.shoff !== 0n && (eh.shnum === 0 || eh.shstrndx === 0xffff)) {
    checkTable(path, 'section headers', h.shoff, 1, eh.shentsize, SHDR_SIZE[elfClass], buf.length);
    const s0 = buf.subarray(Number(h.shoff), Number(h.shoff) + eh.shentsize);
    if (eh.shnum === 0) eh.shnum = is64 ? p.readUInt64(s0, 32) : p.readUInt32(s0, 20);
    if (eh.shstrndx === 0xffff) eh.shstrndx = p.readUInt32(s0, is64 ? 40 : 24);
  }
  if (h.shoff === 0n) eh.shnum = 0;
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

function view(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Parse an ELF image held in memory. `path` names it in errors and in
 * ElfImage.path. `withoutBytes`: indexes of sections whose bytes were not
 * read (sparseRead.ts): they are listed with empty data.
 */
export function parseElf(bytes: Uint8Array, path: string, withoutBytes: ReadonlySet<number> = new Set()): ElfImage {
  checkIdent(bytes, path);
  const r = new ByteReader(bytes, bytes[5] === 1);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const p = newElfyParser();
  const h = readHeader(p, buf, r, path);
  const eh = h.elfy;
  checkTable(path, 'program headers', h.phoff, eh.phnum, eh.phentsize, PHDR_SIZE[h.elfClass], bytes.length);
  checkTable(path, 'section headers', h.shoff, eh.shnum, eh.shentsize, SHDR_SIZE[h.elfClass], bytes.length);

  let body: ElfyBody;
  try {
    body = resolveNames(p, p.parseBody(buf, eh), eh);
  } catch (e) {
    // every bound elfy relies on is checked above; this is a gap in those checks
    throw new ImageError(path, `malformed ELF (elfy: ${e instanceof Error ? e.message : String(e)})`);
  }
  const segments = readSegments(r, h, body, path);
  checkAddresses(path, h.elfClass, machineName(h.machine, h.elfClass), h.entry, segments);
  const sections = readSections(r, h, body, path, withoutBytes);

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

/** elfy's resolveBody where its assertion holds (e_shstrndx names a SHT_STRTAB), its resolveStr otherwise. */
function resolveNames(p: ElfyParser, body: ElfyBody, eh: ElfyHeader): ElfyBody {
  const secs = body.sections;
  const strtab = eh.shstrndx > 0 && eh.shstrndx < secs.length ? secs[eh.shstrndx] : undefined;
  if (strtab?.type === 'strtab') return p.resolveBody(body, eh);
  for (const s of secs) {
    s.name = strtab && strtab.type !== 'nobits' && typeof s.name === 'number' ? p.resolveStr(strtab.data, s.name) : '';
  }
  return body;
}

function readSegments(r: ByteReader, h: Header, body: ElfyBody, path: string): ElfSegment[] {
  const out: ElfSegment[] = [];
  const is64 = h.elfClass === 64;
  const size = BigInt(r.length);
  body.programs.forEach((ph, i) => {
    const b = Number(h.phoff) + i * h.elfy.phentsize;
    const seg = {
      type: codeOf(elfyConstants.entryType, ph.type) ?? r.u32At(b),
      flags: flagsOf(ph.flags, elfyConstants.entryFlags),
      offset: is64 ? r.u64At(b + 8) : BigInt(ph.offset),
      vaddr: is64 ? r.u64At(b + 16) : BigInt(ph.vaddr),
      paddr: is64 ? r.u64At(b + 24) : BigInt(ph.paddr),
      filesz: is64 ? r.u64At(b + 32) : BigInt(ph.filesz),
      memsz: is64 ? r.u64At(b + 40) : BigInt(ph.memsz),
      align: is64 ? r.u64At(b + 48) : BigInt(ph.align),
    };
    if (seg.filesz > 0n && seg.offset + seg.filesz > size) {
      const kind = seg.type === PT_LOAD ? 'LOAD' : `type ${hex(seg.type)}`;
      throw new ImageError(path, `truncated: segment ${i} (${kind} at vaddr ${hex(seg.vaddr)}) file bytes ${hex(seg.offset)}..${hex(seg.offset + seg.filesz)} beyond file size ${hex(size)}`);
    }
    if (seg.type === PT_LOAD && seg.filesz > seg.memsz) {
      throw new ImageError(path, `bad segment ${i} (LOAD at vaddr ${hex(seg.vaddr)}): filesz ${hex(seg.filesz)} > memsz ${hex(seg.memsz)}`);
    }
    out.push({ ...seg, data: seg.filesz > 0n ? view(ph.data) : new Uint8Array(0) });
  });
  return out;
}

function readSections(r: ByteReader, h: Header, body: ElfyBody, path: string, withoutBytes: ReadonlySet<number>): ElfSection[] {
  const out: ElfSection[] = [];
  const is64 = h.elfClass === 64;
  const size = BigInt(r.length);
  body.sections.forEach((sh, i) => {
    const b = Number(h.shoff) + i * h.elfy.shentsize;
    const s = {
      index: i,
      name: typeof sh.name === 'string' ? sh.name : '',
      type: codeOf(elfyConstants.sectType, sh.type) ?? r.u32At(b + 4),
      flags: is64 ? r.u64At(b + 8) : BigInt(flagsOf(sh.flags, elfyConstants.sectFlags)),
      addr: is64 ? r.u64At(b + 16) : BigInt(sh.addr),
      offset: is64 ? r.u64At(b + 24) : BigInt(sh.off),
      size: is64 ? r.u64At(b + 32) : BigInt(sh.size),
      link: sh.link,
      info: sh.info,
      addralign: is64 ? r.u64At(b + 48) : BigInt(sh.addralign),
      entsize: is64 ? r.u64At(b + 56) : BigInt(sh.entsize),
    };
    const hasBytes = s.type !== SHT_NOBITS && s.type !== 0 && s.size > 0n;
    if (hasBytes && s.offset + s.size > size) {
      throw new ImageError(path, `truncated: section [${i}] ${s.name || '(unnamed)'} bytes ${hex(s.offset)}..${hex(s.offset + s.size)} beyond file size ${hex(size)}`);
    }
    out.push({ ...s, data: hasBytes && !withoutBytes.has(i) ? view(sh.data) : new Uint8Array(0) });
  });
  return out;
}

/** .debug_line from this size up is read per unit on demand (LazyLineTable): a vmlinux's holds tens of millions of rows */
export const LAZY_LINES_MIN = 4 << 20;

function loadLines(image: ElfImage, byName: Map<string, ElfSection>, little: boolean): LineTable | null {
  const line = byName.get('.debug_line');
  if (!line || line.type === SHT_NOBITS) return null;
  const debugLine = sectionContents(line, image.elfClass, little, image.path);
  return debugLine.length >= LAZY_LINES_MIN ? lazyLines(image, debugLine) : eagerLines(image, byName, little, debugLine);
}

function eagerLines(image: ElfImage, byName: Map<string, ElfSection>, little: boolean, debugLine: Uint8Array): LineTable {
  const get = (name: string): Uint8Array | undefined => {
    const s = byName.get(name);
    return s ? sectionContents(s, image.elfClass, little, image.path) : undefined;
  };
  const info = get('.debug_info'), abbrev = get('.debug_abbrev'), str = get('.debug_str'), lineStr = get('.debug_line_str');
  const compDirs = readCompDirs({ info, abbrev, str, lineStr }, little);
  return parseDebugLine(
    { line: debugLine, str, lineStr },
    { little, file: image.path, compDirs, addressSize: image.elfClass / 8 },
  );
}

/**
 * The per-unit line table: the unit of an address through .debug_info
 * (.debug_aranges, else the units' root DIEs), DW_AT_comp_dir only read
 * when a DWARF 2-4 unit needs it.
 */
export function lazyLines(image: ElfImage, debugLine: Uint8Array): LazyLineTable {
  const little = image.endian === 'little';
  const get = (name: string): Uint8Array | undefined => {
    const s = image.section(name);
    return s ? sectionContents(s, image.elfClass, little, image.path) : undefined;
  };
  const str = get('.debug_str'), lineStr = get('.debug_line_str');
  let dirs: Map<number, string> | undefined;
  const compDirs = { get: (off: number): string | undefined => (dirs ??= readCompDirs({ info: get('.debug_info'), abbrev: get('.debug_abbrev'), str, lineStr }, little)).get(off) };
  const unitLineOffset = (addr: bigint): number | undefined => {
    const di = debugInfoOf(image);
    const u = di.unitFor(addr);
    const head = u ? di.head(u) : null;
    const v = head ? di.attr(head, DW_AT.stmt_list) : undefined;
    return v && (v.kind === 'uint' || v.kind === 'secOffset') ? Number(v.value) : undefined;
  };
  return new LazyLineTable({ line: debugLine, str, lineStr }, { little, file: image.path, compDirs, addressSize: image.elfClass / 8 }, unitLineOffset);
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
